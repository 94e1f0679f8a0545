//! Asks as the guides show them: a late reply is a dead letter saying the ask ended
//! (S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::guide_claims::*;
use std::time::Duration;
use tapio::prelude::*;
use tapio::{AskError, DeadLetter, DeadLetterReason};

#[message]
pub struct Slow {
    pub reply_to: ActorRef<u64>,
}

// S22, S31: a reply that comes after its ask timed out is a dead letter that says the
// ask ended, with the reply inside.
#[tapio::test(start_paused = true)]
async fn s31_a_late_reply_is_a_dead_letter_saying_the_ask_ended(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let slow = system
        .spawn(
            Behaviors::receive_message_async(async move |slow: Slow| {
                tokio::time::sleep(Duration::from_secs(2)).await;
                slow.reply_to.tell(42_u64);
            }),
            "slow",
        )
        .unwrap();
    let asked = slow
        .ask_with(|reply_to| Slow { reply_to })
        .timeout(Duration::from_secs(1))
        .await;
    assert!(matches!(asked, Err(AskError::Timeout { .. })), "{asked:?}");
    let late = letter_within(&mut letters, WAIT).await;
    assert_eq!(late.reason(), &DeadLetterReason::AskEnded);
    assert_eq!(late.take_message::<u64>(), Some(42));
}
