//! Helpers for the modules that test features in unusual orders: a request `Q`, the
//! paths a failure climbed, a fixed backoff, a `Tick`, and a gated actor.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{Boom, Other, T, describe, expect_lines, letters, letters_for, ms, next};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{
    AskError, Backoff, BoxError, DeadLetter, DeadLetterReason, Failure, MailboxConfig,
    OverflowStrategy,
};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, timeout};

// =================================================================================
// helpers
// =================================================================================

/// A request answered with a `u64`, carrying its reply ref.
#[message]
pub struct Q {
    pub n: u64,
    pub reply_to: ActorRef<u64>,
}

pub fn climbed(failure: &Failure) -> Vec<String> {
    failure.climbed().iter().map(|p| p.to_string()).collect()
}

// =================================================================================
// 3. Backoff (S2, S12, S13, S22, S23, S25)
// =================================================================================

pub fn fixed_backoff(d: Duration) -> Backoff {
    Backoff::new(d, d, 0.0).unwrap()
}

#[message]
#[derive(Clone)]
pub struct Tick;

// =================================================================================
// 4. Mailboxes (S29, S30, S31, S16)
// =================================================================================

/// A behavior whose first message parks its handler on `gate` until it opens; it
/// reports "got n" for each message on `to`.
pub fn gated(to: ActorRef<String>, gate: Arc<tokio::sync::Notify>) -> Behavior<u64> {
    Behaviors::receive_message_async(async move |n: u64| {
        if n == 1 {
            // Said before it waits, so a test knows the message is in hand.
            to.tell("waiting 1".to_string());
            gate.notified().await;
        }
        to.tell(format!("got {n}"));
    })
    .into()
}

// =================================================================================
// 10. Fail-on-overflow mailboxes against ticks, replays and backoffs (S24, S27,
//     S29, S13)
// =================================================================================

#[message]
#[derive(Clone)]
pub enum Gated {
    N(u64),
    Tick,
    Release,
}
