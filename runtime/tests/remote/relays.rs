//! A stranger in the middle (issue 30, item 1): a node that dials an address a relay
//! holds, which passes every byte on to another node with the same secret, makes no
//! link: the listener it reached names itself, not the address dialled, so the
//! dialer sends no proof and the other node delivers nothing from the relay.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::support::outside::{T, letter_where, ms, nothing_within};
use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio::testkit::two_nodes;
use tapio::{DeadLetter, DeadLetterReason};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

#[message(remote = "relay.note.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note(pub u64);

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
    let settings = RemoteSettings::loopback()
        .heartbeat_interval(ms(100))
        .unreachable_after(Duration::from_secs(20));
    let nodes = two_nodes(settings).expect("two nodes");
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    nodes
        .b
        .spawn(
            Behaviors::receive_message(move |Note(n): Note| {
                let _ = seen_tx.send(n);
            }),
            "sink",
        )
        .unwrap();
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
        matches!(letter.reason(), DeadLetterReason::Unreachable { peer } if peer.host_port() == Some(("127.0.0.1", relay_port))),
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
