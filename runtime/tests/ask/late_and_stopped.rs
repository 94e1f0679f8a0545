//! The first asks a new user writes: a late local reply is a dead letter with its
//! reason, and an ask fails at once when its target has stopped or stops with the
//! request queued (S22, S23).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::first_contact::*;
use std::time::{Duration, Instant};
use tapio::prelude::*;
use tapio::{AskError, DeadLetter, DeadLetterReason};

// ---------------------------------------------------------------------------------
// Ask (S21–S23), local
// ---------------------------------------------------------------------------------

// S22: no answer before the deadline is `Timeout`; the answer that comes later is a
// dead letter with a reason (`AskEnded`), carrying the late reply itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s22_late_local_reply_is_a_dead_letter_with_a_reason() {
    let system = ActorSystem::new("late").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let echo = system.spawn(Echo::default(), "echo").unwrap();
    let started = Instant::now();
    let asked = echo
        .ask(SlowPing {
            n: 7,
            after_ms: 300,
        })
        .timeout(Duration::from_millis(50))
        .await;
    assert!(
        matches!(&asked, Err(AskError::Timeout { after, .. }) if *after == Duration::from_millis(50)),
        "{asked:?}"
    );
    assert!(
        started.elapsed() < Duration::from_millis(290),
        "the timeout waited for the answer"
    );
    let letter = letter_where(&mut letters, BOUND, |l| l.is::<Pong>()).await;
    assert_eq!(letter.reason(), &DeadLetterReason::AskEnded, "{letter}");
    assert_eq!(letter.take_message::<Pong>(), Some(Pong(7)));
    system.terminate().await;
}

// S23: the target stops while the request is still queued behind a busy handler:
// the ask fails at once with `TargetTerminated`, not at its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s23_target_stopping_with_request_queued_fails_the_ask_at_once() {
    let system = ActorSystem::new("queued").unwrap();
    let echo = system.spawn(Echo::default(), "echo").unwrap();
    // Keep it busy for a long time; the ask below queues behind it.
    let busy = echo
        .ask(SlowPing {
            n: 1,
            after_ms: 60_000,
        })
        .timeout(Duration::from_secs(60));
    let busy = tokio::spawn(busy.into_future());
    // Each request is sent when its ask is made: `Ping(2)` is queued behind the slow
    // one, whether or not the actor has begun it when the stop comes.
    let queued = echo.ask(Ping(2)).timeout(Duration::from_secs(30));
    let started = Instant::now();
    let queued = tokio::spawn(queued.into_future());
    system.stop(&echo).unwrap();
    let outcome = ask_outcome(queued).await;
    assert!(
        matches!(&outcome, Err(AskError::TargetTerminated { target }) if target == echo.path()),
        "{outcome:?}"
    );
    assert!(started.elapsed() < BOUND);
    let busy = tokio::time::timeout(BOUND, busy)
        .await
        .expect("the busy ask hung")
        .unwrap();
    assert!(
        matches!(busy, Err(AskError::TargetTerminated { .. })),
        "{busy:?}"
    );
    system.terminate().await;
}

// S23: a target that stopped already refuses at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s23_ask_to_a_stopped_target_fails_at_once() {
    let system = ActorSystem::new("gone").unwrap();
    let echo = system.spawn(Echo::default(), "echo").unwrap();
    stop_and_wait(&system, &echo, || echo.tell(Quit)).await;
    let started = Instant::now();
    let outcome = echo.ask(Ping(1)).timeout(Duration::from_secs(10)).await;
    assert!(
        matches!(outcome, Err(AskError::TargetTerminated { .. })),
        "{outcome:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    system.terminate().await;
}
