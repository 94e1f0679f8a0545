//! Supervision as the guides show it: a restart is no termination, and setup runs again
//! on every restart (S7, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::guide_claims::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::sync::mpsc;

// S48, S14: a restart is not an end: a probe watching a restarting actor sees no
// termination, and the actor answers afterwards.
#[tapio::test(start_paused = true)]
async fn s48_a_restart_is_no_termination(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let to = probe.actor_ref().clone();
    let fragile: Behavior<u64> = Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
        assert!(n != 0, "zero breaks it");
        to.tell(n);
    }))
    .on_failure::<Panicked>(SupervisorStrategy::restart())
    .into();
    let fragile = system.spawn(fragile, "fragile").unwrap();
    probe.watch(&fragile);
    fragile.tell(0_u64);
    fragile.tell(5_u64);
    assert_eq!(probe.expect_message(WAIT).await, 5);
    probe.expect_no_termination(Duration::from_secs(1)).await;
    system.stop(&fragile).unwrap();
    probe.expect_terminated(&fragile, WAIT).await;
}

// ---------------------------------------------------------------------------------
// Behaviors (S6, S7) in a running system
// ---------------------------------------------------------------------------------

// S7, S14: `setup` runs at start and again on every restart; a child spawned in setup
// comes back, one spawned in a handler does not.
#[tapio::test(start_paused = true)]
async fn s7_setup_runs_again_on_every_restart(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let (reports, mut report) = mpsc::unbounded_channel::<Vec<String>>();
    let counted = setups.clone();
    let parent: Behavior<u64> =
        Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
            counted.fetch_add(1, Ordering::SeqCst);
            let _: ActorRef<u64> = ctx.spawn(Behaviors::ignore(), "kept").unwrap();
            let reports = reports.clone();
            Behaviors::receive(move |ctx, n: u64| match n {
                0 => panic!("restart me"),
                1 => {
                    let _: ActorRef<u64> = ctx.spawn(Behaviors::ignore(), "extra").unwrap();
                }
                _ => {
                    let mut names: Vec<String> = ctx
                        .children()
                        .iter()
                        .map(|c| c.path().name().to_owned())
                        .collect();
                    names.sort();
                    let _ = reports.send(names);
                }
            })
        }))
        .on_failure::<Panicked>(SupervisorStrategy::restart())
        .into();
    let parent = system.spawn(parent, "parent").unwrap();
    parent.tell(1_u64);
    parent.tell(2_u64);
    assert_eq!(
        tokio::time::timeout(WAIT, report.recv())
            .await
            .unwrap()
            .unwrap(),
        ["extra", "kept"]
    );
    parent.tell(0_u64);
    parent.tell(2_u64);
    assert_eq!(
        tokio::time::timeout(WAIT, report.recv())
            .await
            .unwrap()
            .unwrap(),
        ["kept"]
    );
    assert_eq!(setups.load(Ordering::SeqCst), 2);
}
