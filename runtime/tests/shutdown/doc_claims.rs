//! Shutdown as the docs describe it: terminate begins when called, without being
//! awaited, and `live_actors` counts the guardians and is zero after terminate.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;
use tapio::prelude::*;

// ---------------------------------------------------------------- systems

// README.md, Shutdown: "`system.terminate()` begins when called (so
// `drop(system.terminate());` works from sync code)".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_begins_when_called_without_being_awaited() {
    let system = ActorSystem::new("sync-stop").unwrap();
    let _actor = system.spawn(Seven, "seven").unwrap();
    fn from_sync_code(system: &ActorSystem) {
        drop(system.terminate());
    }
    from_sync_code(&system);
    assert!(system.is_terminating());
    within("when_terminated", system.when_terminated())
        .await
        .unwrap();
}

// What the doc of `live_actors` (runtime/src/system/mod.rs) says: "How many actor tasks
// are running, guardians included: zero once the system has terminated".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_actors_counts_guardians_and_is_zero_after_terminate() {
    let system = ActorSystem::new("live").unwrap();
    let before = system.live_actors();
    assert!(before >= 1, "guardians included: {before}");
    let seven = system.spawn(Seven, "seven").unwrap();
    assert_eq!(within("ask", seven.ask(Get)).await.unwrap(), 7);
    assert_eq!(system.live_actors(), before + 1);
    within("terminate", system.terminate()).await;
    assert_eq!(system.live_actors(), 0);
}
