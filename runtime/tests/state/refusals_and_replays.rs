//! State machines and the kit's replay as the guides show them: refusals, restarts back
//! to the initial state, stashing states replaying and overflowing, and replays going
//! ahead of what the unstashing handler sent (S27, S34).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::guide_claims::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Outcome, TestInbox, TestProbe};
use tapio::{AskError, BoxError, DeadLetter, DeadLetterReason, StashOverflow};

#[derive(Debug, thiserror::Error)]
#[error("refused on purpose: {0}")]
pub struct Refused(u64);

// S48, S27: in the kit, a replayed message that fails returns its failure; the
// message `run` was given waits after the rest of the replay, for `run_queued`.
#[test]
fn s27_kit_replay_failure_keeps_the_rest_in_order() {
    let mut seen = TestInbox::<u64>::new();
    let to = seen.actor_ref().clone();
    let gate = Behaviors::with_stash(4, move |stash| {
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, BoxError> {
            if n == 0 {
                let to = to.clone();
                return Ok(stash.unstash_all(Behaviors::receive_message(
                    move |n: u64| -> Result<(), Refused> {
                        if n == 13 {
                            return Err(Refused(n));
                        }
                        to.tell(n);
                        Ok(())
                    },
                )));
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap();
    let mut kit = BehaviorTestKit::new(gate);
    for n in [1_u64, 13, 2] {
        assert_eq!(kit.run(n), Ok(Outcome::Same));
    }
    assert_eq!(kit.run(0_u64), Ok(Outcome::Switched));
    let failed = kit.run(99_u64).unwrap_err();
    assert!(failed.is::<Refused>(), "{failed}");
    assert_eq!(kit.run_queued(), Ok(2));
    assert_eq!(seen.messages(), [1, 2, 99]);
}

// ---------------------------------------------------------------------------------
// Protocols as state machines (S34)
// ---------------------------------------------------------------------------------

#[message]
pub struct Lift;

#[message]
pub struct Lower;

#[message(reply = u64)]
pub struct Pass;

#[message(reply = &'static str)]
pub struct Peek;

#[message]
pub struct Jam;

pub struct Gate {
    passed: u64,
}

#[actor(
    messages(Lift, Lower, Pass, Peek, Jam),
    states(Closed => Opened, Opened => Closed)
)]
impl Gate {}

pub struct Closed;

#[state(Gate)]
impl Closed {
    fn lift(self, _: Lift) -> Next<Self> {
        Next::to(Opened)
    }

    fn peek(&mut self, _: Peek) -> &'static str {
        "closed"
    }
}

pub struct Opened;

#[state(Gate)]
impl Opened {
    fn pass(&mut self, gate: &mut Gate, _: Pass) -> u64 {
        gate.passed += 1;
        gate.passed
    }

    fn peek(&mut self, _: Peek) -> &'static str {
        "opened"
    }

    fn lower(self, _: Lower) -> Next<Self> {
        Next::to(Closed)
    }

    fn jam(&mut self, _: Jam) {
        panic!("jammed open")
    }
}

fn gate(setups: Arc<AtomicUsize>) -> Behavior<GateMsg> {
    Behaviors::setup(move |_ctx| {
        setups.fetch_add(1, Ordering::SeqCst);
        Machine::new(Gate { passed: 0 }, Closed)
    })
}

// S34: a request the current state does not handle fails the ask at once (no waiting
// for the deadline) with the state's name; a tell of it is a dead letter naming the
// state, with the message; after a switch the same request is answered.
#[tapio::test(start_paused = true)]
async fn s34_a_state_refuses_asks_and_tells_it_does_not_handle(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let gate = system.spawn(gate(Arc::default()), "gate").unwrap();
    let started = tokio::time::Instant::now();
    match gate.ask(Pass).timeout(Duration::from_secs(3600)).await {
        Err(refused @ AskError::NotHandled { state, .. }) => {
            assert_eq!(state, "Closed");
            assert!(
                refused
                    .to_string()
                    .contains("refused the request in its state `Closed`"),
                "{refused}"
            );
        }
        other => panic!("expected a refusal by `Closed`, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(1));
    let refused_ask = letter_within(&mut letters, WAIT).await;
    assert_eq!(
        refused_ask.reason(),
        &DeadLetterReason::NotHandledInState("Closed")
    );

    gate.tell(Lower);
    let refused = letter_within(&mut letters, WAIT).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::NotHandledInState("Closed")
    );
    assert_eq!(refused.recipient().name(), "gate");
    assert!(refused.take_message::<Lower>().is_some());

    gate.tell(Lift);
    assert_eq!(gate.ask(Peek).await.unwrap(), "opened");
    assert_eq!(gate.ask(Pass).await.unwrap(), 1);
    gate.tell(Lift);
    let again = letter_within(&mut letters, WAIT).await;
    assert_eq!(
        again.reason(),
        &DeadLetterReason::NotHandledInState("Opened")
    );
}

// S34, S7: a restart runs the setup again and starts from the initial state with
// fresh data.
#[tapio::test(start_paused = true)]
async fn s34_a_restart_returns_to_the_initial_state(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let supervised: Behavior<GateMsg> = Behaviors::supervise(gate(setups.clone()))
        .on_failure::<Panicked>(SupervisorStrategy::restart())
        .into();
    let gate = system.spawn(supervised, "gate").unwrap();
    gate.tell(Lift);
    assert_eq!(gate.ask(Pass).await.unwrap(), 1);
    assert_eq!(gate.ask(Pass).await.unwrap(), 2);
    gate.tell(Jam);
    assert_eq!(gate.ask(Peek).await.unwrap(), "closed");
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    gate.tell(Lift);
    assert_eq!(
        gate.ask(Pass).await.unwrap(),
        1,
        "fresh data after a restart"
    );
}

#[message]
pub struct Fill(pub u64);

#[message]
pub struct Go;

pub struct Tank {
    out: ActorRef<u64>,
}

#[actor(stash_capacity = 2, messages(Fill, Go), states(Waiting => Going, Going))]
impl Tank {}

pub struct Waiting;

#[state(Tank, unhandled = stash)]
impl Waiting {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Going)
    }
}

pub struct Going;

#[state(Tank)]
impl Going {
    fn fill(&mut self, tank: &mut Tank, Fill(n): Fill) {
        tank.out.tell(n);
    }
}

fn tank(out: ActorRef<u64>) -> Behavior<TankMsg> {
    Behaviors::setup(move |_ctx| Machine::new(Tank { out: out.clone() }, Waiting))
}

// S34, S27: a stashing state holds what it does not handle and the switch replays it
// in arrival order, ahead of what comes after.
#[tapio::test(start_paused = true)]
async fn s34_a_stashing_state_replays_in_order(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let tank = system
        .spawn(tank(probe.actor_ref().clone()), "tank")
        .unwrap();
    tank.tell(Fill(1));
    tank.tell(Fill(2));
    tank.tell(Go);
    tank.tell(Fill(3));
    assert_eq!(probe.receive_messages(3, WAIT).await, [1, 2, 3]);
}

// S34, S26: a stashing state's stash is bounded by `stash_capacity`: one more fails
// the actor with `StashOverflow` (stopping it, by default) and the message that did
// not fit is a dead letter saying so.
#[tapio::test(start_paused = true)]
async fn s34_a_stashing_state_overflows_into_a_failure(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let tank = system
        .spawn(tank(probe.actor_ref().clone()), "tank")
        .unwrap();
    probe.watch(&tank);
    for n in 1..=3 {
        tank.tell(Fill(n));
    }
    let full = letter_within(&mut letters, WAIT).await;
    assert_eq!(full.reason(), &DeadLetterReason::StashFull);
    // The letter holds the message as it was told, not the protocol enum.
    assert_eq!(full.take_message::<Fill>().map(|Fill(n)| n), Some(3));
    probe.expect_terminated(&tank, WAIT).await;
    probe.expect_no_message(Duration::from_millis(10)).await;
}

// S27, S48: the replay goes ahead of what the unstashing handler told its own actor
// while it ran, in the kit as in a running actor.
#[test]
fn s27_kit_replay_goes_ahead_of_what_the_unstashing_handler_sent() {
    let mut seen = TestInbox::<u64>::new();
    let to = seen.actor_ref().clone();
    let gate = Behaviors::with_stash(4, move |stash| {
        let to = to.clone();
        Behaviors::receive(move |ctx, n: u64| -> Result<Behavior<u64>, StashOverflow> {
            if n == 0 {
                ctx.self_ref().tell(50_u64);
                let to = to.clone();
                return Ok(stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                    to.tell(n);
                })));
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap();
    let mut kit = BehaviorTestKit::new(gate);
    kit.run(1_u64).unwrap();
    kit.run(2_u64).unwrap();
    assert_eq!(kit.run(0_u64), Ok(Outcome::Switched));
    assert_eq!(kit.run_queued(), Ok(3));
    assert_eq!(seen.messages(), [1, 2, 50]);
}
