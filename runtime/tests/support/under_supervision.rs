//! The bound, the failure and the log of the modules on failures under supervision,
//! from `outside`.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub use super::outside::{Boom, Log, T, new_log as log, push};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, DeadLetter, DeadLetterReason};
use tokio::time::{Instant, timeout};
