//! Forwarding a request with its reply obligation (S52): from an `#[actor]` handler
//! (`Forward`), from a functional behavior (`ReplyTo::forward`) and from a state;
//! the forwarder is free at once, the other actor answers the asker directly, and
//! the ask fails at once when the new holder cannot take the request or stops
//! holding it (S23).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::support::outside::{Gate, T, recv_within};
use tapio::prelude::*;
use tapio::{AskError, Forward, MailboxConfig, NoReply, OverflowStrategy, ReplyTo};
use tokio::sync::mpsc;
use tokio::time::timeout;

/// An ask's deadline far beyond `T`: an ask that ends within `T` did not end at its
/// deadline.
const DEADLINE: Duration = Duration::from_secs(600);

#[message(reply = u64)]
pub struct Track(pub u64);

#[message(reply = &'static str)]
pub struct Ping;

/// Holds the group in its handler until the gate opens.
#[message]
pub struct Hold(pub Gate, pub mpsc::UnboundedSender<()>);

#[derive(Clone, Default)]
pub struct Group;

#[actor]
impl Group {
    fn track(&mut self, Track(n): Track) -> u64 {
        n * 10
    }

    fn hold(&mut self, Hold(gate, holding): Hold) {
        let _ = holding.send(());
        gate.pass();
    }
}

#[derive(Clone)]
pub struct Manager {
    group: ActorRef<GroupMsg>,
}

#[actor]
impl Manager {
    fn track(&mut self, request: Track) -> Forward<u64> {
        Forward::to(&self.group, request)
    }

    fn ping(&mut self, _: Ping) -> &'static str {
        "pong"
    }
}

/// A group held in a handler (its next messages queue), and the gate that frees it.
async fn held_group(system: &ActorSystem, mailbox: MailboxConfig) -> (ActorRef<GroupMsg>, Gate) {
    let group = system.spawn_with(Group, "group", mailbox).unwrap();
    let gate = Gate::new();
    let (holding_tx, mut holding) = mpsc::unbounded_channel();
    group.tell(Hold(gate.clone(), holding_tx));
    recv_within(&mut holding, T).await;
    (group, gate)
}

// S52: the manager forwards `Track` to the group and is free at once: while the
// group is held with the request queued, the manager answers a `Ping`; once the
// group is freed, it answers the asker of the manager directly.
#[tapio::test(worker_threads = 2)]
async fn s52_an_actor_handler_forwards_a_request_and_is_free_at_once(system: ActorSystem) {
    let (group, gate) = held_group(&system, MailboxConfig::unbounded()).await;
    let manager = system.spawn(Manager { group }, "manager").unwrap();
    let tracked = manager.ask(Track(4)).timeout(DEADLINE);
    let tracked = tokio::spawn(async move { timeout(T, tracked).await });
    assert_eq!(manager.ask(Ping).timeout(T).await.unwrap(), "pong");
    gate.open();
    assert_eq!(tracked.await.unwrap().expect("answered in time"), Ok(40));
}

/// A functional front's protocol, written by hand: a `Track` with its reply slot.
pub enum Front {
    Track(Track, ReplyTo<u64>),
}

impl Message for Front {
    type ReplySlot = NoReply;
}

impl Accepts<Track> for Front {
    fn wrap_with(message: Track, reply: ReplyTo<u64>) -> Self {
        Self::Track(message, reply)
    }
}

impl tapio::Answers<Track> for Front {}

// S52: a functional behavior forwards with `ReplyTo::forward`.
#[tapio::test]
async fn s52_a_functional_behavior_forwards_with_its_reply_slot(system: ActorSystem) {
    let group = system.spawn(Group, "group").unwrap();
    let front: ActorRef<Front> = system
        .spawn(
            Behaviors::receive_message(move |Front::Track(request, reply): Front| {
                reply.forward(&group, request);
            }),
            "front",
        )
        .unwrap();
    assert_eq!(front.ask(Track(7)).timeout(T).await.unwrap(), 70);
}

// S52 + S23: a request forwarded to an actor that has stopped fails its ask at once,
// as `TargetTerminated`.
#[tapio::test]
async fn s52_s23_a_request_forwarded_to_a_stopped_actor_fails_at_once(system: ActorSystem) {
    let group = system.spawn(Group, "group").unwrap();
    let mut probe = tapio::testkit::TestProbe::<u64>::new(&system);
    probe.watch(&group);
    system.stop(&group).unwrap();
    probe.expect_terminated(&group, T).await;
    let manager = system.spawn(Manager { group }, "manager").unwrap();
    let asked = timeout(T, manager.ask(Track(1)).timeout(DEADLINE))
        .await
        .expect("not at its deadline");
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
}

// S52 + S23: the group holds the forwarded request queued and is stopped: the ask
// fails at once, as `TargetTerminated`, though the manager it asked goes on.
#[tapio::test(worker_threads = 2)]
async fn s52_s23_the_new_holder_stopping_fails_the_ask_at_once(system: ActorSystem) {
    let (group, gate) = held_group(&system, MailboxConfig::unbounded()).await;
    let manager = system
        .spawn(
            Manager {
                group: group.clone(),
            },
            "manager",
        )
        .unwrap();
    let tracked = manager.ask(Track(2)).timeout(DEADLINE);
    let tracked = tokio::spawn(async move { timeout(T, tracked).await });
    // The request is queued at the group once the manager answers what came after.
    assert_eq!(manager.ask(Ping).timeout(T).await.unwrap(), "pong");
    system.stop(&group).unwrap();
    gate.open();
    let asked = tracked.await.unwrap().expect("not at its deadline");
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    assert_eq!(manager.ask(Ping).timeout(T).await.unwrap(), "pong");
}

// S52 + S54: a request forwarded into a full drop-new mailbox fails its ask at once,
// as `MailboxFull`.
#[tapio::test(worker_threads = 2)]
async fn s52_s54_a_request_forwarded_into_a_full_mailbox_fails_at_once(system: ActorSystem) {
    let bounded = MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap();
    let (group, gate) = held_group(&system, bounded).await;
    group.tell(Track(0));
    let manager = system.spawn(Manager { group }, "manager").unwrap();
    let asked = timeout(T, manager.ask(Track(3)).timeout(DEADLINE))
        .await
        .expect("not at its deadline");
    assert!(
        matches!(asked, Err(AskError::MailboxFull { .. })),
        "{asked:?}"
    );
    gate.open();
}

#[message]
pub struct Open;

pub struct Desk {
    group: ActorRef<GroupMsg>,
}

#[actor(messages(Track, Open), states(Closed => Opened, Opened))]
impl Desk {}

pub struct Closed;

#[state(Desk)]
impl Closed {
    fn open(self, _: Open) -> Next<Self> {
        Next::to(Opened)
    }
}

pub struct Opened;

#[state(Desk)]
impl Opened {
    // A staying handler forwards, and the machine stays in its state.
    fn track(&mut self, desk: &mut Desk, request: Track) -> Forward<u64> {
        Forward::to(&desk.group, request)
    }
}

// S52 + S34: a state's staying handler forwards a request; before the switch that
// reaches that state, the request is refused by the state it meets.
#[tapio::test]
async fn s52_s34_a_state_forwards_a_request(system: ActorSystem) {
    let group = system.spawn(Group, "group").unwrap();
    let desk = system
        .spawn(
            Behaviors::setup(move |_| {
                Machine::new(
                    Desk {
                        group: group.clone(),
                    },
                    Closed,
                )
            }),
            "desk",
        )
        .unwrap();
    let refused = desk.ask(Track(1)).timeout(T).await;
    assert!(
        matches!(
            refused,
            Err(AskError::NotHandled {
                state: "Closed",
                ..
            })
        ),
        "{refused:?}"
    );
    desk.tell(Open);
    assert_eq!(desk.ask(Track(5)).timeout(T).await.unwrap(), 50);
}
