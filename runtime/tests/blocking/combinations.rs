//! An ask from a handler inside a blocking call fails at once when its target stops, on
//! one worker and on two (S23, S33).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::combinations::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::AskError;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::time::timeout;

#[message]
enum Query {
    Compute(u64, ActorRef<u64>),
}

/// An actor whose handler awaits a blocking call: stopped while it waits, the ask
/// whose request it had in hand fails at once with `TargetTerminated`.
async fn ask_into_a_blocking_call(system: &ActorSystem) {
    let mut probe = TestProbe::<String>::new(system);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let report = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::receive_async(
                async move |ctx, Query::Compute(n, to)| -> Result<(), tapio::Failure> {
                    let waiting = released.lock().unwrap().take().unwrap();
                    report.tell("blocking".to_owned());
                    let _ = ctx
                        .run_blocking(move || waiting.recv_timeout(Duration::from_secs(10)))
                        .await?;
                    to.tell(n);
                    Ok(())
                },
            ),
            "computer",
        )
        .unwrap();
    probe.watch(&actor);
    let ask = actor
        .ask_with(|to| Query::Compute(1, to))
        .timeout(Duration::from_secs(10));
    let asked = tokio::spawn(async move { ask.await });
    assert_eq!(probe.expect_message(T).await, "blocking");
    let started = std::time::Instant::now();
    system.stop(&actor).unwrap();
    let outcome = timeout(T, asked).await.unwrap().unwrap();
    assert!(
        matches!(outcome, Err(AskError::TargetTerminated { .. })),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    probe.expect_terminated(&actor, T).await;
    let _ = release.send(());
}

// S23 + S33 (current thread).
#[tapio::test]
async fn s23_s33_an_ask_in_a_blocking_handler_fails_at_once_on_stop(system: ActorSystem) {
    ask_into_a_blocking_call(&system).await;
}

// S23 + S33 (two workers).
#[tapio::test(worker_threads = 2)]
async fn s23_s33_an_ask_in_a_blocking_handler_fails_at_once_on_stop_on_two_workers(
    system: ActorSystem,
) {
    ask_into_a_blocking_call(&system).await;
}
