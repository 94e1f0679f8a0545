//! `async` functional behaviors: `Behaviors::receive_async` and
//! `receive_message_async`. A handler that awaits keeps its actor to itself (S4),
//! messages are handled in the order sent (S5), and the future answers with the next
//! behavior like any handler (S6); its errors go to supervision (S9).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::ms;
use std::time::Duration;

use tapio::BoxError;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, TestProbe};

const SECOND: Duration = Duration::from_secs(1);

#[message]
#[derive(Debug, PartialEq)]
pub enum Seen {
    Began(u64),
    Ended(u64),
    Other(u64),
}

/// Waits longer for earlier messages: without one-at-a-time handling, later ones
/// would end first.
fn slow(to: ActorRef<Seen>) -> Behavior<u64> {
    Behaviors::receive_async(async move |ctx, n: u64| {
        to.tell(Seen::Began(n));
        tokio::time::sleep(ms(100 / n)).await;
        // The context is still there after the await.
        assert_eq!(ctx.path().name(), "slow");
        to.tell(Seen::Ended(n));
    })
    .into()
}

// S4, S5: each future runs to its end before the next message is taken, in order.
#[tapio::test(start_paused = true)]
async fn an_async_handler_finishes_one_message_before_the_next(system: ActorSystem) {
    let mut probe = TestProbe::<Seen>::new(&system);
    let slow = system
        .spawn(slow(probe.actor_ref().clone()), "slow")
        .unwrap();
    for n in 1..=4 {
        slow.tell(n);
    }
    let seen = probe.receive_messages(8, SECOND).await;
    let expected: Vec<Seen> = (1..=4)
        .flat_map(|n| [Seen::Began(n), Seen::Ended(n)])
        .collect();
    assert_eq!(seen, expected);
}

#[message]
pub enum Gate {
    /// Wait for the answer of another actor, then report it.
    Lookup(u64),
    /// Switch to the other behavior.
    Switch,
    Stop,
}

/// Asks a doubling actor and waits for it inside the handler; `Switch` answers with
/// another behavior (synchronous, this time), `Stop` with `stopped`.
fn gate(doubler: ActorRef<Doubling>, to: ActorRef<Seen>) -> Behavior<Gate> {
    Behaviors::receive_async(async move |_ctx, gate: Gate| -> Result<_, BoxError> {
        Ok(match gate {
            Gate::Lookup(n) => {
                let doubled = doubler
                    .ask_with(|reply_to| Doubling { n, reply_to })
                    .timeout(SECOND)
                    .await?;
                to.tell(Seen::Ended(doubled));
                Behaviors::same()
            }
            Gate::Switch => {
                let to = to.clone();
                Behaviors::receive_message(move |gate: Gate| match gate {
                    Gate::Lookup(n) => {
                        to.tell(Seen::Other(n));
                        Behaviors::same()
                    }
                    Gate::Switch | Gate::Stop => Behaviors::stopped(),
                })
                .into()
            }
            Gate::Stop => Behaviors::stopped(),
        })
    })
    .into()
}

#[message]
pub struct Doubling {
    pub n: u64,
    pub reply_to: ActorRef<u64>,
}

fn doubler() -> Behavior<Doubling> {
    Behaviors::receive_message_async(async |doubling: Doubling| {
        tokio::task::yield_now().await;
        doubling.reply_to.tell(doubling.n * 2);
    })
    .into()
}

/// A gate in front of a doubler, and a probe that hears the gate and watches it.
fn watched_gate(system: &ActorSystem) -> (TestProbe<Seen>, ActorRef<Gate>) {
    let probe = TestProbe::<Seen>::new(system);
    let doubler = system.spawn(doubler(), "doubler").unwrap();
    let gate = system
        .spawn(gate(doubler, probe.actor_ref().clone()), "gate")
        .unwrap();
    probe.watch(&gate);
    (probe, gate)
}

// S6: an async handler answers with the next behavior, after awaiting an ask.
#[tapio::test]
async fn an_async_handler_awaits_an_ask_and_switches_behavior(system: ActorSystem) {
    let (mut probe, gate) = watched_gate(&system);
    gate.tell(Gate::Lookup(2));
    gate.tell(Gate::Lookup(5));
    gate.tell(Gate::Switch);
    gate.tell(Gate::Lookup(7));
    assert_eq!(probe.expect_message(SECOND).await, Seen::Ended(4));
    assert_eq!(probe.expect_message(SECOND).await, Seen::Ended(10));
    assert_eq!(probe.expect_message(SECOND).await, Seen::Other(7));
    gate.tell(Gate::Stop);
    probe.expect_terminated(&gate, SECOND).await;
}

// S6: `stopped` from the future stops the actor; what was queued behind it is not
// handled.
#[tapio::test]
async fn an_async_handler_can_stop_its_actor(system: ActorSystem) {
    let (mut probe, gate) = watched_gate(&system);
    gate.tell(Gate::Stop);
    gate.tell(Gate::Lookup(1));
    probe.expect_terminated(&gate, SECOND).await;
    probe.expect_no_message(ms(50)).await;
}

// S9, S11: an error from the future is a failure under the behavior's supervision;
// a restart builds the behavior again.
#[tapio::test]
async fn an_error_from_an_async_handler_goes_to_supervision(system: ActorSystem) {
    let mut probe = TestProbe::<Seen>::new(&system);
    let to = probe.actor_ref().clone();
    let flaky: Behavior<u64> = Behaviors::supervise(Behaviors::setup(move |_| {
        to.tell(Seen::Began(0));
        let to = to.clone();
        Behaviors::receive_async(async move |_ctx, n: u64| {
            tokio::task::yield_now().await;
            if n == 0 {
                return Err(std::io::Error::other("zero"));
            }
            to.tell(Seen::Ended(n));
            Ok(())
        })
    }))
    .on_failure::<std::io::Error>(SupervisorStrategy::restart())
    .into();
    let flaky = system.spawn(flaky, "flaky").unwrap();
    assert_eq!(probe.expect_message(SECOND).await, Seen::Began(0));
    flaky.tell(0);
    flaky.tell(3);
    assert_eq!(probe.expect_message(SECOND).await, Seen::Began(0));
    assert_eq!(probe.expect_message(SECOND).await, Seen::Ended(3));
}

// The synchronous test kit runs an async functional handler too.
#[tokio::test]
async fn the_behavior_test_kit_runs_an_async_handler() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let behavior: Behavior<u64> = Behaviors::receive_message_async(async move |n: u64| {
        tokio::task::yield_now().await;
        let _ = tx.send(n);
        if n == 0 {
            Behaviors::stopped()
        } else {
            Behaviors::same()
        }
    })
    .into();
    let mut kit = BehaviorTestKit::new(behavior);
    kit.run_async(5_u64).await.unwrap();
    assert_eq!(rx.try_recv().ok(), Some(5));
    kit.run_async(0_u64).await.unwrap();
    assert!(!kit.is_alive());
}
