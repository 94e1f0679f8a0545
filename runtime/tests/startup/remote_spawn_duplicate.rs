//! S46: a factory key registered by two functions in one binary is a startup error
//! naming both. This test binary links two such factories on purpose.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tapio::SystemError;
use tapio::prelude::*;
use tapio::remote::spawn::{Spawner, SpawnerError};
use tapio::remote_behavior;

#[message(remote = "dup.ping")]
pub struct Ping;

#[remote_behavior("dup.worker")]
pub fn worker(_args: ()) -> Behavior<Ping> {
    Behaviors::ignore()
}

mod legacy {
    use tapio::prelude::*;
    use tapio::remote_behavior;

    /// Another factory, under the same key by mistake.
    #[remote_behavior("dup.worker")]
    pub fn worker(_args: ()) -> Behavior<super::Ping> {
        Behaviors::ignore()
    }
}

fn both_named(error: &SpawnerError) {
    let SpawnerError::DuplicateKey { key, first, second } = error else {
        panic!("expected a duplicate key, got {error:?}");
    };
    assert_eq!(*key, "dup.worker");
    let mut names = [*first, *second];
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "remote_spawn_duplicate::legacy::worker",
            "remote_spawn_duplicate::worker"
        ]
    );
}

// S46: the system refuses to start, naming the key and both factories; so does
// a spawner.
#[tokio::test]
async fn s46_a_factory_key_linked_twice_stops_the_system_from_starting() {
    let error = ActorSystem::new("twice").unwrap_err();
    let SystemError::Factory(error) = &error else {
        panic!("expected a factory registry error, got {error:?}");
    };
    both_named(error);
    assert!(error.to_string().contains("registered twice"), "{error}");
    both_named(&Spawner::offering::<worker>().build().unwrap_err());
}
