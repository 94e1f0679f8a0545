//! The bound on waits and the `Weather` message of the modules that try the guides as
//! written.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub use super::outside::letter_within;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tapio::events::{CapacityError, Received};
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, Outcome, TestInbox, TestKitError, TestProbe};
use tapio::{
    AskError, BoxError, DeadLetter, DeadLetterReason, DeathPact, Failure, StashOverflow,
    Subscription, TimerMode,
};
use tokio::sync::mpsc;

pub const WAIT: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------
// The event stream and dead letters (S49, S31)
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub struct Weather(pub u32);
