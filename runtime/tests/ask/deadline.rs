//! An ask times out at its deadline, not before, and its late answer is lettered (S22).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::later_combinations::*;
use crate::support::outside;
use outside::{T, letters, ms, next};
use std::time::Duration;
use tapio::prelude::*;
use tapio::{AskError, DeadLetterReason};
use tokio::sync::mpsc;
use tokio::time::timeout;

// =================================================================================
// 4. Ask on the paused clock, events, struct actors, state machines
// =================================================================================

#[message]
pub struct Count {
    pub reply_to: ActorRef<u64>,
}

/// S22: on the paused clock, an ask with a 30 s deadline is still waiting just
/// before it and fails with `Timeout { after: 30 s }` just after it; the answer sent
/// later is a dead letter `AskEnded` carrying the value.
#[tapio::test(start_paused = true)]
async fn s22_an_ask_times_out_at_its_deadline_not_before_and_the_late_answer_is_lettered(
    system: ActorSystem,
) {
    let mut sub = letters(&system);
    let (keep, mut kept) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let mute = system
        .spawn(
            Behaviors::receive_message(move |c: Count| {
                let _ = keep.send(c.reply_to);
            }),
            "mute",
        )
        .unwrap();
    let ask = mute
        .ask_with(|reply_to| Count { reply_to })
        .timeout(Duration::from_secs(30));
    let waiting = tokio::spawn(async move { ask.await });
    let reply_to = next(&mut kept).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    tokio::time::advance(Duration::from_millis(29_900)).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(!waiting.is_finished(), "not before the deadline");
    tokio::time::advance(ms(200)).await;
    let outcome = timeout(T, waiting).await.unwrap().unwrap();
    match outcome {
        Err(AskError::Timeout { target, after }) => {
            assert_eq!(&target, mute.path());
            assert_eq!(after, Duration::from_secs(30));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    reply_to.tell(42_u64);
    let letter = letter_where(&mut sub, T, |l| l.is::<u64>()).await;
    assert_eq!(letter.reason(), &DeadLetterReason::AskEnded);
    assert_eq!(letter.take_message::<u64>(), Some(42));
}
