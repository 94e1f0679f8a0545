//! `run_blocking` keeps other actors running, and a panic in the call is the actor's
//! failure (S33).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_cases::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

// ---------------------------------------------------------------------------------
// run_blocking
// ---------------------------------------------------------------------------------

#[message]
enum Blocky {
    Block,
    Ping(ActorRef<&'static str>),
}

// S33: on a current-thread runtime, an actor awaiting a blocking call does not hold
// up the others: a neighbour answers while the call still blocks.
#[tapio::test]
async fn s33_run_blocking_keeps_others_running(system: ActorSystem) {
    let mut probe = TestProbe::<&'static str>::new(&system);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let report = probe.actor_ref().clone();
    let blocker = system
        .spawn(
            Behaviors::receive_async(
                async move |ctx, message: Blocky| -> Result<(), tapio::Failure> {
                    match message {
                        Blocky::Block => {
                            let waiting = released.lock().unwrap().take().unwrap();
                            report.tell("blocking");
                            ctx.run_blocking(move || waiting.recv_timeout(Duration::from_secs(10)))
                                .await?
                                .unwrap();
                            report.tell("unblocked");
                        }
                        Blocky::Ping(to) => to.tell("blocker pong"),
                    }
                    Ok(())
                },
            ),
            "blocker",
        )
        .unwrap();
    let neighbour = system
        .spawn(
            Behaviors::receive_message(|to: ActorRef<&'static str>| to.tell("pong")),
            "neighbour",
        )
        .unwrap();
    blocker.tell(Blocky::Block);
    assert_eq!(probe.expect_message(T).await, "blocking");
    blocker.tell(Blocky::Ping(probe.actor_ref().clone()));
    neighbour.tell(probe.actor_ref().clone());
    assert_eq!(probe.expect_message(T).await, "pong");
    release.send(()).unwrap();
    assert_eq!(probe.expect_message(T).await, "unblocked");
    assert_eq!(probe.expect_message(T).await, "blocker pong");
}

// S33 + S9: a panic inside a blocking call is the actor's failure, decided by its
// supervision (here: restart, so the state is fresh).
#[tapio::test]
async fn s33_panic_in_blocking_call_is_the_actor_failure(system: ActorSystem) {
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
                    let doubled = ctx
                        .run_blocking(move || {
                            assert!(n != 0, "zero in the pool");
                            n * 2
                        })
                        .await?;
                    let total =
                        sum.fetch_add(doubled as usize, Ordering::SeqCst) + doubled as usize;
                    report.tell(total as u64);
                    Ok(())
                })
            }))
            .on_failure::<Panicked>(SupervisorStrategy::restart()),
            "blocking",
        )
        .unwrap();
    actor.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, 2);
    actor.tell(0_u64);
    actor.tell(2_u64);
    assert_eq!(
        probe.expect_message(T).await,
        4,
        "a fresh sum after the restart"
    );
    assert_eq!(setups.load(Ordering::SeqCst), 2);
}
