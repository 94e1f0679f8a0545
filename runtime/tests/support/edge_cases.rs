//! Helpers for the modules that test the local promises at their edges: a gated sink
//! and its spawn behind a bounded mailbox, a gated setup, checks of a dead letter's
//! reason and message, a watcher that reports `Terminated` as text, and a chain of slow
//! `PostStop` handlers.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub use super::outside::{
    Boom, Log, T, dead_letter_for, entries, eventually, letter_within, new_log as log,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{
    AskError, DeadLetter, DeadLetterReason, InvalidNameReason, MailboxConfig, MailboxOverflow,
    OverflowStrategy, SpawnError, StashOverflow,
};
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("crash: a third test failure")]
pub struct Crash;

/// A sink that reports each number; on `block_on` it waits for a permit of `gate`
/// first (after reporting `0` to say it has started).
pub fn gated_sink(report: ActorRef<u64>, gate: Arc<Semaphore>, block_on: u64) -> Behavior<u64> {
    Behaviors::receive_message_async(async move |n: u64| {
        if n == block_on {
            report.tell(0);
            gate.acquire().await.unwrap().forget();
        }
        report.tell(n);
    })
    .into()
}

/// Spawns a `gated_sink` reporting to `probe`, named `name`, with a bounded mailbox.
pub fn spawn_gated(
    system: &ActorSystem,
    probe: &TestProbe<u64>,
    gate: &Arc<Semaphore>,
    block_on: u64,
    name: &str,
    mailbox: (usize, OverflowStrategy),
) -> ActorRef<u64> {
    system
        .spawn_with(
            gated_sink(probe.actor_ref().clone(), gate.clone(), block_on),
            name,
            MailboxConfig::bounded(mailbox.0, mailbox.1).unwrap(),
        )
        .unwrap()
}

/// A probe, a closed gate, and a `gated_sink` blocking on `1` that reports to them.
pub fn gated_setup(
    system: &ActorSystem,
    name: &str,
    mailbox: (usize, OverflowStrategy),
) -> (TestProbe<u64>, Arc<Semaphore>, ActorRef<u64>) {
    let probe = TestProbe::<u64>::new(system);
    let gate = Arc::new(Semaphore::new(0));
    let sink = spawn_gated(system, &probe, &gate, 1, name, mailbox);
    (probe, gate, sink)
}

/// The next dead letter meant for `recipient`, checked to have the `reason` given.
pub async fn letter_with(
    letters: &mut tapio::Subscription<DeadLetter>,
    recipient: &tapio::ActorPath,
    reason: DeadLetterReason,
) -> DeadLetter {
    let letter = dead_letter_for(letters, recipient).await;
    assert_eq!(letter.reason(), &reason, "{letter}");
    letter
}

/// Waits for a dead letter to `recipient` with `reason`, and checks it carries `message`.
pub async fn expect_dead_letter<M: Message + PartialEq + std::fmt::Debug>(
    letters: &mut tapio::Subscription<DeadLetter>,
    recipient: &tapio::ActorPath,
    reason: DeadLetterReason,
    message: M,
) {
    let letter = letter_with(letters, recipient, reason).await;
    assert_eq!(letter.take_message::<M>(), Some(message));
}

// ---------------------------------------------------------------------------------
// Watching and shutdown
// ---------------------------------------------------------------------------------

#[message]
pub enum Watcher {
    Watch(ActorRef<u64>),
    WatchTwice(ActorRef<u64>),
    Unwatch(ActorRef<u64>),
    Ping(ActorRef<String>),
}

pub fn watcher(report: ActorRef<String>) -> Behavior<Watcher> {
    Behaviors::receive(move |ctx, message: Watcher| {
        match message {
            Watcher::Watch(target) => ctx.watch(&target),
            Watcher::WatchTwice(target) => {
                ctx.watch(&target);
                ctx.watch(&target);
            }
            Watcher::Unwatch(target) => ctx.unwatch(&target),
            Watcher::Ping(to) => to.tell("pong".to_owned()),
        }
        Behaviors::same()
    })
    .on_signal(move |_, signal| {
        if let Signal::Terminated(end) = signal {
            report.tell(format!("terminated {}", end.actor().path().name()));
        }
        Behaviors::same()
    })
    .into()
}

pub struct Slow {
    pub name: &'static str,
    pub log: Log,
}

#[actor]
impl Slow {
    fn poke(&mut self, _: u64) {}

    #[signal]
    async fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            self.log
                .lock()
                .unwrap()
                .push(format!("begin {}", self.name));
            tokio::time::sleep(Duration::from_millis(400)).await;
            self.log.lock().unwrap().push(format!("end {}", self.name));
        }
    }
}

pub fn slow_chain(names: &'static [&'static str], log: Log) -> Behavior<SlowMsg> {
    Behaviors::setup(move |ctx| {
        if let [_, rest @ ..] = names
            && let Some(child) = rest.first()
        {
            ctx.spawn(slow_chain(rest, log.clone()), child).unwrap();
        }
        Slow {
            name: names[0],
            log: log.clone(),
        }
    })
}
