//! The behavior kit when a setup answers `stopped` or a child has stopped (S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::panic::AssertUnwindSafe;
use tapio::BoxError;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, TestKitError};

// S48 + BehaviorTestKit docs: a behavior whose setup spawns a child and answers
// `stopped` is not alive once the kit is built; the spawn was recorded; handing it a
// message panics ("If the behavior has stopped").
#[test]
fn s48_kit_setup_answering_stopped_is_not_alive_and_refuses_messages() {
    let mut kit = BehaviorTestKit::new(Behaviors::setup(|ctx: &mut ActorContext<u64>| {
        let _kid: ActorRef<u64> = ctx.spawn(Behaviors::ignore::<u64>(), "kid").unwrap();
        Behaviors::stopped::<u64>()
    }));
    assert!(!kit.is_alive());
    let effects = kit.effects();
    assert_eq!(
        effects.first(),
        Some(&Effect::Spawned { name: "kid".into() }),
        "{effects:?}"
    );
    let ran = std::panic::catch_unwind(AssertUnwindSafe(|| kit.run(1_u64)));
    assert!(ran.is_err(), "a stopped behavior takes no message");
}

#[message]
enum Kc {
    Hire,
    Fire,
}

// S48 + child_kit docs: a child the behavior stopped is no live child: its stop is
// recorded after its spawn, and asking for its kit is `NoSuchChild`.
#[test]
fn s48_kit_a_stopped_child_has_no_kit() {
    let boss: Behavior<Kc> = Behaviors::receive(|ctx, m: Kc| -> Result<(), BoxError> {
        match m {
            Kc::Hire => {
                ctx.spawn(Behaviors::ignore::<u64>(), "w")?;
            }
            Kc::Fire => {
                let child = ctx.child("w").ok_or("no child w")?;
                ctx.stop(&child)?;
            }
        }
        Ok(())
    })
    .into();
    let mut kit = BehaviorTestKit::new(boss);
    kit.run(Kc::Hire).unwrap();
    kit.run(Kc::Fire).unwrap();
    assert_eq!(
        kit.effects(),
        [
            Effect::Spawned { name: "w".into() },
            Effect::Stopped { name: "w".into() }
        ]
    );
    assert!(matches!(
        kit.child_kit::<u64>("w"),
        Err(TestKitError::NoSuchChild { name }) if name == "w"
    ));
}
