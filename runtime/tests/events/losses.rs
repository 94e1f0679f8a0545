//! Which behaviors letter what (empty, unhandled, ignore), and where a loss is reported
//! in the event stream and what it holds back (S6, S31, S49).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{T, letters_for, ms, no_letter_for};
use tapio::events::Received;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason};
use tokio::time::timeout;

#[tapio::test(start_paused = true)]
async fn s6_s31_empty_letters_the_value_unhandled_letters_the_type_ignore_letters_nothing(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let empty = system.spawn(Behaviors::empty::<u64>(), "empty").unwrap();
    let refusing = system
        .spawn(
            Behaviors::receive_message(|_: u64| Behaviors::unhandled()),
            "refusing",
        )
        .unwrap();
    let ignoring = system
        .spawn(Behaviors::ignore::<u64>(), "ignoring")
        .unwrap();
    empty.tell(7_u64);
    refusing.tell(8_u64);
    ignoring.tell(9_u64);
    let from_empty = letters_for(&mut letters, empty.path(), 1).await.remove(0);
    assert_eq!(from_empty.reason(), &DeadLetterReason::Unhandled);
    assert_eq!(from_empty.take_message::<u64>(), Some(7));
    let from_refusing = letters_for(&mut letters, refusing.path(), 1)
        .await
        .remove(0);
    assert_eq!(from_refusing.reason(), &DeadLetterReason::Unhandled);
    assert!(
        from_refusing.message_type().contains("u64"),
        "{}",
        from_refusing.message_type()
    );
    assert_eq!(from_refusing.take_message::<u64>(), None);
    no_letter_for(&mut letters, ignoring.path(), ms(200)).await;
    // The actors are all still there.
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&empty);
    probe.watch(&refusing);
    probe.watch(&ignoring);
    probe.expect_no_termination(ms(100)).await;
}

#[tapio::test]
async fn s49_a_loss_is_reported_where_it_happened_in_the_stream(system: ActorSystem) {
    #[derive(Debug, Clone, PartialEq)]
    struct Note(u32);
    let events = system.events();
    let mut sub = events.subscribe_with_capacity::<Note>(2).unwrap();
    assert_eq!(events.subscriber_count::<Note>(), 1);
    let taken: Vec<usize> = [1, 2, 3, 4]
        .into_iter()
        .map(|n| events.publish(Note(n)))
        .collect();
    assert_eq!(taken, [1, 1, 0, 0]);
    assert_eq!(sub.lost(), 2);
    assert_eq!(timeout(T, sub.recv()).await.unwrap(), Some(Note(1)));
    assert_eq!(events.publish(Note(5)), 1);
    assert_eq!(events.publish(Note(6)), 0);
    assert_eq!(sub.lost(), 3);
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(timeout(T, sub.recv_with_loss()).await.unwrap().unwrap());
    }
    assert_eq!(
        seen,
        [
            Received::Event(Note(2)),
            Received::Lost(2),
            Received::Event(Note(5)),
            Received::Lost(1)
        ]
    );
    assert_eq!(sub.try_recv(), None);
    sub.unsubscribe();
    assert_eq!(events.subscriber_count::<Note>(), 0);
    assert_eq!(events.publish(Note(7)), 0);
}

#[tapio::test]
async fn s49_an_event_held_back_behind_a_reported_loss_is_beyond_the_capacity(system: ActorSystem) {
    let events = system.events();
    let mut sub = events.subscribe_with_capacity::<(u8, u8)>(1).unwrap();
    assert_eq!(events.publish((1_u8, 0_u8)), 1);
    assert_eq!(events.publish((2_u8, 0_u8)), 0, "full: lost");
    let first = timeout(T, sub.recv_with_loss()).await.unwrap();
    assert_eq!(first, Some(Received::Event((1, 0))));
    assert_eq!(events.publish((3_u8, 0_u8)), 1, "room again");
    let loss = timeout(T, sub.recv_with_loss()).await.unwrap();
    assert_eq!(loss, Some(Received::Lost(1)));
    // (3, 0) is now held back behind the loss just reported: one over the capacity
    // is allowed for it, so the buffer still has room for one more.
    assert_eq!(sub.buffered(), 1);
    assert_eq!(
        events.publish((4_u8, 0_u8)),
        1,
        "the held-back event takes no room"
    );
    assert_eq!(sub.buffered(), 2);
    assert_eq!(sub.try_recv(), Some((3, 0)));
    assert_eq!(sub.try_recv(), Some((4, 0)));
    assert_eq!(sub.lost(), 1);
}
