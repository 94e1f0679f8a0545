//! Remote watches, asks, refs and spawns combined with restarts, failures, sessions and
//! partitions, and messages accounted for when a system terminates or a peer is given
//! up (S14, S18, S22, S23, S28, S31, S36, S37, S39-S47).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::nodes::peer_of;
use crate::support::nodes::uri;
use crate::support::nodes::{given_up, partition_until_given_up, recover};
use crate::support::outside;
use outside::{Boom, T, describe, letters, letters_for, ms, next};
use std::collections::BTreeSet;
use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::remote::spawn::{
    RemoteSpawnError, Spawn, SpawnFailure, SpawnReply, Spawner, SpawnerMsg,
};
use tapio::remote::{PeerUnreachable, RemoteSettings};
use tapio::testkit::{TestProbe, TwoNodes, two_nodes};
use tapio::{
    AskError, DeadLetter, DeadLetterReason, MailboxConfig, OverflowStrategy, Subscription,
    remote_behavior,
};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::{Instant, timeout};

// ---------------------------------------------------------------- messages

#[message(remote = "sw14.note.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note(pub u64);

#[message(remote = "sw14.pong.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pong(pub u64);

#[message(remote = "sw14.ping.v1", reply = Pong)]
pub struct Ping(pub u64);

#[message(remote = "sw14.risky.v1", reply = Pong)]
pub struct Risky {
    pub fail: bool,
}

#[message(remote = "sw14.req.v1")]
pub struct Req {
    pub fail: bool,
    pub reply_to: ActorRef<Pong>,
}

#[message(remote = "sw14.hold.v1", reply = Pong)]
pub struct Hold(pub u64);

#[message(remote = "sw14.cmd.v1")]
#[derive(Debug, Clone)]
pub enum Cmd {
    Crash,
    Say(u64),
}

#[message(remote = "sw14.keep.v1")]
pub enum Keep {
    Hold(ActorRef<Note>),
    Use(u64),
    Watch,
}

#[message(remote = "sw14.bounce.v1")]
pub struct Bounce {
    pub r: ActorRef<Note>,
    pub back: ActorRef<Keep>,
}

/// Local only: an adapter owner's protocol.
#[message]
pub enum OwnerMsg {
    Adapted(u64),
}

/// Local only: start `w` through the spawner, with the tag.
#[message]
pub struct Start(pub ActorRef<SpawnerMsg>, pub u64);

// ---------------------------------------------------------------- factories

#[message(remote = "sw14.brittle-args.v1")]
pub struct BrittleArgs {
    pub tag: u64,
}

/// Built from a tag; tells `Say(n)` as `tag * 1000 + n` to nobody (it records it),
/// and fails on `Crash`, which stops it (no supervision declared).
#[remote_behavior("sw14.brittle")]
pub fn brittle(args: BrittleArgs) -> Behavior<Cmd> {
    let tag = args.tag;
    Behaviors::receive_message(move |cmd: Cmd| -> Result<(), Boom> {
        match cmd {
            Cmd::Crash => Err(Boom),
            Cmd::Say(n) => {
                BRITTLE_SEEN.lock().unwrap().push(tag * 1000 + n);
                Ok(())
            }
        }
    })
    .into()
}

static BRITTLE_SEEN: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// Arguments that nest: a chain of links.
#[message(remote = "sw14.chain-args.v1")]
pub struct ChainArgs {
    pub next: Option<Box<ChainArgs>>,
}

/// An actor built from a chain; it ignores what it is told.
#[remote_behavior("sw14.chain")]
pub fn chain(_args: ChainArgs) -> Behavior<Note> {
    Behaviors::receive_message(|_: Note| ()).into()
}

// ---------------------------------------------------------------- actors

/// Answers `Ping(n)` with `Pong(n * 2)` and forwards each `Note` to its channel.
#[derive(Clone)]
pub struct Echo {
    seen: mpsc::UnboundedSender<u64>,
}

#[actor]
impl Echo {
    fn ping(&mut self, Ping(n): Ping) -> Pong {
        Pong(n * 2)
    }

    fn note(&mut self, Note(n): Note) {
        let _ = self.seen.send(n);
    }
}

/// Counts the requests it handles; answers `Risky { fail: false }` with the count
/// and fails on `Risky { fail: true }`.
#[derive(Clone, Default)]
pub struct Counter {
    count: u64,
}

#[actor]
impl Counter {
    fn risky(&mut self, r: Risky) -> Result<Pong, Boom> {
        self.count += 1;
        if r.fail {
            Err(Boom)
        } else {
            Ok(Pong(self.count))
        }
    }
}

/// Answers `Hold(n)` with `Pong(n)` after a pause, saying when it starts each.
#[derive(Clone)]
pub struct Holder {
    entered: mpsc::UnboundedSender<u64>,
}

#[actor]
impl Holder {
    async fn hold(&mut self, Hold(n): Hold) -> Pong {
        let _ = self.entered.send(n);
        tokio::time::sleep(ms(300)).await;
        Pong(n)
    }
}

/// Forwards every `Note` to the channel returned.
fn sink() -> (Behavior<Note>, mpsc::UnboundedReceiver<u64>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let behavior = Behaviors::receive_message(move |Note(n): Note| {
        let _ = tx.send(n);
    })
    .into();
    (behavior, rx)
}

/// Holds a ref it is sent, reports it, tells it on `Use`, watches it on `Watch` and
/// reports the end as `"terminated"`.
fn keeper(
    refs: mpsc::UnboundedSender<ActorRef<Note>>,
    events: mpsc::UnboundedSender<&'static str>,
) -> Behavior<Keep> {
    Behaviors::setup(move |_ctx: &mut ActorContext<Keep>| {
        let held: Arc<std::sync::Mutex<Option<ActorRef<Note>>>> = Default::default();
        let (refs, said, heard) = (refs.clone(), events.clone(), events.clone());
        Behaviors::receive(move |ctx, keep: Keep| match keep {
            Keep::Hold(r) => {
                let _ = refs.send(r.clone());
                *held.lock().unwrap() = Some(r);
            }
            Keep::Use(n) => held
                .lock()
                .unwrap()
                .as_ref()
                .expect("a held ref")
                .tell(Note(n)),
            Keep::Watch => {
                let target = held.lock().unwrap().clone().expect("a held ref");
                ctx.watch(&target);
                let _ = said.send("watching");
            }
        })
        .on_signal(move |_, signal| {
            if let Signal::Terminated(_) = signal {
                let _ = heard.send("terminated");
            }
        })
    })
}

/// Sends what it is told to bounce back to `back`, inside `Keep::Hold`.
fn bouncer() -> Behavior<Bounce> {
    Behaviors::receive_message(|b: Bounce| b.back.tell(Keep::Hold(b.r))).into()
}

// ---------------------------------------------------------------- helpers

/// Two nodes whose detectors give up after 700 ms of silence.
fn quick() -> TwoNodes {
    two_nodes(
        RemoteSettings::loopback()
            .heartbeat_interval(ms(100))
            .unreachable_after(ms(700)),
    )
    .expect("two nodes")
}

/// Two nodes with the default (10 s) detector: a short partition gives nobody up.
fn calm() -> TwoNodes {
    two_nodes(RemoteSettings::loopback()).expect("two nodes")
}

/// A [`sink`] on `system` named `name`: its local ref and its channel.
fn sink_on(system: &ActorSystem, name: &str) -> (ActorRef<Note>, mpsc::UnboundedReceiver<u64>) {
    let (behavior, rx) = sink();
    (system.spawn(behavior, name).unwrap(), rx)
}

/// `local` resolved from `from`, once a `Note(0)` told through it has arrived.
async fn linked_ref(
    from: &ActorSystem,
    local: &ActorRef<Note>,
    rx: &mut mpsc::UnboundedReceiver<u64>,
) -> ActorRef<Note> {
    let remote = from.resolve::<Note>(&local.to_string()).unwrap();
    remote.tell(Note(0));
    assert_eq!(next(rx).await, 0);
    remote
}

/// An actor on `system` that watches `targets` and sends the path of each end.
async fn watcher_of<Q: Message>(
    system: &ActorSystem,
    name: &str,
    targets: Vec<ActorRef<Q>>,
) -> mpsc::UnboundedReceiver<String> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    system
        .spawn(
            Behaviors::setup_once(move |ctx: &mut ActorContext<u64>| {
                for target in &targets {
                    ctx.watch(target);
                }
                let _ = tx.send("watching".to_owned());
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                    if let Signal::Terminated(t) = signal {
                        let _ = tx.send(t.actor().path().to_string());
                    }
                })
            }),
            name,
        )
        .expect("a watcher");
    assert_eq!(next(&mut rx).await, "watching");
    rx
}

/// Accounts for the notes `1..=n` told toward `path`: delivered on `rx`, or a dead
/// letter on one of `subs`; waits until all `n` are accounted for (within `T`), then
/// asserts that none is both or twice, and that what was delivered came in order.
/// Returns (delivered, lettered reasons).
async fn account(
    n: u64,
    path: &str,
    rx: &mut mpsc::UnboundedReceiver<u64>,
    subs: &mut [&mut Subscription<DeadLetter>],
) -> (Vec<u64>, Vec<String>) {
    let deadline = Instant::now() + T;
    let mut delivered = Vec::new();
    let mut lettered: Vec<(u64, String)> = Vec::new();
    loop {
        while let Ok(k) = rx.try_recv() {
            delivered.push(k);
        }
        for sub in subs.iter_mut() {
            while let Some(letter) = sub.try_recv() {
                if letter.recipient().to_string() == path
                    && let Some(Note(k)) = letter.take_message::<Note>()
                {
                    lettered.push((k, describe(&letter)));
                }
            }
        }
        if (delivered.len() + lettered.len()) as u64 >= n {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {} delivered and {} lettered of {n} within {T:?}; delivered {delivered:?}, lettered {lettered:?}",
            delivered.len(),
            lettered.len()
        );
        tokio::time::sleep(ms(10)).await;
    }
    let mut all: Vec<u64> = delivered
        .iter()
        .copied()
        .chain(lettered.iter().map(|(k, _)| *k))
        .collect();
    all.sort_unstable();
    assert_eq!(
        all,
        (1..=n).collect::<Vec<_>>(),
        "each note once: delivered {delivered:?}, lettered {lettered:?}"
    );
    assert!(
        delivered.windows(2).all(|w| w[0] < w[1]),
        "delivered out of order: {delivered:?}"
    );
    (delivered, lettered.into_iter().map(|(_, d)| d).collect())
}

// ======================================================== 1. watching

/// S14, S41: a watch made over the link while the watched actor backs off between
/// two incarnations is not ended by the restart: it hears nothing while the actor
/// comes back, and `Terminated` once when the actor is stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s14_s41_a_watch_made_while_the_target_backs_off_hears_only_its_later_stop() {
    let nodes = calm();
    let (tx, mut said) = mpsc::unbounded_channel::<String>();
    let strategy =
        SupervisorStrategy::restart().with_backoff(Backoff::new(ms(400), ms(400), 0.0).unwrap());
    let local = nodes
        .b
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<Cmd>| {
                let _ = tx.send("started".to_owned());
                let tx = tx.clone();
                Behaviors::receive_message(move |cmd: Cmd| -> Result<(), Boom> {
                    match cmd {
                        Cmd::Crash => {
                            let _ = tx.send("failing".to_owned());
                            Err(Boom)
                        }
                        Cmd::Say(n) => {
                            let _ = tx.send(n.to_string());
                            Ok(())
                        }
                    }
                })
            }))
            .on_failure::<Boom>(strategy),
            "phoenix",
        )
        .unwrap();
    assert_eq!(next(&mut said).await, "started");
    let remote = nodes.a.resolve::<Cmd>(&local.to_string()).unwrap();
    remote.tell(Cmd::Say(1));
    assert_eq!(next(&mut said).await, "1");
    remote.tell(Cmd::Crash);
    assert_eq!(next(&mut said).await, "failing");
    // The actor is between incarnations for 400 ms: watch it now.
    let mut probe = TestProbe::<u64>::new(&nodes.a);
    probe.watch(&remote);
    assert_eq!(next(&mut said).await, "started");
    remote.tell(Cmd::Say(2));
    assert_eq!(next(&mut said).await, "2");
    probe.expect_no_termination(ms(200)).await;
    nodes.b.stop(&local).unwrap();
    probe.expect_terminated(&remote, T).await;
    probe.expect_no_termination(ms(300)).await;
    nodes.terminate().await;
}

/// S41, S42, S43, S18: a watch ended by a give-up does not fire again; after
/// recovery, a watch through a ref resolved again hears the actor's stop once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_s42_s43_a_watch_on_the_new_session_hears_the_stop_once() {
    let nodes = quick();
    let (local, mut rx) = sink_on(&nodes.b, "sink");
    let old = linked_ref(&nodes.a, &local, &mut rx).await;
    let mut probe = TestProbe::<u64>::new(&nodes.a);
    probe.watch(&old);
    partition_until_given_up(&nodes.a, &nodes.b, T).await;
    probe.expect_terminated(&old, T).await;
    recover(&nodes.a, &nodes.b).await;
    let new = nodes.a.resolve::<Note>(&local.to_string()).unwrap();
    new.tell(Note(2));
    assert_eq!(next(&mut rx).await, 2);
    probe.watch(&new);
    probe.expect_no_termination(ms(200)).await;
    nodes.b.stop(&local).unwrap();
    probe.expect_terminated(&new, T).await;
    probe.expect_no_termination(ms(300)).await;
    nodes.terminate().await;
}

/// S41, S43, S18: after recovery, a watch made through a ref of the ended session
/// (one that can never deliver again: `SessionEnded`) hears `Terminated`, as a
/// watch of an actor already given up on does, rather than never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_s43_a_watch_through_a_ref_of_the_ended_session_hears_terminated() {
    let nodes = quick();
    let (local, mut rx) = sink_on(&nodes.b, "sink");
    let old = linked_ref(&nodes.a, &local, &mut rx).await;
    partition_until_given_up(&nodes.a, &nodes.b, T).await;
    recover(&nodes.a, &nodes.b).await;
    let new = nodes.a.resolve::<Note>(&local.to_string()).unwrap();
    new.tell(Note(2));
    assert_eq!(next(&mut rx).await, 2);
    let mut probe = TestProbe::<u64>::new(&nodes.a);
    probe.watch(&old);
    probe.expect_terminated(&old, T).await;
    // The actor itself lives on, reachable through the new ref.
    new.tell(Note(3));
    assert_eq!(next(&mut rx).await, 3);
    nodes.terminate().await;
}

/// S31, S41: one watcher of twenty actors on another system hears each of them end,
/// once, when that system terminates, and nothing more. The watches make the first
/// link between the two; the system terminates once it has reached it
/// (`reconnect` waits for that): a dial that came only after its listening socket
/// closed would be refused, as by a system that is not there, and heard of only
/// at the detector's give-up (docs/remoting.md). Dials that reach the system
/// while it leaves, in their handshake, are link_leaving's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_each_of_twenty_remote_watches_hears_its_system_terminate_once() {
    let nodes = calm();
    let mut paths = BTreeSet::new();
    let mut remotes = Vec::new();
    for i in 0..20 {
        let (local, _rx) = sink_on(&nodes.b, &format!("m{i}"));
        paths.insert(local.path().to_string());
        remotes.push(nodes.a.resolve::<Note>(&local.to_string()).unwrap());
    }
    let mut ends = watcher_of(&nodes.a, "watcher", remotes).await;
    timeout(T, nodes.a.reconnect(nodes.b.address()))
        .await
        .expect("the link is made within the bound")
        .expect("the link is made");
    nodes.b.terminate().await;
    let mut heard = BTreeSet::new();
    for _ in 0..20 {
        let path = timeout(T, ends.recv())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "only {} of 20 ends within {T:?}; missing {:?}",
                    heard.len(),
                    paths.difference(&heard).collect::<Vec<_>>()
                )
            })
            .expect("the watcher is alive");
        assert!(heard.insert(path.clone()), "{path} ended twice");
    }
    assert_eq!(heard, paths);
    let more = timeout(ms(300), ends.recv()).await;
    assert!(more.is_err(), "a further end: {more:?}");
    nodes.a.terminate().await;
}

// ======================================================== 2. asks

/// A [`Counter`] on b supervised with `strategy`, and the ref a resolves for it.
fn counter_on_b(nodes: &TwoNodes, strategy: impl Into<SupervisorStrategy>) -> ActorRef<CounterMsg> {
    nodes
        .b
        .spawn(
            Counter::default()
                .supervise()
                .on_failure::<Boom>(strategy.into()),
            "counter",
        )
        .unwrap();
    nodes
        .a
        .resolve::<CounterMsg>(&uri(&nodes.b, "/user/counter"))
        .unwrap()
}

/// Asks `Risky { fail: true }` with a 30 s deadline: the handler fails and its
/// actor goes on, so the request went unanswered, and the ask says so at once, as a
/// local one does (docs/remoting.md), not at its deadline.
async fn assert_failing_request_is_unanswered_at_once(remote: &ActorRef<CounterMsg>) {
    let started = Instant::now();
    let outcome = timeout(
        T,
        remote
            .ask(Risky { fail: true })
            .timeout(Duration::from_secs(30)),
    )
    .await
    .expect("the ask ended within the bound");
    assert!(
        matches!(outcome, Err(AskError::Unanswered { .. })),
        "{outcome:?} after {:?}",
        started.elapsed()
    );
}

/// S21, S22, S44: a request handler that fails and resumes answers nothing: the
/// remote ask fails `Unanswered` at once, the actor keeps its state and answers the
/// next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s22_s44_a_remote_request_handler_failing_under_resume_is_unanswered_at_once() {
    let nodes = calm();
    let remote = counter_on_b(&nodes, SupervisorStrategy::resume());
    let first = remote.ask(Risky { fail: false }).timeout(T).await.unwrap();
    assert_eq!(first, Pong(1));
    assert_failing_request_is_unanswered_at_once(&remote).await;
    let third = remote.ask(Risky { fail: false }).timeout(T).await.unwrap();
    assert_eq!(third, Pong(3), "resumed: the count went on");
    nodes.terminate().await;
}

/// S14, S22, S44: the same under restart: the ask fails `Unanswered` at once, and
/// the next ask is answered by the new incarnation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s14_s22_s44_a_remote_request_handler_failing_under_restart_is_unanswered_at_once() {
    let nodes = calm();
    let remote = counter_on_b(&nodes, SupervisorStrategy::restart());
    let mut probe = TestProbe::<u64>::new(&nodes.a);
    probe.watch(&remote);
    assert_eq!(
        remote.ask(Risky { fail: false }).timeout(T).await.unwrap(),
        Pong(1)
    );
    assert_failing_request_is_unanswered_at_once(&remote).await;
    let after = remote.ask(Risky { fail: false }).timeout(T).await.unwrap();
    assert_eq!(after, Pong(1), "a new incarnation counts from its start");
    probe.expect_no_termination(ms(100)).await;
    nodes.terminate().await;
}

/// S9, S23, S44: a request handler that fails with the default decision stops its
/// actor: the ask in hand and the one queued behind it both fail with
/// `TargetTerminated`, long before their deadline, and a later ask fails at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s23_s44_a_failing_remote_handler_that_stops_ends_the_ask_in_hand_and_the_queued_one() {
    let nodes = calm();
    nodes.b.spawn(Counter::default(), "counter").unwrap();
    let remote = nodes
        .a
        .resolve::<CounterMsg>(&uri(&nodes.b, "/user/counter"))
        .unwrap();
    // Link first, so both requests go out on a live association.
    assert_eq!(
        remote.ask(Risky { fail: false }).timeout(T).await.unwrap(),
        Pong(1)
    );
    let started = Instant::now();
    let in_hand = remote
        .ask(Risky { fail: true })
        .timeout(Duration::from_secs(30));
    let queued = remote
        .ask(Risky { fail: false })
        .timeout(Duration::from_secs(30));
    let (in_hand, queued) = timeout(T, async { tokio::join!(in_hand, queued) })
        .await
        .expect("both asks ended within the bound");
    assert!(
        matches!(in_hand, Err(AskError::TargetTerminated { .. })),
        "{in_hand:?}"
    );
    assert!(
        matches!(queued, Err(AskError::TargetTerminated { .. })),
        "{queued:?}"
    );
    let later = timeout(
        T,
        remote
            .ask(Risky { fail: false })
            .timeout(Duration::from_secs(30)),
    )
    .await
    .expect("the later ask ended within the bound");
    assert!(
        matches!(
            later,
            Err(AskError::TargetTerminated { .. } | AskError::Unreachable { .. })
        ),
        "{later:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    nodes.terminate().await;
}

/// S21, S44, S14: a reply ref in a field, dropped by a handler that fails and
/// restarts, reads `Unanswered` at once (docs/remoting.md); the new incarnation
/// answers the next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s14_s44_a_reply_ref_dropped_by_a_failing_restarting_handler_is_unanswered_at_once() {
    let nodes = calm();
    let local = nodes
        .b
        .spawn(
            Behaviors::supervise(Behaviors::receive_message(|r: Req| -> Result<(), Boom> {
                if r.fail {
                    Err(Boom)
                } else {
                    r.reply_to.tell(Pong(7));
                    Ok(())
                }
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "desk",
        )
        .unwrap();
    let remote = nodes.a.resolve::<Req>(&local.to_string()).unwrap();
    let started = Instant::now();
    let outcome = timeout(
        T,
        remote
            .ask_with(|reply_to| Req {
                fail: true,
                reply_to,
            })
            .timeout(Duration::from_secs(30)),
    )
    .await
    .expect("the ask ended within the bound");
    assert!(
        matches!(outcome, Err(AskError::Unanswered { .. })),
        "{outcome:?} after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let answer: Pong = remote
        .ask_with(|reply_to| Req {
            fail: false,
            reply_to,
        })
        .timeout(T)
        .await
        .unwrap();
    assert_eq!(answer, Pong(7));
    nodes.terminate().await;
}

/// S43, S44: after recovery, an ask through a ref of the ended session fails at once
/// (it cannot be sent: `Unreachable`, its letter `SessionEnded`), while the same
/// actor resolved again answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_s44_an_ask_through_a_ref_of_the_ended_session_fails_at_once() {
    let nodes = quick();
    let (tx, _seen) = mpsc::unbounded_channel();
    nodes.b.spawn(Echo { seen: tx }, "echo").unwrap();
    let echo_uri = uri(&nodes.b, "/user/echo");
    let old = nodes.a.resolve::<EchoMsg>(&echo_uri).unwrap();
    assert_eq!(old.ask(Ping(1)).timeout(T).await.unwrap(), Pong(2));
    partition_until_given_up(&nodes.a, &nodes.b, T).await;
    recover(&nodes.a, &nodes.b).await;
    let new = nodes.a.resolve::<EchoMsg>(&echo_uri).unwrap();
    assert_eq!(new.ask(Ping(2)).timeout(T).await.unwrap(), Pong(4));
    let mut dl = letters(&nodes.a);
    let started = Instant::now();
    let outcome = timeout(T, old.ask(Ping(3)).timeout(Duration::from_secs(30)))
        .await
        .expect("the ask ended within the bound");
    assert!(
        matches!(outcome, Err(AskError::Unreachable { .. })),
        "{outcome:?} after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let letter = &letters_for(&mut dl, old.path(), 1).await[0];
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::SessionEnded {
            peer: nodes.b.address().clone()
        },
        "{}",
        describe(letter)
    );
    assert_eq!(new.ask(Ping(4)).timeout(T).await.unwrap(), Pong(8));
    nodes.terminate().await;
}

/// S41, S44, S39: ten asks to an actor on b, one in its hands and nine queued, when
/// b terminates: each ends well before its deadline (an answer for the one in hand,
/// or `TargetTerminated` / `Unreachable`), the watch of the actor hears its end,
/// and a tell through the old ref afterwards is a `SessionEnded` letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_s41_s44_asks_in_hand_and_queued_when_the_asked_system_terminates_all_end() {
    let nodes = calm();
    let (entered_tx, mut entered) = mpsc::unbounded_channel();
    nodes
        .b
        .spawn(
            Holder {
                entered: entered_tx,
            },
            "holder",
        )
        .unwrap();
    let remote = nodes
        .a
        .resolve::<HolderMsg>(&uri(&nodes.b, "/user/holder"))
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&nodes.a);
    probe.watch(&remote);
    let asks: Vec<_> = (1..=10)
        .map(|n| remote.ask(Hold(n)).timeout(Duration::from_secs(30)))
        .collect();
    assert_eq!(next(&mut entered).await, 1);
    let started = Instant::now();
    let terminating = tokio::spawn(nodes.b.terminate());
    let outcomes = timeout(T, futures_join_all(asks))
        .await
        .expect("every ask ended within the bound");
    for (n, outcome) in (1..).zip(&outcomes) {
        let fine = match outcome {
            Ok(Pong(k)) => *k == 1 && n == 1,
            Err(AskError::TargetTerminated { .. } | AskError::Unreachable { .. }) => true,
            Err(_) => false,
        };
        assert!(fine, "ask {n}: {outcome:?}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    probe.expect_terminated(&remote, T).await;
    timeout(T, terminating).await.unwrap().unwrap();
    let mut dl = letters(&nodes.a);
    remote.tell(Hold(99));
    let letter = &letters_for(&mut dl, remote.path(), 1).await[0];
    assert_eq!(
        peer_of(letter.reason()),
        Some(nodes.b.address()),
        "{}",
        describe(letter)
    );
    nodes.a.terminate().await;
}

/// Awaits every future of `asks`, concurrently, in order.
async fn futures_join_all<F: std::future::IntoFuture>(asks: Vec<F>) -> Vec<F::Output>
where
    F::IntoFuture: Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = asks
        .into_iter()
        .map(|ask| tokio::spawn(ask.into_future()))
        .collect();
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}

// ======================================================== 3. refs coming home

/// S36, S18: a ref to b's actor that b sends to a and a sends back to b arrives as
/// b's local actor: equal to it, usable and watchable while the link is partitioned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s18_a_ref_sent_b_to_a_to_b_is_local_and_works_through_a_partition() {
    let nodes = calm();
    let (sink_local, mut rx) = sink_on(&nodes.b, "sink");
    let (refs_tx, mut refs) = mpsc::unbounded_channel();
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let keeper_local = nodes.b.spawn(keeper(refs_tx, events_tx), "keeper").unwrap();
    nodes.a.spawn(bouncer(), "bouncer").unwrap();
    let bouncer = nodes
        .b
        .resolve::<Bounce>(&uri(&nodes.a, "/user/bouncer"))
        .unwrap();
    bouncer.tell(Bounce {
        r: sink_local.clone(),
        back: keeper_local.clone(),
    });
    let home = next(&mut refs).await;
    assert_eq!(home, sink_local, "the ref came home as b's own actor");
    nodes.partition();
    keeper_local.tell(Keep::Use(7));
    assert_eq!(
        next(&mut rx).await,
        7,
        "told locally, through the partition"
    );
    keeper_local.tell(Keep::Watch);
    assert_eq!(next(&mut events).await, "watching");
    nodes.b.stop(&sink_local).unwrap();
    assert_eq!(next(&mut events).await, "terminated");
    nodes.heal();
    nodes.terminate().await;
}

/// S28, S36: a message adapter of a's actor sent to b and back arrives as the
/// adapter: it still translates for its owner, through a partition (it is local).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s28_s36_an_adapter_sent_a_to_b_to_a_still_translates_through_a_partition() {
    let nodes = calm();
    let (adapter_tx, mut adapters) = mpsc::unbounded_channel();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    nodes
        .a
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<OwnerMsg>| {
                let adapter: ActorRef<Note> = ctx.message_adapter(|Note(n)| OwnerMsg::Adapted(n));
                let _ = adapter_tx.send(adapter);
                let seen = seen_tx.clone();
                Behaviors::receive_message(move |OwnerMsg::Adapted(n)| {
                    let _ = seen.send(n);
                })
            }),
            "owner",
        )
        .unwrap();
    let adapter = next(&mut adapters).await;
    let (refs_tx, mut refs) = mpsc::unbounded_channel();
    let (events_tx, _events) = mpsc::unbounded_channel();
    let keeper_local = nodes.a.spawn(keeper(refs_tx, events_tx), "keeper").unwrap();
    nodes.b.spawn(bouncer(), "bouncer").unwrap();
    let bouncer = nodes
        .a
        .resolve::<Bounce>(&uri(&nodes.b, "/user/bouncer"))
        .unwrap();
    bouncer.tell(Bounce {
        r: adapter.clone(),
        back: keeper_local.clone(),
    });
    let home = next(&mut refs).await;
    assert_eq!(home, adapter, "the adapter came home as itself");
    nodes.partition();
    keeper_local.tell(Keep::Use(9));
    assert_eq!(
        next(&mut seen).await,
        9,
        "translated locally, through the partition"
    );
    nodes.heal();
    nodes.terminate().await;
}

/// S36: two systems in one process with the same actor names: each reaches the
/// other's actor through the other's address, and its own through its own address
/// (locally, even through a partition).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_two_systems_with_the_same_actor_names_reach_the_actor_each_address_names() {
    let nodes = calm();
    let (on_a, mut rx_a) = sink_on(&nodes.a, "sink");
    let (on_b, mut rx_b) = sink_on(&nodes.b, "sink");
    let b_from_a = nodes.a.resolve::<Note>(&on_b.to_string()).unwrap();
    let a_from_b = nodes.b.resolve::<Note>(&on_a.to_string()).unwrap();
    b_from_a.tell(Note(1));
    a_from_b.tell(Note(2));
    assert_eq!(next(&mut rx_b).await, 1);
    assert_eq!(next(&mut rx_a).await, 2);
    nodes.partition();
    let a_from_a = nodes
        .a
        .resolve::<Note>(&uri(&nodes.a, "/user/sink"))
        .unwrap();
    let b_from_b = nodes
        .b
        .resolve::<Note>(&uri(&nodes.b, "/user/sink"))
        .unwrap();
    assert_eq!(a_from_a, on_a);
    assert_eq!(b_from_b, on_b);
    a_from_a.tell(Note(3));
    b_from_b.tell(Note(4));
    assert_eq!(next(&mut rx_a).await, 3);
    assert_eq!(next(&mut rx_b).await, 4);
    assert!(rx_a.try_recv().is_err() && rx_b.try_recv().is_err());
    nodes.heal();
    nodes.terminate().await;
}

// ======================================================== 4. faults, accounted

/// S31, S39, S42: forty tells held by a partition when the peer is given up on are
/// each accounted for: delivered (in order) or a dead letter naming the peer, never
/// both, never lost; after the give-up a tell letters `Quarantined`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s39_s42_tells_held_by_a_partition_at_a_give_up_are_each_accounted_once() {
    let nodes = quick();
    let (local, mut rx) = sink_on(&nodes.b, "sink");
    let remote = linked_ref(&nodes.a, &local, &mut rx).await;
    let mut on_a = letters(&nodes.a);
    let mut on_b = letters(&nodes.b);
    let mut gave_up = nodes.a.events().subscribe::<PeerUnreachable>();
    nodes.partition();
    for n in 1..=40 {
        remote.tell(Note(n));
    }
    given_up(&mut gave_up, nodes.b.address(), T).await;
    nodes.heal();
    let (_, reasons) = account(
        40,
        &local.path().to_string(),
        &mut rx,
        &mut [&mut on_a, &mut on_b],
    )
    .await;
    let b = nodes.b.address().to_string();
    assert!(
        reasons.iter().all(|r| r.contains(&b)),
        "each letter names the peer: {reasons:?}"
    );
    remote.tell(Note(41));
    let letter = &letters_for(&mut on_a, remote.path(), 1).await[0];
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::Quarantined {
            peer: nodes.b.address().clone()
        }
    );
    nodes.terminate().await;
}

/// Which side of a delayed burst terminates while the burst is held in the link.
#[derive(Clone, Copy)]
enum Ending {
    /// The receiving system, b.
    Receiver,
    /// The sending system, a.
    Sender,
}

/// Two hundred tells from a to b on a link delayed by 150 ms; then the `ending`
/// side terminates at once, and each tell is delivered (in order) or a dead letter
/// on one of the two systems, once; then the other side terminates.
async fn delayed_burst_then(ending: Ending) {
    let nodes = calm();
    let (local, mut rx) = sink_on(&nodes.b, "sink");
    let remote = linked_ref(&nodes.a, &local, &mut rx).await;
    let mut on_a = letters(&nodes.a);
    let mut on_b = letters(&nodes.b);
    nodes.a_to_b().delay(ms(150));
    for n in 1..=200 {
        remote.tell(Note(n));
    }
    let (first, second) = match ending {
        Ending::Receiver => (&nodes.b, &nodes.a),
        Ending::Sender => (&nodes.a, &nodes.b),
    };
    first.terminate().await;
    account(
        200,
        &local.path().to_string(),
        &mut rx,
        &mut [&mut on_a, &mut on_b],
    )
    .await;
    second.terminate().await;
}

/// S31, S39, S45: two hundred tells on a link delayed by 150 ms, toward a system
/// that terminates right after they were told: each is delivered (in order) or a
/// dead letter on one of the two systems, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s39_s45_a_delayed_burst_toward_a_system_that_terminates_is_each_accounted_once() {
    delayed_burst_then(Ending::Receiver).await;
}

/// S31, S39, S45: the same when the sending system terminates with the burst held
/// in the delayed link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s39_s45_a_delayed_burst_from_a_system_that_terminates_is_each_accounted_once() {
    delayed_burst_then(Ending::Sender).await;
}

// ======================================================== 5. remote spawn

/// A spawner on b offering `brittle`, and the ref a resolves for it.
fn spawner_on_b(nodes: &TwoNodes) -> ActorRef<SpawnerMsg> {
    nodes
        .b
        .spawn(
            Spawner::offering::<brittle>()
                .and::<chain>()
                .build()
                .unwrap(),
            "spawner",
        )
        .unwrap();
    nodes
        .a
        .resolve::<SpawnerMsg>(&uri(&nodes.b, "/user/spawner"))
        .unwrap()
}

async fn raw_spawn(
    spawner: &ActorRef<SpawnerMsg>,
    factory: &str,
    args: Vec<u8>,
    name: &str,
) -> SpawnReply {
    spawner
        .ask(Spawn {
            factory: factory.to_owned(),
            args,
            name: name.to_owned(),
        })
        .timeout(T)
        .await
        .expect("the spawner answers")
}

/// S46: raw `Spawn` requests: an unknown key, arguments that do not decode (empty,
/// a cut varint, trailing bytes after a whole value) and a name the rules refuse are
/// each refused with their reason; well-formed ones start, and the refused names
/// stay free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_raw_spawn_requests_with_bad_keys_arguments_or_names_are_refused_with_reasons() {
    let nodes = calm();
    let spawner = spawner_on_b(&nodes);
    let reply = raw_spawn(&spawner, "sw14.nobody", vec![1], "w1").await;
    assert!(
        matches!(&reply, SpawnReply::SpawnFailed { reason: SpawnFailure::UnknownFactory { factory } } if factory == "sw14.nobody"),
        "{reply:?}"
    );
    for (args, name) in [(vec![], "w2"), (vec![0x80], "w3"), (vec![5, 7], "w4")] {
        let reply = raw_spawn(&spawner, "sw14.brittle", args.clone(), name).await;
        assert!(
            matches!(
                &reply,
                SpawnReply::SpawnFailed {
                    reason: SpawnFailure::BadArguments { .. }
                }
            ),
            "{args:?}: {reply:?}"
        );
    }
    let reply = raw_spawn(&spawner, "sw14.brittle", vec![5], "not/a/name").await;
    assert!(
        matches!(
            &reply,
            SpawnReply::SpawnFailed {
                reason: SpawnFailure::InvalidName { .. }
            }
        ),
        "{reply:?}"
    );
    for name in ["w1", "w2", "w3", "w4"] {
        let reply = raw_spawn(&spawner, "sw14.brittle", vec![5], name).await;
        assert!(
            matches!(&reply, SpawnReply::Spawned { name: got, .. } if got == name),
            "{name}: {reply:?}"
        );
    }
    nodes.terminate().await;
}

/// S46: two spawns of one name sent at once: one starts the actor, the other is
/// refused as `NameTaken`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_two_spawns_of_one_name_at_once_start_one_and_refuse_the_other() {
    let nodes = calm();
    let spawner = spawner_on_b(&nodes);
    let first = spawner.spawn_remote::<brittle>(BrittleArgs { tag: 1 }, "twin");
    let second = spawner.spawn_remote::<brittle>(BrittleArgs { tag: 2 }, "twin");
    let (first, second) = timeout(T, async { tokio::join!(first, second) })
        .await
        .expect("both answered within the bound");
    let (won, lost) = match (first, second) {
        (Ok(won), Err(lost)) | (Err(lost), Ok(won)) => (won, lost),
        other => panic!("not one start and one refusal: {other:?}"),
    };
    assert_eq!(won.name, "twin");
    assert!(
        matches!(&lost, RemoteSpawnError::Refused(SpawnFailure::NameTaken { name }) if name == "twin"),
        "{lost:?}"
    );
    nodes.terminate().await;
}

/// A requester on a: on `Start(spawner, tag)` it starts a `brittle` named `"w"`
/// there (watching it) and sends the ref; it sends `None` for a refusal and the
/// path of each watched end as text on `ends`.
fn requester(
    system: &ActorSystem,
    started: mpsc::UnboundedSender<Option<ActorRef<Cmd>>>,
    ends: mpsc::UnboundedSender<String>,
) -> ActorRef<Start> {
    system
        .spawn(
            Behaviors::receive_async(async move |ctx, Start(spawner, tag): Start| {
                let got = ctx
                    .spawn_remote::<brittle>(&spawner, BrittleArgs { tag }, "w")
                    .await;
                let _ = started.send(got.ok().map(|s| s.actor));
            })
            .on_signal(move |_, signal| {
                if let Signal::Terminated(t) = signal {
                    let _ = ends.send(t.actor().path().to_string());
                }
            }),
            "requester",
        )
        .unwrap()
}

/// S46, S41, S9: a remotely spawned actor whose handler fails (no supervision
/// declared: it stops) is heard ending by the actor that started it, and its name
/// under the spawner is free again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_s41_a_spawned_actor_that_fails_is_heard_by_its_requester_and_frees_its_name() {
    let nodes = calm();
    let spawner = spawner_on_b(&nodes);
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (ends_tx, mut ends) = mpsc::unbounded_channel();
    let req = requester(&nodes.a, started_tx, ends_tx);
    req.tell(Start(spawner.clone(), 7));
    let worker = next(&mut started).await.expect("started");
    worker.tell(Cmd::Say(1));
    worker.tell(Cmd::Crash);
    worker.tell(Cmd::Say(2));
    assert_eq!(next(&mut ends).await, worker.path().to_string());
    assert!(BRITTLE_SEEN.lock().unwrap().contains(&7001));
    assert!(!BRITTLE_SEEN.lock().unwrap().contains(&7002));
    // The name is free again: the next start under it succeeds (it may race the
    // spawner hearing its child's end, so retry a few times on `NameTaken`).
    let mut again = None;
    for _ in 0..20 {
        match spawner
            .spawn_remote::<brittle>(BrittleArgs { tag: 8 }, "w")
            .await
        {
            Ok(s) => {
                again = Some(s);
                break;
            }
            Err(RemoteSpawnError::Refused(SpawnFailure::NameTaken { .. })) => {
                tokio::time::sleep(ms(50)).await;
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    let again = again.expect("the name came free");
    again.actor.tell(Cmd::Say(3));
    let deadline = Instant::now() + T;
    while !BRITTLE_SEEN.lock().unwrap().contains(&8003) {
        assert!(
            Instant::now() < deadline,
            "the new actor never heard its tell"
        );
        tokio::time::sleep(ms(10)).await;
    }
    nodes.terminate().await;
}

/// S46, S41, S42: an actor that started a remote actor hears it end when the
/// spawner's system is given up on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_s42_a_requester_hears_its_spawned_actor_end_when_its_system_is_given_up() {
    let nodes = quick();
    let spawner = spawner_on_b(&nodes);
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (ends_tx, mut ends) = mpsc::unbounded_channel();
    let req = requester(&nodes.a, started_tx, ends_tx);
    req.tell(Start(spawner, 9));
    let worker = next(&mut started).await.expect("started");
    partition_until_given_up(&nodes.a, &nodes.b, T).await;
    assert_eq!(next(&mut ends).await, worker.path().to_string());
    let more = timeout(ms(300), ends.recv()).await;
    assert!(more.is_err(), "a second end: {more:?}");
    nodes.heal();
    nodes.terminate().await;
}

// ======================================================== 6. backpressure

/// S47, S45, S40: offers toward a peer behind a one-way partition fill this
/// system's outbound buffer; the first `offer_within` that finds no room in time is
/// `false` and a dead letter (`OfferTimedOut`); after the heal every offer accepted
/// before it arrives, in order, and it never does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_s47_an_offer_that_times_out_toward_a_partitioned_peer_is_the_only_one_lost() {
    let nodes = calm();
    let (local, mut rx) = sink_on(&nodes.b, "sink");
    let remote = linked_ref(&nodes.a, &local, &mut rx).await;
    let mut dl = letters(&nodes.a);
    nodes.a_to_b().partition();
    let mut refused = None;
    for n in 1..=5_000_u64 {
        if !remote.offer_within(Note(n), ms(200)).await {
            refused = Some(n);
            break;
        }
    }
    let refused = refused.expect("the outbound buffer never filled in 5,000 offers");
    let letter = &letters_for(&mut dl, remote.path(), 1).await[0];
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::OfferTimedOut,
        "{}",
        describe(letter)
    );
    assert_eq!(letter.take_message::<Note>(), Some(Note(refused)));
    nodes.a_to_b().heal();
    for n in 1..refused {
        assert_eq!(next(&mut rx).await, n);
    }
    let after = timeout(ms(300), rx.recv()).await;
    assert!(after.is_err(), "more arrived: {after:?}");
    nodes.terminate().await;
}

/// S37, S46: spawn arguments nested far past the wire's depth limit (a chain of
/// 100,000 links, 100 KB: within the frame limit) are refused as bad arguments, as
/// a payload that deep is; the spawner and its system serve on, and a shallow
/// chain starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_s46_spawn_arguments_nested_past_the_depth_limit_are_refused_and_nothing_stops() {
    let nodes = calm();
    let spawner = spawner_on_b(&nodes);
    let mut deep = vec![1_u8; 100_000];
    deep.push(0);
    let reply = raw_spawn(&spawner, "sw14.chain", deep, "deep").await;
    assert!(
        matches!(
            &reply,
            SpawnReply::SpawnFailed {
                reason: SpawnFailure::BadArguments { .. }
            }
        ),
        "{reply:?}"
    );
    let reply = raw_spawn(&spawner, "sw14.chain", vec![1, 1, 0], "shallow").await;
    assert!(
        matches!(&reply, SpawnReply::Spawned { name, .. } if name == "shallow"),
        "{reply:?}"
    );
    nodes.terminate().await;
}

/// A sink on `system` with a bounded mailbox of `capacity` (drop-new) that holds
/// its first message until `gate` opens, saying when it holds it.
fn gated_bounded_sink(
    system: &ActorSystem,
    capacity: usize,
    gate: Arc<Semaphore>,
) -> (
    ActorRef<Note>,
    mpsc::UnboundedReceiver<u64>,
    mpsc::UnboundedReceiver<()>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (entered_tx, entered) = mpsc::unbounded_channel();
    let behavior = Behaviors::receive_message_async(async move |Note(n): Note| {
        if n == 1 {
            let _ = entered_tx.send(());
            let _ = gate.acquire().await;
        }
        let _ = tx.send(n);
    });
    let local = system
        .spawn_with(
            behavior,
            "bounded",
            MailboxConfig::bounded(capacity, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    (local, rx, entered)
}

/// S47, S29, S31: thirty offers from a peer into a full drop-new mailbox all resolve
/// `true` (room in the outbound buffer is all an offer waits for); each is then
/// delivered, in order, or a `MailboxFull` letter on the receiving system, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s29_s31_s47_peer_offers_into_a_full_drop_new_mailbox_are_each_accounted_once() {
    let nodes = calm();
    let gate = Arc::new(Semaphore::new(0));
    let (local, mut rx, mut entered) = gated_bounded_sink(&nodes.b, 4, gate.clone());
    let remote = nodes.a.resolve::<Note>(&local.to_string()).unwrap();
    let mut on_a = letters(&nodes.a);
    let mut on_b = letters(&nodes.b);
    assert!(timeout(T, remote.offer(Note(1))).await.unwrap());
    next(&mut entered).await;
    for n in 2..=30 {
        assert!(
            timeout(T, remote.offer(Note(n))).await.unwrap(),
            "offer {n}"
        );
    }
    // Wait until b has lettered the overflow: 30 - 1 held - 4 queued.
    let full = letters_for(&mut on_b, local.path(), 25).await;
    for letter in &full {
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::MailboxFull,
            "{}",
            describe(letter)
        );
    }
    gate.add_permits(1);
    let mut delivered = Vec::new();
    for _ in 0..5 {
        delivered.push(next(&mut rx).await);
    }
    let mut lettered: Vec<u64> = full
        .iter()
        .map(|l| l.take_message::<Note>().expect("the note").0)
        .collect();
    assert_eq!(delivered, vec![1, 2, 3, 4, 5], "the first five, in order");
    lettered.sort_unstable();
    assert_eq!(lettered, (6..=30).collect::<Vec<_>>());
    assert!(on_a.try_recv().is_none(), "nothing lettered on the sender");
    let more = timeout(ms(200), rx.recv()).await;
    assert!(more.is_err(), "{more:?}");
    nodes.terminate().await;
}

/// A desk on b: it says when it holds a request, waits for `gate`, then hands the
/// reply ref on to `worker` (on a third system).
fn handing_desk(
    system: &ActorSystem,
    worker: ActorRef<Req>,
    gate: Arc<Semaphore>,
) -> (ActorRef<Req>, mpsc::UnboundedReceiver<()>) {
    let (entered_tx, entered) = mpsc::unbounded_channel();
    let desk = system
        .spawn(
            Behaviors::receive_message_async(async move |req: Req| {
                let _ = entered_tx.send(());
                let _ = gate.acquire().await;
                worker.tell(req);
            }),
            "desk",
        )
        .unwrap();
    (desk, entered)
}

/// S36, S44, S45: an ask from a to b whose reply ref b hands to a worker on a third
/// system c is answered from c while the link between a and b is partitioned (for
/// less than the detector's window): the answer does not need the asked system's
/// link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s44_an_answer_from_a_third_system_arrives_while_asker_and_asked_are_partitioned() {
    let nodes = calm();
    let c = ActorSystem::builder("c")
        .remote(RemoteSettings::loopback())
        .build()
        .unwrap();
    let worker = c
        .spawn(
            Behaviors::receive_message(|r: Req| r.reply_to.tell(Pong(if r.fail { 0 } else { 42 }))),
            "worker",
        )
        .unwrap();
    let worker_from_b = nodes.b.resolve::<Req>(&worker.to_string()).unwrap();
    let gate = Arc::new(Semaphore::new(0));
    let (desk, mut entered) = handing_desk(&nodes.b, worker_from_b, gate.clone());
    let remote = nodes.a.resolve::<Req>(&desk.to_string()).unwrap();
    let asked = remote
        .ask_with(|reply_to| Req {
            fail: false,
            reply_to,
        })
        .timeout(T);
    let asked = tokio::spawn(asked.into_future());
    next(&mut entered).await;
    nodes.partition();
    gate.add_permits(1);
    let answer: Pong = timeout(T, asked)
        .await
        .expect("answered within the bound")
        .unwrap()
        .expect("answered from c");
    assert_eq!(answer, Pong(42));
    nodes.heal();
    nodes.terminate().await;
    c.terminate().await;
}

// ======================================================== 7. more faults and ends

/// S18, S41, S45: a watch sent over a delayed link reaches an actor that stopped
/// before it arrived: it hears `Terminated` all the same, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s18_s41_s45_a_watch_delayed_past_its_targets_stop_hears_terminated_once() {
    let nodes = calm();
    let (local, mut rx) = sink_on(&nodes.b, "sink");
    let remote = linked_ref(&nodes.a, &local, &mut rx).await;
    nodes.a_to_b().delay(ms(300));
    let mut probe = TestProbe::<u64>::new(&nodes.a);
    probe.watch(&remote);
    nodes.b.stop(&local).unwrap();
    probe.expect_terminated(&remote, T).await;
    probe.expect_no_termination(ms(500)).await;
    nodes.terminate().await;
}

/// S23, S37, S44, S45: an ask whose request is delayed on the link past its
/// target's stop fails with `TargetTerminated`, long before its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s23_s44_s45_an_ask_delayed_past_its_targets_stop_fails_long_before_its_deadline() {
    let nodes = calm();
    let (tx, _seen) = mpsc::unbounded_channel();
    let local = nodes.b.spawn(Echo { seen: tx }, "echo").unwrap();
    let remote = nodes.a.resolve::<EchoMsg>(&local.to_string()).unwrap();
    assert_eq!(remote.ask(Ping(1)).timeout(T).await.unwrap(), Pong(2));
    nodes.a_to_b().delay(ms(300));
    let started = Instant::now();
    let asked = tokio::spawn(
        remote
            .ask(Ping(2))
            .timeout(Duration::from_secs(30))
            .into_future(),
    );
    nodes.b.stop(&local).unwrap();
    let outcome = timeout(T, asked)
        .await
        .expect("the ask ended within the bound")
        .unwrap();
    assert!(
        matches!(outcome, Err(AskError::TargetTerminated { .. })),
        "{outcome:?} after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    nodes.terminate().await;
}

/// S40, S41, S45: a burst through a link that loses a share of the messages
/// arrives in order without duplicates, and a watch made before it (a link frame,
/// which drops spare) hears the target's stop after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_s41_s45_a_lossy_burst_keeps_order_and_the_watch_before_it_still_hears_the_stop() {
    let nodes = calm();
    let (local, mut rx) = sink_on(&nodes.b, "sink");
    let remote = linked_ref(&nodes.a, &local, &mut rx).await;
    let mut probe = TestProbe::<u64>::new(&nodes.a);
    probe.watch(&remote);
    nodes.a_to_b().drop_ratio(0.3, 14);
    for n in 1..=300 {
        remote.tell(Note(n));
    }
    nodes.a_to_b().clear();
    remote.tell(Note(1_000));
    let mut got = Vec::new();
    loop {
        let n = next(&mut rx).await;
        if n == 1_000 {
            break;
        }
        got.push(n);
    }
    assert!(got.windows(2).all(|w| w[0] < w[1]), "{got:?}");
    assert!(
        got.len() > 100 && got.len() < 300,
        "about 70% of 300 arrive: {}",
        got.len()
    );
    nodes.b.stop(&local).unwrap();
    probe.expect_terminated(&remote, T).await;
    nodes.terminate().await;
}

/// S43, S47: after recovery, an offer through a ref of the ended session resolves
/// `false` at once, its letter `SessionEnded`; through the ref resolved again it is
/// accepted and arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_s47_an_offer_through_a_ref_of_the_ended_session_is_refused_at_once() {
    let nodes = quick();
    let (local, mut rx) = sink_on(&nodes.b, "sink");
    let old = linked_ref(&nodes.a, &local, &mut rx).await;
    partition_until_given_up(&nodes.a, &nodes.b, T).await;
    recover(&nodes.a, &nodes.b).await;
    let new = nodes.a.resolve::<Note>(&local.to_string()).unwrap();
    let mut dl = letters(&nodes.a);
    let accepted = timeout(ms(500), old.offer(Note(5)))
        .await
        .expect("the offer resolved at once");
    assert!(!accepted);
    let letter = &letters_for(&mut dl, old.path(), 1).await[0];
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::SessionEnded {
            peer: nodes.b.address().clone()
        },
        "{}",
        describe(letter)
    );
    assert!(timeout(T, new.offer(Note(6))).await.unwrap());
    assert_eq!(next(&mut rx).await, 6);
    nodes.terminate().await;
}
