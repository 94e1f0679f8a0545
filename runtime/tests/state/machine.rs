//! Protocols as state machines (S34): a message the current state has no handler for
//! is refused by that state (a dead letter naming it, and an ask that fails at once);
//! a state that stashes holds such messages until the next switch replays them; a
//! switching handler answers a request; entry and exit hooks run around a switch and
//! at start; a restart starts again from the initial state; a state lost to a panic
//! in a switching handler fails the actor rather than resuming silently.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::{letter_within, recv_within};
use std::time::Duration;

use tapio::prelude::*;
use tapio::{AskError, DeadLetter, DeadLetterReason, Subscription};
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(10);

#[message(reply = String)]
pub struct Status;

#[message]
pub struct Unlock {
    pub code: u32,
}

#[message]
pub struct Push(pub u64);

#[message]
pub struct Lock;

#[message(reply = u64)]
pub struct Count;

#[message]
pub struct Crash;

/// What every state shares: the hooks' log and what was pushed.
pub struct Door {
    log: mpsc::UnboundedSender<String>,
    pushed: u64,
}

impl Door {
    fn note(&self, line: &str) {
        let _ = self.log.send(line.to_owned());
    }
}

#[actor(
    helpers,
    messages(Status, Unlock, Push as push_by, Lock, Count, Crash),
    states(Locked => Unlocking, Unlocking => Open | Locked, Open => Locked)
)]
impl Door {}

pub struct Locked;

#[state(Door)]
impl Locked {
    #[on_entry]
    fn entered(&mut self, door: &mut Door) {
        door.note("enter Locked");
    }

    fn status(&mut self, _: Status) -> String {
        "locked".into()
    }

    async fn unlock(self, message: Unlock) -> Next<Self> {
        tokio::task::yield_now().await;
        Next::to(Unlocking { code: message.code })
    }

    fn crash(self, _: Crash) -> Next<Self> {
        panic!("crashed while holding the state")
    }
}

/// Checking the code: whatever else comes waits in the stash.
pub struct Unlocking {
    code: u32,
}

#[state(Door, unhandled = stash)]
impl Unlocking {
    fn status(self, _: Status) -> (String, Next<Self>) {
        if self.code == 42 {
            ("opening".into(), Next::to(Open))
        } else {
            ("wrong code".into(), Next::to(Locked))
        }
    }

    #[on_exit]
    fn left(door: &mut Door) {
        door.note("exit Unlocking");
    }
}

pub struct Open;

#[state(Door)]
impl Open {
    #[on_entry]
    fn entered(&mut self, door: &mut Door, ctx: &mut Ctx<Door>) {
        door.note(&format!("enter Open at {}", ctx.path().name()));
    }

    fn push(&mut self, door: &mut Door, message: Push) {
        door.pushed += message.0;
    }

    fn count(&mut self, door: &mut Door, _: Count) -> u64 {
        door.pushed
    }

    fn status(&mut self, _: Status) -> String {
        "open".into()
    }

    fn lock(self, _: Lock) -> Next<Self> {
        Next::to(Locked)
    }

    fn crash(&mut self, _: Crash) {
        panic!("crashed in a handler that stays")
    }
}

fn door(log: mpsc::UnboundedSender<String>) -> Behavior<DoorMsg> {
    Behaviors::setup(move |_ctx| {
        Machine::new(
            Door {
                log: log.clone(),
                pushed: 0,
            },
            Locked,
        )
    })
}

fn letters(system: &ActorSystem) -> Subscription<DeadLetter> {
    system.events().subscribe::<DeadLetter>()
}

// S34: a state that has no handler for a message refuses it: the dead letter names
// the state, and an ask fails at once with the state's name, not at its deadline.
#[tapio::test]
async fn s34_a_state_refuses_what_it_does_not_handle(system: ActorSystem) {
    let (log, mut notes) = mpsc::unbounded_channel();
    let mut letters = letters(&system);
    let door = system.spawn(door(log), "door").unwrap();
    assert_eq!(recv_within(&mut notes, WAIT).await, "enter Locked");
    door.tell(Push(1));
    let refused = letter_within(&mut letters, WAIT).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::NotHandledInState("Locked")
    );
    assert_eq!(refused.take_message::<Push>().map(|p| p.0), Some(1));
    let asked = door.ask(Count).timeout(Duration::from_secs(3600)).await;
    match asked {
        Err(AskError::NotHandled { state, target }) => {
            assert_eq!(state, "Locked");
            assert_eq!(target.name(), "door");
        }
        other => panic!("expected a refusal naming the state, got {other:?}"),
    }
    assert_eq!(door.ask(Status).await.unwrap(), "locked");
}

// S34: a state that stashes holds what it does not handle until the next switch,
// which replays it in order; a switching handler answers a request; the exit hook
// of the state left and the entry hook of the state entered run around the switch.
#[tapio::test]
async fn s34_a_stashing_state_replays_after_the_switch_it_answers(system: ActorSystem) {
    let (log, mut notes) = mpsc::unbounded_channel();
    let door = system.spawn(door(log), "door").unwrap();
    assert_eq!(recv_within(&mut notes, WAIT).await, "enter Locked");
    door.tell(Unlock { code: 42 });
    door.tell(Push(5));
    door.tell(Push(7));
    assert_eq!(door.ask(Status).await.unwrap(), "opening");
    assert_eq!(recv_within(&mut notes, WAIT).await, "exit Unlocking");
    assert_eq!(recv_within(&mut notes, WAIT).await, "enter Open at door");
    // A request's typed helper asks, as on any actor.
    assert_eq!(door.count().await.unwrap(), 12);
    door.push_by(1);
    assert_eq!(door.count().await.unwrap(), 13);
    door.tell(Lock);
    assert_eq!(recv_within(&mut notes, WAIT).await, "enter Locked");
    assert_eq!(door.ask(Status).await.unwrap(), "locked");
    // A wrong code goes back to `Locked`: a declared successor too.
    door.tell(Unlock { code: 7 });
    assert_eq!(door.ask(Status).await.unwrap(), "wrong code");
    assert_eq!(recv_within(&mut notes, WAIT).await, "exit Unlocking");
    assert_eq!(recv_within(&mut notes, WAIT).await, "enter Locked");
}

// S34: a restart starts again from the initial state, with fresh data.
#[tapio::test]
async fn s34_a_restart_starts_again_from_the_initial_state(system: ActorSystem) {
    let (log, mut notes) = mpsc::unbounded_channel();
    let supervised: Behavior<DoorMsg> = Behaviors::supervise(door(log))
        .on_failure::<Panicked>(SupervisorStrategy::restart())
        .into();
    let door = system.spawn(supervised, "door").unwrap();
    assert_eq!(recv_within(&mut notes, WAIT).await, "enter Locked");
    door.tell(Unlock { code: 42 });
    assert_eq!(door.ask(Status).await.unwrap(), "opening");
    door.tell(Push(3));
    assert_eq!(door.ask(Count).await.unwrap(), 3);
    door.tell(Crash);
    assert_eq!(door.ask(Status).await.unwrap(), "locked");
    let mut entered = Vec::new();
    while let Ok(line) = notes.try_recv() {
        entered.push(line);
    }
    assert_eq!(
        entered,
        ["exit Unlocking", "enter Open at door", "enter Locked"]
    );
}

// S34: a switching handler that panics while it holds the state leaves none; the
// actor, resumed, does not go on silently: the next message fails it, and an ask
// is refused at once.
#[tapio::test]
async fn s34_a_state_lost_in_a_switching_handler_fails_the_actor(system: ActorSystem) {
    let (log, mut notes) = mpsc::unbounded_channel();
    let supervised: Behavior<DoorMsg> = Behaviors::supervise(door(log))
        .on_failure::<Panicked>(SupervisorStrategy::resume())
        .into();
    let door = system.spawn(supervised, "door").unwrap();
    assert_eq!(recv_within(&mut notes, WAIT).await, "enter Locked");
    door.tell(Crash);
    match door.ask(Status).timeout(Duration::from_secs(3600)).await {
        Err(AskError::NotHandled { state, .. }) => assert_eq!(state, "vacant"),
        other => panic!("expected a refusal by the vacant state, got {other:?}"),
    }
}

// S34: the table is the graph: the constants the macro generates.
#[test]
fn s34_the_graph_is_generated_from_the_table() {
    assert_eq!(
        Door::STATE_GRAPH_MERMAID,
        "stateDiagram-v2\n    [*] --> Locked\n    Locked --> Unlocking\n    Unlocking --> Open\n    Unlocking --> Locked\n    Open --> Locked\n"
    );
    assert!(Door::STATE_GRAPH_DOT.starts_with("digraph Door {\n"));
    assert!(Door::STATE_GRAPH_DOT.contains("    Unlocking -> Open;\n"));
}
