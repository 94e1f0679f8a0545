//! Messages and helpers for the modules that use remoting with the local features:
//! `Pong`, `Crash` and `Held`, receives until a channel closes, dead letters until
//! quiet, a reporting behavior, and the check that an ask was unanswered at once.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub use super::outside::{Boom, T as BOUND, letter_where, ms, recv_within, take};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio::testkit::{LeakReport, TestProbe, TwoNodes, two_nodes};
use tapio::wire::{RemoteProtocol, WireProblem};
use tapio::{
    AskError, BoxError, DeadLetter, DeadLetterReason, IntoBehavior, MailboxConfig, MailboxOverflow,
    OverflowStrategy, Subscription,
};
use tokio::sync::{Semaphore, mpsc};

#[message(remote = "sweep5.pong.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pong(pub u64);

#[message(remote = "sweep5.crash.v1")]
#[derive(Debug, Clone)]
pub struct Crash;

#[message]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    Item(u64),
    Open,
    Close,
    Crash,
}

// ---------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------

/// Everything `rx` yields until its senders are gone, within `within` in all.
pub async fn until_closed<T>(rx: &mut mpsc::UnboundedReceiver<T>, within: Duration) -> Vec<T> {
    let deadline = tokio::time::Instant::now() + within;
    let mut got = Vec::new();
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(item)) => got.push(item),
            Ok(None) => return got,
            Err(_) => panic!("the channel did not close within {within:?}"),
        }
    }
}

/// Every dead letter that arrives until none has for `quiet`.
pub async fn letters_until_quiet(
    letters: &mut Subscription<DeadLetter>,
    quiet: Duration,
) -> Vec<DeadLetter> {
    let mut got = Vec::new();
    while let Ok(Some(letter)) = tokio::time::timeout(quiet, letters.recv()).await {
        got.push(letter);
    }
    got
}

/// A behavior that reports each `Held::Item(n)` as `n`.
pub fn reporting(report: ActorRef<u64>) -> Behavior<Held> {
    Behaviors::receive_message(move |held: Held| {
        if let Held::Item(n) = held {
            report.tell(n);
        }
    })
    .into()
}

/// Asserts that an ask that began at `started` failed as `Unanswered`, and within a
/// second.
pub fn assert_unanswered_at_once<R: std::fmt::Debug>(
    asked: &Result<R, AskError>,
    started: Instant,
) {
    assert!(
        matches!(asked, Err(AskError::Unanswered { .. })),
        "{asked:?} after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

/// A message both the remote and the local scenarios of this group tell.
#[message(remote = "sweep5.note.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note(pub u64);

/// An actor that forwards every `Note` it gets to a channel.
pub fn note_sink(
    system: &ActorSystem,
    name: &str,
) -> (ActorRef<Note>, mpsc::UnboundedReceiver<u64>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let sink = system
        .spawn(
            Behaviors::receive_message(move |Note(n): Note| {
                let _ = tx.send(n);
            }),
            name,
        )
        .unwrap();
    (sink, rx)
}
