//! Asks whose reply ref goes elsewhere or whose target stops at an awkward moment: a
//! reply ref handed to a worker, answers after the first, a child stopping on the ask,
//! and a timed-out request lettered once at the stop (S21, S22, S23, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_orders::*;
use crate::support::outside;
use outside::{T, describe, expect_lines, letters, letters_for, ms, next};
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, DeadLetterReason};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

// =================================================================================
// 5. Ask (S21, S22, S23, S31)
// =================================================================================

/// S23, S22: a target hands the reply ref of an ask to a worker and stops. The ask,
/// which watches its target, fails at once with `TargetTerminated`, though the
/// reply ref lives on; the worker's answer afterwards is an `AskEnded` letter.
#[tapio::test(start_paused = true)]
async fn s23_s22_a_reply_ref_handed_to_a_worker_fails_fast_when_the_target_stops(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let (held_tx, mut held_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let (go_tx, go_rx) = oneshot::channel::<()>();
    let go_rx = Arc::new(std::sync::Mutex::new(Some(go_rx)));
    let worker = system
        .spawn(
            Behaviors::receive_message_async(async move |reply_to: ActorRef<u64>| {
                let go = go_rx.lock().unwrap().take();
                let _ = held_tx.send(reply_to.clone());
                if let Some(go) = go {
                    let _ = go.await;
                }
                reply_to.tell(99);
            }),
            "worker",
        )
        .unwrap();
    let target = system
        .spawn(
            Behaviors::receive_message_async(async move |q: Q| {
                worker.tell(q.reply_to);
                // Give the ask time to start watching, then stop.
                tokio::time::sleep(ms(20)).await;
                Behaviors::stopped()
            }),
            "target",
        )
        .unwrap();
    let started = Instant::now();
    let asked = target
        .ask_with(|reply_to| Q { n: 1, reply_to })
        .timeout(Duration::from_secs(3600))
        .await;
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let _held = next(&mut held_rx).await;
    go_tx.send(()).unwrap();
    let letter = outside::letter_where(&mut dead, T, |l| l.is::<u64>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::AskEnded,
        "{}",
        describe(&letter)
    );
    assert_eq!(letter.take_message::<u64>(), Some(99));
}

/// S21, S31: a handler that answers an ask three times: the asker gets the first
/// answer, and the second and third are each an `AlreadyAnswered` letter with
/// their value, also after the asker has taken its answer.
#[tapio::test(start_paused = true)]
async fn s21_s31_answers_after_the_first_are_already_answered_letters(system: ActorSystem) {
    let mut dead = letters(&system);
    let (relay_tx, mut relay_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let target = system
        .spawn(
            Behaviors::receive_message(move |q: Q| {
                q.reply_to.tell(q.n);
                q.reply_to.tell(q.n + 1);
                let _ = relay_tx.send(q.reply_to);
            }),
            "chatty",
        )
        .unwrap();
    let answer = target
        .ask_with(|reply_to| Q { n: 10, reply_to })
        .timeout(T)
        .await
        .unwrap();
    assert_eq!(answer, 10);
    let kept = next(&mut relay_rx).await;
    kept.tell(12);
    let mut got = Vec::new();
    let deadline = Instant::now() + T;
    while got.len() < 2 {
        let letter = tokio::time::timeout_at(deadline, dead.recv())
            .await
            .expect("two letters")
            .unwrap();
        got.push((letter.take_message::<u64>(), letter.reason().clone()));
    }
    assert_eq!(
        got,
        [
            (Some(11), DeadLetterReason::AlreadyAnswered),
            (Some(12), DeadLetterReason::AlreadyAnswered)
        ]
    );
}

/// S23, S4, S21: an async handler asks a child that stops on the request without
/// answering: the ask inside the handler fails at once with `TargetTerminated`,
/// and the handler goes on to the next message.
#[tapio::test(start_paused = true)]
async fn s23_s4_an_ask_from_a_handler_to_a_child_that_stops_on_it_fails_at_once(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, n: u64| {
                let child: ActorRef<Q> = ctx
                    .spawn_anonymous(Behaviors::receive_message(|_: Q| Behaviors::stopped()))
                    .unwrap();
                let started = Instant::now();
                let asked = child
                    .ask_with(|reply_to| Q { n, reply_to })
                    .timeout(Duration::from_secs(3600))
                    .await;
                let kind = match asked {
                    Err(AskError::TargetTerminated { .. }) => "terminated",
                    Err(AskError::Unanswered { .. }) => "unanswered",
                    Err(_) => "other error",
                    Ok(_) => "answered",
                };
                to.tell(format!(
                    "{n}: {kind} in {}ms",
                    started.elapsed().as_millis()
                ));
            }),
            "asker",
        )
        .unwrap();
    parent.tell(1_u64);
    parent.tell(2_u64);
    expect_lines(
        &mut probe,
        &["1: terminated in 0ms", "2: terminated in 0ms"],
    )
    .await;
}

/// S22, S31, S23: an ask that timed out while its request waited in the mailbox
/// behind a parked handler; then the target is stopped. The request is one dead
/// letter (`RecipientStopped`), and no answer or second letter follows.
#[tapio::test(start_paused = true)]
async fn s22_s31_a_timed_out_request_still_queued_is_lettered_once_at_the_stop(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let gate = Arc::new(tokio::sync::Notify::new());
    let held = gate.clone();
    let actor = system
        .spawn(
            Behaviors::receive_message_async(async move |q: Q| {
                if q.n == 0 {
                    held.notified().await;
                }
                q.reply_to.tell(q.n);
            }),
            "parked",
        )
        .unwrap();
    let sink = system.spawn(Behaviors::ignore::<u64>(), "sink").unwrap();
    actor.tell(Q {
        n: 0,
        reply_to: sink,
    });
    let asked = actor
        .ask_with(|reply_to| Q { n: 5, reply_to })
        .timeout(ms(50))
        .await;
    assert!(matches!(asked, Err(AskError::Timeout { .. })), "{asked:?}");
    system.stop(&actor).unwrap();
    let got = letters_for(&mut dead, actor.path(), 1).await;
    assert_eq!(
        got[0].reason(),
        &DeadLetterReason::RecipientStopped,
        "{}",
        describe(&got[0])
    );
    assert!(got[0].is::<Q>(), "{}", describe(&got[0]));
    // Nothing more, for the actor or as an answer.
    let quiet = Instant::now() + Duration::from_secs(1);
    if let Ok(Some(letter)) = tokio::time::timeout_at(quiet, dead.recv()).await {
        panic!("an unexpected letter: {}", describe(&letter));
    }
}

/// S23: a target hands the reply ref of an ask to a worker and stops at once,
/// before the ask has begun to watch it: the ask still fails with
/// `TargetTerminated`, promptly, not at its hour-long deadline.
#[tapio::test(start_paused = true)]
async fn s23_a_target_stopping_at_once_after_handing_the_reply_ref_on_still_fails_fast(
    system: ActorSystem,
) {
    let (held_tx, mut held_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let worker = system
        .spawn(
            Behaviors::receive_message(move |reply_to: ActorRef<u64>| {
                // Keeps the reply ref, never answers.
                let _ = held_tx.send(reply_to);
            }),
            "keeper",
        )
        .unwrap();
    let target = system
        .spawn(
            Behaviors::receive_message(move |q: Q| {
                worker.tell(q.reply_to);
                Behaviors::stopped()
            }),
            "handing-on",
        )
        .unwrap();
    let started = Instant::now();
    let asked = target
        .ask_with(|reply_to| Q { n: 1, reply_to })
        .timeout(Duration::from_secs(3600))
        .await;
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?} after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let held = next(&mut held_rx).await;
    drop(held);
}
