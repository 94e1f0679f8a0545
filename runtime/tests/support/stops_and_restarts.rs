//! A holder actor with a gate and an adapter, a probe and its ref, a subscription to
//! every dead letter, and the number of runs of a looped case, for the modules on
//! features under stops, restarts and the testkit.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{
    Boom, Log, T, describe, entries, expect_lines, letters, letters_for, ms, new_log, next, push,
};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, LeakReport, Outcome, TestInbox, TestProbe};
use tapio::{
    AskError, DeadLetter, DeadLetterReason, Failure, MailboxConfig, OverflowStrategy, StashBuffer,
    StashOverflow, StateLost, TimerMode,
};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::{Instant, timeout};

// =================================================================================
// helpers
// =================================================================================

/// Tells `target` to `Hold` and waits for its "holding".
pub async fn hold(target: &ActorRef<Held>, probe: &mut TestProbe<String>) {
    target.tell(Held::Hold);
    assert_eq!(probe.expect_message(T).await, "holding");
}

/// A probe of strings on `system` and a clone of its ref, for a behavior to move.
pub fn probe_and_ref(system: &ActorSystem) -> (TestProbe<String>, ActorRef<String>) {
    let probe = TestProbe::<String>::new(system);
    let to = probe.actor_ref().clone();
    (probe, to)
}

/// Every dead letter on `system`, with room for all of a run's (65,536).
pub fn every_letter(system: &ActorSystem) -> tapio::Subscription<DeadLetter> {
    system
        .events()
        .subscribe_with_capacity::<DeadLetter>(65_536)
        .unwrap()
}

/// The protocol of a holder: `Hold` keeps it inside an `async` handler until the
/// test adds a permit to its gate; `N` reports `n {n}`; `Ask` answers `n * 10`.
#[message]
pub enum Held {
    Hold,
    N(u64),
    Ask(u64, ActorRef<u64>),
}

/// A foreign protocol that reaches a holder through an adapter.
#[message]
pub enum Foreign {
    Value(u64),
    Lookup(u64, ActorRef<u64>),
}

/// A holder that reports on `to`: "holding" when it takes `Hold`, "n {n}" for `N`.
/// Its gate is shared with the test. Its adapter goes out on `adapter_tx`.
pub fn holder(
    to: ActorRef<String>,
    gate: Arc<Semaphore>,
    adapter_tx: mpsc::UnboundedSender<ActorRef<Foreign>>,
) -> Behavior<Held> {
    Behaviors::setup(move |ctx: &mut ActorContext<Held>| {
        let adapter = ctx.message_adapter(|foreign: Foreign| match foreign {
            Foreign::Value(n) => Held::N(n),
            Foreign::Lookup(n, reply_to) => Held::Ask(n, reply_to),
        });
        let _ = adapter_tx.send(adapter);
        let (to, gate) = (to.clone(), gate.clone());
        Behaviors::receive_async(async move |_ctx, held: Held| match held {
            Held::Hold => {
                to.tell("holding".to_owned());
                if let Ok(permit) = gate.acquire().await {
                    permit.forget();
                }
            }
            Held::N(n) => to.tell(format!("n {n}")),
            Held::Ask(n, reply_to) => reply_to.tell(n * 10),
        })
    })
}

/// Whether an ask error is anything but a timeout.
pub fn not_a_timeout(error: &AskError) -> bool {
    !matches!(error, AskError::Timeout { .. })
}

// =================================================================================
// 9. Races on two workers (S5, S14, S15, S29, S30, S31, S32, S33)
// =================================================================================

pub const RUNS: usize = 20;
