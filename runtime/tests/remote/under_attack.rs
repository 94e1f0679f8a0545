//! Links under attack (issue 30). A stranger in the middle (item 1): a node that
//! dials an address a relay holds, which passes every byte on to another node with
//! the same secret, makes no link: the listener it reached names itself, not the
//! address dialled, so the dialer sends no proof and the other node delivers
//! nothing from the relay. A crowd of idle sockets (item 2) cannot lock a genuine
//! peer out: a newcomer takes the place of a silent connection.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::support::outside::{T, letter_where, ms, nothing_within};
use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio::testkit::{TwoNodes, two_nodes};
use tapio::{DeadLetter, DeadLetterReason};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

#[message(remote = "relay.note.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note(pub u64);

/// Two nodes with a calm detector, and a sink of notes on b at `/user/sink` whose
/// notes come out of the channel returned.
fn nodes_with_sink() -> (TwoNodes, mpsc::UnboundedReceiver<u64>) {
    let settings = RemoteSettings::loopback()
        .heartbeat_interval(ms(100))
        .unreachable_after(Duration::from_secs(20));
    let nodes = two_nodes(settings).expect("two nodes");
    let (seen_tx, seen) = mpsc::unbounded_channel();
    nodes
        .b
        .spawn(
            Behaviors::receive_message(move |Note(n): Note| {
                let _ = seen_tx.send(n);
            }),
            "sink",
        )
        .unwrap();
    (nodes, seen)
}

/// A relay on loopback: every connection made to it is joined, byte for byte, to a
/// new connection to `to`. Returns its port.
async fn relay(to: u16) -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            tokio::spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", to)).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    port
}

// Issue 30, item 1 (S38): a tell from a to "b" at the relay's port reaches nothing on
// b; a's letter names the address it dialled and why the link was refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_dial_makes_no_link_and_delivers_nothing() {
    let (nodes, mut seen) = nodes_with_sink();
    let (_, b_port) = nodes.b.address().host_port().unwrap();
    let relay_port = relay(b_port).await;
    let through_relay = format!(
        "tapio://{}@127.0.0.1:{relay_port}/user/sink",
        nodes.b.address().system()
    );
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    let sink = nodes.a.resolve::<Note>(&through_relay).unwrap();
    sink.tell(Note(1));
    let letter = letter_where(&mut letters, T, |l: &DeadLetter| l.is::<Note>()).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::LinkRefused { peer, why }
            if peer.host_port() == Some(("127.0.0.1", relay_port)) && why.contains("relayed")),
        "{letter}"
    );
    nothing_within(&mut seen, ms(300)).await;
    // The direct address still links.
    let direct = nodes
        .a
        .resolve::<Note>(&format!("{}/user/sink", nodes.b.address()))
        .unwrap();
    direct.tell(Note(2));
    assert_eq!(tokio::time::timeout(T, seen.recv()).await.unwrap(), Some(2));
    nodes.terminate().await;
}

/// Opens `n` connections to `port` and holds them, saying nothing; with `reopen`,
/// opens each one again as soon as the node closes it. Until the returned sender is
/// dropped.
fn idle_crowd(port: u16, n: usize, reopen: bool) -> tokio::sync::oneshot::Sender<()> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut held = tokio::task::JoinSet::new();
        for _ in 0..n {
            held.spawn(async move {
                loop {
                    let Ok(mut socket) = TcpStream::connect(("127.0.0.1", port)).await else {
                        return;
                    };
                    // Held until the node closes it.
                    let mut byte = [0_u8; 1];
                    let _ = tokio::io::AsyncReadExt::read(&mut socket, &mut byte).await;
                    if !reopen {
                        return;
                    }
                }
            });
        }
        let _ = stopped.await;
        held.abort_all();
    });
    stop
}

/// Two nodes, a sink of notes on b, and a crowd of `n` idle sockets at b (reopened
/// as they close, with `reopen`): a's 26 tells to the sink all arrive, in order,
/// each within `T`.
async fn links_through_a_crowd(n: usize, reopen: bool) {
    let (nodes, mut seen) = nodes_with_sink();
    let (_, b_port) = nodes.b.address().host_port().unwrap();
    let crowd = idle_crowd(b_port, n, reopen);
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    let sink = nodes
        .a
        .resolve::<Note>(&format!("{}/user/sink", nodes.b.address()))
        .unwrap();
    for n in 0..26 {
        sink.tell(Note(n));
    }
    let mut got = Vec::new();
    while got.len() < 26 {
        match tokio::time::timeout(T, seen.recv()).await {
            Ok(Some(n)) => got.push(n),
            _ => {
                let lost: Vec<String> = std::iter::from_fn(|| letters.try_recv())
                    .map(|l| l.to_string())
                    .take(3)
                    .collect();
                panic!("{} of 26 arrived; letters: {lost:?}", got.len());
            }
        }
    }
    assert_eq!(got, (0..26).collect::<Vec<u64>>());
    drop(crowd);
    nodes.terminate().await;
}

// Issue 30, item 2 (S38, S39): during a flood of 1,000 idle sockets (past the 128
// places for handshakes), a genuine peer still links within its handshake
// deadline: a newcomer takes the place of a silent connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_genuine_peer_links_through_a_flood_of_idle_sockets() {
    links_through_a_crowd(1_000, false).await;
}

// Issue 30, item 2: 150 idle sockets reopened as soon as they are closed (a
// persistent slot-holder) do not keep a genuine peer from linking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_genuine_peer_links_past_a_persistent_slot_holder() {
    links_through_a_crowd(150, true).await;
}
