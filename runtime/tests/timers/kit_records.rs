//! The behavior kit records the timer effects of setup and of handlers, in order (S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, Outcome, TestInbox, TestKitError, TestProbe};
use tapio::{Failure, TimerMode};

#[derive(Debug, thiserror::Error)]
#[error("no child named {0}")]
pub struct Missing(String);

// ---------------------------------------------------------------------------------
// BehaviorTestKit and TestInbox (S48)
// ---------------------------------------------------------------------------------

#[message]
#[derive(Debug, Clone, PartialEq)]
pub enum Shop {
    Hire(String),
    Fire(String),
    Forget,
    Open,
    Close,
    Tick,
}

/// A shop that watches an outsider from its setup and shows one effect per command.
fn shop(outsider: ActorRef<u64>) -> Behavior<Shop> {
    Behaviors::setup(move |ctx: &mut ActorContext<Shop>| {
        ctx.watch(&outsider);
        let outsider = outsider.clone();
        Behaviors::receive(move |ctx, command: Shop| -> Result<(), Failure> {
            match command {
                Shop::Hire(name) => {
                    ctx.spawn(Behaviors::ignore::<u64>(), &name)
                        .map_err(Failure::new)?;
                }
                Shop::Fire(name) => {
                    let child = ctx
                        .child(&name)
                        .ok_or(Missing(name))
                        .map_err(Failure::new)?;
                    ctx.stop(&child).map_err(Failure::new)?;
                }
                Shop::Forget => ctx.unwatch(&outsider),
                Shop::Open => ctx
                    .timers()
                    .start_fixed_rate("tick", Shop::Tick, Duration::from_secs(1))
                    .map_err(Failure::new)?,
                Shop::Close => ctx.timers().cancel("tick"),
                Shop::Tick => {}
            }
            Ok(())
        })
    })
}

// S48, S7: what a setup does through its context is recorded when the kit is built,
// in the order it happened, and `effects()` takes what it returns.
#[test]
fn s48_kit_records_the_effects_of_setup_in_order() {
    let outsider = TestInbox::<u64>::named("outsider").unwrap();
    let target = outsider.actor_ref().clone();
    let mut kit = BehaviorTestKit::new(Behaviors::setup(move |ctx: &mut ActorContext<Shop>| {
        let _clerk: ActorRef<u64> = ctx.spawn(Behaviors::ignore(), "clerk")?;
        let _temp: ActorRef<u64> = ctx.spawn_anonymous(Behaviors::ignore())?;
        ctx.watch(&target);
        ctx.timers()
            .start_single_timer("open", Shop::Open, Duration::from_secs(9));
        Ok::<_, tapio::SpawnError>(Behaviors::ignore())
    }));
    assert_eq!(
        kit.effects(),
        [
            Effect::Spawned {
                name: "clerk".into()
            },
            Effect::SpawnedAnonymous { name: "$a".into() },
            Effect::Watched {
                actor: outsider.actor_ref().erase()
            },
            Effect::TimerStarted {
                key: "open".into(),
                mode: TimerMode::Single,
                delay: Duration::from_secs(9),
            },
        ]
    );
    assert!(kit.effects().is_empty(), "effects() takes what it returns");
}

// S48: a handler's effects: a child spawned then stopped (and gone for `child_kit`),
// an unwatch (recorded once: the second forgets nothing), a timer started, replaced
// under its key (the old one cancelled) and cancelled (a second cancel of a key that
// no longer runs records nothing).
#[test]
fn s48_kit_records_the_effects_of_handlers() {
    let outsider = TestInbox::<u64>::new();
    let mut kit = BehaviorTestKit::new(shop(outsider.actor_ref().clone()));
    assert_eq!(
        kit.effects(),
        [Effect::Watched {
            actor: outsider.actor_ref().erase()
        }]
    );

    assert_eq!(kit.run(Shop::Hire("ada".into())), Ok(Outcome::Same));
    assert_eq!(kit.run(Shop::Fire("ada".into())), Ok(Outcome::Same));
    assert_eq!(
        kit.effects(),
        [
            Effect::Spawned { name: "ada".into() },
            Effect::Stopped { name: "ada".into() },
        ]
    );
    assert!(matches!(
        kit.child_kit::<u64>("ada"),
        Err(TestKitError::NoSuchChild { .. })
    ));
    let again = kit.run(Shop::Fire("ada".into())).unwrap_err();
    assert!(again.is::<Missing>(), "{again}");
    assert!(kit.effects().is_empty());

    kit.run(Shop::Forget).unwrap();
    kit.run(Shop::Forget).unwrap();
    assert_eq!(
        kit.effects(),
        [Effect::Unwatched {
            actor: outsider.actor_ref().erase()
        }]
    );

    kit.run(Shop::Open).unwrap();
    kit.run(Shop::Open).unwrap();
    kit.run(Shop::Close).unwrap();
    kit.run(Shop::Close).unwrap();
    let started = Effect::TimerStarted {
        key: "tick".into(),
        mode: TimerMode::FixedRate,
        delay: Duration::from_secs(1),
    };
    let cancelled = Effect::TimerCancelled { key: "tick".into() };
    assert_eq!(
        kit.effects(),
        [started.clone(), cancelled.clone(), started, cancelled]
    );
}

// S48: a failed `expect_effect` says what was expected and what was recorded.
#[test]
#[should_panic(
    expected = "expected the effect Spawned { name: \"bob\" }, but the behavior recorded [Spawned { name: \"ada\" }]"
)]
fn s48_expect_effect_names_what_was_recorded_instead() {
    let outsider = TestInbox::<u64>::new();
    let mut kit = BehaviorTestKit::new(shop(outsider.actor_ref().clone()));
    let _ = kit.effects();
    kit.run(Shop::Hire("ada".into())).unwrap();
    kit.expect_effect(Effect::Spawned { name: "bob".into() });
}

// ---------------------------------------------------------------------------------
// TestProbe (S48)
// ---------------------------------------------------------------------------------

// S48: `expect_no_message` fails when a message comes inside its window, and says
// which message and when, not only at the window's start.
#[tapio::test(start_paused = true)]
#[should_panic(expected = "expected no message for 1s, but 7 arrived after 300ms")]
async fn s48_expect_no_message_fails_on_a_late_arrival(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let to = probe.actor_ref().clone();
    let _late = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_single_timer("late", 7_u64, Duration::from_millis(300));
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| to.tell(n))
            }),
            "late",
        )
        .unwrap();
    probe.expect_no_message(Duration::from_secs(1)).await;
}
