//! Corners of links: refs nested in messages and hopping across three systems, graceful
//! and cut ends, heartbeats, one-way partitions, stale incarnations and system paths,
//! remote spawn failures, terminate with frames in flight, TLS certificates, and the
//! event stream (S5, S14, S18, S31, S36-S46).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::nodes::uri;
use crate::support::outside::letter_where;
use crate::support::outside::ms;
use crate::support::outside::{letters, recv_within};
use std::collections::HashMap;
use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tapio::prelude::*;
use tapio::remote::spawn::{RemoteSpawnError, Spawner, SpawnerMsg};
use tapio::remote::{LinkError, PeerUnreachable, RemoteError, RemoteSettings, TlsSettings};
use tapio::testkit::{TestProbe, TwoNodes, two_nodes};
use tapio::wire::WireProblem;
use tapio::{Address, AskError, DeadLetterReason, IntoBehavior, Subscription, remote_behavior};
use tokio::sync::mpsc;
use tokio::time::timeout;

// ---------------------------------------------------------------- messages

#[message(remote = "sw10.note.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note(pub u64);

#[message(remote = "sw10.choice.v1")]
pub enum Choice {
    Nobody,
    One(ActorRef<Note>),
    Pair {
        first: ActorRef<Note>,
        second: Option<ActorRef<Note>>,
    },
}

#[message(remote = "sw10.bundle.v1")]
pub struct Bundle {
    pub many: Vec<ActorRef<Note>>,
    pub maybe: Option<ActorRef<Note>>,
    pub none: Option<ActorRef<Note>>,
    pub choice: Choice,
}

#[message(remote = "sw10.pass.v1")]
pub struct Pass {
    pub payload: ActorRef<Note>,
    pub hops: Vec<ActorRef<Pass>>,
    pub hop: u64,
}

#[message(remote = "sw10.watch-these.v1")]
pub struct WatchThese {
    pub targets: Vec<Choice>,
}

#[message(remote = "sw10.echoed.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Echoed(pub u64);

#[message(remote = "sw10.echo.v1", reply = Echoed)]
pub struct Echo(pub u64);

#[message(remote = "sw10.query.v1")]
pub struct Query {
    pub n: u64,
    pub replies: Vec<Option<ActorRef<Echoed>>>,
}

#[message(remote = "sw10.seq.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seq {
    pub sender: u32,
    pub n: u32,
}

#[message(remote = "sw10.big.v1")]
pub struct Big {
    pub sender: u32,
    pub n: u32,
    pub data: Vec<u8>,
}

#[message(remote = "sw10.cmd.v1")]
#[derive(Debug, Clone)]
pub enum Cmd {
    Crash,
    Say(u64),
}

#[message(remote = "sw10.keep.v1")]
pub enum Keep {
    Hold(ActorRef<Note>),
    Use(u64),
}

/// Local only: start a burst.
#[message]
pub struct Go {
    pub target: ActorRef<Seq>,
    pub sender: u32,
    pub count: u32,
}

#[derive(Debug)]
pub struct Boom;

impl std::fmt::Display for Boom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("boom")
    }
}

impl std::error::Error for Boom {}

// ---------------------------------------------------------------- factories

#[message(remote = "sw10.fragile-args.v1")]
pub struct FragileArgs {
    pub fail: bool,
}

#[remote_behavior("sw10.fragile")]
pub fn fragile(args: FragileArgs) -> Behavior<Note> {
    let fail = args.fail;
    Behaviors::setup(move |_ctx| -> Result<Behavior<Note>, Boom> {
        if fail {
            Err(Boom)
        } else {
            Ok(Behaviors::receive_message(|_: Note| ()).into())
        }
    })
}

/// How many `counted` actors were built, ever, in this binary.
static COUNTED_BUILT: AtomicU64 = AtomicU64::new(0);

#[message(remote = "sw10.counted-args.v1")]
pub struct CountedArgs;

#[remote_behavior("sw10.counted")]
pub fn counted(_args: CountedArgs) -> Behavior<Note> {
    Behaviors::setup(|_ctx| {
        COUNTED_BUILT.fetch_add(1, Ordering::SeqCst);
        Behaviors::receive_message(|_: Note| ())
    })
}

/// Incarnations of `phoenix` actors, and what they were told: (incarnation, n).
static PHOENIX_BUILT: AtomicU64 = AtomicU64::new(0);

static PHOENIX_SEEN: std::sync::Mutex<Vec<(u64, u64)>> = std::sync::Mutex::new(Vec::new());

#[message(remote = "sw10.phoenix-args.v1")]
pub struct PhoenixArgs;

#[remote_behavior("sw10.phoenix")]
pub fn phoenix(_args: PhoenixArgs) -> Behavior<Cmd> {
    Behaviors::supervise(Behaviors::setup(|_ctx| {
        let incarnation = PHOENIX_BUILT.fetch_add(1, Ordering::SeqCst) + 1;
        Behaviors::receive_message(move |cmd: Cmd| -> Result<(), Boom> {
            match cmd {
                Cmd::Crash => Err(Boom),
                Cmd::Say(n) => {
                    PHOENIX_SEEN.lock().unwrap().push((incarnation, n));
                    Ok(())
                }
            }
        })
    }))
    .on_failure::<Boom>(SupervisorStrategy::restart())
    .into()
}

// ---------------------------------------------------------------- helpers

const WAIT: Duration = Duration::from_secs(5);

fn node(name: &str) -> ActorSystem {
    ActorSystem::builder(name)
        .remote(RemoteSettings::loopback())
        .build()
        .expect("a loopback system builds")
}

/// Two loopback systems, `a` and `b`.
fn a_and_b() -> (ActorSystem, ActorSystem) {
    (node("a"), node("b"))
}

/// Terminates `systems`, one after the other, in order.
async fn terminate_all<const N: usize>(systems: [&ActorSystem; N]) {
    for system in systems {
        system.terminate().await;
    }
}

/// `spawner` spawned on `b` as `"spawner"`, and the ref `a` resolves by its path.
fn spawner_on(
    a: &ActorSystem,
    b: &ActorSystem,
    spawner: impl IntoBehavior<SpawnerMsg>,
) -> ActorRef<SpawnerMsg> {
    b.spawn(spawner, "spawner").unwrap();
    a.resolve::<SpawnerMsg>(&uri(b, "/user/spawner")).unwrap()
}

/// An actor on `system` named `"collector"` that forwards every `Seq` to the
/// channel returned.
fn seq_collector(system: &ActorSystem) -> (ActorRef<Seq>, mpsc::UnboundedReceiver<Seq>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let collector = system
        .spawn(
            Behaviors::receive_message(move |s: Seq| {
                let _ = tx.send(s);
            }),
            "collector",
        )
        .unwrap();
    (collector, rx)
}

/// Tells `Note(1)` from `a` to `probe` on `b` where no link can be made: the note is
/// a dead letter on `a`, `Unreachable` naming `b`, and the probe gets nothing.
async fn expect_tell_unreachable(a: &ActorSystem, b: &ActorSystem, probe: &mut TestProbe<Note>) {
    let mut dl = letters(a);
    a.resolve::<Note>(&probe.actor_ref().to_string())
        .unwrap()
        .tell(Note(1));
    let letter = letter_where(&mut dl, WAIT, |l| l.is::<Note>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::Unreachable {
            peer: b.address().clone()
        }
    );
    probe.expect_no_message(ms(200)).await;
}

fn fast_settings() -> RemoteSettings {
    RemoteSettings::loopback()
        .heartbeat_interval(ms(100))
        .unreachable_after(ms(700))
}

fn fast_pair() -> TwoNodes {
    two_nodes(fast_settings()).expect("two nodes")
}

async fn unreachable_event(sub: &mut Subscription<PeerUnreachable>, peer: &Address) {
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match timeout(left, sub.recv()).await {
            Ok(Some(event)) if format!("{event:?}").contains(&peer.to_string()) => return,
            Ok(Some(_)) => {}
            Ok(None) => panic!("event stream closed"),
            Err(_) => panic!("no PeerUnreachable for {peer} within {WAIT:?}"),
        }
    }
}

/// An actor that forwards every `Note` to a channel.
fn forwarder(tx: mpsc::UnboundedSender<u64>) -> Behavior<Note> {
    Behaviors::receive_message(move |Note(n): Note| {
        let _ = tx.send(n);
    })
    .into()
}

/// A [`forwarder`] on `b` named `name`, the ref `a` resolves for it, and its
/// channel, once `Note(n)` told through that ref has arrived.
async fn forwarder_linked(
    a: &ActorSystem,
    b: &ActorSystem,
    name: &str,
    n: u64,
) -> (ActorRef<Note>, ActorRef<Note>, mpsc::UnboundedReceiver<u64>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let local = b.spawn(forwarder(tx), name).unwrap();
    let remote = a.resolve::<Note>(&local.to_string()).unwrap();
    remote.tell(Note(n));
    assert_eq!(recv_within(&mut rx, WAIT).await, n);
    (local, remote, rx)
}

/// An actor that answers `Echo(n)` with `Echoed(n * 2)`.
#[derive(Clone)]
pub struct Echoer;

#[actor]
impl Echoer {
    fn echo(&mut self, Echo(n): Echo) -> Echoed {
        Echoed(n * 2)
    }
}

fn echo() -> Echoer {
    Echoer
}

// ------------------------------------------------------------ 1. nested refs

/// S36: refs inside a Vec, an Option and an enum variant (one of them to a third
/// system C) are each usable from B, which never resolved any of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_refs_nested_in_vec_option_enum_are_live_on_the_far_side() {
    let (a, b) = a_and_b();
    let c = node("c");
    let fan = b
        .spawn(
            Behaviors::receive_message(|bundle: Bundle| {
                for (k, r) in (1..).zip(bundle.many) {
                    r.tell(Note(k));
                }
                if let Some(r) = bundle.maybe {
                    r.tell(Note(10));
                }
                if let Some(r) = bundle.none {
                    r.tell(Note(999));
                }
                match bundle.choice {
                    Choice::Nobody => {}
                    Choice::One(r) => r.tell(Note(20)),
                    Choice::Pair { first, second } => {
                        first.tell(Note(30));
                        if let Some(s) = second {
                            s.tell(Note(31));
                        }
                    }
                }
            }),
            "fan",
        )
        .unwrap();
    let mut p1 = TestProbe::<Note>::new(&a);
    let mut p2 = TestProbe::<Note>::new(&c);
    let mut p3 = TestProbe::<Note>::new(&a);
    let mut p4 = TestProbe::<Note>::new(&c);
    let mut p5 = TestProbe::<Note>::new(&a);
    let to_fan = a.resolve::<Bundle>(&fan.to_string()).unwrap();
    to_fan.tell(Bundle {
        many: vec![p1.actor_ref().clone(), p2.actor_ref().clone()],
        maybe: Some(p3.actor_ref().clone()),
        none: None,
        choice: Choice::Pair {
            first: p4.actor_ref().clone(),
            second: Some(p5.actor_ref().clone()),
        },
    });
    assert_eq!(p1.expect_message(WAIT).await, Note(1));
    assert_eq!(p2.expect_message(WAIT).await, Note(2));
    assert_eq!(p3.expect_message(WAIT).await, Note(10));
    assert_eq!(p4.expect_message(WAIT).await, Note(30));
    assert_eq!(p5.expect_message(WAIT).await, Note(31));
    // The other variants decode too.
    to_fan.tell(Bundle {
        many: vec![],
        maybe: None,
        none: None,
        choice: Choice::One(p2.actor_ref().clone()),
    });
    assert_eq!(p2.expect_message(WAIT).await, Note(20));
    p1.expect_no_message(ms(100)).await;
    for s in [a, b, c] {
        s.terminate().await;
    }
}

/// An actor that tells the payload its hop number, then passes the message on to
/// the next hop; the last hop reports the payload it got.
fn hopper(last: Option<mpsc::UnboundedSender<ActorRef<Note>>>) -> Behavior<Pass> {
    Behaviors::receive_message(move |pass: Pass| {
        pass.payload.tell(Note(pass.hop));
        let mut hops = pass.hops;
        if hops.is_empty() {
            if let Some(tx) = &last {
                let _ = tx.send(pass.payload);
            }
        } else {
            let next = hops.remove(0);
            next.tell(Pass {
                payload: pass.payload,
                hops,
                hop: pass.hop + 1,
            });
        }
    })
    .into()
}

/// S36, S40: a ref to A travels A -> B -> C -> A inside a message that also carries
/// the refs of the next hops; every hop tells through it, and it comes home equal
/// to the ref it started as.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s40_ref_hops_a_b_c_a_and_is_used_at_every_hop() {
    let (a, b) = a_and_b();
    let c = node("c");
    let (home_tx, mut home_rx) = mpsc::unbounded_channel();
    let ha = a.spawn(hopper(Some(home_tx)), "hop").unwrap();
    let hb = b.spawn(hopper(None), "hop").unwrap();
    let hc = c.spawn(hopper(None), "hop").unwrap();
    let mut probe = TestProbe::<Note>::new(&a);
    let to_b = a.resolve::<Pass>(&hb.to_string()).unwrap();
    let c_from_a = a.resolve::<Pass>(&hc.to_string()).unwrap();
    to_b.tell(Pass {
        payload: probe.actor_ref().clone(),
        hops: vec![c_from_a, ha.clone()],
        hop: 1,
    });
    let mut got: Vec<u64> = probe
        .receive_messages(3, WAIT)
        .await
        .into_iter()
        .map(|Note(n)| n)
        .collect();
    got.sort_unstable();
    assert_eq!(got, vec![1, 2, 3]);
    let home = recv_within(&mut home_rx, WAIT).await;
    assert_eq!(&home, probe.actor_ref(), "the ref came home as itself");
    probe.expect_no_message(ms(100)).await;
    for s in [a, b, c] {
        s.terminate().await;
    }
}

/// A watcher that watches every ref it is sent (inside enum variants) and reports
/// each `Terminated` by path.
fn watcher(tx: mpsc::UnboundedSender<String>) -> Behavior<WatchThese> {
    Behaviors::receive(|ctx: &mut ActorContext<WatchThese>, msg: WatchThese| {
        let mut watched = Vec::new();
        for choice in msg.targets {
            match choice {
                Choice::Nobody => {}
                Choice::One(r) => watched.push(r),
                Choice::Pair { first, second } => {
                    watched.push(first);
                    watched.extend(second);
                }
            }
        }
        // Watch, then tell each a `Note(99)` after its watch, on the same link.
        for r in watched {
            ctx.watch(&r);
            r.tell(Note(99));
        }
    })
    .on_signal(move |_, signal| {
        if let Signal::Terminated(t) = signal {
            let _ = tx.send(t.actor().path().to_uri());
        }
        Behaviors::same()
    })
    .into()
}

/// S36, S41: C receives, from A, refs to an actor of B and one of A nested in enum
/// variants, watches both; B's graceful termination is heard for B's actor only,
/// promptly; A's actor's stop is heard afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s41_third_party_watch_through_nested_refs_sees_each_end_once() {
    let (a, b) = a_and_b();
    let c = node("c");
    let (btx, mut brx) = mpsc::unbounded_channel();
    let on_b = b.spawn(forwarder(btx), "target").unwrap();
    let (atx, _arx) = mpsc::unbounded_channel();
    let on_a = a.spawn(forwarder(atx), "target").unwrap();
    let (wtx, mut wrx) = mpsc::unbounded_channel();
    let w = c.spawn(watcher(wtx), "watcher").unwrap();
    let b_from_a = a.resolve::<Note>(&on_b.to_string()).unwrap();
    b_from_a.tell(Note(1));
    assert_eq!(recv_within(&mut brx, WAIT).await, 1);
    let to_w = a.resolve::<WatchThese>(&w.to_string()).unwrap();
    to_w.tell(WatchThese {
        targets: vec![
            Choice::Nobody,
            Choice::Pair {
                first: b_from_a.clone(),
                second: None,
            },
            Choice::One(on_a.clone()),
        ],
    });
    // The watch of B's actor crossed before the `Note(99)` C sent after it.
    assert_eq!(recv_within(&mut brx, WAIT).await, 99);
    let started = Instant::now();
    b.terminate().await;
    let first = recv_within(&mut wrx, ms(4000)).await;
    assert_eq!(first, on_b.path().to_uri());
    assert!(started.elapsed() < ms(4000), "took {:?}", started.elapsed());
    a.stop(&on_a).unwrap();
    let second = recv_within(&mut wrx, WAIT).await;
    assert_eq!(second, on_a.path().to_uri());
    assert!(
        timeout(ms(300), wrx.recv()).await.is_err(),
        "a third Terminated arrived"
    );
    a.terminate().await;
    c.terminate().await;
}

/// S44, S36: an `ask_with` whose request carries the reply ref twice, nested in a
/// `Vec<Option<_>>`; the far side answers both: the first completes the ask, the
/// second is a dead letter `AlreadyAnswered` on the asking system.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_s36_nested_reply_ref_answered_twice_second_is_already_answered() {
    let (a, b) = a_and_b();
    let q = b
        .spawn(
            Behaviors::receive_message(|q: Query| {
                for (i, r) in q.replies.into_iter().flatten().enumerate() {
                    r.tell(Echoed(q.n + i as u64));
                }
            }),
            "q",
        )
        .unwrap();
    let mut dl = letters(&a);
    let to_q = a.resolve::<Query>(&q.to_string()).unwrap();
    let answer = to_q
        .ask_with(|r: ActorRef<Echoed>| Query {
            n: 40,
            replies: vec![None, Some(r.clone()), None, Some(r)],
        })
        .timeout(WAIT)
        .await
        .expect("the first answer completes the ask");
    assert_eq!(answer, Echoed(40));
    let letter = letter_where(&mut dl, WAIT, |l| l.is::<Echoed>()).await;
    assert_eq!(letter.reason(), &DeadLetterReason::AlreadyAnswered);
    assert_eq!(letter.take_message::<Echoed>(), Some(Echoed(41)));
    terminate_all([&a, &b]).await;
}

// ------------------------------------------------------------ 2. watching

/// S41: B watches an actor of A, and A terminates gracefully: B hears `Terminated`
/// well before the detector's window (10 s by default), and a tell through the ref
/// resolved before is a dead letter `SessionEnded` naming A.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_graceful_end_of_watched_system_is_prompt_then_session_ended() {
    let (a, b) = a_and_b();
    let mut target = TestProbe::<Note>::new(&a);
    let on_a = b.resolve::<Note>(&target.actor_ref().to_string()).unwrap();
    on_a.tell(Note(1));
    assert_eq!(target.expect_message(WAIT).await, Note(1));
    let mut watcher = TestProbe::<Note>::new(&b);
    watcher.watch(&on_a);
    // The watch travels on the same association as what follows.
    on_a.tell(Note(2));
    assert_eq!(target.expect_message(WAIT).await, Note(2));
    let mut dl = letters(&b);
    let started = Instant::now();
    a.terminate().await;
    watcher.expect_terminated(&on_a, ms(3000)).await;
    assert!(started.elapsed() < ms(3000));
    on_a.tell(Note(3));
    let letter = letter_where(&mut dl, WAIT, |l| l.is::<Note>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::SessionEnded {
            peer: a.address().clone()
        }
    );
    b.terminate().await;
}

/// S41, S42: the same watch when the link is cut instead: `Terminated` once at the
/// give-up, `PeerUnreachable` published, nothing more after healing, and a tell is
/// a dead letter `Quarantined` naming A.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_s42_cut_link_gives_terminated_once_then_quarantined() {
    let nodes = fast_pair();
    let (a, b) = (&nodes.a, &nodes.b);
    let mut target = TestProbe::<Note>::new(a);
    let on_a = b.resolve::<Note>(&target.actor_ref().to_string()).unwrap();
    on_a.tell(Note(1));
    assert_eq!(target.expect_message(WAIT).await, Note(1));
    let mut watcher = TestProbe::<Note>::new(b);
    watcher.watch(&on_a);
    let mut events = b.events().subscribe::<PeerUnreachable>();
    let mut dl = letters(b);
    nodes.partition();
    watcher.expect_terminated(&on_a, WAIT).await;
    unreachable_event(&mut events, a.address()).await;
    assert!(b.is_quarantined(a.address()));
    nodes.heal();
    watcher.expect_no_termination(ms(400)).await;
    on_a.tell(Note(2));
    let letter = letter_where(&mut dl, WAIT, |l| l.is::<Note>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::Quarantined {
            peer: a.address().clone()
        }
    );
    target.expect_no_message(ms(200)).await;
    nodes.terminate().await;
}

/// S18, S41, S42: a watch made from C on an actor of B after B has terminated
/// (C never linked to B; the port is closed) still ends in `Terminated`: the
/// actor stopped before the watch (S18), and its system is gone (S41), so at the
/// latest when C gives the silent peer up (`unreachable_after`, 700 ms here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s18_s41_s42_watch_after_remote_system_is_gone_hears_terminated() {
    let b = node("b");
    let c = ActorSystem::builder("c")
        .remote(fast_settings())
        .build()
        .unwrap();
    let (tx, _rx) = mpsc::unbounded_channel();
    let gone = b.spawn(forwarder(tx), "gone").unwrap();
    let text = gone.to_string();
    b.terminate().await;
    let r = c.resolve::<Note>(&text).unwrap();
    let mut watcher = TestProbe::<Note>::new(&c);
    watcher.watch(&r);
    watcher.expect_terminated(&r, ms(4000)).await;
    watcher.expect_no_termination(ms(300)).await;
    c.terminate().await;
}

/// S42: heartbeats alone keep a link alive: after one message, nothing is sent for
/// more than twice `unreachable_after`; no give-up, no `Terminated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_idle_link_is_kept_alive_by_heartbeats() {
    let nodes = fast_pair();
    let (a, b) = (&nodes.a, &nodes.b);
    let mut target = TestProbe::<Note>::new(b);
    let on_b = a.resolve::<Note>(&target.actor_ref().to_string()).unwrap();
    on_b.tell(Note(1));
    target.expect_message(WAIT).await;
    let mut watcher = TestProbe::<Note>::new(a);
    watcher.watch(&on_b);
    let mut ea = a.events().subscribe::<PeerUnreachable>();
    let mut eb = b.events().subscribe::<PeerUnreachable>();
    watcher.expect_no_termination(ms(1600)).await;
    assert!(ea.try_recv().is_none(), "a gave b up");
    assert!(eb.try_recv().is_none(), "b gave a up");
    on_b.tell(Note(2));
    assert_eq!(target.expect_message(WAIT).await, Note(2));
    nodes.terminate().await;
}

/// S36, S41: two systems named alike on two ports are two peers: each gets only
/// what was sent to it, and terminating one ends only the watch of its actor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s41_two_systems_one_name_are_two_peers() {
    let a = node("a");
    let t1 = node("twin");
    let t2 = node("twin");
    assert_ne!(t1.address(), t2.address());
    let (tx1, mut rx1) = mpsc::unbounded_channel();
    let (tx2, mut rx2) = mpsc::unbounded_channel();
    let w1 = t1.spawn(forwarder(tx1), "w").unwrap();
    let w2 = t2.spawn(forwarder(tx2), "w").unwrap();
    let r1 = a.resolve::<Note>(&uri(&t1, "/user/w")).unwrap();
    let r2 = a.resolve::<Note>(&uri(&t2, "/user/w")).unwrap();
    assert_ne!(r1, r2);
    r1.tell(Note(1));
    r2.tell(Note(2));
    assert_eq!(recv_within(&mut rx1, WAIT).await, 1);
    assert_eq!(recv_within(&mut rx2, WAIT).await, 2);
    let mut watcher = TestProbe::<Note>::new(&a);
    watcher.watch(&r1);
    watcher.watch(&r2);
    r1.tell(Note(3));
    r2.tell(Note(4));
    assert_eq!(recv_within(&mut rx1, WAIT).await, 3);
    assert_eq!(recv_within(&mut rx2, WAIT).await, 4);
    t1.terminate().await;
    watcher.expect_terminated(&r1, WAIT).await;
    watcher.expect_no_termination(ms(400)).await;
    r2.tell(Note(5));
    assert_eq!(recv_within(&mut rx2, WAIT).await, 5);
    assert!(rx1.try_recv().is_err());
    drop((w1, w2));
    a.terminate().await;
    t2.terminate().await;
}

// ------------------------------------------------------------ 3. asks

/// S44, S40: replies held by a one-way partition (b -> a) shorter than the window
/// are not lost: the asks stay pending while it holds, then all complete, in order
/// with a tell sent after them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_s40_replies_held_by_short_one_way_partition_arrive_after_heal() {
    let settings = RemoteSettings::loopback()
        .heartbeat_interval(ms(100))
        .unreachable_after(ms(3000));
    let nodes = two_nodes(settings).unwrap();
    let (a, b) = (&nodes.a, &nodes.b);
    let e = b.spawn(echo(), "echo").unwrap();
    let to_e = a.resolve::<EchoerMsg>(&e.to_string()).unwrap();
    assert_eq!(to_e.ask(Echo(0)).timeout(WAIT).await.unwrap(), Echoed(0));
    nodes.b_to_a().partition();
    let mut asks: Vec<_> = (1..=5)
        .map(|n| Box::pin(to_e.ask(Echo(n)).timeout(WAIT).into_future()))
        .collect();
    // Held: none completes while the partition holds.
    assert!(
        timeout(ms(400), &mut asks[0]).await.is_err(),
        "an answer crossed a partition"
    );
    nodes.b_to_a().heal();
    for (i, ask) in asks.into_iter().enumerate() {
        assert_eq!(ask.await.unwrap(), Echoed((i as u64 + 1) * 2));
    }
    nodes.terminate().await;
}

/// S44, S43: an ask pending when its peer is given up on fails with `Unreachable`
/// at the give-up, long before its own deadline; after recovery a ref resolved
/// again answers, and the old ref dead-letters `SessionEnded`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_s43_ask_caught_by_give_up_fails_fast_new_session_answers() {
    let nodes = fast_pair();
    let (a, b) = (&nodes.a, &nodes.b);
    let e = b.spawn(echo(), "echo").unwrap();
    let old = a.resolve::<EchoerMsg>(&uri(b, "/user/echo")).unwrap();
    assert_eq!(old.ask(Echo(1)).timeout(WAIT).await.unwrap(), Echoed(2));
    let mut ea = a.events().subscribe::<PeerUnreachable>();
    let mut eb = b.events().subscribe::<PeerUnreachable>();
    nodes.partition();
    let started = Instant::now();
    let result = old.ask(Echo(2)).timeout(Duration::from_secs(20)).await;
    assert!(
        matches!(result, Err(AskError::Unreachable { .. })),
        "{result:?}"
    );
    assert!(started.elapsed() < ms(4000), "took {:?}", started.elapsed());
    unreachable_event(&mut ea, b.address()).await;
    unreachable_event(&mut eb, a.address()).await;
    nodes.heal();
    assert!(a.clear_quarantine(b.address()));
    assert!(b.clear_quarantine(a.address()));
    a.reconnect(b.address()).await.expect("reconnects");
    let fresh = a.resolve::<EchoerMsg>(&uri(b, "/user/echo")).unwrap();
    assert_eq!(fresh.ask(Echo(3)).timeout(WAIT).await.unwrap(), Echoed(6));
    let mut dl = letters(a);
    old.tell(Echo(4));
    let letter = letter_where(&mut dl, WAIT, |l| l.is::<EchoerMsg>() || l.is::<Echo>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::SessionEnded {
            peer: b.address().clone()
        }
    );
    drop(e);
    nodes.terminate().await;
}

/// S44, S37: an ask through the ref (with uid) of an incarnation that has stopped,
/// its name now taken by a new actor, fails at once with `TargetTerminated`; the
/// new actor does not answer it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_s37_ask_to_stopped_incarnation_whose_name_was_reused_fails_at_once() {
    let (a, b) = a_and_b();
    let first = b.spawn(echo(), "echo").unwrap();
    let old = a.resolve::<EchoerMsg>(&first.to_string()).unwrap();
    assert_eq!(old.ask(Echo(1)).timeout(WAIT).await.unwrap(), Echoed(2));
    let mut local = TestProbe::<Note>::new(&b);
    local.watch(&first);
    b.stop(&first).unwrap();
    local.expect_terminated(&first, WAIT).await;
    let second = b.spawn(echo(), "echo").unwrap();
    assert_ne!(first.uid(), second.uid());
    let started = Instant::now();
    let result = old.ask(Echo(2)).timeout(WAIT).await;
    assert!(
        matches!(result, Err(AskError::TargetTerminated { .. })),
        "{result:?}"
    );
    assert!(started.elapsed() < ms(2000), "took {:?}", started.elapsed());
    let fresh = a.resolve::<EchoerMsg>(&uri(&b, "/user/echo")).unwrap();
    assert_eq!(fresh.ask(Echo(3)).timeout(WAIT).await.unwrap(), Echoed(6));
    terminate_all([&a, &b]).await;
}

// ------------------------------------------------------------ 4. size and order

/// S40, S5: two senders, one sending messages near the 1 MiB frame limit and one
/// small ones, interleaved; all arrive, equal, in order per sender.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_s5_near_limit_frames_interleaved_with_small_ones() {
    let (a, b) = a_and_b();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let sink = b
        .spawn(
            Behaviors::receive_message(move |big: Big| {
                let ok = big
                    .data
                    .iter()
                    .enumerate()
                    .all(|(i, &x)| x == ((i as u32 + big.n) % 251) as u8);
                let _ = tx.send((big.sender, big.n, big.data.len(), ok));
            }),
            "sink",
        )
        .unwrap();
    let to_sink = a.resolve::<Big>(&sink.to_string()).unwrap();
    const LARGE: usize = 1_040_000;
    let make = |sender, n: u32, len: usize| Big {
        sender,
        n,
        data: (0..len).map(|i| ((i as u32 + n) % 251) as u8).collect(),
    };
    for n in 0..12 {
        to_sink.tell(make(1, n, LARGE));
        to_sink.tell(make(2, n, 16));
    }
    let mut next = HashMap::new();
    for _ in 0..24 {
        let (sender, n, len, ok) = recv_within(&mut rx, Duration::from_secs(10)).await;
        assert!(ok, "payload of {sender}/{n} changed");
        assert_eq!(len, if sender == 1 { LARGE } else { 16 });
        let expected = next.entry(sender).or_insert(0_u32);
        assert_eq!(n, *expected, "sender {sender} out of order");
        *expected += 1;
    }
    terminate_all([&a, &b]).await;
}

/// A sender actor: on `Go`, tells `count` numbered `Seq`s to the target.
fn pump() -> Behavior<Go> {
    Behaviors::receive_message(|go: Go| {
        for n in 0..go.count {
            go.target.tell(Seq {
                sender: go.sender,
                n,
            });
        }
    })
    .into()
}

async fn collect_in_order(
    rx: &mut mpsc::UnboundedReceiver<Seq>,
    senders: u32,
    count: u32,
    within: Duration,
) {
    let mut next = vec![0_u32; senders as usize];
    let deadline = Instant::now() + within;
    for _ in 0..senders * count {
        let left = deadline.saturating_duration_since(Instant::now());
        let seq = recv_within(rx, left).await;
        let slot = &mut next[seq.sender as usize];
        assert_eq!(seq.n, *slot, "sender {} out of order", seq.sender);
        *slot += 1;
    }
    assert!(next.iter().all(|&n| n == count), "{next:?}");
    assert!(
        timeout(ms(100), rx.recv()).await.is_err(),
        "a message arrived twice"
    );
}

/// S5, S40: six sender actors, four on A and two on C, each send 200 messages to
/// one actor on B at once (800 from A: under the outbound queue's 1,024 frames):
/// every message arrives once, in order per sender.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_s40_six_senders_on_two_systems_keep_per_sender_order() {
    let (a, b) = a_and_b();
    let c = node("c");
    let (collector, mut rx) = seq_collector(&b);
    let from_a = a.resolve::<Seq>(&collector.to_string()).unwrap();
    let from_c = c.resolve::<Seq>(&collector.to_string()).unwrap();
    let mut pumps = Vec::new();
    for sender in 0..6_u32 {
        let system = if sender < 4 { &a } else { &c };
        let target = if sender < 4 { &from_a } else { &from_c };
        let p = system.spawn(pump(), &format!("pump-{sender}")).unwrap();
        pumps.push((p, target.clone(), sender));
    }
    for (p, target, sender) in &pumps {
        p.tell(Go {
            target: target.clone(),
            sender: *sender,
            count: 200,
        });
    }
    collect_in_order(&mut rx, 6, 200, Duration::from_secs(10)).await;
    for s in [a, b, c] {
        s.terminate().await;
    }
}

/// S5, S40, S45: three senders through a link that delays every frame: all
/// arrive, in order per sender.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_s40_s45_delayed_link_keeps_per_sender_order() {
    let nodes = two_nodes(RemoteSettings::loopback()).unwrap();
    let (a, b) = (&nodes.a, &nodes.b);
    nodes.a_to_b().delay(ms(30));
    let (collector, mut rx) = seq_collector(b);
    let target = a.resolve::<Seq>(&collector.to_string()).unwrap();
    for sender in 0..3_u32 {
        let p = a.spawn(pump(), &format!("pump-{sender}")).unwrap();
        p.tell(Go {
            target: target.clone(),
            sender,
            count: 100,
        });
    }
    collect_in_order(&mut rx, 3, 100, Duration::from_secs(10)).await;
    nodes.terminate().await;
}

// ------------------------------------------------------------ 5. incarnations

/// S14, S46, S41: an actor started with `spawn_remote` restarts (its factory says
/// so); tells through the ref taken before the restart reach the new incarnation,
/// and the requester's watch hears nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s14_s46_tell_through_old_ref_reaches_restarted_remote_actor() {
    let (a, b) = a_and_b();
    let spawner = spawner_on(&a, &b, Spawner::offering::<phoenix>().build().unwrap());
    let spawned = spawner
        .spawn_remote::<phoenix>(PhoenixArgs, "phoenix")
        .await
        .expect("spawned");
    let r = spawned.actor;
    let mut watcher = TestProbe::<Note>::new(&a);
    watcher.watch(&r);
    let before = PHOENIX_BUILT.load(Ordering::SeqCst);
    r.tell(Cmd::Say(1));
    r.tell(Cmd::Crash);
    r.tell(Cmd::Say(2));
    let deadline = Instant::now() + WAIT;
    loop {
        let seen = PHOENIX_SEEN.lock().unwrap().clone();
        if seen.iter().any(|&(_, n)| n == 2) {
            let inc1 = seen.iter().find(|&&(_, n)| n == 1).unwrap().0;
            let inc2 = seen.iter().find(|&&(_, n)| n == 2).unwrap().0;
            assert_eq!(inc2, inc1 + 1, "{seen:?}");
            break;
        }
        assert!(Instant::now() < deadline, "Say(2) never arrived: {seen:?}");
        tokio::time::sleep(ms(10)).await; // polling a bounded condition
    }
    assert_eq!(PHOENIX_BUILT.load(Ordering::SeqCst), before + 1);
    watcher.expect_no_termination(ms(300)).await;
    terminate_all([&a, &b]).await;
}

/// S37, S2: after B's actor stopped and a new one took its name, a tell through
/// A's ref with the old uid is a dead letter on B naming A (`StaleIncarnation`),
/// and the new actor does not get it; a ref resolved by path reaches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_tell_to_old_uid_after_name_reused_is_stale_incarnation_naming_peer() {
    let (a, b) = a_and_b();
    let (first, old, _rx1) = forwarder_linked(&a, &b, "w", 1).await;
    let mut local = TestProbe::<Note>::new(&b);
    local.watch(&first);
    b.stop(&first).unwrap();
    local.expect_terminated(&first, WAIT).await;
    let (tx2, mut rx2) = mpsc::unbounded_channel();
    let second = b.spawn(forwarder(tx2), "w").unwrap();
    let mut dl = letters(&b);
    old.tell(Note(2));
    let letter = letter_where(&mut dl, WAIT, |l| l.is::<Note>()).await;
    match letter.reason() {
        DeadLetterReason::FromPeer { peer, problem } => {
            assert_eq!(peer, a.address());
            assert_eq!(
                problem,
                &WireProblem::StaleIncarnation {
                    addressed: first.uid(),
                    current: second.uid()
                }
            );
        }
        other => panic!("expected FromPeer(StaleIncarnation), got {other:?}"),
    }
    assert!(timeout(ms(200), rx2.recv()).await.is_err());
    a.resolve::<Note>(&uri(&b, "/user/w"))
        .unwrap()
        .tell(Note(3));
    assert_eq!(recv_within(&mut rx2, WAIT).await, 3);
    terminate_all([&a, &b]).await;
}

// ------------------------------------------------------------ 6. non-user paths

/// S37: frames to paths that are not user actors (`/system/..`, the guardians, a
/// promise that never existed) are dead letters on B naming A; B keeps running and
/// the link keeps delivering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_tells_to_system_paths_and_guardians_are_dead_letters_naming_peer() {
    let (a, b) = a_and_b();
    let (_, to_ok, mut rx) = forwarder_linked(&a, &b, "ok", 0).await;
    let mut dl = letters(&b);
    let paths = [
        "/system/nobody-here",
        "/system",
        "/user",
        "/system/nobody/deeper",
    ];
    for (i, path) in paths.iter().enumerate() {
        let r = a
            .resolve::<Note>(&uri(&b, path))
            .unwrap_or_else(|e| panic!("{path}: {e:?}"));
        r.tell(Note(100 + i as u64));
        let letter = letter_where(&mut dl, WAIT, |l| l.is::<Note>()).await;
        match letter.reason() {
            DeadLetterReason::FromPeer { peer, .. } => assert_eq!(peer, a.address(), "{path}"),
            other => panic!("{path}: expected FromPeer naming a, got {other:?}"),
        }
        assert_eq!(letter.take_message::<Note>(), Some(Note(100 + i as u64)));
    }
    assert!(!b.is_terminating());
    to_ok.tell(Note(1));
    assert_eq!(recv_within(&mut rx, WAIT).await, 1);
    terminate_all([&a, &b]).await;
}

/// S37: a peer's frame to a promise that never existed here
/// (`/system/promises/<uid>`, no ask was ever made by B) cannot be delivered, and
/// S37 has every such frame become a dead letter naming the peer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_tell_to_promise_path_that_never_existed_names_peer() {
    let (a, b) = a_and_b();
    let mut dl = letters(&b);
    a.resolve::<Note>(&uri(&b, "/system/promises/987654321"))
        .unwrap()
        .tell(Note(5));
    let letter = letter_where(&mut dl, WAIT, |l| l.is::<Note>()).await;
    match letter.reason() {
        DeadLetterReason::FromPeer { peer, .. } => assert_eq!(peer, a.address()),
        other => panic!("expected FromPeer naming {}, got {other:?}", a.address()),
    }
    terminate_all([&a, &b]).await;
}

/// S37, S44: an ask to a `/system` path where nobody lives fails at once with
/// `TargetTerminated` (not at its deadline); a probe under `/system` on B is an
/// actor whose path A can name, and a tell reaches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_s44_system_paths_ask_nobody_fails_fast_probe_by_path_reached() {
    let (a, b) = a_and_b();
    let nobody = a
        .resolve::<EchoerMsg>(&uri(&b, "/system/nobody-here"))
        .unwrap();
    let started = Instant::now();
    let result = nobody.ask(Echo(1)).timeout(WAIT).await;
    assert!(
        matches!(result, Err(AskError::TargetTerminated { .. })),
        "{result:?}"
    );
    assert!(started.elapsed() < ms(2000), "took {:?}", started.elapsed());
    let mut probe = TestProbe::<Note>::new(&b);
    let path = probe.actor_ref().path().to_string();
    assert!(path.starts_with("/system/"), "{path}");
    a.resolve::<Note>(&uri(&b, &path)).unwrap().tell(Note(7));
    assert_eq!(probe.expect_message(WAIT).await, Note(7));
    terminate_all([&a, &b]).await;
}

// ------------------------------------------------------------ 7. remote spawn

/// S46, S7, S2: a factory whose setup fails at start: the spawn itself succeeds
/// (the factory ran; the start failed under its supervision, default stop), the
/// requester's watch hears the end, and the name is free again afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_s7_remote_spawn_whose_setup_fails_ends_and_frees_the_name() {
    let (a, b) = a_and_b();
    let spawner = spawner_on(&a, &b, Spawner::offering::<fragile>().build().unwrap());
    let spawned = spawner
        .spawn_remote::<fragile>(FragileArgs { fail: true }, "f")
        .await
        .expect("the spawn is answered with the actor");
    let mut watcher = TestProbe::<Note>::new(&a);
    watcher.watch(&spawned.actor);
    watcher.expect_terminated(&spawned.actor, WAIT).await;
    let again = spawner
        .spawn_remote::<fragile>(FragileArgs { fail: false }, "f")
        .await;
    let again = again.expect("the name is free once the failed actor stopped");
    assert_ne!(again.actor.uid(), spawned.actor.uid());
    let mut w2 = TestProbe::<Note>::new(&a);
    w2.watch(&again.actor);
    w2.expect_no_termination(ms(300)).await;
    terminate_all([&a, &b]).await;
}

/// S46, S42, S44: a spawn toward a spawner whose system was given up on fails
/// fast (`Unreachable`), and no factory runs there, even after the heal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_s42_spawn_toward_quarantined_spawner_fails_fast_runs_nothing() {
    let nodes = fast_pair();
    let (a, b) = (&nodes.a, &nodes.b);
    let spawner = spawner_on(a, b, Spawner::offering::<counted>().build().unwrap());
    // Link up first.
    let mut probe = TestProbe::<Note>::new(b);
    a.resolve::<Note>(&probe.actor_ref().to_string())
        .unwrap()
        .tell(Note(1));
    probe.expect_message(WAIT).await;
    let mut ea = a.events().subscribe::<PeerUnreachable>();
    nodes.partition();
    unreachable_event(&mut ea, b.address()).await;
    let before = COUNTED_BUILT.load(Ordering::SeqCst);
    let started = Instant::now();
    let result = spawner.spawn_remote::<counted>(CountedArgs, "c1").await;
    assert!(
        matches!(
            result,
            Err(RemoteSpawnError::Ask(AskError::Unreachable { .. }))
        ),
        "{result:?}"
    );
    assert!(started.elapsed() < ms(1000), "took {:?}", started.elapsed());
    nodes.heal();
    probe.expect_no_message(ms(300)).await;
    assert_eq!(COUNTED_BUILT.load(Ordering::SeqCst), before);
    nodes.terminate().await;
}

/// S43, S36: after a quarantine is cleared on both sides and the link made again,
/// refs nested in new messages work both ways, while a ref to A that B decoded
/// (and kept) before the quarantine dead-letters `SessionEnded` on B.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_s36_after_recovery_new_nested_refs_work_old_decoded_ref_session_ended() {
    let nodes = fast_pair();
    let (a, b) = (&nodes.a, &nodes.b);
    let keeper = b
        .spawn(
            Behaviors::setup(|_ctx| {
                let held: Arc<std::sync::Mutex<Option<ActorRef<Note>>>> = Arc::default();
                Behaviors::receive_message(move |k: Keep| match k {
                    Keep::Hold(r) => *held.lock().unwrap() = Some(r),
                    Keep::Use(n) => {
                        if let Some(r) = held.lock().unwrap().as_ref() {
                            r.tell(Note(n));
                        }
                    }
                })
            }),
            "keeper",
        )
        .unwrap();
    let mut probe = TestProbe::<Note>::new(a);
    let old_keeper = a.resolve::<Keep>(&keeper.to_string()).unwrap();
    old_keeper.tell(Keep::Hold(probe.actor_ref().clone()));
    old_keeper.tell(Keep::Use(1));
    assert_eq!(probe.expect_message(WAIT).await, Note(1));
    let mut ea = a.events().subscribe::<PeerUnreachable>();
    let mut eb = b.events().subscribe::<PeerUnreachable>();
    nodes.partition();
    unreachable_event(&mut ea, b.address()).await;
    unreachable_event(&mut eb, a.address()).await;
    nodes.heal();
    assert!(a.clear_quarantine(b.address()));
    assert!(b.clear_quarantine(a.address()));
    a.reconnect(b.address()).await.expect("reconnects");
    let keeper_now = a.resolve::<Keep>(&uri(b, "/user/keeper")).unwrap();
    let mut dlb = letters(b);
    // The ref B decoded in the old session.
    keeper_now.tell(Keep::Use(2));
    let letter = letter_where(&mut dlb, WAIT, |l| l.is::<Note>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::SessionEnded {
            peer: a.address().clone()
        }
    );
    // A ref sent in the new session.
    keeper_now.tell(Keep::Hold(probe.actor_ref().clone()));
    keeper_now.tell(Keep::Use(3));
    assert_eq!(probe.expect_message(WAIT).await, Note(3));
    probe.expect_no_message(ms(100)).await;
    nodes.terminate().await;
}

// ------------------------------------------------------------ 8. shutdown in flight

/// An actor on `system` that counts the `Seq`s it gets into `count`, and says on
/// `up` when the first one, sender 9, arrived.
fn counter(
    system: &ActorSystem,
    name: &str,
    count: &Arc<AtomicU64>,
    up: mpsc::UnboundedSender<()>,
) -> ActorRef<Seq> {
    let count = count.clone();
    system
        .spawn(
            Behaviors::receive_message(move |seq: Seq| {
                if seq.sender == 9 {
                    let _ = up.send(());
                } else {
                    count.fetch_add(1, Ordering::SeqCst);
                }
            }),
            name,
        )
        .expect("the counter spawns")
}

/// Two linked systems, each with a counter of the other's `Seq`s, the refs to
/// them across the link, and the counts.
struct Crossing {
    a: ActorSystem,
    b: ActorSystem,
    to_cb: ActorRef<Seq>,
    to_ca: ActorRef<Seq>,
    got_a: Arc<AtomicU64>,
    got_b: Arc<AtomicU64>,
}

/// Link two systems and wait until a `Seq` has crossed each way.
async fn crossing() -> Crossing {
    let (a, b) = a_and_b();
    let got_a = Arc::new(AtomicU64::new(0));
    let got_b = Arc::new(AtomicU64::new(0));
    let (up, mut linked) = mpsc::unbounded_channel();
    let ca = counter(&a, "ca", &got_a, up.clone());
    let cb = counter(&b, "cb", &got_b, up);
    let to_cb = a.resolve::<Seq>(&cb.to_string()).unwrap();
    let to_ca = b.resolve::<Seq>(&ca.to_string()).unwrap();
    to_cb.tell(Seq { sender: 9, n: 0 });
    to_ca.tell(Seq { sender: 9, n: 0 });
    for _ in 0..2 {
        let heard = timeout(WAIT, linked.recv()).await;
        assert!(matches!(heard, Ok(Some(()))), "the links did not come up");
    }
    Crossing {
        a,
        b,
        to_cb,
        to_ca,
        got_a,
        got_b,
    }
}

impl Crossing {
    /// Tell `n` messages each way, run `stop` (which terminates one system or
    /// both), and assert that, for each direction, what was delivered plus the
    /// dead letters on both sides is exactly `n`.
    async fn account_for(self, n: u32, stop: impl std::future::Future<Output = ()>) {
        let mut dla = letters(&self.a);
        let mut dlb = letters(&self.b);
        for seq in 0..n {
            self.to_cb.tell(Seq { sender: 1, n: seq });
            self.to_ca.tell(Seq { sender: 2, n: seq });
        }
        stop.await;
        let n = u64::from(n);
        // Count the dead letters of each direction on both sides until the sums
        // are complete, or the bound passes (a window of silence would end the count
        // early on a loaded machine: the sums are what ends it).
        let (mut lost_to_b, mut lost_to_a) = (0_u64, 0_u64);
        let mut reasons: HashMap<String, u64> = HashMap::new();
        let bound = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let done = self.got_b.load(Ordering::SeqCst) + lost_to_b >= n
                && self.got_a.load(Ordering::SeqCst) + lost_to_a >= n;
            if done {
                break;
            }
            let next = tokio::select! {
                l = dla.recv() => l.map(|l| ("a", l)),
                l = dlb.recv() => l.map(|l| ("b", l)),
                () = tokio::time::sleep_until(bound) => None,
            };
            let Some((side, letter)) = next else { break };
            let key = format!("on {side}: {}", letter.reason());
            *reasons.entry(key).or_default() += 1;
            if let Some(seq) = letter.take_message::<Seq>() {
                if seq.sender == 1 {
                    lost_to_b += 1;
                } else {
                    lost_to_a += 1;
                }
            }
        }
        let gb = self.got_b.load(Ordering::SeqCst);
        let ga = self.got_a.load(Ordering::SeqCst);
        assert_eq!(
            (gb + lost_to_b, ga + lost_to_a),
            (n, n),
            "a->b: {gb} delivered + {lost_to_b} dead letters; b->a: {ga} delivered + {lost_to_a} dead letters; letters: {reasons:?}; events lost: a {} b {}",
            dla.lost(),
            dlb.lost()
        );
    }
}

/// S31, S39, S40: A and B tell each other 3,000 messages at once, and B terminates
/// in the middle. For each direction, what was delivered plus the dead letters on
/// both sides is exactly what was sent: nothing silently lost, nothing twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s39_terminate_with_frames_in_flight_both_ways_accounts_every_message() {
    let pair = crossing().await;
    let (a, b) = (pair.a.clone(), pair.b.clone());
    pair.account_for(3_000, b.terminate().into_future()).await;
    a.terminate().await;
}

/// S31, S39, S40: the same, with both systems terminating at once: each hears the
/// other leave while it leaves itself, and still every message is delivered or a
/// dead letter on one side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s39_both_systems_terminating_at_once_account_every_message() {
    let pair = crossing().await;
    let (a, b) = (pair.a.clone(), pair.b.clone());
    let both = async move {
        tokio::join!(a.terminate().into_future(), b.terminate().into_future());
    };
    pair.account_for(3_000, both).await;
}

/// S31, S39: frames a partition holds toward a system that stops become dead
/// letters on the sender, each with its message and in order, once the stopping
/// system's notice arrives; the frame the writer held in hand is one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s39_frames_held_toward_a_system_that_stops_are_each_lettered() {
    let nodes = two_nodes(RemoteSettings::loopback()).expect("two nodes");
    let got = Arc::new(AtomicU64::new(0));
    let (up, mut linked) = mpsc::unbounded_channel();
    let cb = counter(&nodes.b, "cb", &got, up);
    let to_cb = nodes.a.resolve::<Seq>(&cb.to_string()).unwrap();
    to_cb.tell(Seq { sender: 9, n: 0 });
    let heard = timeout(WAIT, linked.recv()).await;
    assert!(matches!(heard, Ok(Some(()))), "the link did not come up");
    let mut on_a = letters(&nodes.a);
    nodes.a_to_b().partition();
    for n in 0..10 {
        to_cb.tell(Seq { sender: 1, n });
    }
    nodes.b.terminate().await;
    let b = nodes.b.address().clone();
    for n in 0..10 {
        let letter = letter_where(&mut on_a, WAIT, |l| l.is::<Seq>()).await;
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::SessionEnded { peer: b.clone() }
        );
        assert_eq!(letter.take_message::<Seq>(), Some(Seq { sender: 1, n }));
    }
    assert_eq!(got.load(Ordering::SeqCst), 0, "a partitioned frame arrived");
    nodes.a.terminate().await;
}

// ------------------------------------------------------------ 10. flow

/// S47, S42: `offer` toward a quarantined peer resolves at once, not accepted,
/// and the message is a dead letter `Quarantined` naming the peer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s47_s42_offer_toward_quarantined_peer_resolves_false_at_once() {
    let nodes = fast_pair();
    let (a, b) = (&nodes.a, &nodes.b);
    let mut probe = TestProbe::<Note>::new(b);
    let r = a.resolve::<Note>(&probe.actor_ref().to_string()).unwrap();
    assert!(timeout(WAIT, r.offer(Note(1))).await.unwrap());
    probe.expect_message(WAIT).await;
    let mut ea = a.events().subscribe::<PeerUnreachable>();
    nodes.partition();
    unreachable_event(&mut ea, b.address()).await;
    let mut dl = letters(a);
    let accepted = timeout(ms(1000), r.offer(Note(2)))
        .await
        .expect("an offer toward a quarantined peer must not wait");
    let letter = letter_where(&mut dl, WAIT, |l| l.is::<Note>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::Quarantined {
            peer: b.address().clone()
        }
    );
    assert!(!accepted, "a dead-lettered offer was reported accepted");
    nodes.terminate().await;
}

/// S47, S39: `offer` toward a port nobody listens on does not hang: it resolves at
/// once and the message is a dead letter `Unreachable` naming that address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s47_s39_offer_toward_dead_port_does_not_hang() {
    let a = node("a");
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let target = format!("tapio://ghost@127.0.0.1:{port}/user/x");
    let r = a.resolve::<Note>(&target).unwrap();
    let mut dl = letters(&a);
    let started = Instant::now();
    let _ = timeout(ms(2000), r.offer(Note(1)))
        .await
        .expect("offer to a dead port hangs");
    let letter = letter_where(&mut dl, WAIT, |l| l.is::<Note>()).await;
    match letter.reason() {
        DeadLetterReason::Unreachable { peer } => {
            assert_eq!(peer.to_string(), format!("tapio://ghost@127.0.0.1:{port}"))
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
    assert!(started.elapsed() < ms(2000));
    a.terminate().await;
}

// ------------------------------------------------------------ 11. TLS

struct Ca {
    params: rcgen::CertificateParams,
    key: rcgen::KeyPair,
    pem: String,
}

fn ca() -> Ca {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
    ];
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "sweep10 ca");
    let key = rcgen::KeyPair::generate().unwrap();
    let pem = params.self_signed(&key).unwrap().pem();
    Ca { params, key, pem }
}

/// A node certificate signed by `ca` for `names`, with `eku` (empty: none); the
/// chain PEM and the key PEM.
fn leaf(ca: &Ca, names: &[&str], eku: Vec<rcgen::ExtendedKeyUsagePurpose>) -> (String, String) {
    let mut params =
        rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap();
    params.extended_key_usages = eku;
    let key = rcgen::KeyPair::generate().unwrap();
    let issuer = rcgen::Issuer::from_params(&ca.params, &ca.key);
    let cert = params.signed_by(&key, &issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

fn tls_node(name: &str, ca: &Ca, leaf: &(String, String), secret: &[u8]) -> ActorSystem {
    let tls = TlsSettings::from_pem(leaf.0.as_bytes(), leaf.1.as_bytes(), ca.pem.as_bytes())
        .expect("tls settings");
    ActorSystem::builder(name)
        .remote(
            RemoteSettings::loopback()
                .secret(secret.to_vec())
                .handshake_timeout(ms(2000))
                .tls(tls),
        )
        .build()
        .expect("tls system builds")
}

const SECRET: &[u8] = b"sweep10-shared-secret-0123456789";

/// S38: a key that does not belong to the certificate is refused when the settings
/// are made, with `RemoteError::Tls` whose message names the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_tls_key_not_matching_certificate_is_typed_error_naming_key() {
    let ca = ca();
    let (cert, _) = leaf(&ca, &["127.0.0.1"], vec![]);
    let (_, other_key) = leaf(&ca, &["127.0.0.1"], vec![]);
    let error = TlsSettings::from_pem(cert.as_bytes(), other_key.as_bytes(), ca.pem.as_bytes())
        .expect_err("a foreign key must be refused");
    match &error {
        RemoteError::Tls { reason } => {
            assert!(reason.to_lowercase().contains("key"), "{reason}");
        }
        other => panic!("expected RemoteError::Tls, got {other:?}"),
    }
    assert!(error.to_string().to_lowercase().contains("key"), "{error}");
}

/// S38: two TLS ends whose certificates verify but whose secrets differ do not
/// link: `reconnect` is a typed `LinkError::Failed` naming the peer, and a tell is
/// a dead letter `Unreachable` naming it; the actor gets nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_tls_with_different_secrets_refused_typed_and_dead_lettered() {
    let ca = ca();
    let la = leaf(&ca, &["127.0.0.1"], vec![]);
    let lb = leaf(&ca, &["127.0.0.1"], vec![]);
    let a = tls_node("a", &ca, &la, SECRET);
    let b = tls_node("b", &ca, &lb, b"another-secret-entirely-0123456789");
    let mut probe = TestProbe::<Note>::new(&b);
    match a.reconnect(b.address()).await {
        Err(LinkError::Failed { peer, .. }) => assert_eq!(&peer, b.address()),
        other => panic!("expected LinkError::Failed, got {other:?}"),
    }
    expect_tell_unreachable(&a, &b, &mut probe).await;
    terminate_all([&a, &b]).await;
}

/// S38: a listener whose certificate names `localhost` only, dialled at
/// `127.0.0.1`, is refused by the dialer (the certificate must name the host of
/// the address dialled); a control pair with the right name links.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_tls_certificate_not_naming_dialled_host_is_refused() {
    let ca = ca();
    let la = leaf(&ca, &["127.0.0.1"], vec![]);
    let lb = leaf(&ca, &["localhost"], vec![]);
    let a = tls_node("a", &ca, &la, SECRET);
    let b = tls_node("b", &ca, &lb, SECRET);
    let mut probe = TestProbe::<Note>::new(&b);
    expect_tell_unreachable(&a, &b, &mut probe).await;
    // Control: b dialling a links: b checks a's certificate for 127.0.0.1, and a,
    // the listener, checks b's client certificate against its roots only.
    let mut pa = TestProbe::<Note>::new(&a);
    b.resolve::<Note>(&pa.actor_ref().to_string())
        .unwrap()
        .tell(Note(2));
    assert_eq!(pa.expect_message(WAIT).await, Note(2));
    terminate_all([&a, &b]).await;
}

/// S38: a certificate whose extended key usage allows server authentication only
/// cannot dial: the docs require both (or no EKU at all). Its tell is a dead
/// letter `Unreachable`, and the listener's actor gets nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_tls_certificate_for_server_auth_only_cannot_dial() {
    let ca = ca();
    let la = leaf(
        &ca,
        &["127.0.0.1"],
        vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth],
    );
    let lb = leaf(
        &ca,
        &["127.0.0.1"],
        vec![
            rcgen::ExtendedKeyUsagePurpose::ServerAuth,
            rcgen::ExtendedKeyUsagePurpose::ClientAuth,
        ],
    );
    let a = tls_node("a", &ca, &la, SECRET);
    let b = tls_node("b", &ca, &lb, SECRET);
    let mut probe = TestProbe::<Note>::new(&b);
    expect_tell_unreachable(&a, &b, &mut probe).await;
    terminate_all([&a, &b]).await;
}
