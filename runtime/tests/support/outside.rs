//! The basics most test modules share: the bound on every wait, two failures a
//! handler can return, a log that actors write to and a test reads, dead-letter
//! subscriptions and bounded waits for dead letters, and bounded receives from a
//! channel. Each binary uses some of it, so what one leaves unused is not a warning.
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

/// Wait (in bounded time, virtual where the clock is paused) until `done` holds.
pub async fn eventually(mut done: impl FnMut() -> bool) {
    tokio::time::timeout(T, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("the condition came true in time");
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

/// The next dead letter, within `bound`.
pub async fn letter_within(letters: &mut Subscription<DeadLetter>, bound: Duration) -> DeadLetter {
    tokio::time::timeout(bound, letters.recv())
        .await
        .expect("a dead letter in time")
        .expect("the event stream is open")
}

/// The next dead letter that satisfies `wanted`, within `within` (others are skipped).
pub async fn letter_where(
    letters: &mut Subscription<DeadLetter>,
    within: Duration,
    mut wanted: impl FnMut(&DeadLetter) -> bool,
) -> DeadLetter {
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    loop {
        match tokio::time::timeout_at(deadline, letters.recv()).await {
            Ok(Some(letter)) if wanted(&letter) => return letter,
            Ok(Some(letter)) => seen.push(describe(&letter)),
            Ok(None) => panic!("the event stream closed; letters seen: {seen:?}"),
            Err(_) => panic!("no matching dead letter within {within:?}; letters seen: {seen:?}"),
        }
    }
}

/// The next dead letter addressed to `recipient` (others are skipped), each within `T`.
pub async fn dead_letter_for(
    letters: &mut Subscription<DeadLetter>,
    recipient: &ActorPath,
) -> DeadLetter {
    loop {
        let letter = letter_within(letters, T).await;
        if letter.recipient() == recipient {
            return letter;
        }
    }
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

/// Receive from `rx` within `within`.
pub async fn recv_within<M>(rx: &mut mpsc::UnboundedReceiver<M>, within: Duration) -> M {
    tokio::time::timeout(within, rx.recv())
        .await
        .expect("nothing arrived in time")
        .expect("the channel closed")
}

/// Panics if anything arrives on `rx` within `within` (a closed channel counts as
/// nothing: its sender's actor stopped).
pub async fn nothing_within<M: std::fmt::Debug>(
    rx: &mut mpsc::UnboundedReceiver<M>,
    within: Duration,
) {
    if let Ok(Some(got)) = tokio::time::timeout(within, rx.recv()).await {
        panic!("expected nothing, got {got:?}");
    }
}

/// Read `count` values from `rx`, each within `T`.
pub async fn take<M>(rx: &mut mpsc::UnboundedReceiver<M>, count: usize) -> Vec<M> {
    let mut got = Vec::with_capacity(count);
    for _ in 0..count {
        got.push(recv_within(rx, T).await);
    }
    got
}

/// The text of a panic payload.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "<not text>".into())
}

/// Longer than any clamp a runtime or tokio applies to a deadline.
pub const TWO_CENTURIES: Duration = Duration::from_secs(200 * 365 * 24 * 3600);

/// Let two centuries of paused time pass: past tokio's thirty years for a sleep this
/// long, and past the century a deadline that did not fit the clock once stood for.
/// `sleep_until`, as `tokio::time::sleep` stops at thirty years.
pub async fn pass_two_centuries() {
    let start = Instant::now();
    tokio::time::sleep_until(start + TWO_CENTURIES).await;
    assert!(start.elapsed() >= TWO_CENTURIES, "{:?}", start.elapsed());
}

/// A gate a synchronous handler waits at, on its worker (so its test runs on two at
/// least), at most `T`: it passes once for each `open`.
#[derive(Clone)]
pub struct Gate {
    opened: std::sync::mpsc::Sender<()>,
    wait: std::sync::Arc<std::sync::Mutex<std::sync::mpsc::Receiver<()>>>,
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl Gate {
    pub fn new() -> Self {
        let (opened, wait) = std::sync::mpsc::channel();
        Self {
            opened,
            wait: std::sync::Arc::new(std::sync::Mutex::new(wait)),
        }
    }

    pub fn open(&self) {
        self.opened.send(()).unwrap();
    }

    pub fn pass(&self) {
        self.wait
            .lock()
            .unwrap()
            .recv_timeout(T)
            .expect("the gate opens in time");
    }
}
