//! Bounded mailboxes at their edges: drop-oldest pushes out into dead letters, and
//! offers wait for room, in line, without overtaking each other (S29, S30).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::combinations::poll_once;
use crate::support::edge_cases::*;
use std::time::Duration;
use tapio::prelude::*;
use tapio::{DeadLetter, DeadLetterReason, OverflowStrategy};
use tokio::time::timeout;

// ---------------------------------------------------------------------------------
// Mailboxes
// ---------------------------------------------------------------------------------

// S29 + S31: a full drop-oldest mailbox pushes out its oldest message, which is a
// `PushedOut` dead letter with its value; the rest is handled in order.
#[tapio::test(start_paused = true)]
async fn s29_drop_oldest_pushes_out_into_dead_letters(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let (mut probe, gate, sink) = gated_setup(&system, "sink", (3, OverflowStrategy::DropOldest));
    sink.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, 0);
    for n in 2..=7 {
        sink.tell(n);
    }
    let mut pushed = Vec::new();
    for _ in 0..3 {
        let letter = letter_with(&mut letters, sink.path(), DeadLetterReason::PushedOut).await;
        pushed.push(letter.take_message::<u64>().unwrap());
    }
    assert_eq!(pushed, [2, 3, 4]);
    gate.add_permits(1);
    assert_eq!(probe.receive_messages(4, T).await, [1, 5, 6, 7]);
}

// S30: `offer` resolves at once while there is room, waits while the mailbox is
// full, resolves `true` once the actor drains it; `false` for an actor that stops
// while it waits, and at once for one that had stopped.
#[tapio::test(start_paused = true)]
async fn s30_offer_waits_for_room_and_says_if_accepted(system: ActorSystem) {
    let (mut probe, gate, sink) = gated_setup(&system, "sink", (1, OverflowStrategy::DropNew));
    assert!(timeout(T, sink.offer(1_u64)).await.unwrap());
    assert_eq!(probe.expect_message(T).await, 0);
    assert!(timeout(T, sink.offer(2_u64)).await.unwrap());
    let mut third = sink.offer(3_u64);
    assert!(
        timeout(Duration::from_millis(200), &mut third)
            .await
            .is_err(),
        "the mailbox is full: the offer waits"
    );
    gate.add_permits(1);
    assert!(timeout(T, third).await.unwrap());
    assert_eq!(probe.receive_messages(3, T).await, [1, 2, 3]);

    // An offer that waits while its actor stops.
    let stuck = spawn_gated(
        &system,
        &probe,
        &gate,
        21,
        "stuck",
        (1, OverflowStrategy::DropNew),
    );
    probe.watch(&stuck);
    stuck.tell(21_u64);
    assert_eq!(probe.expect_message(T).await, 0);
    stuck.tell(22_u64);
    let mut waiting = stuck.offer(23_u64);
    assert!(
        timeout(Duration::from_millis(100), &mut waiting)
            .await
            .is_err()
    );
    system.stop(&stuck).unwrap();
    assert!(!timeout(T, waiting).await.unwrap(), "its actor stopped");
    probe.expect_terminated(&stuck, T).await;
    assert!(
        !timeout(Duration::from_millis(10), stuck.offer(24_u64))
            .await
            .unwrap()
    );
}

// S30: waiting offers are served in the order they began to wait, and one dropped
// while it waits gives up its place without blocking the line; `offer_within` that
// runs out is a dead letter.
#[tapio::test(start_paused = true)]
async fn s30_offers_wait_in_line_and_a_dropped_one_leaves_it(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let (mut probe, gate, sink) = gated_setup(&system, "sink", (1, OverflowStrategy::DropNew));
    sink.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, 0);
    sink.tell(2_u64);
    assert!(!sink.offer_within(9_u64, Duration::from_millis(100)).await);
    expect_dead_letter(
        &mut letters,
        sink.path(),
        DeadLetterReason::OfferTimedOut,
        9_u64,
    )
    .await;
    let mut o3 = sink.offer(3_u64);
    let mut o4 = sink.offer(4_u64);
    let mut o5 = sink.offer(5_u64);
    for offer in [&mut o3, &mut o4, &mut o5] {
        assert!(timeout(Duration::from_millis(10), offer).await.is_err());
    }
    drop(o4);
    gate.add_permits(1);
    // Awaited one at a time (`s30_a_later_offer_does_not_overtake_an_earlier_one` polls
    // two together).
    assert!(timeout(T, o3).await.unwrap());
    assert!(timeout(T, o5).await.unwrap());
    assert_eq!(probe.receive_messages(4, T).await, [1, 2, 3, 5]);
}

// S30: waiting offers are served in the order they began to wait. Two offers wait
// on a full mailbox, `first` before `second`; when room comes, `first` is woken, but
// `second` is polled before it: it must not take the room.
#[tapio::test(start_paused = true)]
async fn s30_a_later_offer_does_not_overtake_an_earlier_one(system: ActorSystem) {
    let (mut probe, gate, sink) = gated_setup(&system, "sink", (1, OverflowStrategy::DropNew));
    sink.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, 0);
    sink.tell(2_u64); // the mailbox is full
    let mut first = sink.offer(3_u64);
    let mut second = sink.offer(4_u64);
    assert!(poll_once(&mut first).is_pending());
    assert!(poll_once(&mut second).is_pending());
    gate.add_permits(1);
    assert_eq!(probe.receive_messages(2, T).await, [1, 2]); // room for one now
    assert!(
        poll_once(&mut second).is_pending(),
        "the later offer waits behind the earlier one"
    );
    // A brand-new offer waits behind both, even while there is room.
    let mut third = sink.offer(5_u64);
    assert!(poll_once(&mut third).is_pending());
    assert!(timeout(T, first).await.unwrap());
    assert!(timeout(T, second).await.unwrap());
    assert!(timeout(T, third).await.unwrap());
    assert_eq!(
        probe.receive_messages(3, T).await,
        [3, 4, 5],
        "the offers are served in the order they began to wait"
    );
}
