//! A failing handler without supervision: the actor stops (the default decision),
//! the failure never reaches the sender, and the system goes on (S9, first part).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;

const SECOND: Duration = Duration::from_secs(1);

#[message]
pub enum Risky {
    Panic,
    Fail,
    Echo(ActorRef<u64>),
}

fn risky() -> Behavior<Risky> {
    Behaviors::receive_message(|message: Risky| match message {
        Risky::Panic => panic!("deliberately"),
        Risky::Fail => Err(std::io::Error::other("deliberately")),
        Risky::Echo(to) => {
            to.tell(1);
            Ok(Behaviors::same())
        }
    })
    .into()
}

// A panic in a handler stops that actor only; the sender's `tell` returned long
// before, and every other actor keeps running.
#[tapio::test(start_paused = true)]
async fn a_panicking_handler_stops_its_actor_and_nothing_else(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let doomed = system.spawn(risky(), "doomed").unwrap();
    let bystander = system.spawn(risky(), "bystander").unwrap();
    probe.watch(&doomed);
    doomed.tell(Risky::Panic);
    probe.expect_terminated(&doomed, SECOND).await;
    bystander.tell(Risky::Echo(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(SECOND).await, 1);
}

// A returned error is a failure too, decided the same way: stop.
#[tapio::test(start_paused = true)]
async fn a_failing_handler_stops_its_actor(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let doomed = system.spawn(risky(), "doomed").unwrap();
    probe.watch(&doomed);
    doomed.tell(Risky::Fail);
    doomed.tell(Risky::Echo(probe.actor_ref().clone()));
    probe.expect_terminated(&doomed, SECOND).await;
    probe.expect_no_message(Duration::from_millis(100)).await;
}

// A panic inside a setup is a failure of the start: the actor stops.
#[tapio::test(start_paused = true)]
async fn a_panicking_setup_stops_its_actor(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let doomed = system
        .spawn(
            Behaviors::setup(|_| -> Behavior<u64> { panic!("cannot start") }),
            "doomed",
        )
        .unwrap();
    probe.watch(&doomed);
    probe.expect_terminated(&doomed, SECOND).await;
}

/// State whose `Drop` panics once armed: user code the runtime cannot wrap in a
/// handler's guard.
#[derive(Clone)]
struct Fragile {
    armed: bool,
}

impl Drop for Fragile {
    fn drop(&mut self) {
        if self.armed && !std::thread::panicking() {
            panic!("fragile state panicked while dropped");
        }
    }
}

#[actor]
impl Fragile {
    fn arm(&mut self, _: u64) -> Behavior<FragileMsg> {
        self.armed = true;
        // Switching drops this state, outside every handler's guard.
        Behaviors::ignore()
    }
}

// A panic outside every handler (here, in the `Drop` of the state a switch throws
// away) ends the actor's task; watchers still get `Terminated` and the parent frees
// the name, instead of waiting for an end nobody announces.
#[tapio::test(start_paused = true)]
async fn a_task_that_ends_in_a_panic_still_announces_its_end(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let fragile = system.spawn(Fragile { armed: false }, "fragile").unwrap();
    probe.watch(&fragile);
    fragile.tell(1_u64);
    probe.expect_terminated(&fragile, SECOND).await;
    assert!(system.spawn(Behaviors::ignore::<u64>(), "fragile").is_ok());
}
