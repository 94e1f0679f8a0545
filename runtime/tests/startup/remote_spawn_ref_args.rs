//! S46: a factory's arguments cannot carry an `ActorRef`. A binary that links a
//! factory whose arguments type can (here, behind a `Vec` in one variant of an
//! enum) does not start a system, and the error names the factory. This test
//! binary links one on purpose.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tapio::SystemError;
use tapio::prelude::*;
use tapio::remote::spawn::SpawnerError;
use tapio::remote_behavior;

#[message(remote = "ref-args.done.v1")]
#[derive(Debug, Clone)]
pub struct Done;

/// What to do when the work is done: nothing, or tell some actors.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub enum WhenDone {
    Nothing,
    Tell(Vec<ActorRef<Done>>),
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct WorkerArgs {
    pub threads: u32,
    pub when_done: WhenDone,
}

#[remote_behavior("ref-args.worker")]
pub fn worker(_args: WorkerArgs) -> Behavior<Done> {
    Behaviors::ignore()
}

// S46: the system refuses to start, naming the factory and what to do instead.
#[tokio::test]
async fn s46_arguments_that_can_carry_a_ref_stop_the_system_from_starting() {
    let error = ActorSystem::new("refs").unwrap_err();
    let SystemError::Factory(SpawnerError::ArgumentsCarryRef { key, factory }) = &error else {
        panic!("expected the factory refused, got {error:?}");
    };
    assert_eq!(*key, "ref-args.worker");
    assert_eq!(*factory, "remote_spawn_ref_args::worker");
    assert!(
        error
            .to_string()
            .contains("send it to the new actor in a message"),
        "{error}"
    );
}
