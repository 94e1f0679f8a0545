//! The stash (S26, S27): a required capacity, and overflow as the stashing actor's
//! failure under its supervision; `unstash_all` replaying at the front of the
//! mailbox, in arrival order, ahead of traffic from several producers that arrived
//! meanwhile; a stop during a replay honoured, with the rest dead-lettered; a
//! restart turning the stash into dead letters; stashed asks answered; stashing in
//! an `async` handler and in a struct actor; and the `BehaviorTestKit` running a
//! stash as a live actor does.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::{letter_within, recv_within};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Outcome, TestProbe};
use tapio::{
    BoxError, DeadLetter, DeadLetterReason, InvalidStash, StashBuffer, StashOverflow, Subscription,
};
use tokio::sync::{Semaphore, mpsc};

const WAIT: Duration = Duration::from_secs(10);

#[message]
#[derive(Debug, Clone, PartialEq)]
pub enum Cmd {
    /// Stashed while holding; handled once ready.
    Item(u64),
    /// Ready now: unstash.
    Open,
    /// Fail with `Boom`.
    Fail,
}

/// What the actors under test report, in the order they do it.
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    Started(u32),
    Stashed(u64),
    Opened { held: usize },
    Handling(u64),
    Handled(u64),
}

type Reports = mpsc::UnboundedSender<Report>;

#[derive(Debug, thiserror::Error)]
#[error("boom")]
pub struct Boom;

/// Holds every item until `Open`, then replays them into `ready`.
fn holding(stash: StashBuffer<Cmd>, report: Reports, ready: Behavior<Cmd>) -> Behavior<Cmd> {
    Behaviors::receive_message(move |cmd: Cmd| -> Result<Behavior<Cmd>, BoxError> {
        match cmd {
            Cmd::Item(n) => {
                stash.stash(Cmd::Item(n))?;
                let _ = report.send(Report::Stashed(n));
                Ok(Behaviors::same())
            }
            Cmd::Open => {
                let _ = report.send(Report::Opened { held: stash.len() });
                Ok(stash.unstash_all(ready.clone()))
            }
            Cmd::Fail => Err(Boom.into()),
        }
    })
    .into()
}

/// Reports each item it handles.
fn ready(report: Reports) -> Behavior<Cmd> {
    Behaviors::receive_message(move |cmd: Cmd| match cmd {
        Cmd::Item(n) => {
            let _ = report.send(Report::Handled(n));
            Ok(())
        }
        Cmd::Open => Ok(()),
        Cmd::Fail => Err(Boom),
    })
    .into()
}

/// A stash of `capacity` that holds items until `Open`, then replays them into
/// `then`; reports each start (1, 2, ...).
fn holder(capacity: usize, report: Reports, then: Behavior<Cmd>) -> Behavior<Cmd> {
    let starts = Arc::new(AtomicU32::new(0));
    Behaviors::with_stash(capacity, move |stash| {
        let start = starts.fetch_add(1, Ordering::SeqCst) + 1;
        let _ = report.send(Report::Started(start));
        holding(stash, report.clone(), then.clone())
    })
    .unwrap()
}

async fn expect(reports: &mut mpsc::UnboundedReceiver<Report>, expected: &[Report]) {
    for report in expected {
        assert_eq!(&recv_within(reports, WAIT).await, report);
    }
}

fn letters(system: &ActorSystem) -> Subscription<DeadLetter> {
    system
        .events()
        .subscribe_with_capacity::<DeadLetter>(100_000)
        .unwrap()
}

/// Each letter as (its item, its reason); the letters must all carry a `Cmd`.
fn items(letters: &[DeadLetter]) -> Vec<(Cmd, DeadLetterReason)> {
    letters
        .iter()
        .map(|letter| {
            let cmd = letter.take_message::<Cmd>().expect("a Cmd in the letter");
            (cmd, letter.reason().clone())
        })
        .collect()
}

/// Every letter published so far. Letters are published in the actor's task before
/// it tells its watchers it has ended, so once a probe has seen the end, this is all
/// of them.
fn all_published(letters: &mut Subscription<DeadLetter>) -> Vec<DeadLetter> {
    std::iter::from_fn(|| letters.try_recv()).collect()
}

// S26: a stash has a required capacity: 0 is refused when the behavior is built, with
// what to do instead.
#[test]
fn s26_a_stash_of_no_room_is_refused_when_built() {
    let error = Behaviors::with_stash(0, |_: StashBuffer<u64>| Behaviors::ignore()).unwrap_err();
    assert_eq!(error, InvalidStash::ZeroCapacity);
    assert!(error.to_string().contains("at least 1"), "{error}");
    assert!(Behaviors::with_stash(1, |_: StashBuffer<u64>| Behaviors::ignore()).is_ok());
}

// S26: stashing into a full stash fails the actor; unsupervised, it stops. The
// message that did not fit is a `StashFull` dead letter, and what the stash held
// goes with the stopped actor (`RecipientStopped`): exactly three letters.
#[tapio::test]
async fn s26_overflow_fails_the_actor_and_unsupervised_it_stops(system: ActorSystem) {
    let mut letters = letters(&system);
    let (report, mut reports) = mpsc::unbounded_channel();
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(holder(2, report.clone(), ready(report)), "holder")
        .unwrap();
    probe.watch(&actor);
    for n in 1..=3 {
        actor.tell(Cmd::Item(n));
    }
    expect(
        &mut reports,
        &[Report::Started(1), Report::Stashed(1), Report::Stashed(2)],
    )
    .await;
    probe.expect_terminated(&actor, WAIT).await;
    let published = items(&all_published(&mut letters));
    assert_eq!(
        published,
        [
            (Cmd::Item(3), DeadLetterReason::StashFull),
            (Cmd::Item(1), DeadLetterReason::RecipientStopped),
            (Cmd::Item(2), DeadLetterReason::RecipientStopped),
        ]
    );
}

// S26: under a supervision that restarts on `StashOverflow`, the overflow restarts
// the actor: the message that did not fit is `StashFull`, what the stash held is
// `StashDiscarded`, and the new incarnation starts with an empty stash.
#[tapio::test]
async fn s26_overflow_under_a_restart_strategy_restarts_with_an_empty_stash(system: ActorSystem) {
    let mut letters = letters(&system);
    let (report, mut reports) = mpsc::unbounded_channel();
    let behavior = Behaviors::supervise(holder(2, report.clone(), ready(report)))
        .on_failure::<StashOverflow>(SupervisorStrategy::restart());
    let actor = system.spawn(behavior, "holder").unwrap();
    for n in 1..=3 {
        actor.tell(Cmd::Item(n));
    }
    expect(
        &mut reports,
        &[
            Report::Started(1),
            Report::Stashed(1),
            Report::Stashed(2),
            Report::Started(2),
        ],
    )
    .await;
    let mut published = Vec::new();
    for _ in 0..3 {
        published.push(letter_within(&mut letters, WAIT).await);
    }
    assert_eq!(
        items(&published),
        [
            (Cmd::Item(3), DeadLetterReason::StashFull),
            (Cmd::Item(1), DeadLetterReason::StashDiscarded),
            (Cmd::Item(2), DeadLetterReason::StashDiscarded),
        ]
    );
    // The new incarnation holds only what came after the restart.
    actor.tell(Cmd::Item(4));
    actor.tell(Cmd::Open);
    expect(
        &mut reports,
        &[
            Report::Stashed(4),
            Report::Opened { held: 1 },
            Report::Handled(4),
        ],
    )
    .await;
    assert!(letters.try_recv().is_none(), "no other dead letter");
}

// S27: several producers on two workers keep telling while the actor unstashes. The
// replayed messages come first, in the order they arrived, ahead of everything that
// arrived meanwhile; every message is handled exactly once, and each producer's
// messages stay in the order it sent them.
#[tapio::test(worker_threads = 2)]
async fn s27_the_replay_precedes_newer_traffic_from_several_producers(system: ActorSystem) {
    const PRODUCERS: u64 = 4;
    const AFTER_OPEN: u64 = 2_000;
    let (report, mut reports) = mpsc::unbounded_channel();
    let actor = system
        .spawn(holder(10_000_000, report.clone(), ready(report)), "holder")
        .unwrap();
    assert_eq!(recv_within(&mut reports, WAIT).await, Report::Started(1));
    let opened = Arc::new(AtomicBool::new(false));
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|producer| {
            let (actor, opened) = (actor.clone(), opened.clone());
            tokio::spawn(async move {
                // Tell until the actor has begun to unstash, then as many again.
                let mut sent = 0;
                let mut after = 0;
                while after < AFTER_OPEN {
                    actor.tell(Cmd::Item(producer << 32 | sent));
                    sent += 1;
                    if opened.load(Ordering::SeqCst) {
                        after += 1;
                    }
                    if sent % 64 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
                sent
            })
        })
        .collect();
    // Let a backlog build up in the stash, then open while the producers go on.
    let mut stashed = Vec::new();
    while stashed.len() < 1_000 {
        match recv_within(&mut reports, WAIT).await {
            Report::Stashed(n) => stashed.push(n),
            other => panic!("expected a stashed item, got {other:?}"),
        }
    }
    actor.tell(Cmd::Open);
    let held = loop {
        match recv_within(&mut reports, WAIT).await {
            Report::Stashed(n) => stashed.push(n),
            Report::Opened { held } => break held,
            other => panic!("expected a stashed item or the opening, got {other:?}"),
        }
    };
    opened.store(true, Ordering::SeqCst);
    assert_eq!(held, stashed.len());
    let mut total = 0;
    for producer in producers {
        total += tokio::time::timeout(WAIT, producer).await.unwrap().unwrap();
    }
    let mut handled = Vec::with_capacity(total as usize);
    while handled.len() < total as usize {
        match recv_within(&mut reports, WAIT).await {
            Report::Handled(n) => handled.push(n),
            other => panic!("expected a handled item, got {other:?}"),
        }
    }
    // The replay first, whole and in arrival order.
    assert_eq!(handled[..stashed.len()], stashed[..]);
    assert!(
        handled.len() > stashed.len(),
        "traffic arrived after the opening"
    );
    // Nothing lost, nothing twice, each producer in its own order.
    let distinct: HashSet<u64> = handled.iter().copied().collect();
    assert_eq!(distinct.len(), handled.len());
    let mut last: HashMap<u64, u64> = HashMap::new();
    for n in &handled {
        let (producer, seq) = (n >> 32, n & 0xffff_ffff);
        if let Some(previous) = last.insert(producer, seq) {
            assert_eq!(seq, previous + 1, "producer {producer} out of order");
        } else {
            assert_eq!(seq, 0, "producer {producer} starts at its first message");
        }
    }
    // A last message, told now, is the next one handled: nothing was left over.
    actor.tell(Cmd::Item(u64::MAX));
    assert_eq!(
        recv_within(&mut reports, WAIT).await,
        Report::Handled(u64::MAX)
    );
}

// S27: a system message outranks the replayed messages. The first replayed message's
// handler asks for this actor's stop; the stop is read before the next replayed
// message, and the rest of the replay, and what arrived behind it, become
// `RecipientStopped` dead letters, counted exactly.
#[tapio::test]
async fn s27_a_stop_between_replayed_messages_is_honoured(system: ActorSystem) {
    let mut letters = letters(&system);
    let (report, mut reports) = mpsc::unbounded_channel();
    let stopper = {
        let report = report.clone();
        Behaviors::receive(move |ctx, cmd: Cmd| {
            if let Cmd::Item(n) = cmd {
                let _ = report.send(Report::Handled(n));
                ctx.system().stop(ctx.self_ref()).unwrap();
            }
        })
        .into()
    };
    let actor = system.spawn(holder(64, report, stopper), "holder").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&actor);
    for n in 0..10 {
        actor.tell(Cmd::Item(n));
    }
    actor.tell(Cmd::Open);
    for n in 100..105 {
        actor.tell(Cmd::Item(n));
    }
    probe.expect_terminated(&actor, WAIT).await;
    let mut expected = vec![Report::Started(1)];
    expected.extend((0..10).map(Report::Stashed));
    expected.extend([Report::Opened { held: 10 }, Report::Handled(0)]);
    expect(&mut reports, &expected).await;
    assert!(
        reports.try_recv().is_err(),
        "nothing handled after the stop"
    );
    let published = items(&all_published(&mut letters));
    let expected: Vec<_> = (1..10)
        .chain(100..105)
        .map(|n| (Cmd::Item(n), DeadLetterReason::RecipientStopped))
        .collect();
    assert_eq!(published, expected);
}

// S27: a stop from outside, arriving while an `async` handler of a replayed message
// awaits, interrupts it; the actor stops before finishing the replay, and the rest
// of it, with what arrived behind it, becomes `RecipientStopped` dead letters.
#[tapio::test]
async fn s27_a_stop_from_outside_during_the_replay_is_honoured(system: ActorSystem) {
    let mut letters = letters(&system);
    let (report, mut reports) = mpsc::unbounded_channel();
    let gate = Arc::new(Semaphore::new(0));
    let slow = {
        let (report, gate) = (report.clone(), gate.clone());
        Behaviors::receive_message_async(async move |cmd: Cmd| {
            if let Cmd::Item(n) = cmd {
                let _ = report.send(Report::Handling(n));
                let _ = gate.acquire().await;
                let _ = report.send(Report::Handled(n));
            }
        })
        .into()
    };
    let actor = system.spawn(holder(64, report, slow), "holder").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&actor);
    for n in 0..10 {
        actor.tell(Cmd::Item(n));
    }
    actor.tell(Cmd::Open);
    for n in 100..105 {
        actor.tell(Cmd::Item(n));
    }
    let mut expected = vec![Report::Started(1)];
    expected.extend((0..10).map(Report::Stashed));
    expected.extend([Report::Opened { held: 10 }, Report::Handling(0)]);
    expect(&mut reports, &expected).await;
    system.stop(&actor).unwrap();
    probe.expect_terminated(&actor, WAIT).await;
    assert!(reports.try_recv().is_err(), "the handler never finished");
    let published = items(&all_published(&mut letters));
    let expected: Vec<_> = (1..10)
        .chain(100..105)
        .map(|n| (Cmd::Item(n), DeadLetterReason::RecipientStopped))
        .collect();
    assert_eq!(published, expected);
}

// S26: a restart empties the stash: each message it held is a `StashDiscarded` dead
// letter, counted exactly, and the restarted actor replays only what it stashed
// since.
#[tapio::test]
async fn s26_a_restart_turns_the_stash_into_dead_letters(system: ActorSystem) {
    let mut letters = letters(&system);
    let (report, mut reports) = mpsc::unbounded_channel();
    let behavior = Behaviors::supervise(holder(16, report.clone(), ready(report)))
        .on_failure::<Boom>(SupervisorStrategy::restart());
    let actor = system.spawn(behavior, "holder").unwrap();
    for n in 1..=5 {
        actor.tell(Cmd::Item(n));
    }
    actor.tell(Cmd::Fail);
    actor.tell(Cmd::Item(6));
    actor.tell(Cmd::Open);
    let mut expected = vec![Report::Started(1)];
    expected.extend((1..=5).map(Report::Stashed));
    expected.extend([
        Report::Started(2),
        Report::Stashed(6),
        Report::Opened { held: 1 },
        Report::Handled(6),
    ]);
    expect(&mut reports, &expected).await;
    let published = items(&all_published(&mut letters));
    let expected: Vec<_> = (1..=5)
        .map(|n| (Cmd::Item(n), DeadLetterReason::StashDiscarded))
        .collect();
    assert_eq!(published, expected);
}

/// A store that cannot answer until it has loaded: requests carry their `reply_to`.
#[message]
pub enum Store {
    Get {
        key: String,
        reply_to: ActorRef<String>,
    },
    Load(HashMap<String, String>),
}

fn store() -> Behavior<Store> {
    Behaviors::with_stash(16, |stash| {
        Behaviors::receive_message(move |message: Store| match message {
            Store::Load(values) => Ok(stash.unstash_all(loaded(values))),
            get => stash.stash(get).map(|()| Behaviors::same()),
        })
    })
    .unwrap()
}

fn loaded(values: HashMap<String, String>) -> Behavior<Store> {
    Behaviors::receive_message(move |message: Store| {
        if let Store::Get { key, reply_to } = message {
            reply_to.tell(values.get(&key).cloned().unwrap_or_default());
        }
    })
    .into()
}

// S27: asks stashed before the actor can answer are answered, each to its asker,
// once they are replayed.
#[tapio::test]
async fn s27_stashed_asks_are_answered_to_their_askers(system: ActorSystem) {
    let actor = system.spawn(store(), "store").unwrap();
    let asks: Vec<_> = ["a", "b", "c"]
        .into_iter()
        .map(|key| {
            let ask = actor.ask_with(|reply_to| Store::Get {
                key: key.into(),
                reply_to,
            });
            tokio::spawn(async move { ask.await })
        })
        .collect();
    // The asks are queued before the load: `ask_with` sends at once.
    let values = [("a", "1"), ("b", "2"), ("c", "3")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    actor.tell(Store::Load(values));
    let mut answers = Vec::new();
    for ask in asks {
        answers.push(
            tokio::time::timeout(WAIT, ask)
                .await
                .unwrap()
                .unwrap()
                .unwrap(),
        );
    }
    assert_eq!(answers, ["1", "2", "3"]);
}

/// A request answered with a string, and the protocol `#[actor]` generates for it
/// (with the reply slot beside each request).
#[message(reply = String)]
pub struct Lookup(pub String);

#[message]
pub struct Stock(pub String);

#[derive(Clone)]
pub struct Shelf;

#[actor]
impl Shelf {
    fn lookup(&mut self, Lookup(key): Lookup) -> String {
        key
    }

    fn stock(&mut self, _: Stock) {}
}

// S27: a request stashed with the reply slot of a generated protocol keeps it: the
// `ask` is answered once the request is replayed.
#[tapio::test]
async fn s27_a_stashed_request_keeps_its_reply_slot(system: ActorSystem) {
    let behavior = Behaviors::with_stash(4, |stash: StashBuffer<ShelfMsg>| {
        Behaviors::receive_message(move |message: ShelfMsg| match message {
            ShelfMsg::Stock(Stock(item), _) => {
                let stocked = Behaviors::receive(move |ctx, message: ShelfMsg| {
                    if let ShelfMsg::Lookup(Lookup(key), reply) = message {
                        reply.send(format!("{key}: {item}"), ctx.path(), ctx.system());
                    }
                });
                Ok(stash.unstash_all(stocked))
            }
            lookup => stash.stash(lookup).map(|()| Behaviors::same()),
        })
    })
    .unwrap();
    let shelf = system.spawn(behavior, "shelf").unwrap();
    let ask = shelf.ask(Lookup("tea".into()));
    let pending = tokio::spawn(async move { ask.await });
    shelf.tell(Stock("green".into()));
    let answer = tokio::time::timeout(WAIT, pending)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(answer, "tea: green");
}

// S26, S27: stashing inside an `async` handler, after an `.await`, works, and the
// replay comes back in order.
#[tapio::test]
async fn s27_stashing_inside_an_async_handler_works(system: ActorSystem) {
    let (report, mut reports) = mpsc::unbounded_channel();
    let behavior = Behaviors::with_stash(8, {
        let report = report.clone();
        move |stash: StashBuffer<Cmd>| {
            let report = report.clone();
            Behaviors::receive_message_async(async move |cmd: Cmd| -> Result<_, BoxError> {
                tokio::task::yield_now().await;
                match cmd {
                    Cmd::Item(n) => {
                        stash.stash(Cmd::Item(n))?;
                        let _ = report.send(Report::Stashed(n));
                        Ok(Behaviors::same())
                    }
                    Cmd::Open => Ok(stash.unstash_all(ready(report.clone()))),
                    Cmd::Fail => Err(Boom.into()),
                }
            })
        }
    })
    .unwrap();
    let actor = system.spawn(behavior, "async").unwrap();
    for n in 1..=3 {
        actor.tell(Cmd::Item(n));
    }
    actor.tell(Cmd::Open);
    actor.tell(Cmd::Item(4));
    expect(
        &mut reports,
        &[
            Report::Stashed(1),
            Report::Stashed(2),
            Report::Stashed(3),
            Report::Handled(1),
            Report::Handled(2),
            Report::Handled(3),
            Report::Handled(4),
        ],
    )
    .await;
}

#[message]
pub struct Greet(pub String);

#[message]
pub struct Ready(pub String);

/// A struct actor holding its stash in a field, replaying with `unstash_all(same)`.
pub struct Greeter {
    template: Option<String>,
    stash: StashBuffer<GreeterMsg>,
    out: mpsc::UnboundedSender<String>,
}

#[actor]
impl Greeter {
    fn greet(&mut self, Greet(whom): Greet) -> Result<(), StashOverflow> {
        match &self.template {
            Some(template) => {
                let _ = self.out.send(template.replace("{}", &whom));
            }
            None => self.stash.stash(Greet(whom))?,
        }
        Ok(())
    }

    fn ready(&mut self, Ready(template): Ready) -> Behavior<GreeterMsg> {
        self.template = Some(template);
        self.stash.unstash_all(Behaviors::same())
    }
}

fn greeter(out: mpsc::UnboundedSender<String>) -> Behavior<GreeterMsg> {
    Behaviors::with_stash(8, move |stash| Greeter {
        template: None,
        stash,
        out: out.clone(),
    })
    .unwrap()
}

// S27: a struct actor keeps its stash in a field and replays with
// `unstash_all(Behaviors::same())`, staying the same actor.
#[tapio::test]
async fn s27_a_struct_actor_replays_and_stays_itself(system: ActorSystem) {
    let (out, mut lines) = mpsc::unbounded_channel();
    let actor = system.spawn(greeter(out), "greeter").unwrap();
    actor.tell(Greet("ada".into()));
    actor.tell(Greet("grace".into()));
    actor.tell(Ready("hello, {}!".into()));
    actor.tell(Greet("carol".into()));
    for expected in ["hello, ada!", "hello, grace!", "hello, carol!"] {
        let line = tokio::time::timeout(WAIT, lines.recv()).await.unwrap();
        assert_eq!(line.as_deref(), Some(expected));
    }
}

// S27: the behavior test kit runs a stash as a running actor does, with no stash code
// of its own: the replay is handled first by the next `run`, ahead of the message it
// hands over, or by `run_queued`.
#[test]
fn s27_the_behavior_test_kit_replays_as_a_running_actor_does() {
    let (report, mut reports) = mpsc::unbounded_channel();
    let mut kit = BehaviorTestKit::new(holder(8, report.clone(), ready(report)));
    assert_eq!(kit.run(Cmd::Item(1)), Ok(Outcome::Same));
    assert_eq!(kit.run(Cmd::Item(2)), Ok(Outcome::Same));
    assert_eq!(kit.run(Cmd::Open), Ok(Outcome::Switched));
    // Handled before the message `run` hands over, as in a live actor.
    assert_eq!(kit.run(Cmd::Item(3)), Ok(Outcome::Same));
    let seen: Vec<Report> = std::iter::from_fn(|| reports.try_recv().ok()).collect();
    assert_eq!(
        seen,
        [
            Report::Started(1),
            Report::Stashed(1),
            Report::Stashed(2),
            Report::Opened { held: 2 },
            Report::Handled(1),
            Report::Handled(2),
            Report::Handled(3),
        ]
    );

    // `run_queued` takes the replay first, then what was sent to the kit's ref.
    let (out, mut lines) = mpsc::unbounded_channel();
    let mut kit = BehaviorTestKit::new(greeter(out));
    kit.run(Greet("ada".into())).unwrap();
    kit.run(Greet("grace".into())).unwrap();
    kit.self_ref().tell(Greet("carol".into()));
    assert_eq!(kit.run(Ready("hi, {}".into())), Ok(Outcome::Same));
    assert!(
        lines.try_recv().is_err(),
        "nothing greeted before the replay runs"
    );
    assert_eq!(kit.run_queued(), Ok(3));
    let greeted: Vec<String> = std::iter::from_fn(|| lines.try_recv().ok()).collect();
    assert_eq!(greeted, ["hi, ada", "hi, grace", "hi, carol"]);
}

// S26: in the test kit too, a full stash fails the handler with `StashOverflow`.
#[test]
fn s26_the_behavior_test_kit_reports_an_overflow() {
    let (report, _reports) = mpsc::unbounded_channel();
    let mut kit = BehaviorTestKit::new(holder(1, report.clone(), ready(report)));
    assert_eq!(kit.run(Cmd::Item(1)), Ok(Outcome::Same));
    let failure = kit.run(Cmd::Item(2)).unwrap_err();
    let overflow = failure
        .downcast_ref::<StashOverflow>()
        .expect("a StashOverflow");
    assert_eq!(overflow.capacity(), 1);
}
