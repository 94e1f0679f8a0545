//! Dead letters (S31) on the typed event stream (S49): published with the message,
//! the recipient and the reason; subscribed to and unsubscribed from; a storm of them
//! kept nowhere without a subscriber, and at most a subscription's capacity with one.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::letter_within;
use std::time::Duration;

use tapio::events::{CapacityError, Received};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason};

const SECOND: Duration = Duration::from_secs(1);

#[message]
#[derive(Debug, PartialEq)]
pub struct Shelf {
    pub title: String,
}

#[message]
pub struct Lookup(pub String);

#[derive(Clone)]
struct Desk;

#[actor]
impl Desk {
    fn lookup(&mut self, Lookup(title): Lookup) -> Behavior<DeskMsg> {
        if title.is_empty() {
            Behaviors::stopped()
        } else {
            Behaviors::unhandled()
        }
    }

    fn shelve(&mut self, _: Shelf) {}
}

// S31: a message that went nowhere is published with the message itself (inside a
// protocol enum, the message, not the enum), its recipient and the reason. A message
// a handler left unhandled was consumed by that handler: its letter names the
// message's own type (not the protocol enum's), and carries no value.
#[tapio::test(start_paused = true)]
async fn a_dead_letter_names_the_message_the_recipient_and_the_reason(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let desk = system.spawn(Desk, "desk").unwrap();

    desk.tell(Lookup("Dune".into()));
    let unhandled = letter_within(&mut letters, SECOND).await;
    assert_eq!(unhandled.reason(), &DeadLetterReason::Unhandled);
    assert_eq!(unhandled.recipient().to_string(), "/user/desk");
    assert_eq!(unhandled.short_message_type(), "Lookup");
    assert_eq!(unhandled.message_type(), std::any::type_name::<Lookup>());
    assert!(unhandled.take_message::<Lookup>().is_none());
    assert_eq!(
        unhandled.to_string(),
        "dead letter: Lookup to /user/desk (the recipient did not handle it)"
    );

    probe.watch(&desk);
    desk.tell(Lookup(String::new()));
    probe.expect_terminated(&desk, SECOND).await;
    desk.tell(Shelf {
        title: "Ulysses".into(),
    });
    let stopped = letter_within(&mut letters, SECOND).await;
    assert_eq!(stopped.reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(stopped.short_message_type(), "Shelf");
    assert!(stopped.is::<Shelf>());
    assert_eq!(
        stopped.to_string(),
        "dead letter: Shelf to /user/desk (the recipient has stopped)"
    );
    assert_eq!(
        stopped.take_message::<Shelf>(),
        Some(Shelf {
            title: "Ulysses".into()
        })
    );
    // The message can be taken out once.
    assert_eq!(stopped.take_message::<Shelf>(), None);
}

// S31: messages still queued when an actor stops become dead letters too: none is
// silently lost.
#[tapio::test(start_paused = true)]
async fn messages_queued_behind_a_stop_are_not_lost(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let once = system
        .spawn(
            Behaviors::receive_message(|_: u64| Behaviors::stopped()),
            "once",
        )
        .unwrap();
    for n in 0..5_u64 {
        once.tell(n);
    }
    let mut lost = Vec::new();
    for _ in 1..5 {
        lost.push(
            letter_within(&mut letters, SECOND)
                .await
                .take_message::<u64>()
                .unwrap(),
        );
    }
    assert_eq!(lost, [1, 2, 3, 4]);
}

// S49: every subscriber of a type gets each event; a dropped or unsubscribed one
// gets nothing more, and other types are not mixed in.
#[tapio::test(start_paused = true)]
async fn subscribers_come_and_go(system: ActorSystem) {
    #[derive(Debug, Clone, PartialEq)]
    struct Weather(&'static str);

    let events = system.events();
    let mut first = events.subscribe::<Weather>();
    let second = events.subscribe::<Weather>();
    let mut letters = events.subscribe::<DeadLetter>();
    assert_eq!(events.publish(Weather("rain")), 2);
    assert_eq!(first.try_recv(), Some(Weather("rain")));
    second.unsubscribe();
    assert_eq!(events.subscriber_count::<Weather>(), 1);
    drop(first);
    assert_eq!(events.publish(Weather("sun")), 0);
    assert!(letters.try_recv().is_none());
}

// S31: a message `Behaviors::empty` refuses is a dead letter with the message in it.
#[tapio::test(start_paused = true)]
async fn an_empty_behavior_dead_letters_the_message_itself(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let nothing = system.spawn(Behaviors::empty::<u64>(), "nothing").unwrap();
    nothing.tell(5_u64);
    let letter = letter_within(&mut letters, SECOND).await;
    assert_eq!(letter.reason(), &DeadLetterReason::Unhandled);
    assert_eq!(letter.take_message::<u64>(), Some(5));
}

/// An actor that has stopped: everything told to it from now on is a dead letter,
/// published synchronously by the tell.
async fn stopped_actor(system: &ActorSystem) -> ActorRef<u64> {
    let mut probe = TestProbe::<u64>::new(system);
    let once = system
        .spawn(
            Behaviors::receive_message(|_: u64| Behaviors::stopped()),
            "once",
        )
        .unwrap();
    probe.watch(&once);
    once.tell(0);
    probe.expect_terminated(&once, SECOND).await;
    once
}

const STORM: u64 = 1_000_000;

// S31, S49: with nobody subscribed, a storm of dead letters is kept nowhere: a
// subscriber that arrives afterwards sees the next letter first, and nothing else.
#[tapio::test(start_paused = true)]
async fn a_storm_with_no_subscriber_keeps_nothing(system: ActorSystem) {
    let once = stopped_actor(&system).await;
    assert_eq!(system.events().subscriber_count::<DeadLetter>(), 0);
    for n in 1..=STORM {
        once.tell(n);
    }
    let mut letters = system.events().subscribe::<DeadLetter>();
    assert_eq!(letters.buffered(), 0);
    once.tell(STORM + 1);
    let letter = letter_within(&mut letters, SECOND).await;
    assert_eq!(letter.take_message::<u64>(), Some(STORM + 1));
    assert!(letters.try_recv().is_none());
    assert_eq!(letters.lost(), 0);
}

// S31, S49: a subscriber that never reads holds at most its capacity; every letter
// beyond it is counted as lost, so none goes missing silently: what it holds plus
// what it lost is exactly what was published. The oldest are kept, in order, and the
// loss is reported where it happened, after them.
#[tapio::test(start_paused = true)]
async fn a_subscriber_that_never_reads_holds_its_capacity_and_counts_the_rest(system: ActorSystem) {
    let once = stopped_actor(&system).await;
    let mut letters = system.events().subscribe::<DeadLetter>();
    let capacity = letters.capacity();
    assert_eq!(capacity, tapio::events::DEFAULT_CAPACITY);
    for n in 1..=STORM {
        once.tell(n);
        assert!(letters.buffered() <= capacity);
    }
    assert_eq!(letters.buffered(), capacity);
    assert_eq!(letters.lost(), STORM - capacity as u64);
    assert_eq!(letters.lost() + letters.buffered() as u64, STORM);

    for n in 1..=capacity as u64 {
        match letters.recv_with_loss().await {
            Some(Received::Event(letter)) => assert_eq!(letter.take_message::<u64>(), Some(n)),
            other => panic!("expected letter {n}, got {other:?}"),
        }
    }
    match letters.recv_with_loss().await {
        Some(Received::Lost(lost)) => assert_eq!(lost, STORM - capacity as u64),
        other => panic!("expected the loss to be reported, got {other:?}"),
    }
    // Reading has made room again; the count of what was lost stays.
    once.tell(STORM + 1);
    let letter = letter_within(&mut letters, SECOND).await;
    assert_eq!(letter.take_message::<u64>(), Some(STORM + 1));
    assert_eq!(letters.lost(), STORM - capacity as u64);
}

// S31, S49: a subscriber that keeps up loses nothing, also when its buffer is filled
// to the last place between two reads.
#[tapio::test(start_paused = true)]
async fn a_subscriber_that_keeps_up_loses_nothing(system: ActorSystem) {
    let once = stopped_actor(&system).await;
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(8)
        .unwrap();
    let (mut sent, mut read) = (0_u64, 0_u64);
    for _ in 0..1_000 {
        for _ in 0..8 {
            sent += 1;
            once.tell(sent);
        }
        for _ in 0..8 {
            read += 1;
            let letter = letter_within(&mut letters, SECOND).await;
            assert_eq!(letter.take_message::<u64>(), Some(read));
        }
    }
    assert_eq!(letters.lost(), 0);
    assert!(letters.try_recv().is_none());
}

// S49: a subscription needs room for at least one event; zero is refused with a
// typed error, not clamped to something the caller did not ask for.
#[tapio::test(start_paused = true)]
async fn a_zero_capacity_subscription_is_refused(system: ActorSystem) {
    let refused = system.events().subscribe_with_capacity::<DeadLetter>(0);
    assert_eq!(refused.err(), Some(CapacityError::Zero));
    assert_eq!(system.events().subscriber_count::<DeadLetter>(), 0);
}
