//! A state refuses what it does not handle and a restart starts over; a stashing state
//! replays at the switch (S34).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_cases::*;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, DeadLetter, DeadLetterReason};
use tokio::time::Instant;

// ---------------------------------------------------------------------------------
// State machines
// ---------------------------------------------------------------------------------

#[message]
pub struct Coin;

#[message]
pub struct Push;

#[message]
pub struct Jam;

#[message(reply = bool)]
pub struct IsOpen;

#[message(reply = u64)]
pub struct Passed;

#[derive(Clone)]
pub struct Gate {
    passed: u64,
}

#[actor(
    messages(Coin, Push, Jam, IsOpen, Passed),
    states(Locked => Unlocked, Unlocked => Locked)
)]
impl Gate {}

#[derive(Clone)]
pub struct Locked;

#[state(Gate)]
impl Locked {
    fn coin(self, _: Coin) -> Next<Self> {
        Next::to(Unlocked)
    }

    fn is_open(&mut self, _: IsOpen) -> bool {
        false
    }
}

#[derive(Clone)]
pub struct Unlocked;

#[state(Gate)]
impl Unlocked {
    fn push(self, gate: &mut Gate, _: Push) -> Next<Self> {
        gate.passed += 1;
        Next::to(Locked)
    }

    fn is_open(&mut self, _: IsOpen) -> bool {
        true
    }

    fn passed(&mut self, gate: &mut Gate, _: Passed) -> u64 {
        gate.passed
    }

    fn jam(&mut self, _: Jam) {
        panic!("jammed");
    }
}

// S34: a message the current state does not handle is refused by that state: a dead
// letter naming the state, an ask that fails at once; and a restart begins again in
// the initial state.
#[tapio::test(start_paused = true)]
async fn s34_state_refuses_and_restart_starts_over(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let gate = system
        .spawn(
            Behaviors::supervise(Machine::new(Gate { passed: 0 }, Locked))
                .on_failure::<Panicked>(SupervisorStrategy::restart()),
            "gate",
        )
        .unwrap();
    gate.tell(Push);
    letter_with(
        &mut letters,
        gate.path(),
        DeadLetterReason::NotHandledInState("Locked"),
    )
    .await;
    let started = Instant::now();
    let refused = gate.ask(Passed).timeout(T).await;
    assert!(
        matches!(
            refused,
            Err(AskError::NotHandled {
                state: "Locked",
                ..
            })
        ),
        "{refused:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "refused at once"
    );
    gate.tell(Coin);
    assert!(gate.ask(IsOpen).timeout(T).await.unwrap());
    gate.tell(Push);
    gate.tell(Coin);
    assert_eq!(gate.ask(Passed).timeout(T).await.unwrap(), 1);
    gate.tell(Jam);
    assert!(
        !gate.ask(IsOpen).timeout(T).await.unwrap(),
        "back to Locked"
    );
    gate.tell(Coin);
    assert_eq!(gate.ask(Passed).timeout(T).await.unwrap(), 0, "fresh data");
}

#[message]
pub struct Unlock;

#[message]
pub struct Lock;

#[message]
pub struct Enter(pub u64, pub ActorRef<u64>);

#[derive(Clone)]
pub struct Door;

#[actor(messages(Unlock, Lock, Enter), states(Closed => Opened, Opened => Closed))]
impl Door {}

#[derive(Clone)]
pub struct Closed;

#[state(Door, unhandled = stash)]
impl Closed {
    fn unlock(self, _: Unlock) -> Next<Self> {
        Next::to(Opened)
    }
}

#[derive(Clone)]
pub struct Opened;

#[state(Door)]
impl Opened {
    fn enter(&mut self, Enter(n, to): Enter) {
        to.tell(n);
    }

    fn lock(self, _: Lock) -> Next<Self> {
        Next::to(Closed)
    }
}

// S34 + S27: a state that stashes what it does not handle replays it, in order, at
// the next switch, ahead of what came after; a state that does not stash refuses.
#[tapio::test(start_paused = true)]
async fn s34_stashing_state_replays_at_the_switch(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let me = probe.actor_ref().clone();
    let door = system.spawn(Machine::new(Door, Closed), "door").unwrap();
    door.tell(Enter(1, me.clone()));
    door.tell(Enter(2, me.clone()));
    door.tell(Unlock);
    door.tell(Enter(3, me.clone()));
    assert_eq!(probe.receive_messages(3, T).await, [1, 2, 3]);
    door.tell(Unlock); // `Opened` does not handle it
    letter_with(
        &mut letters,
        door.path(),
        DeadLetterReason::NotHandledInState("Opened"),
    )
    .await;
    door.tell(Lock);
    door.tell(Enter(4, me.clone()));
    probe.expect_no_message(Duration::from_millis(50)).await;
    door.tell(Unlock);
    assert_eq!(probe.expect_message(T).await, 4);
}
