//! The event stream and dead letters as the guides show them: typed subscribers,
//! counted losses, what a dead letter carries, storms without subscribers, capacity
//! limits, and a subscription ending with its system (S31, S49).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::guide_claims::*;
use tapio::events::{CapacityError, Received};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason};

#[derive(Debug, Clone, PartialEq)]
pub struct Traffic(u32);

// S49: subscriptions are typed: two subscribers of one type each get every event, a
// subscriber of another type gets none of them; unsubscribing (explicitly or by
// dropping) ends delivery and the count follows.
#[tapio::test(start_paused = true)]
async fn s49_typed_subscribers_and_unsubscribe(system: ActorSystem) {
    let events = system.events();
    let first = events.subscribe::<Weather>();
    let mut second = events.subscribe::<Weather>();
    let mut traffic = events.subscribe::<Traffic>();
    assert_eq!(events.subscriber_count::<Weather>(), 2);
    assert_eq!(events.publish(Weather(1)), 2);
    first.unsubscribe();
    assert_eq!(events.subscriber_count::<Weather>(), 1);
    assert_eq!(events.publish(Weather(2)), 1);
    assert_eq!(second.recv().await, Some(Weather(1)));
    assert_eq!(second.recv().await, Some(Weather(2)));
    assert_eq!(traffic.try_recv(), None);
    assert_eq!(events.publish(Traffic(3)), 1);
    assert_eq!(traffic.try_recv(), Some(Traffic(3)));
    assert_eq!(second.try_recv(), None);
    drop(second);
    assert_eq!(events.subscriber_count::<Weather>(), 0);
    assert_eq!(events.publish(Weather(4)), 0);
}

// S49, S31: a slow subscriber with a small buffer loses the newest dead letters of a
// burst and counts them; `recv_with_loss` reports the gap where it happened; a fast
// subscriber beside it loses nothing.
#[tapio::test(start_paused = true)]
async fn s49_a_slow_subscriber_counts_the_dead_letters_it_lost(system: ActorSystem) {
    let mut fast = system.events().subscribe::<DeadLetter>();
    let mut slow = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(3)
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    let gone = system.spawn(Behaviors::ignore::<u64>(), "gone").unwrap();
    probe.watch(&gone);
    system.stop(&gone).unwrap();
    probe.expect_terminated(&gone, WAIT).await;
    for n in 0..10_u64 {
        gone.tell(n);
    }
    for n in 0..10_u64 {
        let l = letter_within(&mut fast, WAIT).await;
        assert_eq!(l.reason(), &DeadLetterReason::RecipientStopped);
        assert_eq!(l.take_message::<u64>(), Some(n));
    }
    assert_eq!(fast.lost(), 0);
    assert_eq!(slow.lost(), 7);
    assert_eq!(slow.buffered(), 3);
    for _ in 0..3 {
        assert!(matches!(
            slow.recv_with_loss().await,
            Some(Received::Event(_))
        ));
    }
    assert!(matches!(
        slow.recv_with_loss().await,
        Some(Received::Lost(7))
    ));
    gone.tell(10_u64);
    match slow.recv_with_loss().await {
        Some(Received::Event(l)) => assert_eq!(l.recipient().name(), "gone"),
        other => panic!("expected the next letter after the gap, got {other:?}"),
    }
    assert_eq!(slow.lost(), 7, "lost only grows, and nothing more was lost");
}

// S31, S6: a dead letter says what, to whom and why. `unhandled` from a handler
// names the type (the value was consumed); a message no behavior could take keeps its
// value; every subscriber sees the same letter, and the value can be taken once.
#[tapio::test(start_paused = true)]
async fn s31_dead_letters_carry_message_recipient_and_reason(system: ActorSystem) {
    let mut one = system.events().subscribe::<DeadLetter>();
    let mut two = system.events().subscribe::<DeadLetter>();
    let picky = system
        .spawn(
            Behaviors::receive_message(|n: u64| {
                if n == 0 {
                    Behaviors::unhandled()
                } else {
                    Behaviors::same()
                }
            }),
            "picky",
        )
        .unwrap();
    picky.tell(0_u64);
    let refused = letter_within(&mut one, WAIT).await;
    assert_eq!(refused.reason(), &DeadLetterReason::Unhandled);
    assert_eq!(refused.recipient().to_string(), "/user/picky");
    assert_eq!(refused.message_type(), "u64");
    assert_eq!(refused.take_message::<u64>(), None);
    let _ = letter_within(&mut two, WAIT).await;

    let wall = system.spawn(Behaviors::empty::<String>(), "wall").unwrap();
    wall.tell("hello".to_string());
    let first = letter_within(&mut one, WAIT).await;
    let second = letter_within(&mut two, WAIT).await;
    assert_eq!(first.reason(), &DeadLetterReason::Unhandled);
    assert!(second.is::<String>());
    assert_eq!(
        first.to_string(),
        "dead letter: String to /user/wall (the recipient did not handle it)"
    );
    assert_eq!(second.take_message::<u64>(), None, "not a u64");
    assert_eq!(second.take_message::<String>().as_deref(), Some("hello"));
    assert_eq!(first.take_message::<String>(), None, "taken once");
}

// S31, S49: a storm of dead letters with nobody subscribed leaves nothing behind for
// a later subscriber, and the system keeps answering; the first letter a new
// subscriber gets is the next one.
#[tapio::test(start_paused = true)]
async fn s31_a_storm_of_dead_letters_without_subscribers(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let gone = system.spawn(Behaviors::ignore::<u64>(), "gone").unwrap();
    probe.watch(&gone);
    system.stop(&gone).unwrap();
    probe.expect_terminated(&gone, WAIT).await;
    for n in 0..100_000_u64 {
        gone.tell(n);
    }
    probe.actor_ref().tell(1_u64);
    assert_eq!(probe.expect_message(WAIT).await, 1);
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(4)
        .unwrap();
    gone.tell(777_u64);
    assert_eq!(
        letter_within(&mut letters, WAIT)
            .await
            .take_message::<u64>(),
        Some(777)
    );
    assert_eq!(letters.try_recv().map(|l| l.to_string()), None);
    assert_eq!(letters.lost(), 0);
}

// S49: a subscription's capacity is checked, and the error says why.
#[tapio::test]
async fn s49_capacity_zero_and_too_large_are_refused(system: ActorSystem) {
    let zero = system
        .events()
        .subscribe_with_capacity::<Weather>(0)
        .unwrap_err();
    assert_eq!(zero, CapacityError::Zero);
    assert!(zero.to_string().contains("lose every event"), "{zero}");
    let huge = system
        .events()
        .subscribe_with_capacity::<Weather>(usize::MAX)
        .unwrap_err();
    assert!(matches!(huge, CapacityError::TooLarge { .. }), "{huge}");
    assert_eq!(system.events().subscriber_count::<Weather>(), 0);
}

/// An event whose `Clone` publishes and subscribes in turn.
pub struct Loud {
    stream: tapio::EventStream,
}

impl Clone for Loud {
    fn clone(&self) -> Self {
        self.stream.publish(Weather(9));
        drop(self.stream.subscribe::<Traffic>());
        Self {
            stream: self.stream.clone(),
        }
    }
}

// S49: "the event's own `Clone` runs without a lock: it may publish or subscribe in
// turn". Run where a deadlock cannot hang the test.
#[test]
fn s49_an_event_whose_clone_publishes_does_not_deadlock() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stream = tapio::EventStream::default();
        let mut loud = stream.subscribe::<Loud>();
        let mut weather = stream.subscribe::<Weather>();
        let took = stream.publish(Loud {
            stream: stream.clone(),
        });
        let _ = done.send((took, loud.try_recv().is_some(), weather.try_recv()));
    });
    let (took, got_loud, got_weather) = finished
        .recv_timeout(WAIT)
        .expect("publishing finished: no deadlock");
    assert_eq!(took, 1);
    assert!(got_loud);
    assert_eq!(got_weather, Some(Weather(9)));
}

// S49: a subscription does not outlive its system: once the system is terminated and
// dropped, `recv` hands out what was buffered, then `None`, rather than waiting
// forever.
#[tokio::test(start_paused = true)]
async fn s49_a_subscription_ends_with_its_system() {
    let system = ActorSystem::new("ending").unwrap();
    let mut weather = system.events().subscribe::<Weather>();
    let mut letters = system.events().subscribe::<DeadLetter>();
    system.events().publish(Weather(1));
    system.terminate().await;
    drop(system);
    assert_eq!(
        tokio::time::timeout(WAIT, weather.recv()).await,
        Ok(Some(Weather(1)))
    );
    assert_eq!(tokio::time::timeout(WAIT, weather.recv()).await, Ok(None));
    assert!(matches!(
        tokio::time::timeout(WAIT, letters.recv()).await,
        Ok(None)
    ));
}
