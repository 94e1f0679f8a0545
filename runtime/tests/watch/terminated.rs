//! Death watch (S18): `Terminated` exactly once, on the system lane, also for an actor
//! that had already stopped; unwatch; watching is not parenthood; and the Akka rule
//! for a watcher that does not handle `Terminated`.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;

const SECOND: Duration = Duration::from_secs(1);

#[message]
pub enum Watcher {
    Watch(ActorRef<u64>),
    Unwatch(ActorRef<u64>),
    Note(&'static str),
}

/// Watches and unwatches on command; logs each `Terminated` (with the path) and each
/// note, in the order it handles them.
fn watcher(log: ActorRef<String>) -> Behavior<Watcher> {
    let notes = log.clone();
    Behaviors::receive(move |ctx, command: Watcher| match command {
        Watcher::Watch(target) => ctx.watch(&target),
        Watcher::Unwatch(target) => ctx.unwatch(&target),
        Watcher::Note(text) => notes.tell(text.into()),
    })
    .on_signal(move |_, signal| {
        if let Signal::Terminated(end) = signal {
            log.tell(format!("terminated {}", end.actor().path()));
        }
    })
    .into()
}

fn stops_on_zero() -> Behavior<u64> {
    Behaviors::receive_message(|n: u64| {
        if n == 0 {
            Behaviors::stopped()
        } else {
            Behaviors::same()
        }
    })
    .into()
}

// S18: `Terminated` once per watch, even when watched twice.
#[tapio::test(start_paused = true)]
async fn terminated_arrives_exactly_once(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let watching = system
        .spawn(watcher(log.actor_ref().clone()), "watcher")
        .unwrap();
    let target = system.spawn(stops_on_zero(), "target").unwrap();
    watching.tell(Watcher::Watch(target.clone()));
    watching.tell(Watcher::Watch(target.clone()));
    watching.tell(Watcher::Note("watching"));
    assert_eq!(log.expect_message(SECOND).await, "watching");
    target.tell(0_u64);
    assert_eq!(log.expect_message(SECOND).await, "terminated /user/target");
    log.expect_no_message(SECOND).await;
}

// S18: watching an actor that has already stopped still delivers `Terminated`.
#[tapio::test(start_paused = true)]
async fn watching_a_stopped_actor_delivers_terminated(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let target = system.spawn(stops_on_zero(), "gone").unwrap();
    log.watch(&target);
    target.tell(0_u64);
    log.expect_terminated(&target, SECOND).await;
    let watching = system
        .spawn(watcher(log.actor_ref().clone()), "late")
        .unwrap();
    watching.tell(Watcher::Watch(target));
    assert_eq!(log.expect_message(SECOND).await, "terminated /user/gone");
}

/// A watcher whose first message takes a while (it waits for `gate`).
#[derive(Clone)]
struct Slow {
    log: ActorRef<String>,
}

/// An item to log; with a gate, the handler waits for it to open first; with a
/// target, the handler unwatches it before it returns.
#[message]
pub struct Item(
    pub &'static str,
    pub Option<tokio::sync::watch::Receiver<bool>>,
    pub Option<ActorRef<u64>>,
);

#[message]
pub struct Follow(pub ActorRef<u64>);

#[actor]
impl Slow {
    fn follow(&mut self, ctx: &mut Ctx<Self>, Follow(target): Follow) {
        ctx.watch(&target);
    }

    async fn item(&mut self, ctx: &mut Ctx<Self>, Item(name, gate, unwatch): Item) {
        if let Some(mut gate) = gate {
            let _ = gate.wait_for(|open| *open).await;
        }
        if let Some(target) = unwatch {
            ctx.unwatch(&target);
        }
        self.log.tell(name.into());
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        if let Signal::Terminated(end) = signal {
            self.log.tell(format!("terminated {}", end.actor().path()));
        }
    }
}

// S18: `Terminated` travels on the system lane, ahead of the user messages already
// queued: it is handled right after the handler in progress, before the queue.
#[tapio::test(start_paused = true)]
async fn terminated_overtakes_queued_messages(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let slow = system
        .spawn(
            Slow {
                log: log.actor_ref().clone(),
            },
            "slow",
        )
        .unwrap();
    let target = system.spawn(stops_on_zero(), "target").unwrap();
    let (open, gate) = tokio::sync::watch::channel(false);
    slow.tell(Follow(target.clone()));
    slow.tell(Item("first", Some(gate), None));
    slow.tell(Item("second", None, None));
    slow.tell(Item("third", None, None));
    // While `first` waits at the gate, the target stops.
    log.watch(&target);
    target.tell(0_u64);
    log.expect_terminated(&target, SECOND).await;
    open.send_replace(true);
    let lines = log.receive_messages(4, SECOND).await;
    assert_eq!(
        lines,
        ["first", "terminated /user/target", "second", "third"]
    );
}

// S18: after `unwatch`, no `Terminated` arrives, not even one already on its way: here
// the target's end is queued on the watcher's system lane while the handler that
// unwatches is still running.
#[tapio::test(start_paused = true)]
async fn unwatch_stops_a_terminated_already_on_its_way(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let slow = system
        .spawn(
            Slow {
                log: log.actor_ref().clone(),
            },
            "slow",
        )
        .unwrap();
    let target = system.spawn(stops_on_zero(), "target").unwrap();
    let (open, gate) = tokio::sync::watch::channel(false);
    slow.tell(Follow(target.clone()));
    slow.tell(Item("unwatched", Some(gate), Some(target.clone())));
    log.watch(&target);
    target.tell(0_u64);
    log.expect_terminated(&target, SECOND).await;
    open.send_replace(true);
    assert_eq!(log.expect_message(SECOND).await, "unwatched");
    log.expect_no_message(SECOND).await;
}

// S18, decided: a watcher that does not handle `Terminated` fails with `DeathPact`,
// as in Akka; without supervision that stops it. Watching is not parenthood: the
// watched actor's end reaches the watcher only through that signal.
#[tapio::test(start_paused = true)]
async fn an_unhandled_terminated_is_a_death_pact(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let target = system.spawn(stops_on_zero(), "target").unwrap();
    let pact = system
        .spawn(
            Behaviors::setup({
                let target = target.clone();
                move |ctx| {
                    ctx.watch(&target);
                    Behaviors::ignore::<u64>()
                }
            }),
            "pact",
        )
        .unwrap();
    let bystander = system.spawn(stops_on_zero(), "bystander").unwrap();
    probe.watch(&pact);
    probe.watch(&bystander);
    target.tell(0_u64);
    probe.expect_terminated(&pact, SECOND).await;
    probe.expect_no_termination(SECOND).await;
    bystander.tell(0_u64);
    probe.expect_terminated(&bystander, SECOND).await;
}

// The death pact is a failure of type `DeathPact`, so supervision can match it: here
// a clause that resumes keeps the watcher alive, where any other type would stop it.
#[tapio::test(start_paused = true)]
async fn a_death_pact_is_a_failure_supervision_can_match(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let target = system.spawn(stops_on_zero(), "target").unwrap();
    let to = probe.actor_ref().clone();
    let survivor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup({
                let target = target.clone();
                move |ctx| {
                    ctx.watch(&target);
                    let to = to.clone();
                    Behaviors::receive_message(move |n: u64| to.tell(n))
                }
            }))
            .on_failure::<tapio::DeathPact>(SupervisorStrategy::resume()),
            "survivor",
        )
        .unwrap();
    probe.watch(&survivor);
    target.tell(0_u64);
    probe.expect_no_termination(SECOND).await;
    survivor.tell(7_u64);
    assert_eq!(probe.expect_message(SECOND).await, 7);
}

// Watching is not parenthood: the watcher's own end leaves the watched actor alone.
#[tapio::test(start_paused = true)]
async fn a_watcher_stopping_leaves_the_watched_alone(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let answer = probe.actor_ref().clone();
    let target = system
        .spawn(
            Behaviors::receive_message(move |n: u64| answer.tell(n)),
            "target",
        )
        .unwrap();
    let watching = system
        .spawn(
            Behaviors::setup({
                let target = target.clone();
                move |ctx| {
                    ctx.watch(&target);
                    Behaviors::receive_message(|_: u64| Behaviors::stopped())
                }
            }),
            "watcher",
        )
        .unwrap();
    probe.watch(&watching);
    watching.tell(0_u64);
    probe.expect_terminated(&watching, SECOND).await;
    target.tell(7_u64);
    assert_eq!(probe.expect_message(SECOND).await, 7);
}
