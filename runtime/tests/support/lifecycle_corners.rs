//! The dead letters of one actor, by its path or by its path as text, collected until
//! the stream has been quiet for a while, for the modules on restart limits and
//! lifecycles.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{Boom, Other, T, entries, ms, new_log as log, push};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, LeakReport, TestKitError, TestProbe};
use tapio::{
    ActorPath, AskError, BoxError, DeadLetter, DeadLetterReason, DeathPact, SpawnError,
    Subscription, TimerMode, TimerScheduler,
};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep, timeout};

/// Every dead letter for `path` until `quiet` passes without any letter at all
/// (the whole collection bounded by `T`).
pub async fn letters_for(
    letters: &mut Subscription<DeadLetter>,
    path: &ActorPath,
    quiet: Duration,
) -> Vec<DeadLetter> {
    letters_to(letters, &path.to_string(), quiet).await
}

/// [`letters_for`] by the recipient's path as text.
pub async fn letters_to(
    letters: &mut Subscription<DeadLetter>,
    path: &str,
    quiet: Duration,
) -> Vec<DeadLetter> {
    let deadline = Instant::now() + T;
    let mut found = Vec::new();
    while let Ok(Some(letter)) = timeout(quiet, letters.recv()).await {
        if letter.recipient().to_string() == path {
            found.push(letter);
        }
        assert!(Instant::now() < deadline, "dead letters kept coming");
    }
    found
}
