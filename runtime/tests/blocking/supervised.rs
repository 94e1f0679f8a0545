//! `run_blocking` under supervision: a resumed panic keeps the actor's state, and a
//! restart does not wait for a running call (S11, S33).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::under_supervision::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

// ---------------------------------------------------------------------------------
// run_blocking
// ---------------------------------------------------------------------------------

// S33 + S11: a panic in a blocking call, resumed by supervision, keeps the actor's
// state and drops only the failing message; the actor goes on using the pool.
#[tapio::test]
async fn s33_a_resumed_panic_in_a_blocking_call_keeps_the_state(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let setups = Arc::new(AtomicUsize::new(0));
    let counted = setups.clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                let report = report.clone();
                let sum = Arc::new(AtomicUsize::new(0));
                Behaviors::receive_async(async move |ctx, n: u64| -> Result<(), tapio::Failure> {
                    let value = ctx
                        .run_blocking(move || {
                            assert!(n != 0, "zero in the pool");
                            n
                        })
                        .await?;
                    let total = sum.fetch_add(value as usize, Ordering::SeqCst) + value as usize;
                    report.tell(total as u64);
                    Ok(())
                })
            }))
            .on_failure::<Panicked>(SupervisorStrategy::resume()),
            "resumed",
        )
        .unwrap();
    actor.tell(5_u64);
    assert_eq!(probe.expect_message(T).await, 5);
    actor.tell(0_u64);
    actor.tell(2_u64);
    assert_eq!(probe.expect_message(T).await, 7, "the state was kept");
    assert_eq!(setups.load(Ordering::SeqCst), 1);
}

// S33 + S14 + lib docs "cancel safety": a blocking call still running when the actor
// restarts (a child escalated) does not hold the restart up; its result is thrown
// away, and the next incarnation handles what was queued.
#[tapio::test]
async fn s33_a_restart_does_not_wait_for_a_running_blocking_call(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let setups = Arc::new(AtomicUsize::new(0));
    let counted = setups.clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let generation = counted.fetch_add(1, Ordering::SeqCst) + 1;
                let child: ActorRef<u64> = ctx
                    .spawn(
                        Behaviors::supervise(Behaviors::receive_message(|_: u64| {
                            Err::<(), _>(Boom)
                        }))
                        .on_failure::<Boom>(SupervisorStrategy::escalate()),
                        "child",
                    )
                    .unwrap();
                let report = report.clone();
                let released = released.clone();
                Behaviors::receive_async(async move |ctx, n: u64| -> Result<(), tapio::Failure> {
                    if n == 0 {
                        let waiting = released.lock().unwrap().take().unwrap();
                        child.tell(1);
                        ctx.run_blocking(move || waiting.recv_timeout(Duration::from_secs(10)))
                            .await?
                            .unwrap();
                        report.tell("blocking call came back".into());
                    } else {
                        report.tell(format!("gen {generation} got {n}"));
                    }
                    Ok(())
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "restarting",
        )
        .unwrap();
    actor.tell(0);
    actor.tell(7);
    let got = probe.expect_message(T).await;
    // Release the call only now, so the first message proves the restart went ahead.
    let _ = release.send(());
    assert_eq!(got, "gen 2 got 7");
    probe.expect_no_message(Duration::from_millis(200)).await;
}
