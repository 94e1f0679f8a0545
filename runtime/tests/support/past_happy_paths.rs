//! Helpers for the modules that take the promises past their happy paths: a `PostStop`
//! reporter, a collector of items by sender, the steps of a script, and a guard that
//! logs when it is dropped.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::common;
use crate::support::outside;
use outside::{
    Boom, Other, T, describe, expect_lines, letters, letters_for, ms, next, no_letter_for,
};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{TestConfig, TestProbe};
use tapio::{
    AskError, BoxError, DeadLetter, DeadLetterReason, IntoBehavior, MailboxConfig,
    OverflowStrategy, ShutdownSignal, Subscription,
};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

// =================================================================================
// helpers
// =================================================================================

/// An actor that logs "<name> stopped" to `to` on `PostStop`, and nothing else.
pub fn post_stop_reporter(name: &'static str, to: ActorRef<String>) -> Behavior<u64> {
    Behaviors::receive_message(|_: u64| ())
        .on_signal(move |_ctx, signal| {
            if *signal == Signal::PostStop {
                to.tell(format!("{name} stopped"));
            }
        })
        .into()
}

// =================================================================================
// 2. Order and exclusion (S4, S5)
// =================================================================================

#[message]
pub struct Item {
    pub sender: u64,
    pub seq: u64,
}

#[message]
pub struct ReportTo {
    pub reply_to: ActorRef<Vec<u64>>,
}

/// Keeps what it handled, as `sender * 1_000_000 + seq`, and counts handlers that
/// found another one running.
#[derive(Clone)]
pub struct Collector {
    pub seen: Vec<u64>,
    pub inside: Arc<AtomicU64>,
    pub overlaps: Arc<AtomicU64>,
}

#[actor]
impl Collector {
    async fn item(&mut self, item: Item) {
        if self.inside.fetch_add(1, SeqCst) != 0 {
            self.overlaps.fetch_add(1, SeqCst);
        }
        if item.seq.is_multiple_of(5) {
            tokio::task::yield_now().await;
        }
        self.seen.push(item.sender * 1_000_000 + item.seq);
        self.inside.fetch_sub(1, SeqCst);
    }

    fn report(&mut self, report: ReportTo) {
        report.reply_to.tell(self.seen.clone());
    }
}

pub fn collector() -> (Collector, Arc<AtomicU64>) {
    let overlaps = Arc::new(AtomicU64::new(0));
    (
        Collector {
            seen: Vec::new(),
            inside: Arc::new(AtomicU64::new(0)),
            overlaps: overlaps.clone(),
        },
        overlaps,
    )
}

/// Each sender's sequence numbers, in the order handled.
pub fn per_sender(seen: &[u64]) -> BTreeMap<u64, Vec<u64>> {
    let mut map: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for code in seen {
        map.entry(code / 1_000_000)
            .or_default()
            .push(code % 1_000_000);
    }
    map
}

#[message]
pub struct Step {
    pub n: u64,
    pub reply_to: ActorRef<u64>,
}

/// Logs "s8d-mark <what>" when dropped.
pub struct LoggingGuard(pub &'static str);

impl Drop for LoggingGuard {
    fn drop(&mut self) {
        tracing::info!("s8d-mark {}", self.0);
    }
}
