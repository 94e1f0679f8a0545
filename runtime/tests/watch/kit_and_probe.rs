//! Watching as the guides show it with the testkit: the kit turns an unhandled
//! `Terminated` into a death pact, and `expect_terminated` for an actor already dead
//! (S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::guide_claims::*;
use std::time::Duration;
use tapio::DeathPact;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Outcome, TestInbox, TestProbe};

// S48, S18: a `Terminated` handed to the kit: left unhandled it is a `DeathPact`
// failure, as in a running actor; handled, it is an ordinary outcome.
#[test]
fn s48_kit_turns_an_unhandled_terminated_into_a_death_pact() {
    let other = TestInbox::<u64>::named("other").unwrap();
    let ended = || Signal::Terminated(Terminated::new(other.actor_ref().erase()));

    let mut careless = BehaviorTestKit::new(Behaviors::ignore::<u64>());
    let failure = careless.signal(ended()).unwrap_err();
    let pact = failure.downcast_ref::<DeathPact>().expect("a death pact");
    assert_eq!(pact.actor, other.actor_ref().erase());

    let careful = Behaviors::receive_message(|_: u64| {}).on_signal(|_, signal| {
        if let Signal::Terminated(_) = signal {
            Behaviors::stopped()
        } else {
            Behaviors::same()
        }
    });
    let mut careful = BehaviorTestKit::new(careful);
    assert_eq!(careful.signal(ended()), Ok(Outcome::Stopped));
}

// S48, S18: an actor that was dead before the probe watched it is still reported
// terminated, at once.
#[tapio::test(start_paused = true)]
async fn s48_expect_terminated_for_an_actor_already_dead(system: ActorSystem) {
    let mut first = TestProbe::<u64>::new(&system);
    let once = system
        .spawn(
            Behaviors::receive_message(|_: u64| Behaviors::stopped()),
            "once",
        )
        .unwrap();
    first.watch(&once);
    once.tell(1_u64);
    first.expect_terminated(&once, WAIT).await;

    let mut late = TestProbe::<u64>::new(&system);
    late.watch(&once);
    let started = tokio::time::Instant::now();
    late.expect_terminated(&once, WAIT).await;
    assert!(started.elapsed() < Duration::from_millis(1));
    late.expect_no_termination(Duration::from_secs(1)).await;
}
