//! Local features used across a link: adapters and reply refs in fields, a group of
//! remote routees, delays, drops and partitions of the fault-injecting link, a peer
//! reborn on the same port, a TLS link recovering from a quarantine, and remote
//! restarts and leaves (S14, S28, S32, S36, S38-S44).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::nodes::linked;
use crate::support::nodes::{Ca, fast, slow_detector, watcher};
use crate::support::nodes::{low_port, node_on};
use crate::support::outside::letter_where;
use crate::support::outside::{nothing_within, recv_within, take};
use std::time::Duration;
use tapio::prelude::*;
use tapio::remote::{PeerUnreachable, RemoteSettings};
use tapio::testkit::{LinkDirection, TestProbe, TwoNodes, two_nodes};
use tapio::{DeadLetter, DeadLetterReason, Routers};
use tokio::sync::mpsc;

// ---------------------------------------------------------------------------------
// Messages and actors
// ---------------------------------------------------------------------------------

#[message(remote = "probe2.note.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note(pub u64);

#[message(remote = "probe2.pong.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pong(pub u64);

#[message(remote = "probe2.ping.v1", reply = Pong)]
#[derive(Debug, Clone)]
pub struct Ping(pub u64);

#[message(remote = "probe2.crash.v1")]
#[derive(Debug, Clone)]
pub struct Crash;

#[message(remote = "probe2.quit.v1")]
#[derive(Debug, Clone)]
pub struct Quit;

/// A request carrying its reply ref in a field.
#[message(remote = "probe2.please.v1", reply = Pong)]
pub struct Please {
    pub n: u64,
    pub reply_to: ActorRef<Pong>,
}

/// Keep `reply_to` and answer `Pong(n)` through it.
#[message(remote = "probe2.keep.v1")]
pub struct Keep {
    pub n: u64,
    pub reply_to: ActorRef<Pong>,
}

/// Answer `Pong(n)` through every ref kept so far.
#[message(remote = "probe2.fanout.v1")]
#[derive(Debug, Clone)]
pub struct Fanout(pub u64);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("boom: a test failure")]
pub struct Boom;

/// Keeps the reply refs it is handed and answers through them.
#[derive(Default, Clone)]
pub struct Keeper {
    kept: Vec<ActorRef<Pong>>,
}

#[actor]
impl Keeper {
    fn keep(&mut self, keep: Keep) {
        keep.reply_to.tell(Pong(keep.n));
        self.kept.push(keep.reply_to);
    }

    fn fanout(&mut self, Fanout(n): Fanout) {
        for kept in &self.kept {
            kept.tell(Pong(n));
        }
    }
}

/// Answers pings; fails on `Crash`; stops on `Quit`.
pub struct Phoenix;

#[actor]
impl Phoenix {
    fn ping(&mut self, Ping(n): Ping) -> Pong {
        Pong(n)
    }

    fn crash(&mut self, _: Crash) -> Result<(), Boom> {
        Err(Boom)
    }

    fn quit(&mut self, _: Quit) -> Behavior<PhoenixMsg> {
        Behaviors::stopped()
    }
}

/// The owner of a message adapter: local protocol.
#[message]
#[derive(Debug)]
pub enum OwnerMsg {
    Adapted(u64),
    Fail,
    Stop,
}

// ---------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------

const BOUND: Duration = Duration::from_secs(5);

/// An actor that forwards every `Note` it gets, tagged with `tag`, to `tx`.
fn tagged_sink(
    system: &ActorSystem,
    name: &str,
    tag: usize,
    tx: mpsc::UnboundedSender<(usize, u64)>,
) -> ActorRef<Note> {
    system
        .spawn(
            Behaviors::receive_message(move |Note(n): Note| {
                let _ = tx.send((tag, n));
            }),
            name,
        )
        .unwrap()
}

/// An actor that forwards every `Note` it gets to a channel.
fn note_sink(system: &ActorSystem, name: &str) -> (ActorRef<Note>, mpsc::UnboundedReceiver<u64>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let sink = system
        .spawn(
            Behaviors::receive_message(move |Note(n): Note| {
                let _ = tx.send(n);
            }),
            name,
        )
        .unwrap();
    (sink, rx)
}

/// What arrives on `rx` until nothing more comes for `quiet`.
async fn drain(rx: &mut mpsc::UnboundedReceiver<u64>, quiet: Duration) -> Vec<u64> {
    let mut got = Vec::new();
    while let Ok(Some(n)) = tokio::time::timeout(quiet, rx.recv()).await {
        got.push(n);
    }
    got
}

// ---------------------------------------------------------------------------------
// S28 + S36: a message adapter's ref across the link
// ---------------------------------------------------------------------------------

/// An owner on `system` that, in setup (so on every start), makes an adapter from
/// `Pong` and hands it to `keeper` with `Keep { n: start number }`. It forwards what
/// its adapter translates to `tx`, restarts on `Fail`, stops on `Stop`.
fn adapter_owner(
    system: &ActorSystem,
    keeper: ActorRef<KeeperMsg>,
    tx: mpsc::UnboundedSender<u64>,
) -> ActorRef<OwnerMsg> {
    let starts = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let behavior = Behaviors::setup(move |ctx: &mut ActorContext<OwnerMsg>| {
        let start = starts.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let adapter = ctx.message_adapter(|Pong(n): Pong| OwnerMsg::Adapted(n));
        keeper.tell(Keep {
            n: start,
            reply_to: adapter,
        });
        let tx = tx.clone();
        Behaviors::receive_message(
            move |message: OwnerMsg| -> Result<Behavior<OwnerMsg>, Boom> {
                match message {
                    OwnerMsg::Adapted(n) => {
                        let _ = tx.send(n);
                        Ok(Behaviors::same())
                    }
                    OwnerMsg::Fail => Err(Boom),
                    OwnerMsg::Stop => Ok(Behaviors::stopped()),
                }
            },
        )
    });
    system
        .spawn(
            Behaviors::supervise(behavior).on_failure::<Boom>(SupervisorStrategy::restart()),
            "owner",
        )
        .unwrap()
}

// S28 + S36: an adapter's ref crosses the link inside a message; the peer answers
// through it and the owner gets the translation. After the owner restarts (a restart
// is not a stop: S14), the adapter handed out by the first incarnation still reaches
// the owner, as does the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s28_s36_adapter_ref_used_by_the_peer_survives_the_owners_restart() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let keeper = nodes.b.spawn(Keeper::default(), "keeper").unwrap();
    let keeper = nodes
        .a
        .resolve::<KeeperMsg>(&keeper.path().to_uri())
        .unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let owner = adapter_owner(&nodes.a, keeper.clone(), tx);

    assert_eq!(recv_within(&mut rx, BOUND).await, 1);
    owner.tell(OwnerMsg::Fail);
    assert_eq!(
        recv_within(&mut rx, BOUND).await,
        2,
        "the second start's adapter"
    );

    keeper.tell(Fanout(7));
    assert_eq!(
        take(&mut rx, 2).await,
        vec![7, 7],
        "both adapters reach the owner"
    );
    nothing_within(&mut rx, Duration::from_millis(200)).await;
    nodes.terminate().await;
}

// S28 + S36 + S31: once the owner stops, its adapter stops with it: what the peer
// sends through it is a dead letter on the owner's system, naming the adapter, and
// nothing reaches anyone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s28_s36_adapter_of_a_stopped_owner_dead_letters_what_the_peer_sends() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let keeper = nodes.b.spawn(Keeper::default(), "keeper").unwrap();
    let keeper = nodes
        .a
        .resolve::<KeeperMsg>(&keeper.path().to_uri())
        .unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let owner = adapter_owner(&nodes.a, keeper.clone(), tx);
    assert_eq!(recv_within(&mut rx, BOUND).await, 1);

    let mut probe = TestProbe::<Note>::new(&nodes.a);
    probe.watch(&owner);
    owner.tell(OwnerMsg::Stop);
    probe.expect_terminated(&owner, BOUND).await;

    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    keeper.tell(Fanout(9));
    let letter = letter_where(&mut letters, BOUND, |l| l.is::<Pong>()).await;
    assert!(
        letter.recipient().to_string().contains("owner/$adapter"),
        "{letter}"
    );
    assert_eq!(letter.take_message::<Pong>(), Some(Pong(9)));
    nothing_within(&mut rx, Duration::from_millis(200)).await;
    nodes.terminate().await;
}

// ---------------------------------------------------------------------------------
// S44 + S36: ask_with, the reply ref in a field
// ---------------------------------------------------------------------------------

// S44 + S36: `ask_with` across the link with the reply ref in a field; the peer hands
// the request to a third actor, back on the asking system, which answers through the
// promise's ref (local again on the asker's side). The ask gets that answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_s36_ask_with_reply_ref_in_a_field_bounces_back_across() {
    let nodes = two_nodes(slow_detector()).unwrap();
    // On a: answers `Please { n }` with `Pong(n * 10)`.
    let answerer = nodes
        .a
        .spawn(
            Behaviors::receive_message(|p: Please| p.reply_to.tell(Pong(p.n * 10))),
            "answerer",
        )
        .unwrap();
    let answerer_uri = answerer.path().to_uri();
    // On b: forwards every `Please` to the answerer on a.
    let forwarder = nodes
        .b
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<Please>| {
                let answerer = ctx.resolve::<Please>(&answerer_uri).unwrap();
                Behaviors::receive_message(move |p: Please| answerer.tell(p))
            }),
            "forwarder",
        )
        .unwrap();
    let forwarder = nodes
        .a
        .resolve::<Please>(&forwarder.path().to_uri())
        .unwrap();
    for n in 1..=3 {
        let Pong(got) = forwarder
            .ask_with(|reply_to| Please { n, reply_to })
            .timeout(BOUND)
            .await
            .unwrap();
        assert_eq!(got, n * 10);
    }
    nodes.terminate().await;
}

// ---------------------------------------------------------------------------------
// S32 + S39: a group router over remote refs
// ---------------------------------------------------------------------------------

// S32 + S39 + S41: a group router on a over three routees on b: strict round robin
// across the link; a routee that stops there leaves the group (the router watches it
// over the link); when the last one stops, the router stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s32_s39_group_over_remote_routees_round_robins_and_shrinks() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let locals: Vec<ActorRef<Note>> = (0..3)
        .map(|i| tagged_sink(&nodes.b, &format!("routee-{i}"), i, tx.clone()))
        .collect();
    let remotes: Vec<ActorRef<Note>> = locals
        .iter()
        .map(|r| nodes.a.resolve::<Note>(&r.path().to_uri()).unwrap())
        .collect();
    let router = nodes
        .a
        .spawn(Routers::group(remotes.clone()).unwrap(), "router")
        .unwrap();

    for n in 0..6 {
        router.tell(Note(n));
    }
    let mut got = Vec::new();
    for _ in 0..6 {
        got.push(
            tokio::time::timeout(BOUND, rx.recv())
                .await
                .unwrap()
                .unwrap(),
        );
    }
    got.sort_unstable();
    assert_eq!(
        got,
        vec![(0, 0), (0, 3), (1, 1), (1, 4), (2, 2), (2, 5)],
        "strict round robin in the order given"
    );

    // Stop routee 1 on b; a probe on a sees it end over the link.
    let mut probe = TestProbe::<Note>::new(&nodes.a);
    probe.watch(&remotes[1]);
    probe.watch(&router);
    nodes.b.stop(locals[1].clone()).unwrap();
    probe.expect_terminated(&remotes[1], BOUND).await;

    let mut letters_a = nodes.a.events().subscribe::<DeadLetter>();
    let mut letters_b = nodes.b.events().subscribe::<DeadLetter>();
    for n in 10..14 {
        router.tell(Note(n));
    }
    let mut got = Vec::new();
    for _ in 0..4 {
        got.push(
            tokio::time::timeout(BOUND, rx.recv())
                .await
                .unwrap()
                .unwrap(),
        );
    }
    assert!(got.iter().all(|(tag, _)| *tag != 1), "{got:?}");
    let zeros = got.iter().filter(|(tag, _)| *tag == 0).count();
    assert_eq!(zeros, 2, "alternates over the two left: {got:?}");
    assert!(letters_a.try_recv().is_none());
    assert!(letters_b.try_recv().is_none());

    nodes.b.stop(locals[0].clone()).unwrap();
    nodes.b.stop(locals[2].clone()).unwrap();
    probe.expect_terminated(&router, BOUND).await;
    nodes.terminate().await;
}

// ---------------------------------------------------------------------------------
// S40: faults that delay or drop
// ---------------------------------------------------------------------------------

// S40: a delay, lifted while frames are still held, lets nothing overtake: all that
// was sent arrives once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_a_delay_lifted_midway_keeps_order_and_duplicates_nothing() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (sink, mut rx) = note_sink(&nodes.b, "sink");
    let remote = nodes.a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    linked(&nodes.a, &nodes.b, BOUND).await;

    nodes.a_to_b().delay(Duration::from_millis(300));
    for n in 0..100 {
        remote.tell(Note(n));
    }
    nodes.a_to_b().clear();
    for n in 100..200 {
        remote.tell(Note(n));
    }
    assert_eq!(take(&mut rx, 200).await, (0..200).collect::<Vec<_>>());
    nothing_within(&mut rx, Duration::from_millis(200)).await;
    nodes.terminate().await;
}

// S40 + S42: a delay with a partition on top, shorter than the detector's window,
// then a heal: everything arrives once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_delay_then_partition_then_heal_delivers_all_once_in_order() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (sink, mut rx) = note_sink(&nodes.b, "sink");
    let remote = nodes.a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    linked(&nodes.a, &nodes.b, BOUND).await;

    nodes.a_to_b().delay(Duration::from_millis(100));
    for n in 0..50 {
        remote.tell(Note(n));
    }
    nodes.partition();
    for n in 50..100 {
        remote.tell(Note(n));
    }
    // Frames sent before the partition may still come out of the delay; nothing
    // sent after it crosses until the heal.
    let early = drain(&mut rx, Duration::from_millis(300)).await;
    assert!(early.len() <= 50, "{early:?}");
    assert_eq!(early, (0..early.len() as u64).collect::<Vec<_>>());
    nodes.heal();
    for n in 100..150 {
        remote.tell(Note(n));
    }
    let rest = take(&mut rx, 150 - early.len()).await;
    assert_eq!(
        rest,
        (early.len() as u64..150).collect::<Vec<_>>(),
        "all once, in order"
    );
    nothing_within(&mut rx, Duration::from_millis(300)).await;
    nodes.terminate().await;
}

// S40: `drop_next(n)` loses exactly the next n messages; the rest arrive once, in
// order. A seeded `drop_ratio` loses some: what arrives is strictly increasing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_dropped_messages_leave_the_rest_in_order_without_duplicates() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (sink, mut rx) = note_sink(&nodes.b, "sink");
    let remote = nodes.a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    linked(&nodes.a, &nodes.b, BOUND).await;

    nodes.a_to_b().drop_next(3);
    for n in 0..20 {
        remote.tell(Note(n));
    }
    assert_eq!(take(&mut rx, 17).await, (3..20).collect::<Vec<_>>());
    nothing_within(&mut rx, Duration::from_millis(200)).await;

    nodes.a_to_b().drop_ratio(0.5, 42);
    for n in 100..300 {
        remote.tell(Note(n));
    }
    nodes.a_to_b().clear();
    remote.tell(Note(1_000)); // the marker: not dropped, after all the rest
    let mut got = Vec::new();
    loop {
        let n = recv_within(&mut rx, BOUND).await;
        if n == 1_000 {
            break;
        }
        got.push(n);
    }
    assert!(got.windows(2).all(|w| w[0] < w[1]), "{got:?}");
    assert!(got.iter().all(|n| (100..300).contains(n)), "{got:?}");
    assert!(
        !got.is_empty() && got.len() < 200,
        "about half lost: {}",
        got.len()
    );
    nothing_within(&mut rx, Duration::from_millis(200)).await;
    nodes.terminate().await;
}

// ---------------------------------------------------------------------------------
// S39 + S41 + S43: a peer system that comes back on the same port
// ---------------------------------------------------------------------------------

// S39 + S41 + S43: b terminates; a watcher on a hears `Terminated` (system stopped);
// a new system with the same name starts on the same port. A ref resolved before is
// a dead letter `SessionEnded`, and a ref resolved again reaches the new actor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_s41_s43_a_peer_reborn_on_the_same_port_needs_refs_resolved_again() {
    let a = node_on("a", 0, Duration::from_secs(20));
    let port = low_port();
    let b = node_on("b", port, Duration::from_secs(20));
    let (sink, mut rx) = note_sink(&b, "sink");
    let old = a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    let mut ends = watcher(&a, "watcher", old.clone());
    old.tell(Note(1));
    assert_eq!(recv_within(&mut rx, BOUND).await, 1);

    b.terminate().await;
    let ended = recv_within(&mut ends, BOUND).await;
    assert_eq!(ended.path(), old.path());

    let b2 = node_on("b", port, Duration::from_secs(20));
    assert_eq!(b2.address(), b.address());
    let (sink2, mut rx2) = note_sink(&b2, "sink");

    let mut letters = a.events().subscribe::<DeadLetter>();
    old.tell(Note(3));
    let letter = letter_where(&mut letters, BOUND, |l| l.is::<Note>()).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::SessionEnded { peer } if peer == b2.address()),
        "{letter}"
    );
    nothing_within(&mut rx2, Duration::from_millis(200)).await;

    let fresh = a.resolve::<Note>(&sink2.path().to_uri()).unwrap();
    fresh.tell(Note(4));
    let got = tokio::time::timeout(BOUND, rx2.recv()).await;
    assert!(
        matches!(got, Ok(Some(4))),
        "a ref resolved again reaches the new system: {got:?}; letters: {:?}",
        std::iter::from_fn(|| letters.try_recv().map(|l| l.to_string())).collect::<Vec<_>>()
    );
    nothing_within(&mut ends, Duration::from_millis(100)).await;
    let (a_done, b_done) = (a.terminate(), b2.terminate());
    a_done.await;
    b_done.await;
}

// ---------------------------------------------------------------------------------
// S38 + S42 + S43: TLS through a quarantine
// ---------------------------------------------------------------------------------

const SECRET: &[u8] = b"0123456789abcdef";

fn tls_node(name: &str, ca: &Ca) -> ActorSystem {
    ActorSystem::builder(name)
        .remote(fast().secret(SECRET.to_vec()).tls(ca.tls(name, ca)))
        .build()
        .unwrap()
}

// S38 + S42 + S43: over TLS, a partition longer than the detector's window gives the
// peer up (watchers hear `Terminated`, `PeerUnreachable`, quarantine); after a heal,
// `clear_quarantine` on both sides and `reconnect`, a ref resolved again reaches the
// actor over TLS, and the old ref says its session ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_s42_s43_tls_link_recovers_from_a_quarantine_explicitly() {
    let ca = Ca::new("cluster");
    let a = tls_node("a", &ca);
    let b = tls_node("b", &ca);
    let (sink, mut rx) = note_sink(&b, "sink");
    let old = a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    old.tell(Note(1));
    assert_eq!(recv_within(&mut rx, BOUND).await, 1);
    let mut ends = watcher(&a, "watcher", old.clone());
    old.tell(Note(2));
    assert_eq!(recv_within(&mut rx, BOUND).await, 2);

    let mut gave_up = a.events().subscribe::<PeerUnreachable>();
    let mut gave_up_b = b.events().subscribe::<PeerUnreachable>();
    let (ab, ba) = (
        LinkDirection::between(&a, b.address()),
        LinkDirection::between(&b, a.address()),
    );
    ab.partition();
    ba.partition();
    let event = tokio::time::timeout(BOUND, gave_up.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&event.peer, b.address());
    tokio::time::timeout(BOUND, gave_up_b.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(recv_within(&mut ends, BOUND).await.path(), old.path());
    ab.heal();
    ba.heal();

    let mut letters = a.events().subscribe::<DeadLetter>();
    old.tell(Note(3));
    let letter = letter_where(&mut letters, BOUND, |l| l.is::<Note>()).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::Quarantined { .. }),
        "{letter}"
    );

    assert!(a.clear_quarantine(b.address()));
    assert!(b.clear_quarantine(a.address()));
    linked(&a, &b, BOUND).await;
    let fresh = a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    fresh.tell(Note(4));
    assert_eq!(recv_within(&mut rx, BOUND).await, 4);

    old.tell(Note(5));
    let letter = letter_where(&mut letters, BOUND, |l| l.is::<Note>()).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::SessionEnded { .. }),
        "{letter}"
    );
    nothing_within(&mut rx, Duration::from_millis(200)).await;
    let (a_done, b_done) = (a.terminate(), b.terminate());
    a_done.await;
    b_done.await;
}

// ---------------------------------------------------------------------------------
// S14 + S41: a remote watch of an actor that restarts
// ---------------------------------------------------------------------------------

// S14 + S41: a watcher on a of an actor on b that restarts hears nothing; the same
// remote ref still reaches it; when it does stop, the watcher hears `Terminated`
// exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s14_s41_a_remote_restart_is_not_a_stop() {
    let nodes: TwoNodes = two_nodes(slow_detector()).unwrap();
    let phoenix = nodes
        .b
        .spawn(
            Behaviors::supervise(Behaviors::setup(|_| Phoenix))
                .on_failure::<Boom>(SupervisorStrategy::restart()),
            "phoenix",
        )
        .unwrap();
    let remote = nodes
        .a
        .resolve::<PhoenixMsg>(&phoenix.path().to_uri())
        .unwrap();
    let mut ends = watcher(&nodes.a, "watcher", remote.clone());
    assert_eq!(remote.ask(Ping(1)).timeout(BOUND).await.unwrap(), Pong(1));

    for n in 0..3 {
        remote.tell(Crash);
        assert_eq!(
            remote.ask(Ping(10 + n)).timeout(BOUND).await.unwrap(),
            Pong(10 + n)
        );
    }
    nothing_within(&mut ends, Duration::from_millis(300)).await;

    remote.tell(Quit);
    assert_eq!(recv_within(&mut ends, BOUND).await.path(), remote.path());
    nothing_within(&mut ends, Duration::from_millis(300)).await;
    nodes.terminate().await;
}

// S41 + S18: a system that was dialled, and terminates before it has dialled back
// (which its first heartbeat does), still tells its peer that it leaves: a watch
// made on the peer afterwards hears `Terminated` at once, not after the failure
// detector's window (20 s here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_a_system_that_never_dialled_its_peer_is_heard_leaving() {
    // Its first heartbeat, which would dial back, comes long after the test is done.
    let settings = || {
        RemoteSettings::loopback()
            .heartbeat_interval(Duration::from_secs(5))
            .unreachable_after(Duration::from_secs(20))
    };
    let a = ActorSystem::builder("a")
        .remote(settings())
        .build()
        .unwrap();
    let b = ActorSystem::builder("b")
        .remote(settings())
        .build()
        .unwrap();
    let (sink, mut rx) = note_sink(&b, "sink");
    let old = a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    old.tell(Note(1));
    assert_eq!(recv_within(&mut rx, BOUND).await, 1);
    b.terminate().await;
    let mut probe = TestProbe::<Note>::new(&a);
    probe.watch(&old);
    probe.expect_terminated(&old, BOUND).await;
    a.terminate().await;
}
