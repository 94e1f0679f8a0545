//! Backpressure across a link (S47): `tell` never waits (a full outbound buffer is
//! a dead letter), `offer` waits for room in this system's outbound buffer.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio::testkit::{TestProbe, two_nodes};
use tapio::{DeadLetter, DeadLetterReason};

const WAIT: Duration = Duration::from_secs(10);

#[message(remote = "flow.item.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Item(pub u64);

/// Whether `offer` is accepted without waiting for room. (A poll that is pending
/// is tried once more after a yield: tokio's cooperative budget may make a wait
/// pending that has room.)
async fn accepted_at_once(offer: &mut tapio::Offer<Item>) -> Option<bool> {
    for _ in 0..2 {
        let polled = std::future::poll_fn(|cx| match Pin::new(&mut *offer).poll(cx) {
            Poll::Ready(accepted) => Poll::Ready(Some(accepted)),
            Poll::Pending => Poll::Ready(None),
        })
        .await;
        if polled.is_some() {
            return polled;
        }
        tokio::task::yield_now().await;
    }
    None
}

// S47: while the link holds frames (a partition), the outbound buffer fills: an
// offer then waits (and a tell beside it is a dead letter, "outbound buffer
// full"); once the link carries frames again, the offer is accepted, and what was
// accepted arrives in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s47_an_offer_waits_for_room_in_the_outbound_buffer() {
    let settings = RemoteSettings::loopback()
        .heartbeat_interval(Duration::from_millis(100))
        .unreachable_after(Duration::from_secs(30));
    let nodes = two_nodes(settings).unwrap();
    let mut inbox = TestProbe::<Item>::new(&nodes.b);
    let to_inbox = nodes
        .a
        .resolve::<Item>(&inbox.actor_ref().to_string())
        .unwrap();
    assert!(to_inbox.offer(Item(0)).await);
    assert_eq!(inbox.expect_message(WAIT).await, Item(0));
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();

    nodes.a_to_b().partition();
    let mut n = 1;
    let mut waiting = loop {
        let mut offer = to_inbox.offer(Item(n));
        match accepted_at_once(&mut offer).await {
            Some(accepted) => assert!(accepted, "offer {n} refused"),
            None => break offer,
        }
        n += 1;
        assert!(n < 10_000, "the outbound buffer never filled");
    };
    // The buffer holds about a thousand frames.
    assert!(n > 1000, "full after {n}");
    to_inbox.tell(Item(u64::MAX));
    let letter = tokio::time::timeout(WAIT, letters.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(letter.reason(), DeadLetterReason::OutboundFull { peer } if peer == nodes.b.address()),
        "{letter:?}"
    );

    nodes.a_to_b().heal();
    assert!(tokio::time::timeout(WAIT, &mut waiting).await.unwrap());
    let got = inbox.receive_messages(n as usize, WAIT).await;
    assert_eq!(got, (1..=n).map(Item).collect::<Vec<_>>());
    inbox.expect_no_message(Duration::from_millis(100)).await;
    nodes.terminate().await;
}

// S47: an offer to a peer given up on does not wait: it is refused, and its
// message is a dead letter that says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s47_an_offer_to_a_quarantined_peer_is_refused_at_once() {
    let settings = RemoteSettings::loopback()
        .heartbeat_interval(Duration::from_millis(50))
        .unreachable_after(Duration::from_millis(600));
    let nodes = two_nodes(settings).unwrap();
    let inbox = TestProbe::<Item>::new(&nodes.b);
    let to_inbox = nodes
        .a
        .resolve::<Item>(&inbox.actor_ref().to_string())
        .unwrap();
    assert!(to_inbox.offer(Item(0)).await);
    let mut gave_up = nodes
        .a
        .events()
        .subscribe::<tapio::remote::PeerUnreachable>();
    nodes.partition();
    tokio::time::timeout(WAIT, gave_up.recv()).await.unwrap();
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    assert!(!to_inbox.offer(Item(1)).await);
    let letter = tokio::time::timeout(WAIT, letters.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(letter.is::<Item>(), "{letter:?}");
    assert!(
        matches!(letter.reason(), DeadLetterReason::Quarantined { .. }),
        "{letter:?}"
    );
    nodes.terminate().await;
}
