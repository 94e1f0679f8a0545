//! Routers as the docs describe them: a pool router stops with its last routee.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

// ---------------------------------------------------------------- routers

// README.md, Routers: "The router watches its routees: one that stops leaves, and the
// router stops with the last."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_router_stops_with_its_last_routee() {
    let system = ActorSystem::new("router").unwrap();
    let router = system
        .spawn(
            Routers::pool(2, || {
                Behaviors::receive_message(|_: u64| -> Behavior<u64> { Behaviors::stopped() })
            })
            .unwrap(),
            "pool",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&router);
    router.tell(1);
    probe
        .expect_no_termination(Duration::from_millis(200))
        .await;
    router.tell(2);
    probe.expect_terminated(&router, WAIT).await;
    within("terminate", system.terminate()).await;
}
