//! `unhandled` from six behavior shapes letters the type and keeps the behavior (S6).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{describe, expect_lines, letters, letters_for, ms, no_letter_for};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use tapio::DeadLetterReason;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

// =================================================================================
// 3. Behaviors (S6)
// =================================================================================

#[message]
pub struct Even(pub u64);

#[message]
pub struct Odd(pub u64);

#[message]
pub struct Show;

#[derive(Clone)]
pub struct Parity {
    count: u64,
    to: ActorRef<String>,
}

#[actor]
impl Parity {
    fn even(&mut self, _: Even) {
        self.count += 1;
    }

    fn odd(&mut self, _: Odd) -> Behavior<ParityMsg> {
        Behaviors::unhandled()
    }

    fn show(&mut self, _: Show) {
        self.to.tell(format!("count {}", self.count));
    }
}

/// S6, S31: `unhandled` from six shapes of behavior (functional, async after an
/// await, inside `supervise`, inside a stash, inside `setup`, an `#[actor]` handler)
/// letters the message as `Unhandled`, naming its type (for the `#[actor]`, the
/// message's own type) and the recipient, without the value; the actor stays as it
/// was and goes on with its state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s6_unhandled_from_six_shapes_letters_the_type_and_keeps_the_behavior() {
    let system = ActorSystem::new("unhandled-shapes").unwrap();
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);

    fn functional(name: &'static str, to: ActorRef<String>) -> Behavior<u64> {
        let count = Arc::new(AtomicU64::new(0));
        Behaviors::receive_message(move |n: u64| {
            if n % 2 == 1 {
                return Behaviors::unhandled();
            }
            let c = count.fetch_add(1, SeqCst) + 1;
            to.tell(format!("{name} {c}"));
            Behaviors::same()
        })
        .into()
    }

    let to = probe.actor_ref().clone();
    let count = Arc::new(AtomicU64::new(0));
    let shapes: Vec<(&'static str, Behavior<u64>)> = vec![
        ("plain", functional("plain", to.clone())),
        ("async", {
            let to = to.clone();
            Behaviors::receive_async(async move |_ctx: &mut ActorContext<u64>, n: u64| {
                tokio::task::yield_now().await;
                if n % 2 == 1 {
                    return Behaviors::unhandled();
                }
                let c = count.fetch_add(1, SeqCst) + 1;
                to.tell(format!("async {c}"));
                Behaviors::same()
            })
            .into()
        }),
        (
            "supervised",
            Behaviors::supervise(functional("supervised", to.clone()))
                .on_any_failure(SupervisorStrategy::restart())
                .into(),
        ),
        (
            "stashing",
            Behaviors::with_stash(4, {
                let to = to.clone();
                move |_stash: tapio::StashBuffer<u64>| functional("stashing", to.clone())
            })
            .unwrap(),
        ),
        ("setup", {
            let to = to.clone();
            Behaviors::setup(move |_ctx: &mut ActorContext<u64>| functional("setup", to.clone()))
        }),
    ];
    for (name, behavior) in shapes {
        let actor = system.spawn(behavior, name).unwrap();
        for n in [2_u64, 1, 4, 3, 6] {
            actor.tell(n);
        }
        expect_lines(
            &mut probe,
            &[
                &format!("{name} 1"),
                &format!("{name} 2"),
                &format!("{name} 3"),
            ],
        )
        .await;
        let lost = letters_for(&mut sub, actor.path(), 2).await;
        for letter in &lost {
            assert!(
                matches!(letter.reason(), DeadLetterReason::Unhandled),
                "{name}: {}",
                describe(letter)
            );
            assert_eq!(letter.short_message_type(), "u64", "{name}");
            assert_eq!(letter.take_message::<u64>(), None, "{name}: no value");
        }
        no_letter_for(&mut sub, actor.path(), ms(30)).await;
    }

    let parity = system
        .spawn(
            Parity {
                count: 0,
                to: to.clone(),
            },
            "parity",
        )
        .unwrap();
    parity.tell(Even(0));
    parity.tell(Odd(1));
    parity.tell(Even(2));
    parity.tell(Odd(3));
    parity.tell(Show);
    expect_lines(&mut probe, &["count 2"]).await;
    let lost = letters_for(&mut sub, parity.path(), 2).await;
    for letter in &lost {
        assert!(matches!(letter.reason(), DeadLetterReason::Unhandled));
        assert_eq!(letter.short_message_type(), "Odd", "{}", describe(letter));
        assert!(!letter.is::<ParityMsg>(), "{}", describe(letter));
    }
    system.terminate().await;
}
