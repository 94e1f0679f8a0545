//! Supervision as the docs describe it: the restart defaults, the default backoff, a
//! restarted `setup_once`, a clause matching inside a `BoxError`, and a death pact.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{Backoff, BoxError};
use tokio::sync::mpsc;

// ---------------------------------------------------------------- supervision

// README.md, Supervision: "Defaults: 10 restarts per minute, no backoff unless asked".
#[test]
fn restart_defaults_to_ten_per_minute_without_backoff() {
    let restart = SupervisorStrategy::restart();
    assert_eq!(restart.max_restarts(), 10);
    assert_eq!(restart.window(), Duration::from_secs(60));
    assert!(restart.backoff().is_none());
}

// README.md, Supervision: "`Backoff::default()` is 100 ms doubling to 10 s, each delay
// then stretched by up to 20 % at random (so at the cap, 10 to 12 s)."
#[test]
fn default_backoff_is_100ms_doubling_to_10s_stretched_up_to_20_percent() {
    let backoff = Backoff::default();
    assert_eq!(backoff.delay(0, 0.0), Duration::from_millis(100));
    assert_eq!(backoff.delay(1, 0.0), Duration::from_millis(200));
    assert_eq!(backoff.delay(2, 0.0), Duration::from_millis(400));
    assert_eq!(backoff.delay(30, 0.0), Duration::from_secs(10));
    let top = backoff.delay(30, 0.999_999);
    assert!(
        top > Duration::from_millis(11_990) && top <= Duration::from_secs(12),
        "{top:?}"
    );
}

// README.md, Behaviors: "`setup_once` (an `FnOnce` that can move a one-shot value in;
// a restart cannot re-run it)". (failure.rs: the actor stops, whatever the restart
// strategy said.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_of_setup_once_stops_the_actor() {
    let system = ActorSystem::new("once").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    let once = Behaviors::setup_once(|_ctx| {
        Behaviors::receive_message(|_: u64| -> Result<Behavior<u64>, std::io::Error> {
            Err(std::io::Error::other("boom"))
        })
    });
    let actor = system
        .spawn(
            Behaviors::supervise(once).on_failure::<std::io::Error>(SupervisorStrategy::restart()),
            "once",
        )
        .unwrap();
    probe.watch(&actor);
    actor.tell(1);
    probe.expect_terminated(&actor, WAIT).await;
    within("terminate", system.terminate()).await;
}

// README.md, Supervision: "a `tapio::BoxError` so that `?` works on several error
// types in one handler; a clause still matches the error inside the box by its own
// type."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clause_matches_the_error_inside_a_box_error() {
    let system = ActorSystem::new("boxed").unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let behavior = Behaviors::receive_message(move |n: u64| -> Result<(), BoxError> {
        if n == 0 {
            Err(std::io::Error::other("boxed io"))?;
        }
        let _ = tx.send(n);
        Ok(())
    });
    let actor = system
        .spawn(
            Behaviors::supervise(behavior)
                .on_failure::<std::io::Error>(SupervisorStrategy::resume()),
            "boxed",
        )
        .unwrap();
    actor.tell(0u64);
    actor.tell(5u64);
    assert_eq!(recv(&mut rx).await, 5, "resumed after the boxed io::Error");
    within("terminate", system.terminate()).await;
}

// README.md, Watching: "A watcher that leaves it unhandled fails with `DeathPact`
// (stopped by default; supervision can match the type)."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_that_leaves_terminated_unhandled_fails_with_death_pact() {
    let system = ActorSystem::new("pact").unwrap();
    let target = system.spawn(Seven, "target").unwrap();
    let t = target.clone();
    let (ready_tx, mut ready) = mpsc::unbounded_channel();
    let plain = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&t);
                let _ = ready_tx.send(());
                Behaviors::receive_message(|_: u64| {})
            }),
            "plain",
        )
        .unwrap();
    let t = target.clone();
    let (ready_tx2, mut ready2) = mpsc::unbounded_channel();
    let (alive_tx, mut alive) = mpsc::unbounded_channel();
    let resumed = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&t);
                let _ = ready_tx2.send(());
                let alive_tx = alive_tx.clone();
                Behaviors::receive_message(move |n: u64| {
                    let _ = alive_tx.send(n);
                })
            }))
            .on_failure::<tapio::DeathPact>(SupervisorStrategy::resume()),
            "resumed",
        )
        .unwrap();
    recv(&mut ready).await;
    recv(&mut ready2).await;
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&plain);
    system.stop(&target).unwrap();
    probe.expect_terminated(&plain, WAIT).await;
    resumed.tell(4);
    assert_eq!(recv(&mut alive).await, 4);
    within("terminate", system.terminate()).await;
}
