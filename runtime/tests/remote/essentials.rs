//! What a new user tries first across a link: asks and refs round trip, dead letters
//! naming the peer, secrets, versions and settings refused, dialling, ordering,
//! watches, partitions, quarantine and its recovery, remote spawn, `offer` and
//! `PeerUnreachable` (S18, S22, S23, S36-S44, S46, S47, S49).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::first_contact::*;
use crate::support::nodes::closed_port;
use crate::support::nodes::linked;
use crate::support::nodes::{fast, slow_detector, watcher};
use crate::support::outside::recv_within;
use std::time::{Duration, Instant};
use tapio::prelude::*;
use tapio::remote::spawn::{RemoteSpawnError, Spawn, SpawnFailure, SpawnReply, Spawner};
use tapio::remote::{LinkError, PeerUnreachable, RemoteError, RemoteSettings};
use tapio::testkit::{TwoNodes, two_nodes};
use tapio::wire::{Registry, WireProblem};
use tapio::{AnyActorRef, AskError, DeadLetter, DeadLetterReason, SystemError, remote_behavior};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

#[message(remote = "outside.stranger.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stranger(pub u64);

/// A message carrying refs: one for the answer, one to pass back.
#[message(remote = "outside.introduce.v1")]
pub struct Introduce {
    pub greet: ActorRef<Note>,
    pub answer: ActorRef<Introduced>,
}

/// The answer: the ref it was handed, sent back.
#[message(remote = "outside.introduced.v1")]
pub struct Introduced {
    pub greet: ActorRef<Note>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Choice {
    Nothing,
    Pair(i32, i32),
    Named { label: String, weight: f64 },
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Inner {
    pub key: String,
    pub values: Vec<i64>,
}

#[message(remote = "outside.rich.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Rich {
    pub seq: u64,
    pub text: String,
    pub bytes: Vec<u8>,
    pub signed: i128,
    pub ratio: f64,
    pub flag: bool,
    pub nested: Option<Vec<Inner>>,
    pub choice: Choice,
    pub ch: char,
}

// Remote spawn factories.

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct WorkerArgs {
    pub base: u64,
}

pub struct Worker {
    base: u64,
}

#[actor]
impl Worker {
    fn ping(&mut self, Ping(n): Ping) -> Pong {
        Pong(self.base + n)
    }

    fn quit(&mut self, _: Quit) -> Behavior<WorkerMsg> {
        Behaviors::stopped()
    }
}

#[remote_behavior("outside.worker")]
pub fn worker(args: WorkerArgs) -> Behavior<WorkerMsg> {
    let base = args.base;
    Behaviors::setup(move |_| Worker { base })
}

#[remote_behavior("outside.unoffered")]
pub fn unoffered(args: WorkerArgs) -> Behavior<WorkerMsg> {
    let base = args.base;
    Behaviors::setup(move |_| Worker { base })
}

/// An actor that forwards every `Note` it gets to a channel.
fn note_sink(system: &ActorSystem, name: &str) -> (ActorRef<Note>, mpsc::UnboundedReceiver<Note>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let sink = system
        .spawn(
            Behaviors::receive_message(move |note: Note| {
                let _ = tx.send(note);
            }),
            name,
        )
        .expect("spawn the sink");
    (sink, rx)
}

async fn nothing_within<T: std::fmt::Debug>(rx: &mut mpsc::UnboundedReceiver<T>, within: Duration) {
    if let Ok(got) = tokio::time::timeout(within, rx.recv()).await {
        panic!("expected nothing, got {got:?}");
    }
}

async fn wait_unreachable(
    events: &mut tapio::Subscription<PeerUnreachable>,
    within: Duration,
) -> PeerUnreachable {
    tokio::time::timeout(within, events.recv())
        .await
        .expect("no PeerUnreachable in time")
        .expect("the stream closed")
}

/// A remoting node named `name` with the slow detector.
fn slow_node(name: &str) -> ActorSystem {
    ActorSystem::builder(name)
        .remote(slow_detector())
        .build()
        .unwrap()
}

/// An `Echo` spawned on b, and the ref to it resolved on a.
fn remote_echo(nodes: &TwoNodes) -> (ActorRef<EchoMsg>, ActorRef<EchoMsg>) {
    let echo = nodes.b.spawn(Echo::default(), "echo").unwrap();
    let remote = nodes.a.resolve::<EchoMsg>(&echo.path().to_uri()).unwrap();
    (echo, remote)
}

/// A `note_sink` named "sink" on b, its channel, and the ref to it resolved on a.
fn remote_note_sink(
    nodes: &TwoNodes,
) -> (
    ActorRef<Note>,
    mpsc::UnboundedReceiver<Note>,
    ActorRef<Note>,
) {
    let (sink, rx) = note_sink(&nodes.b, "sink");
    let remote = nodes.a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    (sink, rx, remote)
}

/// A watcher of `remote` on a, with the watch known to be in place over there.
async fn watched_echo(
    nodes: &TwoNodes,
    name: &str,
    remote: &ActorRef<EchoMsg>,
) -> mpsc::UnboundedReceiver<AnyActorRef> {
    let ends = watcher(&nodes.a, name, remote.clone());
    let _ = remote.ask(Ping(0)).timeout(BOUND).await.unwrap();
    ends
}

/// An actor on `system` that forwards the ref in each `Introduced` to a channel.
fn introduced_sink(
    system: &ActorSystem,
) -> (
    ActorRef<Introduced>,
    mpsc::UnboundedReceiver<ActorRef<Note>>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let answer = system
        .spawn(
            Behaviors::receive_message(move |m: Introduced| {
                let _ = tx.send(m.greet);
            }),
            "answer",
        )
        .unwrap();
    (answer, rx)
}

/// An introducer on b (it runs `first`, greets with `Note(note)`, sends the ref
/// back), resolved on a.
fn remote_introducer(
    nodes: &TwoNodes,
    note: u64,
    first: impl Fn(&Introduce) + Send + Sync + 'static,
) -> ActorRef<Introduce> {
    let introducer = nodes
        .b
        .spawn(
            Behaviors::receive_message(move |m: Introduce| {
                first(&m);
                m.greet.tell(Note(note));
                m.answer.tell(Introduced {
                    greet: m.greet.clone(),
                });
            }),
            "introducer",
        )
        .unwrap();
    nodes
        .a
        .resolve::<Introduce>(&introducer.path().to_uri())
        .unwrap()
}

/// The next dead letter whose reason is `FromPeer`.
async fn from_peer_letter(letters: &mut tapio::Subscription<DeadLetter>) -> DeadLetter {
    letter_where(letters, BOUND, |l| {
        matches!(l.reason(), DeadLetterReason::FromPeer { .. })
    })
    .await
}

/// The next dead letter whose reason is `Unreachable`, within `within`.
async fn unreachable_letter(
    letters: &mut tapio::Subscription<DeadLetter>,
    within: Duration,
) -> DeadLetter {
    letter_where(letters, within, |l| {
        matches!(l.reason(), DeadLetterReason::Unreachable { .. })
    })
    .await
}

/// Asserts `letter` is `Unreachable` naming the loopback peer on `port`.
fn assert_unreachable_on_port(letter: &DeadLetter, port: u16) {
    assert!(
        matches!(letter.reason(), DeadLetterReason::Unreachable { peer } if peer.host_port() == Some(("127.0.0.1", port))),
        "{letter}"
    );
}

/// A loopback TCP listener and its port.
async fn loopback_listener() -> (tokio::net::TcpListener, u16) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

/// Asks `Ping(1)` and asserts it fails with `Unreachable` in less than `limit`.
async fn assert_ask_unreachable_within(
    remote: &ActorRef<EchoMsg>,
    limit: Duration,
    deadline: Duration,
) {
    let started = Instant::now();
    let asked = remote.ask(Ping(1)).timeout(deadline).await;
    assert!(
        matches!(asked, Err(AskError::Unreachable { .. })),
        "{asked:?}"
    );
    assert!(started.elapsed() < limit, "{:?}", started.elapsed());
}

/// A `Hold` ask (never answered) running in a task, known to be in hand on b.
async fn held_ask(remote: &ActorRef<EchoMsg>) -> tokio::task::JoinHandle<Result<Pong, AskError>> {
    let held = remote
        .ask_with(|reply_to| Hold { reply_to })
        .timeout(Duration::from_secs(30));
    let held = tokio::spawn(held.into_future());
    // Handled in order on b: once this answer is back, the `Hold` is in hand there.
    let Pong(n) = remote.ask(Ping(1)).timeout(BOUND).await.unwrap();
    assert_eq!(n, 1);
    held
}

/// Partitions the nodes and waits until a (and b, if `both`) gives the other up.
async fn partition_until_given_up(nodes: &TwoNodes, both: bool) {
    let mut on_a = nodes.a.events().subscribe::<PeerUnreachable>();
    let mut on_b = nodes.b.events().subscribe::<PeerUnreachable>();
    nodes.partition();
    wait_unreachable(&mut on_a, BOUND).await;
    if both {
        wait_unreachable(&mut on_b, BOUND).await;
    }
}

/// Clears the quarantine on both sides, each side saying there was one.
fn clear_both_quarantines(nodes: &TwoNodes) {
    assert!(nodes.a.clear_quarantine(nodes.b.address()));
    assert!(nodes.b.clear_quarantine(nodes.a.address()));
}

/// A `Note` ref resolved on `system` to `/user/x` at a loopback `port` named `name`.
fn loopback_ref(system: &ActorSystem, name: &str, port: u16) -> ActorRef<Note> {
    system
        .resolve::<Note>(&format!("tapio://{name}@127.0.0.1:{port}/user/x"))
        .unwrap()
}

// ---------------------------------------------------------------------------------
// Remoting
// ---------------------------------------------------------------------------------

// S21, S44: an ask across a link is answered, typed, through the promise on the
// asking node; `ask_with` too, with the reply ref in a field that crosses the wire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_remote_ask_round_trips() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (_echo, remote) = remote_echo(&nodes);
    for n in 0..20 {
        let Pong(got) = remote.ask(Ping(n)).timeout(BOUND).await.unwrap();
        assert_eq!(got, n);
    }
    let Pong(got) = remote
        .ask(SlowPing {
            n: 99,
            after_ms: 10,
        })
        .timeout(BOUND)
        .await
        .unwrap();
    assert_eq!(got, 99);
    nodes.terminate().await;
}

// S22 across a link: the peer answers after the deadline; the asker got `Timeout`
// (the peer was there), and the late answer becomes a dead letter on the asking
// node, with a reason. Nothing else breaks: the next ask is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s22_late_remote_reply_is_a_dead_letter_on_the_asker() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    let (_echo, remote) = remote_echo(&nodes);
    linked(&nodes.a, &nodes.b, BOUND).await;
    let asked = remote
        .ask(SlowPing {
            n: 5,
            after_ms: 400,
        })
        .timeout(Duration::from_millis(100))
        .await;
    assert!(matches!(asked, Err(AskError::Timeout { .. })), "{asked:?}");
    let letter = letter_where(&mut letters, BOUND, |l| {
        l.is::<Pong>() || l.short_message_type() == "Pong"
    })
    .await;
    // As locally: the ask it answers has ended; the letter names the promise.
    assert!(
        matches!(letter.reason(), DeadLetterReason::AskEnded),
        "{letter}"
    );
    assert!(
        letter
            .recipient()
            .to_string()
            .starts_with("/system/promises/"),
        "{letter}"
    );
    assert_eq!(letter.take_message::<Pong>(), Some(Pong(5)), "{letter}");
    let Pong(n) = remote.ask(Ping(6)).timeout(BOUND).await.unwrap();
    assert_eq!(n, 6);
    nodes.terminate().await;
}

// S36: refs inside messages serialize in full and come back live: a local ref sent
// to the peer and back is the local actor again (equal, and it delivers locally);
// a reply to a ref that crossed the wire reaches the actor on the asking node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_refs_in_messages_round_trip_and_reply_across() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (greet_sink, mut greeted) = note_sink(&nodes.a, "greet");
    let (answer, mut back) = introduced_sink(&nodes.a);
    let remote = remote_introducer(&nodes, 41, |_| {});
    remote.tell(Introduce {
        greet: greet_sink.clone(),
        answer,
    });
    assert_eq!(recv_within(&mut greeted, BOUND).await, Note(41));
    let came_back = recv_within(&mut back, BOUND).await;
    assert_eq!(
        came_back, greet_sink,
        "the ref that came back is not the local actor"
    );
    assert_eq!(came_back.uid(), greet_sink.uid());
    assert_eq!(came_back.path().to_uri(), greet_sink.path().to_uri());
    came_back.tell(Note(42));
    assert_eq!(recv_within(&mut greeted, BOUND).await, Note(42));
    nodes.terminate().await;
}

// S37: a frame to a stale incarnation uid becomes a dead letter on the receiver
// naming the peer (and the problem); the association stays up: a freshly
// resolved ref to the new incarnation is delivered to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_stale_incarnation_is_a_dead_letter_naming_the_peer() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let mut letters = nodes.b.events().subscribe::<DeadLetter>();
    let (first, _rx) = note_sink(&nodes.b, "target");
    let old = nodes.a.resolve::<Note>(&first.to_string()).unwrap();
    assert_eq!(old.uid(), first.uid(), "the uid in the URI was not kept");
    stop_and_wait(&nodes.b, &first, || nodes.b.stop(&first).unwrap()).await;
    let (second, mut second_rx) = note_sink(&nodes.b, "target");
    assert_ne!(first.uid(), second.uid());
    old.tell(Note(1));
    let letter = from_peer_letter(&mut letters).await;
    match letter.reason() {
        DeadLetterReason::FromPeer { peer, problem } => {
            assert_eq!(peer, nodes.a.address());
            assert_eq!(
                problem,
                &WireProblem::StaleIncarnation {
                    addressed: first.uid(),
                    current: second.uid()
                }
            );
        }
        other => panic!("{other:?}"),
    }
    nothing_within(&mut second_rx, Duration::from_millis(100)).await;
    let fresh = nodes.a.resolve::<Note>(&second.path().to_uri()).unwrap();
    fresh.tell(Note(2));
    assert_eq!(recv_within(&mut second_rx, BOUND).await, Note(2));
    nodes.terminate().await;
}

// S37: a frame to a path where nobody lives, and one whose message the recipient
// does not accept, are dead letters naming the peer; the link keeps working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_no_recipient_and_not_accepted_are_dead_letters_naming_the_peer() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let mut letters = nodes.b.events().subscribe::<DeadLetter>();
    let (sink, mut rx) = note_sink(&nodes.b, "sink");
    let nobody = nodes
        .a
        .resolve::<Note>(&format!("{}/user/nobody", nodes.b.address()))
        .unwrap();
    nobody.tell(Note(1));
    let letter = from_peer_letter(&mut letters).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::FromPeer { peer, problem: WireProblem::NoRecipient } if peer == nodes.a.address()),
        "{letter}"
    );
    // S31: it names the path the frame addressed, and carries the message.
    assert_eq!(letter.recipient().to_string(), "/user/nobody", "{letter}");
    assert_eq!(letter.take_message::<Note>(), Some(Note(1)), "{letter}");
    // The sink takes `Note`; a ref typed for `Stranger` resolves on a (it cannot
    // know b's protocol) and its message is refused on b.
    let wrong = nodes.a.resolve::<Stranger>(&sink.path().to_uri()).unwrap();
    wrong.tell(Stranger(2));
    let letter = from_peer_letter(&mut letters).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::FromPeer { peer, problem: WireProblem::NotAccepted(_) } if peer == nodes.a.address()),
        "{letter}"
    );
    let right = nodes.a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    right.tell(Note(3));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(3));
    nodes.terminate().await;
}

/// A node that knows only the wire keys `registry` lists.
fn node_registering(name: &str, registry: tapio::wire::RegistryBuilder) -> ActorSystem {
    ActorSystem::builder(name)
        .remote(slow_detector())
        .wire_registry(registry.build().unwrap())
        .build()
        .unwrap()
}

// S37, S35: a key the receiver has not registered is refused by registry lookup,
// as a dead letter naming the peer; what follows on the same link still arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_unknown_key_is_a_dead_letter_and_the_link_survives() {
    let a = slow_node("a");
    let b = node_registering("b", Registry::builder().register::<Note>());
    let mut letters = b.events().subscribe::<DeadLetter>();
    let (sink, mut rx) = note_sink(&b, "sink");
    let stranger = a.resolve::<Stranger>(&sink.path().to_uri()).unwrap();
    let note = a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    note.tell(Note(1));
    stranger.tell(Stranger(2));
    note.tell(Note(3));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(1));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(3));
    let letter = from_peer_letter(&mut letters).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::FromPeer { peer, problem: WireProblem::UnknownKey(key) }
            if peer == a.address() && key == "outside.stranger.v1"),
        "{letter}"
    );
    a.terminate().await;
    b.terminate().await;
}

/// Ask `echo` for `Ping(n)` with a deadline of `BOUND`, and check that the ask ended
/// well before it: a refused request fails at once.
async fn ask_failing_fast(echo: &ActorRef<EchoMsg>, n: u64) -> Result<Pong, AskError> {
    let started = Instant::now();
    let asked = echo.ask(Ping(n)).timeout(BOUND).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{asked:?} after {:?}",
        started.elapsed()
    );
    asked
}

// S37 + S44: a request the other system cannot deliver fails its ask at once, with
// what that system found, instead of at the deadline: here a key not registered
// there. The request is still a dead letter there, naming the asking system.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_s44_a_request_the_peer_cannot_deliver_fails_its_ask_at_once() {
    let a = slow_node("a");
    let b = node_registering(
        "b",
        Registry::builder().register::<Note>().register::<Pong>(),
    );
    let mut letters = b.events().subscribe::<DeadLetter>();
    let echo = b.spawn(Echo::default(), "echo").unwrap();
    let (sink, mut rx) = note_sink(&b, "sink");
    let note = a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    note.tell(Note(1));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(1));

    // b has not registered `Ping`.
    let echo_from_a = a.resolve::<EchoMsg>(&echo.path().to_uri()).unwrap();
    let asked = ask_failing_fast(&echo_from_a, 2).await;
    assert!(
        matches!(&asked, Err(AskError::Refused { target, problem: WireProblem::UnknownKey(key) })
            if target == echo.path() && key == "outside.ping.v1"),
        "{asked:?}"
    );
    let error = asked.unwrap_err().to_string();
    assert!(
        error.contains("register"),
        "the error says nothing to do: {error}"
    );
    let letter = from_peer_letter(&mut letters).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::FromPeer { peer, problem: WireProblem::UnknownKey(_) } if peer == a.address()),
        "{letter}"
    );

    a.terminate().await;
    b.terminate().await;
}

// S37 + S44 + S23: a request whose recipient's protocol does not accept it fails its
// ask at once with `NotAccepted`, and a request the recipient takes is still
// answered; one to a path where nobody lives fails at once as `TargetTerminated`,
// as a local ask to a stopped actor does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_s44_a_request_its_recipient_does_not_accept_fails_its_ask_at_once() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (sink, _rx) = note_sink(&nodes.b, "sink");
    let echo = nodes.b.spawn(Echo::default(), "echo").unwrap();
    let wrong = nodes.a.resolve::<EchoMsg>(&sink.path().to_uri()).unwrap();
    let asked = ask_failing_fast(&wrong, 1).await;
    assert!(
        matches!(&asked, Err(AskError::Refused { target, problem: WireProblem::NotAccepted(key) })
            if target == sink.path() && key == "outside.ping.v1"),
        "{asked:?}"
    );
    let right = nodes.a.resolve::<EchoMsg>(&echo.path().to_uri()).unwrap();
    assert_eq!(right.ask(Ping(2)).timeout(BOUND).await.unwrap(), Pong(2));
    // Nobody lives at the path.
    let nobody = nodes
        .a
        .resolve::<EchoMsg>(&format!("{}/user/nobody", nodes.b.address()))
        .unwrap();
    let asked = ask_failing_fast(&nobody, 4).await;
    assert!(
        matches!(&asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    nodes.terminate().await;
}

// S37: frames handed straight to `deliver_frame`: garbage, a truncated frame, an
// oversized announcement. Each is an error and a dead letter naming the peer; the
// system keeps delivering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_unreadable_frames_are_dead_letters_and_nothing_stops() {
    let b = slow_node("b");
    let mut letters = b.events().subscribe::<DeadLetter>();
    let (sink, mut rx) = note_sink(&b, "sink");
    let peer = tapio::Address::parse("tapio://evil@127.0.0.1:9").unwrap();
    let frames: Vec<Vec<u8>> = vec![
        vec![],
        vec![0, 0, 0],
        vec![0, 0, 0, 5, 1, 2],
        vec![0xff, 0xff, 0xff, 0xff],
        vec![0, 0, 0, 4, 0xde, 0xad, 0xbe, 0xef],
    ];
    for frame in &frames {
        let result = b.deliver_frame(&peer, frame);
        assert!(result.is_err(), "{frame:?} was accepted");
        let letter = letter_where(&mut letters, BOUND, |_| true).await;
        assert!(
            matches!(letter.reason(), DeadLetterReason::FromPeer { peer: p, .. } if *p == peer),
            "{frame:?}: {letter}"
        );
    }
    sink.tell(Note(9));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(9));
    b.terminate().await;
}

// S38: a peer with another secret is refused with an error that says what to fix,
// and what was told to it dead-letters instead of hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_wrong_secret_is_refused_clearly() {
    let a = ActorSystem::builder("a")
        .remote(slow_detector().secret(b"0123456789abcdef-a".to_vec()))
        .build()
        .unwrap();
    let b = ActorSystem::builder("b")
        .remote(slow_detector().secret(b"0123456789abcdef-b".to_vec()))
        .build()
        .unwrap();
    let mut letters = a.events().subscribe::<DeadLetter>();
    let (sink, mut rx) = note_sink(&b, "sink");
    let error = tokio::time::timeout(BOUND, a.reconnect(b.address()))
        .await
        .expect("reconnect hung")
        .expect_err("a different secret linked");
    assert!(
        matches!(&error, LinkError::Failed { peer, .. } if peer == b.address()),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("secret"),
        "the error does not say what to fix: {error}"
    );
    let remote = a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    remote.tell(Note(1));
    let letter = unreachable_letter(&mut letters, BOUND).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::Unreachable { peer } if peer == b.address()),
        "{letter}"
    );
    nothing_within(&mut rx, Duration::from_millis(100)).await;
    a.terminate().await;
    b.terminate().await;
}

// S38: a dialer that speaks another protocol version is refused before anything
// else, and told which version the listener speaks; the listener keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_wrong_protocol_version_is_refused_by_the_listener() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (host, port) = nodes.b.address().host_port().unwrap();
    let mut stream = tokio::net::TcpStream::connect((host, port)).await.unwrap();
    // Hello { magic: "TAPIO", version: 99, nonce: [7; 32], address }, in postcard.
    let mut hello = b"TAPIO".to_vec();
    hello.push(99);
    hello.extend_from_slice(&[7; 32]);
    let address = "tapio://old@127.0.0.1:1";
    hello.push(u8::try_from(address.len()).unwrap());
    hello.extend_from_slice(address.as_bytes());
    stream
        .write_all(&u32::try_from(hello.len()).unwrap().to_be_bytes())
        .await
        .unwrap();
    stream.write_all(&hello).await.unwrap();
    let mut prefix = [0; 4];
    tokio::time::timeout(BOUND, stream.read_exact(&mut prefix))
        .await
        .expect("no answer to a wrong version")
        .unwrap();
    let mut body = vec![0; u32::from_be_bytes(prefix) as usize];
    stream.read_exact(&mut body).await.unwrap();
    // Answer::Reject { reason } is variant 1, then the reason.
    assert_eq!(body[0], 1, "not a rejection: {body:?}");
    let reason = String::from_utf8_lossy(&body[2..]).to_string();
    assert!(
        reason.contains(&tapio::remote::PROTOCOL_VERSION.to_string()),
        "the rejection does not name the version: {reason:?}"
    );
    // Still serving.
    let (sink, mut rx) = note_sink(&nodes.b, "sink");
    nodes
        .a
        .resolve::<Note>(&sink.path().to_uri())
        .unwrap()
        .tell(Note(5));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(5));
    nodes.terminate().await;
}

/// A listener on loopback that answers every hello with a refusal for speaking
/// version 7 of the link protocol. Returns its port.
async fn version_7_listener() -> u16 {
    let (listener, port) = loopback_listener().await;
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut prefix = [0; 4];
                if stream.read_exact(&mut prefix).await.is_err() {
                    return;
                }
                let mut body = vec![0; u32::from_be_bytes(prefix) as usize];
                if stream.read_exact(&mut body).await.is_err() {
                    return;
                }
                let reason = b"version 7";
                let mut answer = vec![1, u8::try_from(reason.len()).unwrap()];
                answer.extend_from_slice(reason);
                let _ = stream
                    .write_all(&u32::try_from(answer.len()).unwrap().to_be_bytes())
                    .await;
                let _ = stream.write_all(&answer).await;
                let _ = stream.read(&mut [0; 16]).await;
            });
        }
    });
    port
}

// S38: a listener that answers with another protocol version makes `reconnect`
// fail with an error naming versions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_wrong_protocol_version_is_refused_at_the_dialer() {
    let a = slow_node("a");
    let port = version_7_listener().await;
    let peer = tapio::Address::parse(&format!("tapio://future@127.0.0.1:{port}")).unwrap();
    let error = tokio::time::timeout(BOUND, a.reconnect(&peer))
        .await
        .expect("reconnect hung")
        .expect_err("a different version linked");
    let text = error.to_string();
    assert!(text.contains('7') && text.contains("version"), "{text}");
    a.terminate().await;
}

// S38 (issue 30, item 5): a tell to a system that speaks another version of the
// link protocol is a dead letter on the dialer that says so, naming both versions
// (`LinkRefused`), not a bare "could not be reached".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_a_version_mismatch_is_named_in_the_dialers_dead_letter() {
    let a = slow_node("a");
    let port = version_7_listener().await;
    let mut letters = a.events().subscribe::<DeadLetter>();
    a.resolve::<Note>(&format!("tapio://future@127.0.0.1:{port}/user/sink"))
        .unwrap()
        .tell(Note(1));
    let letter = tokio::time::timeout(BOUND, letters.recv())
        .await
        .expect("a letter")
        .unwrap();
    let DeadLetterReason::LinkRefused { peer, why } = letter.reason() else {
        panic!("not refused: {letter}");
    };
    assert_eq!(peer.host_port(), Some(("127.0.0.1", port)), "{letter}");
    let ours = tapio::remote::PROTOCOL_VERSION.to_string();
    assert!(why.contains("version 7") && why.contains(&ours), "{why}");
    assert!(
        letter.to_string().contains("upgrade one of them"),
        "{letter}"
    );
    a.terminate().await;
}

// S38: port 0 is settled when the system is built; beyond loopback without a
// secret, the system refuses to start; a short secret is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_settings_are_checked_when_built() {
    let system = ActorSystem::builder("port")
        .remote(RemoteSettings::loopback())
        .build()
        .unwrap();
    let (host, port) = system.address().host_port().unwrap();
    assert_eq!(host, "127.0.0.1");
    assert_ne!(port, 0);
    // The port is bound: nobody else can have it.
    assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_err());
    let (sink, _rx) = note_sink(&system, "sink");
    assert!(
        sink.path().to_uri().contains(&format!(":{port}/")),
        "{}",
        sink.path().to_uri()
    );
    system.terminate().await;

    let open = ActorSystem::builder("open")
        .remote(RemoteSettings::bind("0.0.0.0", 0))
        .build();
    assert!(
        matches!(
            &open,
            Err(SystemError::Remote(RemoteError::SecretRequired { .. }))
        ),
        "{:?}",
        open.as_ref().err()
    );
    let short = ActorSystem::builder("short")
        .remote(RemoteSettings::loopback().secret(b"short".to_vec()))
        .build();
    assert!(short.is_err());
}

// S39: `resolve` dials nothing; the first tell does, behind the caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_resolve_dials_nothing_and_the_first_tell_dials() {
    let a = slow_node("a");
    let (listener, port) = loopback_listener().await;
    let remote = loopback_ref(&a, "quiet", port);
    let early = tokio::time::timeout(Duration::from_millis(300), listener.accept()).await;
    assert!(early.is_err(), "resolve dialled");
    let started = Instant::now();
    remote.tell(Note(1));
    assert!(started.elapsed() < Duration::from_millis(50), "tell waited");
    let dialled = tokio::time::timeout(BOUND, listener.accept()).await;
    assert!(dialled.is_ok(), "the tell dialled nothing");
    a.terminate().await;
}

// S39: a tell to a peer that never answers (it accepts TCP and stays silent in the
// handshake) returns at once and becomes a dead letter, `Unreachable`, naming the
// peer and the recipient.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_tell_to_a_silent_peer_dead_letters_instead_of_hanging() {
    let a = slow_node("a");
    let mut letters = a.events().subscribe::<DeadLetter>();
    let (listener, port) = loopback_listener().await;
    let (keep_tx, _keep) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = keep_tx.send(stream); // accepted, never answered
        }
    });
    let remote = loopback_ref(&a, "silent", port);
    let started = Instant::now();
    remote.tell(Note(1));
    assert!(started.elapsed() < Duration::from_millis(50), "tell waited");
    let letter = unreachable_letter(&mut letters, Duration::from_secs(15)).await;
    assert_unreachable_on_port(&letter, port);
    a.terminate().await;
}

// S40: FIFO per association under many messages, and what arrives equals what
// was sent (rich payloads: strings, bytes, floats, enums, nesting, unicode).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_fifo_and_equality_under_many_messages() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let sink = nodes
        .b
        .spawn(
            Behaviors::receive_message(move |m: Rich| {
                let _ = tx.send(m);
            }),
            "rich",
        )
        .unwrap();
    let remote = nodes.a.resolve::<Rich>(&sink.path().to_uri()).unwrap();
    linked(&nodes.a, &nodes.b, BOUND).await;
    let make = |seq: u64| Rich {
        seq,
        text: format!("message {seq}: grüße, 日本, 🦀"),
        bytes: (0..(seq % 300)).map(|b| (b * 7) as u8).collect(),
        signed: -(i128::from(seq) << 70),
        ratio: seq as f64 / 3.0,
        flag: seq.is_multiple_of(2),
        nested: (!seq.is_multiple_of(3)).then(|| {
            vec![Inner {
                key: "k".repeat((seq % 5) as usize),
                values: vec![i64::MIN, -1, 0, i64::try_from(seq).unwrap(), i64::MAX],
            }]
        }),
        choice: match seq % 3 {
            0 => Choice::Nothing,
            1 => Choice::Pair(-3, i32::try_from(seq).unwrap()),
            _ => Choice::Named {
                label: "w".into(),
                weight: -0.5,
            },
        },
        ch: char::from_u32(0x1F600 + (seq % 50) as u32).unwrap(),
    };
    let count = 1000;
    for seq in 0..count {
        remote.tell(make(seq));
    }
    for seq in 0..count {
        let got = recv_within(&mut rx, BOUND).await;
        assert_eq!(got, make(seq), "message {seq} differs or came out of order");
    }
    nodes.terminate().await;
}

// S41: remote watch, case 1: the watched actor stops -> `Terminated`, once, and it
// names the ref that was watched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_remote_watch_actor_stops() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (_echo, remote) = remote_echo(&nodes);
    // The watch is in place over there before the stop.
    let mut ends = watched_echo(&nodes, "watcher", &remote).await;
    remote.tell(Quit);
    let ended = recv_within(&mut ends, BOUND).await;
    assert_eq!(ended, remote);
    nothing_within(&mut ends, Duration::from_millis(300)).await;
    nodes.terminate().await;
}

// S41: case 2: the watched actor's system terminates -> `Terminated` promptly (it
// tells its peers; not after the detector's 20 s window).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_remote_watch_system_stops() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (_echo, remote) = remote_echo(&nodes);
    let mut ends = watched_echo(&nodes, "watcher", &remote).await;
    nodes.b.terminate().await;
    let ended = recv_within(&mut ends, BOUND).await;
    assert_eq!(ended, remote);
    nothing_within(&mut ends, Duration::from_millis(300)).await;
    nodes.a.terminate().await;
}

// S41, S42, S44: case 3: the link is given up on. Every watcher hears `Terminated`
// once, `PeerUnreachable` is published once, the address is quarantined (sends
// dead-letter `Quarantined`), and an ask fails fast with `Unreachable`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_partition_gives_up_once_and_quarantines() {
    let nodes = two_nodes(fast()).unwrap();
    let mut gave_up = nodes.a.events().subscribe::<PeerUnreachable>();
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    let (_echo, remote) = remote_echo(&nodes);
    let mut ends_one = watcher(&nodes.a, "w1", remote.clone());
    let mut ends_two = watched_echo(&nodes, "w2", &remote).await;
    nodes.partition();
    let event = wait_unreachable(&mut gave_up, BOUND).await;
    assert_eq!(event.peer, *nodes.b.address());
    assert!(event.quarantined);
    assert_eq!(recv_within(&mut ends_one, BOUND).await, remote);
    assert_eq!(recv_within(&mut ends_two, BOUND).await, remote);
    assert!(nodes.a.is_quarantined(nodes.b.address()));
    // An ask now fails fast, with `Unreachable`, not at its deadline.
    assert_ask_unreachable_within(&remote, Duration::from_secs(1), Duration::from_secs(10)).await;
    // A tell dead-letters as `Quarantined`.
    remote.tell(Quit);
    let letter = letter_where(&mut letters, BOUND, |l| {
        matches!(l.reason(), DeadLetterReason::Quarantined { .. })
            && (l.is::<Quit>() || l.is::<EchoMsg>())
    })
    .await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::Quarantined { peer } if peer == nodes.b.address())
    );
    assert_eq!(letter.recipient().to_string(), "/user/echo", "{letter}");

    // Several detector windows later: nothing more, once means once.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(
        gave_up.try_recv().is_none(),
        "PeerUnreachable published twice"
    );
    assert!(ends_one.try_recv().is_err(), "Terminated twice");
    assert!(ends_two.try_recv().is_err(), "Terminated twice");
    nodes.heal();
    nodes.terminate().await;
}

// S42: while quarantined, nothing dials the peer, even after the network heals;
// and `reconnect` says to clear the quarantine first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_quarantine_holds_after_heal_and_reconnect_says_why() {
    let nodes = two_nodes(fast()).unwrap();
    let (_sink, mut rx, remote) = remote_note_sink(&nodes);
    linked(&nodes.a, &nodes.b, BOUND).await;
    partition_until_given_up(&nodes, false).await;
    nodes.heal();
    remote.tell(Note(1));
    nothing_within(&mut rx, Duration::from_millis(400)).await;
    let error = nodes.a.reconnect(nodes.b.address()).await.unwrap_err();
    assert!(
        matches!(&error, LinkError::Quarantined { peer } if peer == nodes.b.address()),
        "{error:?}"
    );
    assert!(error.to_string().contains("clear_quarantine"), "{error}");
    nodes.terminate().await;
}

// S43: recovery is explicit: clear the quarantine on both sides, reconnect; refs
// from before name the ended session (dead letter, resolve again); a re-resolved
// ref works, and a new watch works too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_clear_quarantine_reconnect_and_re_resolve() {
    let nodes = two_nodes(fast()).unwrap();
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    let (sink, mut rx, old) = remote_note_sink(&nodes);
    old.tell(Note(0));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(0));
    partition_until_given_up(&nodes, true).await;
    nodes.heal();
    clear_both_quarantines(&nodes);
    assert!(!nodes.a.is_quarantined(nodes.b.address()));
    linked(&nodes.a, &nodes.b, BOUND).await; // reconnect after clearing both sides
    old.tell(Note(1));
    let letter = letter_where(&mut letters, BOUND, |l| {
        matches!(
            l.reason(),
            DeadLetterReason::SessionEnded { .. } | DeadLetterReason::Quarantined { .. }
        )
    })
    .await;
    // (Which reason: see `s43_an_old_ref_after_the_quarantine_is_cleared_says_its_session_ended`.)
    assert_eq!(letter.take_message::<Note>(), Some(Note(1)));
    let fresh = nodes.a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    fresh.tell(Note(2));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(2));
    // A watch on the new session works.
    let mut ends = watcher(&nodes.a, "watcher", fresh.clone());
    fresh.tell(Note(3));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(3));
    nodes.b.stop(&sink).unwrap();
    assert_eq!(recv_within(&mut ends, BOUND).await, fresh);
    nodes.terminate().await;
}

// S44: an ask to a peer that is there but never answers is `Timeout`, not
// `Unreachable`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_unanswered_remote_ask_is_timeout_not_unreachable() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (_echo, remote) = remote_echo(&nodes);
    let started = Instant::now();
    let asked = remote
        .ask_with(|reply_to| Hold { reply_to })
        .timeout(Duration::from_millis(300))
        .await;
    assert!(matches!(asked, Err(AskError::Timeout { .. })), "{asked:?}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    nodes.terminate().await;
}

// S44: an ask whose request is given up on the link (the peer is given up on while
// it is queued) fails at once with `Unreachable`, not at its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_ask_pending_when_peer_is_given_up_fails_fast() {
    let nodes = two_nodes(fast()).unwrap();
    let (_echo, remote) = remote_echo(&nodes);
    linked(&nodes.a, &nodes.b, BOUND).await;
    nodes.partition();
    assert_ask_unreachable_within(&remote, Duration::from_secs(3), Duration::from_secs(10)).await;
    nodes.heal();
    nodes.terminate().await;
}

// S46: remote spawn through an allowlist: an offered factory starts a typed actor
// (the spawner's child on b, which the requester can watch); a factory linked but
// not offered, an unknown key, a taken name and bad arguments are each refused,
// and no actor is started for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_remote_spawn_allowlist_and_refusals() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let spawner = nodes
        .b
        .spawn(Spawner::offering::<worker>().build().unwrap(), "spawner")
        .unwrap();
    let remote = nodes
        .a
        .resolve::<tapio::remote::spawn::SpawnerMsg>(&spawner.path().to_uri())
        .unwrap();
    let spawned = remote
        .spawn_remote::<worker>(WorkerArgs { base: 100 }, "w1")
        .await
        .unwrap();
    assert_eq!(spawned.name, "w1");
    assert_eq!(spawned.actor.path().to_string(), "/user/spawner/w1");
    assert_eq!(spawned.actor.path().address(), nodes.b.address());
    let Pong(n) = spawned.actor.ask(Ping(1)).timeout(BOUND).await.unwrap();
    assert_eq!(n, 101);

    let live_before = nodes.b.live_actors();
    let not_offered = remote
        .spawn_remote::<unoffered>(WorkerArgs { base: 0 }, "w2")
        .await;
    assert!(
        matches!(&not_offered, Err(RemoteSpawnError::Refused(SpawnFailure::NotOffered { factory })) if factory == "outside.unoffered"),
        "{not_offered:?}"
    );
    let taken = remote
        .spawn_remote::<worker>(WorkerArgs { base: 0 }, "w1")
        .await;
    assert!(
        matches!(&taken, Err(RemoteSpawnError::Refused(SpawnFailure::NameTaken { name })) if name == "w1"),
        "{taken:?}"
    );
    let unknown = remote
        .ask(Spawn {
            factory: "outside.nope".into(),
            args: vec![],
            name: "w3".into(),
        })
        .timeout(BOUND)
        .await
        .unwrap();
    assert!(
        matches!(&unknown, SpawnReply::SpawnFailed { reason: SpawnFailure::UnknownFactory { factory } } if factory == "outside.nope"),
        "{unknown:?}"
    );
    let bad = remote
        .ask(Spawn {
            factory: "outside.worker".into(),
            args: vec![
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ],
            name: "w4".into(),
        })
        .timeout(BOUND)
        .await
        .unwrap();
    assert!(
        matches!(
            &bad,
            SpawnReply::SpawnFailed {
                reason: SpawnFailure::BadArguments { .. }
            }
        ),
        "{bad:?}"
    );
    assert_eq!(
        nodes.b.live_actors(),
        live_before,
        "a refused spawn started something"
    );

    // The requester watches what it got.
    let mut ends = watcher(&nodes.a, "watcher", spawned.actor.clone());
    let _ = spawned.actor.ask(Ping(0)).timeout(BOUND).await.unwrap();
    spawned.actor.tell(Quit);
    assert_eq!(recv_within(&mut ends, BOUND).await, spawned.actor);
    nodes.terminate().await;
}

// S47: `offer` on a remote ref waits for room in the outbound buffer (here full,
// behind a partition shorter than the detector's window), and is accepted once
// the buffer drains.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s47_offer_waits_for_room_in_the_outbound_buffer() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    let (_sink, mut rx, remote) = remote_note_sink(&nodes);
    linked(&nodes.a, &nodes.b, BOUND).await;
    nodes.a_to_b().partition();
    // Fill the outbound buffer until a tell is refused with `OutboundFull`.
    let mut sent = 0_u64;
    let full = loop {
        remote.tell(Note(sent));
        sent += 1;
        if let Some(letter) = letters.try_recv()
            && matches!(letter.reason(), DeadLetterReason::OutboundFull { .. })
        {
            break letter;
        }
        assert!(sent < 100_000, "the outbound buffer never filled");
    };
    assert!(
        matches!(full.reason(), DeadLetterReason::OutboundFull { peer } if peer == nodes.b.address()),
        "{full}"
    );
    // The writer may still take a frame or two into its hands (held there by the
    // partition), freeing a slot; once the buffer stays full, an offer waits.
    let mut extra = 0;
    let offer = loop {
        let mut offer = remote.offer(Note(u64::MAX));
        match tokio::time::timeout(Duration::from_millis(300), &mut offer).await {
            Err(_) => break offer,
            Ok(accepted) => {
                assert!(accepted, "an offer to a live peer was refused");
                extra += 1;
                assert!(extra < 4, "offers never waited: the buffer is not bounded");
            }
        }
    };
    nodes.a_to_b().heal();
    let accepted = tokio::time::timeout(BOUND, offer)
        .await
        .expect("the offer never got room");
    assert!(accepted);
    // It arrives, after what was queued before it.
    let mut last = None;
    let deadline = tokio::time::Instant::now() + BOUND;
    while last != Some(Note(u64::MAX)) {
        last = Some(
            tokio::time::timeout_at(deadline, rx.recv())
                .await
                .expect("the offered message never arrived")
                .unwrap(),
        );
    }
    nodes.terminate().await;
}

// S49, S42: `PeerUnreachable` is a typed event on the stream; a subscription made
// and dropped before the partition hears nothing, one kept hears it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s49_peer_unreachable_reaches_current_subscribers_only() {
    let nodes = two_nodes(fast()).unwrap();
    let dropped = nodes.a.events().subscribe::<PeerUnreachable>();
    let mut kept = nodes.a.events().subscribe::<PeerUnreachable>();
    assert_eq!(nodes.a.events().subscriber_count::<PeerUnreachable>(), 2);
    drop(dropped);
    assert_eq!(nodes.a.events().subscriber_count::<PeerUnreachable>(), 1);
    linked(&nodes.a, &nodes.b, BOUND).await;
    nodes.partition();
    let event = wait_unreachable(&mut kept, BOUND).await;
    assert_eq!(event.peer, *nodes.b.address());
    nodes.heal();
    nodes.terminate().await;
}

// S39: no listener at all: the tell returns at once, and the dead letter
// (`Unreachable`, naming the peer) comes quickly, not at some long timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_tell_to_a_closed_port_dead_letters_quickly() {
    let a = slow_node("a");
    let mut letters = a.events().subscribe::<DeadLetter>();
    let port = closed_port();
    let remote = loopback_ref(&a, "gone", port);
    let started = Instant::now();
    remote.tell(Note(1));
    let letter = unreachable_letter(&mut letters, Duration::from_secs(2)).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_unreachable_on_port(&letter, port);
    a.terminate().await;
}

/// A TCP relay in front of `target`; `cut` closes every connection relayed so far.
struct Relay {
    port: u16,
    cut: tokio::sync::watch::Sender<u64>,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// A relay listening on `listener` (at `port`) to `target`: each connection joined
/// to a new one to `target`, until the next cut.
async fn relay_on(listener: tokio::net::TcpListener, port: u16, target: u16) -> Relay {
    let (cut, cuts) = tokio::sync::watch::channel(0_u64);
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut cuts = cuts.clone();
            let generation = *cuts.borrow_and_update();
            tokio::spawn(async move {
                let Ok(mut outbound) = tokio::net::TcpStream::connect(("127.0.0.1", target)).await
                else {
                    return;
                };
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                    _ = cuts.wait_for(|g| *g > generation) => {}
                }
            });
        }
    });
    Relay {
        port,
        cut,
        accepted,
    }
}

// S39: a ref is bound to the peer, not to one connection: when the connection
// breaks (the relay in the middle closes it) and the peer is not quarantined, the
// next sends dial again behind the tell and get through. b sits behind the relay
// as behind a port forward: it advertises the relay's port
// (`RemoteSettings::advertise`), which is the address a dials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_broken_connection_is_dialled_again_by_the_next_send() {
    let (listener, relay_port) = loopback_listener().await;
    let b_port = crate::support::nodes::low_port();
    let behind = |name: &str, settings: RemoteSettings| {
        ActorSystem::builder(name).remote(settings).build().unwrap()
    };
    let nodes = TwoNodes {
        a: behind("a", slow_detector()),
        b: behind(
            "b",
            RemoteSettings::bind("127.0.0.1", b_port)
                .heartbeat_interval(Duration::from_millis(100))
                .unreachable_after(Duration::from_secs(20))
                .advertise("127.0.0.1", relay_port),
        ),
    };
    let (sink, mut rx) = note_sink(&nodes.b, "sink");
    let relay = relay_on(listener, relay_port, b_port).await;
    let via = nodes
        .a
        .resolve::<Note>(&format!(
            "tapio://b@127.0.0.1:{}{}",
            relay.port,
            sink.path()
        ))
        .unwrap();
    via.tell(Note(0));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(0));
    assert_eq!(relay.accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
    relay.cut.send_modify(|g| *g += 1);
    // Keep sending until one gets through on a new connection.
    let deadline = tokio::time::Instant::now() + BOUND;
    let mut n = 1;
    let got = loop {
        via.tell(Note(n));
        n += 1;
        if let Ok(Some(note)) = tokio::time::timeout(Duration::from_millis(50), rx.recv()).await {
            break note;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "nothing got through after the break"
        );
    };
    assert!(got.0 >= 1);
    assert!(
        relay.accepted.load(std::sync::atomic::Ordering::SeqCst) >= 2,
        "no new dial"
    );
    assert!(!nodes.a.is_quarantined(
        &tapio::Address::parse(&format!("tapio://b@127.0.0.1:{}", relay.port)).unwrap()
    ));
    nodes.terminate().await;
}

// S40: at-most-once, no retries: the next three messages are lost on the way (as
// a network may lose them), the rest arrive in order, and nothing is resent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_lost_messages_are_not_retried_and_order_holds() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (_sink, mut rx, remote) = remote_note_sink(&nodes);
    linked(&nodes.a, &nodes.b, BOUND).await;
    nodes.a_to_b().drop_next(3);
    for n in 0..10 {
        remote.tell(Note(n));
    }
    for n in 3..10 {
        assert_eq!(recv_within(&mut rx, BOUND).await, Note(n));
    }
    nothing_within(&mut rx, Duration::from_millis(300)).await;
    nodes.terminate().await;
}

// S42 (and the docs): a partition shorter than `unreachable_after` loses nothing:
// frames wait and arrive in order when it heals; nobody is given up on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_short_partition_loses_nothing() {
    let settings = RemoteSettings::loopback()
        .heartbeat_interval(Duration::from_millis(50))
        .unreachable_after(Duration::from_millis(1500));
    let nodes = two_nodes(settings).unwrap();
    let mut gave_up = nodes.a.events().subscribe::<PeerUnreachable>();
    let (_sink, mut rx, remote) = remote_note_sink(&nodes);
    linked(&nodes.a, &nodes.b, BOUND).await;
    nodes.partition();
    for n in 0..50 {
        remote.tell(Note(n));
    }
    nothing_within(&mut rx, Duration::from_millis(300)).await;
    nodes.heal();
    for n in 0..50 {
        assert_eq!(recv_within(&mut rx, BOUND).await, Note(n));
    }
    tokio::time::sleep(Duration::from_millis(1700)).await;
    assert!(
        gave_up.try_recv().is_none(),
        "a short partition gave the peer up"
    );
    assert!(!nodes.a.is_quarantined(nodes.b.address()));
    remote.tell(Note(99));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(99));
    nodes.terminate().await;
}

// S41 with S18: watching a remote actor that had already stopped still delivers
// `Terminated`, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_watch_of_an_already_stopped_remote_actor() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let echo = nodes.b.spawn(Echo::default(), "echo").unwrap();
    let remote = nodes.a.resolve::<EchoMsg>(&echo.to_string()).unwrap();
    stop_and_wait(&nodes.b, &echo, || echo.tell(Quit)).await;
    let mut ends = watcher(&nodes.a, "late-watcher", remote.clone());
    assert_eq!(recv_within(&mut ends, BOUND).await, remote);
    nothing_within(&mut ends, Duration::from_millis(300)).await;
    nodes.terminate().await;
}

// S37: a payload that does not decode, and one with bytes left after it, each
// become a dead letter naming the peer and the exact problem.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_bad_payloads_name_the_problem() {
    let b = slow_node("b");
    let (sink, mut rx) = note_sink(&b, "sink");
    let peer = tapio::Address::parse("tapio://evil@127.0.0.1:9").unwrap();
    let limits = tapio::wire::WireLimits::default();
    let header = tapio::wire::FrameHeader {
        key: "outside.note.v1",
        recipient: "/user/sink",
        uid: 0,
        reply_to: None,
    };
    // A varint that never ends.
    let frame = tapio::wire::encode_frame(&header, &[0xff; 11], &limits).unwrap();
    assert!(matches!(
        b.deliver_frame(&peer, &frame),
        Err(WireProblem::Undecodable { .. })
    ));
    let mut payload = tapio::wire::encode_payload(&Note(4)).unwrap();
    payload.push(0);
    let frame = tapio::wire::encode_frame(&header, &payload, &limits).unwrap();
    assert_eq!(
        b.deliver_frame(&peer, &frame),
        Err(WireProblem::TrailingBytes {
            key: "outside.note.v1".into(),
            left: 1
        })
    );
    let good = tapio::wire::encode_frame(
        &header,
        &tapio::wire::encode_payload(&Note(5)).unwrap(),
        &limits,
    )
    .unwrap();
    assert_eq!(b.deliver_frame(&peer, &good), Ok(()));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(5));
    drop(sink);
    b.terminate().await;
}

// S47: an offer to a quarantined peer resolves `false` at once, and the message is
// a dead letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s47_offer_to_a_quarantined_peer_is_refused_at_once() {
    let nodes = two_nodes(fast()).unwrap();
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    let (_sink, _rx, remote) = remote_note_sink(&nodes);
    linked(&nodes.a, &nodes.b, BOUND).await;
    partition_until_given_up(&nodes, false).await;
    let accepted = tokio::time::timeout(Duration::from_millis(500), remote.offer(Note(8)))
        .await
        .expect("the offer to a quarantined peer waited");
    assert!(!accepted);
    let letter = letter_where(&mut letters, BOUND, |l| l.is::<Note>()).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::Quarantined { .. }),
        "{letter}"
    );
    nodes.heal();
    nodes.terminate().await;
}

// S36: a ref to b's own actor, sent from a to b, deserializes on b as the local
// actor; sent back to a, it is the remote ref a had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_a_peer_ref_sent_home_is_local_there() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (sink, mut greeted) = note_sink(&nodes.b, "sink");
    let (answer, mut back) = introduced_sink(&nodes.a);
    let (local_tx, mut local) = mpsc::unbounded_channel::<bool>();
    let expected_sink = sink.clone();
    let remote = remote_introducer(&nodes, 7, move |m| {
        let _ = local_tx.send(m.greet == expected_sink);
    });
    let remote_sink = nodes.a.resolve::<Note>(&sink.to_string()).unwrap();
    remote.tell(Introduce {
        greet: remote_sink.clone(),
        answer,
    });
    assert!(
        recv_within(&mut local, BOUND).await,
        "on b, the ref is not b's sink"
    );
    assert_eq!(recv_within(&mut greeted, BOUND).await, Note(7));
    let came_back = recv_within(&mut back, BOUND).await;
    assert_eq!(came_back, remote_sink);
    assert_eq!(came_back.path().address(), nodes.b.address());
    nodes.terminate().await;
}

// S44: once the peer's system has stopped (it told its peers), an ask through a
// ref from before fails fast, not at its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_ask_after_peer_system_stopped_fails_fast() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (_echo, remote) = remote_echo(&nodes);
    let mut ends = watched_echo(&nodes, "watcher", &remote).await;
    nodes.b.terminate().await;
    recv_within(&mut ends, BOUND).await;
    let started = Instant::now();
    let asked = remote.ask(Ping(1)).timeout(Duration::from_secs(5)).await;
    assert!(
        matches!(
            asked,
            Err(AskError::Unreachable { .. } | AskError::TargetTerminated { .. })
        ),
        "{asked:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    nodes.a.terminate().await;
}

// ---------------------------------------------------------------------------------
// Promises that were once broken, held to as fixed
// ---------------------------------------------------------------------------------

// S23 across a link: a remote target that stops with the request in hand fails the
// ask at once with `TargetTerminated` (the ask watches it over the link once it has
// waited a millisecond), long before its deadline; the peer stays reachable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s23_remote_target_stopping_with_the_request_in_hand_fails_the_ask_at_once() {
    let nodes = two_nodes(slow_detector()).unwrap();
    let (echo, remote) = remote_echo(&nodes);
    linked(&nodes.a, &nodes.b, BOUND).await;
    let held = held_ask(&remote).await;
    let started = Instant::now();
    nodes.b.stop(&echo).unwrap();
    let outcome = ask_outcome(held).await;
    assert!(
        matches!(&outcome, Err(AskError::TargetTerminated { target }) if target.name() == "echo"),
        "{outcome:?}"
    );
    assert!(started.elapsed() < BOUND);
    assert!(!nodes.a.is_quarantined(nodes.b.address()));
    nodes.terminate().await;
}

// S44 still holds beside it: a remote ask whose peer is given up on while it waits
// (its watch hears `Terminated` from the session's end) fails with `Unreachable`,
// not `TargetTerminated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_a_watched_remote_ask_whose_peer_is_given_up_is_unreachable() {
    let nodes = two_nodes(fast()).unwrap();
    let (_echo, remote) = remote_echo(&nodes);
    linked(&nodes.a, &nodes.b, BOUND).await;
    let held = held_ask(&remote).await;
    partition_until_given_up(&nodes, false).await;
    let outcome = ask_outcome(held).await;
    assert!(
        matches!(&outcome, Err(AskError::Unreachable { .. })),
        "{outcome:?}"
    );
    nodes.heal();
    nodes.terminate().await;
}

// S43 + S31: after `clear_quarantine` (both sides) and `reconnect`, a tell through a
// ref from before the quarantine dead-letters as `SessionEnded` (resolve it again),
// not `Quarantined`, which would tell the user to do what they already did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_an_old_ref_after_the_quarantine_is_cleared_says_its_session_ended() {
    let nodes = two_nodes(fast()).unwrap();
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    let (sink, mut rx, old) = remote_note_sink(&nodes);
    linked(&nodes.a, &nodes.b, BOUND).await;
    partition_until_given_up(&nodes, true).await;
    nodes.heal();
    old.tell(Note(0));
    let letter = letter_where(&mut letters, BOUND, |l| l.is::<Note>()).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::Quarantined { .. }),
        "while quarantined: {letter}"
    );
    clear_both_quarantines(&nodes);
    linked(&nodes.a, &nodes.b, BOUND).await;
    old.tell(Note(1));
    let letter = letter_where(&mut letters, BOUND, |l| l.is::<Note>()).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::SessionEnded { peer } if peer == nodes.b.address()),
        "after the clear: {letter}"
    );
    assert_eq!(letter.take_message::<Note>(), Some(Note(1)));
    let again = nodes.a.resolve::<Note>(&sink.path().to_uri()).unwrap();
    again.tell(Note(2));
    assert_eq!(recv_within(&mut rx, BOUND).await, Note(2));
    nodes.terminate().await;
}

// S39 + S31: a tell to a peer that cannot be reached dead-letters with the recipient
// it named and the message itself, not as a nameless frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_an_unreachable_peer_s_dead_letter_names_the_recipient_and_the_message() {
    let a = slow_node("a");
    let mut letters = a.events().subscribe::<DeadLetter>();
    let port = closed_port();
    let remote = loopback_ref(&a, "gone", port);
    remote.tell(Note(1));
    let letter = unreachable_letter(&mut letters, BOUND).await;
    assert_eq!(letter.recipient().to_string(), "/user/x", "{letter}");
    assert_eq!(letter.take_message::<Note>(), Some(Note(1)));
    a.terminate().await;
}
