//! A `PostStop` logger, and an `Account` actor with its messages, for the modules on
//! corners of the local runtime.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::common;
use crate::support::outside;
use outside::{
    Boom, Log, Other, T, describe, entries, expect_lines, letters_for, ms, new_log, no_letter_for,
    push,
};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::events::Received;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, LeakReport, TestConfig, TestProbe};
use tapio::{
    AskError, Backoff, BlockingError, BoxError, DeadLetter, DeadLetterReason, DeathPact, ReplyThen,
    SpawnError, StashBuffer, StashOverflow, TimerMode,
};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

// =================================================================================
// 6. Shutdown (S19, S48)
// =================================================================================

pub fn post_stop_logger(log: Log, name: &'static str) -> Behavior<u64> {
    Behaviors::receive_message(|_: u64| ())
        .on_signal(move |_ctx, signal| {
            if *signal == Signal::PostStop {
                push(&log, name);
            }
            Behaviors::same()
        })
        .into()
}

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Balance;

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Reset;

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Close;

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Withdraw(pub u64);

#[derive(Clone)]
pub struct Account {
    pub balance: u64,
    pub log: Log,
}

#[actor]
impl Account {
    fn balance(&mut self, _: Balance) -> u64 {
        self.balance
    }

    fn reset(&mut self, _: Reset) -> ReplyThen<u64, AccountMsg> {
        let fresh = Account {
            balance: 0,
            log: self.log.clone(),
        };
        ReplyThen::new(
            self.balance,
            Behaviors::setup(move |_ctx: &mut Ctx<Account>| fresh.clone()),
        )
    }

    fn withdraw(&mut self, Withdraw(amount): Withdraw) -> Result<ReplyThen<u64, AccountMsg>, Boom> {
        if amount > self.balance {
            return Err(Boom);
        }
        self.balance -= amount;
        Ok(ReplyThen::new(self.balance, Behaviors::same()))
    }

    async fn close(&mut self, _: Close) -> ReplyThen<u64, AccountMsg> {
        tokio::task::yield_now().await;
        ReplyThen::stop(self.balance)
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            push(&self.log, format!("post-stop at {}", self.balance));
        }
    }
}
