//! What the outside-in sweeps share: the bound on every wait, two failures a handler
//! can return, a log that actors write to and a test reads, dead-letter
//! subscriptions and waits for the letters of one actor, and bounded receives. Each sweep uses some
//! of it, so what one leaves unused is not a warning.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{ActorPath, DeadLetter, Subscription};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The bound on every wait.
pub const T: Duration = Duration::from_secs(5);

/// `n` milliseconds.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A failure a handler returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("boom: a test failure")]
pub struct Boom;

/// Another failure, of another type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("other: another test failure")]
pub struct Other;

/// What actors did, in order.
pub type Log = Arc<Mutex<Vec<String>>>;

/// An empty log.
pub fn new_log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

/// Write `entry` to `log`.
pub fn push(log: &Log, entry: impl Into<String>) {
    log.lock().unwrap().push(entry.into());
}

/// What `log` holds now.
pub fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// A dead letter in a line: its message's type, its recipient and its reason.
pub fn describe(letter: &DeadLetter) -> String {
    format!(
        "{} to {} ({:?})",
        letter.short_message_type(),
        letter.recipient(),
        letter.reason()
    )
}

/// The next `n` dead letters addressed to `path` (others are skipped), all within `T`.
pub async fn letters_for(
    letters: &mut Subscription<DeadLetter>,
    path: &ActorPath,
    n: usize,
) -> Vec<DeadLetter> {
    let path = path.to_string();
    let deadline = Instant::now() + T;
    let mut got = Vec::new();
    while got.len() < n {
        match tokio::time::timeout_at(deadline, letters.recv()).await {
            Ok(Some(letter)) if letter.recipient().to_string() == path => got.push(letter),
            Ok(Some(_)) => {}
            Ok(None) => panic!("the event stream ended after {} of {n} letters", got.len()),
            Err(_) => panic!(
                "only {} of {n} dead letters for {path} came within {T:?}: {:?}",
                got.len(),
                got.iter().map(describe).collect::<Vec<_>>()
            ),
        }
    }
    got
}

/// Panics if a dead letter for `path` arrives within `quiet`.
pub async fn no_letter_for(
    letters: &mut Subscription<DeadLetter>,
    path: &ActorPath,
    quiet: Duration,
) {
    let path = path.to_string();
    let deadline = Instant::now() + quiet;
    loop {
        match tokio::time::timeout_at(deadline, letters.recv()).await {
            Ok(Some(letter)) if letter.recipient().to_string() == path => {
                panic!(
                    "an unexpected dead letter for {path}: {}",
                    describe(&letter)
                )
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => return,
        }
    }
}

/// A subscription to `system`'s dead letters, with room for a burst.
pub fn letters(system: &ActorSystem) -> Subscription<DeadLetter> {
    system
        .events()
        .subscribe_with_capacity::<DeadLetter>(65_536)
        .expect("a subscription")
}

/// Receive exactly the strings `expected`, in order, on `probe`.
pub async fn expect_lines(probe: &mut TestProbe<String>, expected: &[&str]) {
    let got = probe.receive_messages(expected.len(), T).await;
    assert_eq!(got, expected);
}

/// Receive from `rx` within `T`.
pub async fn next<M>(rx: &mut mpsc::UnboundedReceiver<M>) -> M {
    tokio::time::timeout(T, rx.recv())
        .await
        .expect("within the bound")
        .expect("the sender is alive")
}
