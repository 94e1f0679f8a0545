//! Helpers for the modules that combine bounded mailboxes, offers, stashes, adapters
//! and timers: a bounded mailbox config, the dead letters of a window, the check that
//! an ask failed at once, one poll of a future, draining a probe, a gated sink of
//! items, a loader whose dead letters are counted, and an owner with an adapter for a
//! foreign protocol.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub use super::outside::{Boom, T, eventually, letter_within};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, TestInbox, TestProbe};
use tapio::{
    AskError, DeadLetter, DeadLetterReason, MailboxConfig, MailboxOverflow, OverflowStrategy,
    StashOverflow, Subscription, TimerMode,
};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::{Instant, timeout};

// ---------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------

pub fn bounded(capacity: usize, overflow: OverflowStrategy) -> MailboxConfig {
    MailboxConfig::bounded(capacity, overflow).unwrap()
}

/// Every dead letter published within `within` from now.
pub async fn letters_within(
    letters: &mut Subscription<DeadLetter>,
    within: Duration,
) -> Vec<DeadLetter> {
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    while let Ok(Some(letter)) = tokio::time::timeout_at(deadline, letters.recv()).await {
        out.push(letter);
    }
    out
}

/// Asserts that an ask that began at `started` failed, within a second, with an
/// error for which `expected` holds.
pub fn assert_fails_at_once<R: std::fmt::Debug>(
    outcome: &Result<R, AskError>,
    started: Instant,
    expected: impl Fn(&AskError) -> bool,
) {
    assert!(
        matches!(outcome, Err(error) if expected(error)),
        "{outcome:?} after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

/// Poll a future once with a waker that does nothing.
pub fn poll_once<F: std::future::Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    std::pin::Pin::new(future).poll(&mut cx)
}

/// Drain what a probe receives until it has been quiet for `quiet`.
pub async fn drain<M: Message>(probe: &mut TestProbe<M>, quiet: Duration) -> Vec<M> {
    let mut out = Vec::new();
    while let Some(message) = probe.receive_message(quiet).await {
        out.push(message);
    }
    out
}

// ---------------------------------------------------------------------------------
// Bounded mailboxes and the stash (S26, S27, S29, S30)
// ---------------------------------------------------------------------------------

#[message]
pub enum Item {
    N(u64),
    Open,
}

/// After the replay: reports each number; on `block_on` reports `0` first and waits
/// for a permit of `gate`.
pub fn gated_items(report: ActorRef<u64>, gate: Arc<Semaphore>, block_on: u64) -> Behavior<Item> {
    Behaviors::receive_message_async(async move |item: Item| {
        if let Item::N(n) = item {
            if n == block_on {
                report.tell(0);
                gate.acquire().await.unwrap().forget();
            }
            report.tell(n);
        }
    })
    .into()
}

#[message]
pub enum Load {
    N(u64),
    Block,
    Open,
}

/// Stashes numbers; `Block` reports `0` and waits for `gate`; `Open` replays into a
/// handler that reports each number. Counts its setups.
pub fn loader(
    report: ActorRef<u64>,
    gate: Arc<Semaphore>,
    setups: Arc<AtomicUsize>,
) -> Behavior<Load> {
    Behaviors::with_stash(16, move |stash| {
        setups.fetch_add(1, Ordering::SeqCst);
        let (report, gate) = (report.clone(), gate.clone());
        Behaviors::receive_message_async(
            async move |load: Load| -> Result<Behavior<Load>, StashOverflow> {
                match load {
                    Load::N(n) => {
                        stash.stash(Load::N(n))?;
                        Ok(Behaviors::same())
                    }
                    Load::Block => {
                        report.tell(0);
                        gate.acquire().await.unwrap().forget();
                        Ok(Behaviors::same())
                    }
                    Load::Open => {
                        let report = report.clone();
                        Ok(
                            stash.unstash_all(Behaviors::receive_message(move |load: Load| {
                                if let Load::N(n) = load {
                                    report.tell(n);
                                }
                            })),
                        )
                    }
                }
            },
        )
    })
    .unwrap()
}

/// The number in a letter for a `Load`.
pub fn load_number(letter: &DeadLetter) -> u64 {
    match letter.take_message::<Load>() {
        Some(Load::N(n)) => n,
        Some(Load::Block) => 100,
        Some(Load::Open) => 200,
        None => panic!("a letter without its message: {letter}"),
    }
}

// ---------------------------------------------------------------------------------
// Bounded mailboxes with message adapters and timers (S24, S25, S28, S29, S30)
// ---------------------------------------------------------------------------------

#[message]
pub struct Foreign(pub u64);

#[message]
pub enum Own {
    Block,
    Direct(u64),
    Adapted(u64),
}

/// An owner that hands out an adapter of `Foreign` (through `adapters`) and reports
/// what it handles as `d{n}` / `a{n}`; `Block` reports `blocked` and waits for `gate`.
/// An [`adapter_owner`] on `system` named `name`, reporting to `probe` and blocking
/// on `gate`, and the adapter it handed out.
pub async fn spawn_adapter_owner(
    system: &ActorSystem,
    probe: &TestProbe<String>,
    gate: &Arc<Semaphore>,
    name: &str,
    mailbox: MailboxConfig,
) -> (ActorRef<Own>, ActorRef<Foreign>) {
    let (adapters_tx, mut adapters) = mpsc::unbounded_channel();
    let owner = system
        .spawn_with(
            adapter_owner(probe.actor_ref().clone(), gate.clone(), adapters_tx),
            name,
            mailbox,
        )
        .unwrap();
    let adapter = timeout(T, adapters.recv()).await.unwrap().unwrap();
    (owner, adapter)
}

pub fn adapter_owner(
    report: ActorRef<String>,
    gate: Arc<Semaphore>,
    adapters: mpsc::UnboundedSender<ActorRef<Foreign>>,
) -> Behavior<Own> {
    Behaviors::setup(move |ctx| {
        let adapter: ActorRef<Foreign> = ctx.message_adapter(|Foreign(n)| Own::Adapted(n));
        let _ = adapters.send(adapter);
        let (report, gate) = (report.clone(), gate.clone());
        Behaviors::receive_message_async(async move |own: Own| match own {
            Own::Block => {
                report.tell("blocked".to_owned());
                gate.acquire().await.unwrap().forget();
            }
            Own::Direct(n) => report.tell(format!("d{n}")),
            Own::Adapted(n) => report.tell(format!("a{n}")),
        })
    })
}
