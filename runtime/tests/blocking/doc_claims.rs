//! `run_blocking` as the docs describe it: a panic in the call is a `Panicked` failure.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;
use tapio::prelude::*;
use tokio::sync::mpsc;

// README.md, Blocking calls: "`?` makes a panic in the call the actor's failure
// (`Panicked`)."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_run_blocking_is_a_panicked_failure() {
    let system = ActorSystem::new("blocking").unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let behavior = Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, n: u64| {
        if n == 0 {
            ctx.run_blocking(|| -> u64 { panic!("in the blocking call") })
                .await?;
        }
        let _ = tx.send(n);
        Ok::<_, tapio::Failure>(())
    });
    let actor = system
        .spawn(
            Behaviors::supervise(behavior).on_failure::<Panicked>(SupervisorStrategy::resume()),
            "blocking",
        )
        .unwrap();
    actor.tell(0u64);
    actor.tell(9u64);
    assert_eq!(
        recv(&mut rx).await,
        9,
        "a `Panicked` clause resumed the actor"
    );
    within("terminate", system.terminate()).await;
}
