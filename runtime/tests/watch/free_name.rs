//! A name is free once a watcher that is not the parent hears `Terminated` (S2, S18).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::T;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

/// S2, S18: a name is free as soon as a watcher that is not the parent hears
/// `Terminated`, whichever way the actor stopped; over many rounds on two workers.
#[tapio::test(worker_threads = 2)]
async fn s2_s18_a_name_is_free_once_an_outside_watcher_hears_terminated(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let behavior = || Behaviors::receive_message(|_: u64| Behaviors::stopped());
    let mut slot: ActorRef<u64> = system.spawn(behavior(), "slot").unwrap();
    for round in 0..150 {
        probe.watch(&slot);
        if round % 2 == 0 {
            system.stop(&slot).unwrap();
        } else {
            slot.tell(1_u64);
        }
        probe.expect_terminated(&slot, T).await;
        slot = match system.spawn(behavior(), "slot") {
            Ok(r) => r,
            Err(e) => panic!("round {round}: the name is still taken after Terminated: {e}"),
        };
    }
}
