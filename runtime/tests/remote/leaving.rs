//! A system that leaves (S41): a peer whose handshake reaches it while it
//! terminates is told so in the listener's verdict, `!leaving` instead of
//! `!welcome`, and a system that dials one that is leaving hears at once that its
//! actors have ended, not at its failure detector's give-up.
//!
//! Each case holds the leaving system in its leave with a raw peer (`raw_link`):
//! the raw peer is linked to it, so it is told first, on a connection dialled to
//! the raw peer's own listener, and the system then reads the raw peer's
//! connection until it closes (a second at most). The notice read on that
//! connection is the signal that the system is leaving; nothing here sleeps.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
use crate::support::raw_link;

use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::{PROTOCOL_VERSION, RemoteSettings};
use tapio::{Address, DeadLetter, DeadLetterReason};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

use raw_link::*;

/// `unreachable_after` of every system here: long enough that an end heard
/// within [`WAIT`] is not the failure detector's doing.
const LONG: Duration = Duration::from_secs(30);

#[message(remote = "leaving.note.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Note(pub u64);

fn system(name: &str) -> ActorSystem {
    ActorSystem::builder(name)
        .remote(
            RemoteSettings::loopback()
                .secret(SECRET.to_vec())
                .heartbeat_interval(HEARTBEAT)
                .unreachable_after(LONG),
        )
        .build()
        .unwrap()
}

/// A raw peer linked to `node`: its connection to `node`, and the connection
/// `node` dialled back to its listener, handshaken. `node` reads the first until
/// it closes, and tells the peer that it leaves on the second.
struct RawPeer {
    /// Held open until the peer is dropped.
    _to_node: TcpStream,
    from_node: TcpStream,
}

impl RawPeer {
    async fn link(node: &ActorSystem) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = format!(
            "tapio://raw@127.0.0.1:{}",
            listener.local_addr().unwrap().port()
        );
        let (to_node, _, _) = linked(node, &address).await;
        // The node's heartbeats dial back.
        let (mut from_node, _) = timeout(WAIT, listener.accept())
            .await
            .expect("the node dials back within the bound")
            .unwrap();
        accept_as_listener(&mut from_node, &address).await;
        Self {
            _to_node: to_node,
            from_node,
        }
    }

    /// Wait for the node's `!leaving`, passing over its heartbeats: the node has
    /// begun to leave, and reads `to_node` until it closes.
    async fn hears_leaving(&mut self) {
        loop {
            match verdict(&mut self.from_node).await.as_deref() {
                Some("!leaving") => return,
                Some(_) => {}
                None => panic!("the node closed the connection without saying it leaves"),
            }
        }
    }
}

/// An actor on `system` that watches `target` and sends the path of its end.
async fn watcher_of(
    system: &ActorSystem,
    target: ActorRef<Note>,
) -> mpsc::UnboundedReceiver<String> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    system
        .spawn(
            Behaviors::setup_once(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&target);
                let _ = tx.send("watching".to_owned());
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                    if let Signal::Terminated(t) = signal {
                        let _ = tx.send(t.actor().path().to_string());
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    let watching = timeout(WAIT, rx.recv()).await.expect("the watcher starts");
    assert_eq!(watching.as_deref(), Some("watching"));
    rx
}

// S41: a handshake that ends while the listener's system leaves is answered
// `!leaving`: the dialler is told, though the system listed the peers to tell
// before this one had linked. (Before, it was welcomed and then told nothing: its
// watchers heard only at its detector's give-up.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_a_handshake_that_ends_while_the_system_leaves_is_answered_leaving() {
    let b = system("b");
    let mut raw = RawPeer::link(&b).await;
    // A second peer's handshake, up to its proof.
    let mut late = connect(&b).await;
    let accepted = hello_accepted(&mut late, hello(PROTOCOL_VERSION, &raw_address("late"))).await;

    let terminated = b.terminate();
    raw.hears_leaving().await;
    send_proof(&mut late, accepted.proof(SECRET)).await;
    assert_eq!(verdict(&mut late).await.as_deref(), Some("!leaving"));
    // Nothing follows the verdict: the node closes the connection.
    assert_eq!(closed_by_node(&mut late).await, b"");

    drop(raw);
    timeout(WAIT, terminated)
        .await
        .expect("b terminates within the bound");
}

// S31, S41: a system that dials one that is leaving (its first link there) hears
// at once that the actors there have ended: its watcher hears `Terminated` and a
// note told there is a dead letter `SessionEnded` naming the peer, long before its
// failure detector would give the peer up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s41_a_system_that_dials_one_that_is_leaving_hears_its_actors_end_at_once() {
    let (a, b) = (system("a"), system("b"));
    let sink = b
        .spawn(Behaviors::receive_message(|_: Note| ()), "sink")
        .unwrap();
    let remote = a.resolve::<Note>(&sink.to_string()).unwrap();
    let peer: Address = b.address().clone();
    let mut raw = RawPeer::link(&b).await;
    let mut letters = a.events().subscribe::<DeadLetter>();

    let terminated = b.terminate();
    raw.hears_leaving().await;
    let started = Instant::now();
    remote.tell(Note(1));
    let mut ends = watcher_of(&a, remote).await;
    let end = timeout(WAIT, ends.recv())
        .await
        .expect("Terminated within the bound");
    assert_eq!(end.as_deref(), Some("/user/sink"));
    let letter = timeout(WAIT, letters.recv())
        .await
        .expect("a dead letter within the bound")
        .unwrap();
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::SessionEnded { peer },
        "{letter:?}"
    );
    assert_eq!(letter.recipient(), sink.path());
    let after = started.elapsed();
    assert!(after < LONG / 3, "heard after {after:?}");
    assert!(
        timeout(Duration::from_millis(300), ends.recv())
            .await
            .is_err(),
        "one end only"
    );

    drop(raw);
    timeout(WAIT, terminated)
        .await
        .expect("b terminates within the bound");
    a.terminate().await;
}

/// Wait until `node`'s port refuses connections: its listening socket is closed.
/// A connection the socket still takes is closed at once (its handshake fails).
async fn listener_closed(node: &ActorSystem) {
    let (host, port) = node.address().host_port().unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        match TcpStream::connect((host, port)).await {
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionRefused => return,
            _ => {}
        }
        assert!(
            Instant::now() < deadline,
            "the port still takes connections"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

// S41: a handshake still under way when the terminating system closes its
// listening socket is waited for (a second at most) and answered `!leaving`.
// (Before, it was cut when the links stopped: the dialler read the connection's
// end, dialled again, was refused, and heard only at its detector's give-up.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_a_handshake_under_way_when_the_listener_closes_is_answered_leaving() {
    let b = system("b");
    let mut late = connect(&b).await;
    let accepted = hello_accepted(&mut late, hello(PROTOCOL_VERSION, &raw_address("late"))).await;

    let terminated = b.terminate();
    listener_closed(&b).await;
    send_proof(&mut late, accepted.proof(SECRET)).await;
    assert_eq!(verdict(&mut late).await.as_deref(), Some("!leaving"));
    assert_eq!(closed_by_node(&mut late).await, b"");
    timeout(WAIT, terminated)
        .await
        .expect("b terminates within the bound");
}
