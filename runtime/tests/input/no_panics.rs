//! No panic a caller or a peer can trigger: each test
//! here calls the public API the way that once panicked inside the library, and
//! holds it to an answer instead (a typed error, a dead letter, or the documented
//! no-op). Each is named after the promise it protects.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio::testkit::two_nodes;
use tapio::wire::{FrameHeader, WireLimits, WireProblem, encode_frame, encode_payload};
use tapio::{Address, DeadLetter, DeadLetterReason};
use tokio::sync::mpsc;
use tokio::time::timeout;

/// The bound on every wait.
const T: Duration = Duration::from_secs(5);

/// A message registered for the wire, so that a ref to its actor resolves.
#[message(remote = "audit-panics.note.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note(pub u64);

/// An actor that hands every `Note` it receives to `to`.
fn forwarder(to: mpsc::UnboundedSender<u64>) -> Behavior<Note> {
    Behaviors::receive_message(move |Note(n): Note| {
        let _ = to.send(n);
    })
    .into()
}

// A ref is `Send`, and `tell` is a plain call: telling a peer's actor from a thread
// that no tokio runtime drives dials the peer on the system's own runtime, as a
// local tell runs the actor there, and the message arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tell_to_a_peer_from_a_plain_thread_is_delivered() {
    let nodes = two_nodes(RemoteSettings::loopback()).unwrap();
    let (to, mut got) = mpsc::unbounded_channel();
    nodes.b.spawn(forwarder(to), "sink").unwrap();
    let on_b = nodes
        .a
        .resolve::<Note>(&format!("{}/user/sink", nodes.b.address()))
        .unwrap();
    let told = std::thread::spawn(move || on_b.tell(Note(7))).join();
    assert!(told.is_ok(), "the tell from a plain thread panicked");
    assert_eq!(timeout(T, got.recv()).await, Ok(Some(7)));
    timeout(T, nodes.terminate()).await.unwrap();
}

// A handshake timeout of `Duration::MAX` is a valid setting (a link may take
// forever); `reconnect` under it answers rather than panicking on the clock.
#[tokio::test(flavor = "current_thread")]
async fn reconnect_under_a_handshake_timeout_of_duration_max_answers() {
    let nodes = two_nodes(RemoteSettings::loopback().handshake_timeout(Duration::MAX)).unwrap();
    let peer = nodes.b.address().clone();
    let linked = timeout(T, nodes.a.reconnect(&peer)).await;
    assert_eq!(linked, Ok(Ok(())));
    timeout(T, nodes.terminate()).await.unwrap();
}

/// A URI of a path `depth` levels deep, on a peer nobody listens for.
fn deep_uri(depth: usize) -> String {
    format!("tapio://deep@127.0.0.1:9{}", "/a".repeat(depth))
}

// A path is a chain of nodes, each holding its parent: one as deep as a URI a peer
// (or a caller) can write, within a frame's limit, is compared and dropped without
// a recursion through its levels, which overflowed a thread's stack and aborted
// the process.
#[tokio::test(flavor = "current_thread")]
async fn a_path_hundreds_of_thousands_of_levels_deep_is_compared_and_dropped() {
    let system = ActorSystem::builder("deep")
        .remote(RemoteSettings::loopback())
        .build()
        .unwrap();
    let uri = deep_uri(300_000);
    let first = system.resolve::<Note>(&uri).unwrap();
    let second = system.resolve::<Note>(&uri).unwrap();
    assert_eq!(first.path().depth(), 300_000);
    assert!(first.path() == second.path(), "the two paths are equal");
    drop((first, second));
    timeout(T, system.terminate()).await.unwrap();
}

// The same depth from a peer: a frame for a path 300,000 levels below `/user`, within the
// default frame limit, is refused as a dead letter naming that path and the peer,
// and the process goes on (the letter's path was dropped level by level before).
#[tokio::test(flavor = "current_thread")]
async fn a_frame_for_a_path_hundreds_of_thousands_of_levels_deep_is_a_dead_letter() {
    let system = ActorSystem::new("deep-frame").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let recipient = format!("/user{}", "/a".repeat(300_000));
    let header = FrameHeader {
        key: "audit-panics.note.v1",
        recipient: &recipient,
        uid: 0,
        reply_to: None,
    };
    let frame = encode_frame(
        &header,
        &encode_payload(&Note(1)).unwrap(),
        &WireLimits::DEFAULT,
    )
    .unwrap();
    let peer = Address::local("peer");
    assert_eq!(
        system.deliver_frame(&peer, &frame),
        Err(WireProblem::NoRecipient)
    );
    let letter = timeout(T, letters.recv()).await.unwrap().unwrap();
    assert_eq!(letter.recipient().depth(), 300_001);
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::FromPeer {
            peer,
            problem: WireProblem::NoRecipient
        }
    );
    drop(letter);
    timeout(T, system.terminate()).await.unwrap();
}
