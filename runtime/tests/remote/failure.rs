//! Remote watch, the failure detector, quarantine, recovery, remote ask and the
//! fault-injecting link (S41–S45), on two systems in one process, through the
//! testkit's `two_nodes`.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::letter_within;
use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::{LinkError, PeerUnreachable, RemoteSettings};
use tapio::testkit::{TestProbe, TwoNodes, two_nodes};
use tapio::{AskError, DeadLetter, DeadLetterReason, Subscription};
use tokio::time::Instant;

/// The bound of every wait for something that should happen.
const WAIT: Duration = Duration::from_secs(10);

#[message(remote = "failure.note.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Note(pub u64);

#[message(remote = "failure.echo.v1", reply = Echoed)]
#[derive(Debug)]
pub struct Echo(pub u64);

#[message(remote = "failure.echoed.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Echoed(pub u64);

/// A request whose answer never comes: its reply ref is kept, unanswered, while
/// the actor is there.
#[message(remote = "failure.ignore.v1")]
#[derive(Debug)]
pub struct Ignore {
    pub reply_to: ActorRef<Echoed>,
}

/// Answers `Echo`; keeps the reply ref of `Ignore` and never answers it.
pub struct Echoer {
    held: Vec<ActorRef<Echoed>>,
}

#[actor]
impl Echoer {
    fn echo(&mut self, message: Echo) -> Echoed {
        Echoed(message.0)
    }

    fn ignore(&mut self, message: Ignore) {
        self.held.push(message.reply_to);
    }
}

/// Detects a silent peer fast: for the tests where it is meant to.
fn impatient() -> RemoteSettings {
    RemoteSettings::loopback()
        .heartbeat_interval(Duration::from_millis(50))
        .unreachable_after(Duration::from_millis(600))
}

/// Gives a peer long enough that a busy machine never looks like a dead peer.
fn patient() -> RemoteSettings {
    RemoteSettings::loopback()
        .heartbeat_interval(Duration::from_millis(100))
        .unreachable_after(Duration::from_secs(30))
}

fn echoer(system: &ActorSystem, name: &str) -> ActorRef<EchoerMsg> {
    system
        .spawn(Behaviors::setup(|_| Echoer { held: Vec::new() }), name)
        .unwrap()
}

/// `a`'s ref to `b`'s actor `name`.
fn remote<P: tapio::wire::RemoteProtocol>(nodes: &TwoNodes, name: &str) -> ActorRef<P> {
    nodes
        .a
        .resolve::<P>(&format!("{}/user/{name}", nodes.b.address()))
        .unwrap()
}

/// The link is up both ways: an ask across it was answered.
async fn linked(remote: &ActorRef<EchoerMsg>) {
    assert_eq!(remote.ask(Echo(0)).timeout(WAIT).await, Ok(Echoed(0)));
}

/// A probe on `b` that receives notes, `a`'s ref to it, and one note across to
/// show the link is up.
async fn inbox_on_b(nodes: &TwoNodes) -> (TestProbe<Note>, ActorRef<Note>) {
    let mut inbox = TestProbe::<Note>::new(&nodes.b);
    let to_inbox = nodes
        .a
        .resolve::<Note>(&inbox.actor_ref().to_string())
        .unwrap();
    to_inbox.tell(Note(0));
    assert_eq!(inbox.expect_message(WAIT).await, Note(0));
    (inbox, to_inbox)
}

async fn next_unreachable(events: &mut Subscription<PeerUnreachable>) -> PeerUnreachable {
    tokio::time::timeout(WAIT, events.recv())
        .await
        .expect("PeerUnreachable within the bound")
        .expect("the stream is open")
}

/// The next dead letter of a message refused when it was sent (not of a frame that
/// was queued or in flight when the peer was given up on: those are quarantined
/// too, or lost with the connection when the peer gave up first and cut it).
async fn next_refused(letters: &mut Subscription<DeadLetter>) -> DeadLetter {
    loop {
        let letter = letter_within(letters, WAIT).await;
        // What the link had taken when it gave up is lettered as it goes: the bytes
        // in its buffer as one `frame`, and a message the writer held by name, both
        // as the connection's loss (or the quarantine). Not a later send's refusal.
        let held = letter.message_type() == "frame"
            || matches!(letter.reason(), DeadLetterReason::ConnectionLost { .. });
        if !held {
            return letter;
        }
        assert!(
            matches!(
                letter.reason(),
                DeadLetterReason::Quarantined { .. } | DeadLetterReason::ConnectionLost { .. }
            ),
            "{letter:?}"
        );
    }
}

// S41: watching an actor of another system delivers `Terminated` when it stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_a_remote_watch_hears_the_actor_stop() {
    let nodes = two_nodes(patient()).unwrap();
    let worker = echoer(&nodes.b, "worker");
    let remote_worker = remote::<EchoerMsg>(&nodes, "worker");
    linked(&remote_worker).await;
    let mut probe = TestProbe::<Note>::new(&nodes.a);
    probe.watch(&remote_worker);
    // The watch has crossed once a later message has: the link keeps order.
    linked(&remote_worker).await;
    nodes.b.stop(&worker).unwrap();
    probe.expect_terminated(&remote_worker, WAIT).await;
    probe
        .expect_no_termination(Duration::from_millis(200))
        .await;
    nodes.terminate().await;
}

// S41: an actor that is not there (any more) is reported ended at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_watching_an_actor_that_is_not_there_hears_terminated_at_once() {
    let nodes = two_nodes(patient()).unwrap();
    let nobody = remote::<EchoerMsg>(&nodes, "nobody");
    let mut probe = TestProbe::<Note>::new(&nodes.a);
    probe.watch(&nobody);
    probe.expect_terminated(&nobody, WAIT).await;
    nodes.terminate().await;
}

// S41: when the actor's system stops, the watcher hears at once, long before the
// failure detector's 30 s window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_a_remote_watch_hears_the_system_stop() {
    let nodes = two_nodes(patient()).unwrap();
    let _worker = echoer(&nodes.b, "worker");
    let remote_worker = remote::<EchoerMsg>(&nodes, "worker");
    linked(&remote_worker).await;
    let mut probe = TestProbe::<Note>::new(&nodes.a);
    probe.watch(&remote_worker);
    linked(&remote_worker).await;
    let stopped = Instant::now();
    nodes.b.terminate().await;
    probe.expect_terminated(&remote_worker, WAIT).await;
    assert!(stopped.elapsed() < Duration::from_secs(30));
    // The session has ended: what is sent through the old ref is a dead letter
    // that says to resolve again.
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    remote_worker.tell(Echo(1));
    let letter = letter_within(&mut letters, WAIT).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::SessionEnded { peer } if peer == nodes.b.address()),
        "{letter:?}"
    );
    nodes.a.terminate().await;
}

// S41, S42, S44: a partition longer than `unreachable_after`: every watcher hears
// `Terminated` exactly once, one `PeerUnreachable` is published, a pending ask
// fails with `Unreachable` long before its deadline, the address is quarantined,
// and later sends are dead letters that say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_a_long_partition_gives_the_peer_up_once() {
    let nodes = two_nodes(impatient()).unwrap();
    let _worker = echoer(&nodes.b, "worker");
    let remote_worker = remote::<EchoerMsg>(&nodes, "worker");
    linked(&remote_worker).await;
    let mut first = TestProbe::<Note>::new(&nodes.a);
    let mut second = TestProbe::<Note>::new(&nodes.a);
    first.watch(&remote_worker);
    second.watch(&remote_worker);
    linked(&remote_worker).await;
    let mut unreachable = nodes.a.events().subscribe::<PeerUnreachable>();
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();

    nodes.partition();
    let asked = Instant::now();
    let pending = remote_worker.ask(Echo(7)).timeout(Duration::from_secs(30));
    let event = next_unreachable(&mut unreachable).await;
    assert_eq!(
        event,
        PeerUnreachable {
            peer: nodes.b.address().clone(),
            quarantined: true
        }
    );
    assert_eq!(
        pending.await,
        Err(AskError::Unreachable {
            target: remote_worker.path().clone()
        })
    );
    assert!(asked.elapsed() < Duration::from_secs(30));
    first.expect_terminated(&remote_worker, WAIT).await;
    second.expect_terminated(&remote_worker, WAIT).await;
    assert!(nodes.a.is_quarantined(nodes.b.address()));

    // Later sends dead-letter, through the old ref and through a new one alike.
    remote_worker.tell(Echo(8));
    let later = next_refused(&mut letters).await;
    assert!(
        matches!(later.reason(), DeadLetterReason::Quarantined { peer } if peer == nodes.b.address()),
        "{later:?}"
    );
    remote::<EchoerMsg>(&nodes, "worker").tell(Echo(9));
    let later = next_refused(&mut letters).await;
    assert!(
        matches!(later.reason(), DeadLetterReason::Quarantined { peer } if peer == nodes.b.address()),
        "{later:?}"
    );

    // Exactly once: nothing more comes, for many heartbeats.
    first
        .expect_no_termination(Duration::from_millis(300))
        .await;
    second
        .expect_no_termination(Duration::from_millis(10))
        .await;
    assert!(unreachable.try_recv().is_none());
    nodes.terminate().await;
}

// S40, S45: a partition shorter than `unreachable_after` loses nothing and keeps
// the order: what was sent during it arrives when it heals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s45_a_short_partition_loses_nothing_and_keeps_order() {
    let nodes = two_nodes(patient()).unwrap();
    let (mut inbox, to_inbox) = inbox_on_b(&nodes).await;

    nodes.partition();
    for n in 1..=100 {
        to_inbox.tell(Note(n));
    }
    // Held while the partition lasts.
    inbox.expect_no_message(Duration::from_millis(300)).await;
    nodes.heal();
    let got = inbox.receive_messages(100, WAIT).await;
    assert_eq!(got, (1..=100).map(Note).collect::<Vec<_>>());
    assert!(!nodes.a.is_quarantined(nodes.b.address()));
    nodes.terminate().await;
}

// S43: recovery is explicit. Healing alone repairs nothing; `reconnect` refuses
// while the peer is quarantined; after `clear_quarantine` on both sides it links
// again, refs from before name the ended session, and a ref resolved again works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_recovery_is_explicit() {
    let nodes = two_nodes(impatient()).unwrap();
    let _worker = echoer(&nodes.b, "worker");
    let before = remote::<EchoerMsg>(&nodes, "worker");
    linked(&before).await;
    let mut a_gave_up = nodes.a.events().subscribe::<PeerUnreachable>();
    let mut b_gave_up = nodes.b.events().subscribe::<PeerUnreachable>();
    nodes.partition();
    next_unreachable(&mut a_gave_up).await;
    next_unreachable(&mut b_gave_up).await;
    nodes.heal();

    // Healed, and still quarantined on both sides.
    assert_eq!(
        before.ask(Echo(1)).timeout(WAIT).await,
        Err(AskError::Unreachable {
            target: before.path().clone()
        })
    );
    assert_eq!(
        nodes.a.reconnect(nodes.b.address()).await,
        Err(LinkError::Quarantined {
            peer: nodes.b.address().clone()
        })
    );

    // One side alone is not enough: the other still refuses.
    assert!(nodes.a.clear_quarantine(nodes.b.address()));
    assert!(matches!(
        nodes.a.reconnect(nodes.b.address()).await,
        Err(LinkError::Failed { .. })
    ));
    assert!(nodes.b.clear_quarantine(nodes.a.address()));
    assert!(!nodes.b.clear_quarantine(nodes.a.address()));
    assert!(!nodes.a.clear_quarantine(nodes.b.address()));
    nodes.a.reconnect(nodes.b.address()).await.unwrap();

    // The old ref names the ended session; a ref resolved again works.
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    before.tell(Echo(2));
    let letter = next_refused(&mut letters).await;
    assert!(
        matches!(
            letter.reason(),
            DeadLetterReason::Quarantined { .. } | DeadLetterReason::SessionEnded { .. }
        ),
        "{letter:?}"
    );
    let after = remote::<EchoerMsg>(&nodes, "worker");
    assert_eq!(after.ask(Echo(3)).timeout(WAIT).await, Ok(Echoed(3)));
    nodes.terminate().await;
}

// S44: a remote ask is answered; an ask nobody answers while the peer is there
// times out (`Timeout`, not `Unreachable`); an ask to a quarantined peer fails at
// once with `Unreachable`, whatever its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_remote_ask_tells_timeout_from_unreachable() {
    let nodes = two_nodes(impatient()).unwrap();
    let _worker = echoer(&nodes.b, "worker");
    let worker = remote::<EchoerMsg>(&nodes, "worker");
    assert_eq!(worker.ask(Echo(5)).timeout(WAIT).await, Ok(Echoed(5)));
    assert!(matches!(
        worker
            .ask_with(|reply_to| Ignore { reply_to })
            .timeout(Duration::from_millis(200))
            .await,
        Err(AskError::Timeout { .. })
    ));

    let mut gave_up = nodes.a.events().subscribe::<PeerUnreachable>();
    nodes.partition();
    next_unreachable(&mut gave_up).await;
    let asked = Instant::now();
    assert_eq!(
        worker.ask(Echo(6)).timeout(Duration::from_secs(30)).await,
        Err(AskError::Unreachable {
            target: worker.path().clone()
        })
    );
    assert!(asked.elapsed() < Duration::from_secs(1));
    nodes.terminate().await;
}

// S45: `drop_next` loses that many messages in one direction, and the rest arrive
// in order; a delay holds each message at least that long.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s45_dropped_and_delayed_frames() {
    let nodes = two_nodes(patient()).unwrap();
    let (mut inbox, to_inbox) = inbox_on_b(&nodes).await;

    nodes.a_to_b().drop_next(3);
    for n in 1..=10 {
        to_inbox.tell(Note(n));
    }
    let got = inbox.receive_messages(7, WAIT).await;
    assert_eq!(got, (4..=10).map(Note).collect::<Vec<_>>());
    inbox.expect_no_message(Duration::from_millis(100)).await;

    // The other direction is untouched by this one's faults.
    let delay = Duration::from_millis(250);
    nodes.a_to_b().delay(delay);
    let sent = Instant::now();
    to_inbox.tell(Note(11));
    assert_eq!(inbox.expect_message(WAIT).await, Note(11));
    assert!(
        sent.elapsed() >= delay,
        "arrived after {:?}",
        sent.elapsed()
    );
    nodes.a_to_b().clear();

    // A ratio loses some and keeps the order of the rest.
    nodes.a_to_b().drop_ratio(0.5, 42);
    for n in 100..300 {
        to_inbox.tell(Note(n));
    }
    nodes.a_to_b().clear();
    to_inbox.tell(Note(1000));
    let mut kept = Vec::new();
    loop {
        let Note(n) = inbox.expect_message(WAIT).await;
        if n == 1000 {
            break;
        }
        kept.push(n);
    }
    assert!(kept.windows(2).all(|w| w[0] < w[1]), "{kept:?}");
    assert!(
        (40..160).contains(&kept.len()),
        "{} of 200 kept",
        kept.len()
    );
    nodes.terminate().await;
}

// S44: an ask to a system nobody listens at fails with `Unreachable` as soon as the
// dial fails, not at its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_an_ask_to_a_peer_nobody_listens_at_fails_fast() {
    let home = ActorSystem::builder("home")
        .remote(patient())
        .build()
        .unwrap();
    // A port that was bound and let go: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let nobody = home
        .resolve::<EchoerMsg>(&format!("tapio://away@127.0.0.1:{port}/user/worker"))
        .unwrap();
    let asked = Instant::now();
    assert_eq!(
        nobody.ask(Echo(1)).timeout(Duration::from_secs(30)).await,
        Err(AskError::Unreachable {
            target: nobody.path().clone()
        })
    );
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "{:?}",
        asked.elapsed()
    );
    // The same for a request whose reply ref is a field of the message.
    let asked = Instant::now();
    assert_eq!(
        nobody
            .ask_with(|reply_to| Ignore { reply_to })
            .timeout(Duration::from_secs(30))
            .await,
        Err(AskError::Unreachable {
            target: nobody.path().clone()
        })
    );
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "{:?}",
        asked.elapsed()
    );
    home.terminate().await;
}

// S38: two systems that dial each other at once end with one association each:
// messages cross both ways, and a partition gives each peer up exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_two_systems_dialling_each_other_at_once_have_one_association() {
    let nodes = two_nodes(impatient()).unwrap();
    let mut on_a = TestProbe::<Note>::new(&nodes.a);
    let mut on_b = TestProbe::<Note>::new(&nodes.b);
    let a_to_b = nodes
        .a
        .resolve::<Note>(&on_b.actor_ref().to_string())
        .unwrap();
    let b_to_a = nodes
        .b
        .resolve::<Note>(&on_a.actor_ref().to_string())
        .unwrap();
    // Both first sends dial, before either system has a connection to the other.
    a_to_b.tell(Note(1));
    b_to_a.tell(Note(2));
    assert_eq!(on_b.expect_message(WAIT).await, Note(1));
    assert_eq!(on_a.expect_message(WAIT).await, Note(2));
    for n in 3..=5 {
        a_to_b.tell(Note(n));
        b_to_a.tell(Note(n + 10));
    }
    assert_eq!(
        on_b.receive_messages(3, WAIT).await,
        vec![Note(3), Note(4), Note(5)]
    );
    assert_eq!(
        on_a.receive_messages(3, WAIT).await,
        vec![Note(13), Note(14), Note(15)]
    );

    let mut a_gave_up = nodes.a.events().subscribe::<PeerUnreachable>();
    let mut b_gave_up = nodes.b.events().subscribe::<PeerUnreachable>();
    nodes.partition();
    assert_eq!(
        next_unreachable(&mut a_gave_up).await.peer,
        *nodes.b.address()
    );
    assert_eq!(
        next_unreachable(&mut b_gave_up).await.peer,
        *nodes.a.address()
    );
    // Many heartbeats later, still once each.
    on_a.expect_no_message(Duration::from_millis(300)).await;
    assert!(a_gave_up.try_recv().is_none());
    assert!(b_gave_up.try_recv().is_none());
    nodes.terminate().await;
}
