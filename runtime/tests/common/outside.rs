//! What the outside-in sweeps share: the bound on every wait, two failures a handler
//! can return, and a log that actors write to and a test reads. Each sweep uses some
//! of it, so what one leaves unused is not a warning.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

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
