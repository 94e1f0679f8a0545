//! Routers (S32): one address in front of several actors. A pool's routees are the
//! router's children; routing is strictly round-robin, broadcast, or by consistent
//! hashing; a routee that stops leaves and the rotation carries on; the router stops
//! with its last routee; what a routee cannot take is a dead letter; supervision of
//! routees is their own; groups route over refs given to them; bad input is a typed
//! error at construction.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::letter_within;
use std::collections::HashMap;
use std::time::Duration;

use tapio::IntoBehavior;
use tapio::prelude::*;
use tapio::router::RouterError;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason};
use tapio::{MailboxConfig, OverflowStrategy};
use tokio::sync::watch;

const SECOND: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
#[error("refused")]
pub struct Refused;

/// A job: the worker answers `"{its name}:{n}"`.
#[message]
pub struct Work(pub u64, pub ActorRef<String>);

/// The worker stops.
#[message]
pub struct Poison;

/// The worker fails.
#[message]
pub struct Boom;

/// The worker says it holds (`"{its name} holds"`), waits until the gate opens,
/// then stops.
#[message]
pub struct Hold(pub watch::Receiver<bool>, pub ActorRef<String>);

/// The worker answers with its own ref.
#[message]
pub struct Who(pub ActorRef<ActorRef<WorkerMsg>>);

/// How many `Work`s this incarnation of the worker has done.
#[message(reply = u64)]
pub struct HowMany;

/// A routee with state of its own: the number of jobs it did.
#[derive(Clone, Default)]
pub struct Worker {
    done: u64,
}

#[actor]
impl Worker {
    fn work(&mut self, ctx: &mut Ctx<Self>, Work(n, to): Work) {
        self.done += 1;
        to.tell(format!("{}:{n}", ctx.path().name()));
    }

    fn poison(&mut self, _: Poison) -> Behavior<WorkerMsg> {
        Behaviors::stopped()
    }

    fn boom(&mut self, _: Boom) -> Result<(), Refused> {
        Err(Refused)
    }

    async fn hold(&mut self, ctx: &mut Ctx<Self>, Hold(mut gate, to): Hold) -> Behavior<WorkerMsg> {
        to.tell(format!("{} holds", ctx.path().name()));
        let _ = gate.wait_for(|open| *open).await;
        Behaviors::stopped()
    }

    fn who(&mut self, ctx: &mut Ctx<Self>, Who(to): Who) {
        to.tell(ctx.self_ref().clone());
    }

    fn how_many(&mut self, _: HowMany) -> u64 {
        self.done
    }
}

/// Tell the router `Work(n)` for each `n` in `jobs`, one at a time, waiting for each
/// answer: the names of the routees that did them, in order.
async fn work_one_by_one(
    router: &ActorRef<WorkerMsg>,
    probe: &mut TestProbe<String>,
    jobs: std::ops::RangeInclusive<u64>,
) -> Vec<String> {
    let mut done = Vec::new();
    for n in jobs {
        router.tell(Work(n, probe.actor_ref().clone()));
        done.push(probe.expect_message(SECOND).await);
    }
    done
}

/// The routees' refs, asked through the router `n` times: in rotation order, when the
/// rotation is at its start.
async fn routees(
    router: &ActorRef<WorkerMsg>,
    system: &ActorSystem,
    n: usize,
) -> Vec<ActorRef<WorkerMsg>> {
    let mut who = TestProbe::<ActorRef<WorkerMsg>>::new(system);
    let mut refs = Vec::new();
    for _ in 0..n {
        router.tell(Who(who.actor_ref().clone()));
        refs.push(who.expect_message(SECOND).await);
    }
    refs
}

// S32: strict round-robin, in the order the routees joined, over several rounds.
#[tapio::test(start_paused = true)]
async fn s32_round_robin_is_strict_over_several_rounds(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let router = system
        .spawn(Routers::pool(3, Worker::default).unwrap(), "workers")
        .unwrap();
    let done = work_one_by_one(&router, &mut probe, 1..=12).await;
    assert_eq!(
        done,
        [
            "routee-1:1",
            "routee-2:2",
            "routee-3:3",
            "routee-1:4",
            "routee-2:5",
            "routee-3:6",
            "routee-1:7",
            "routee-2:8",
            "routee-3:9",
            "routee-1:10",
            "routee-2:11",
            "routee-3:12",
        ]
    );
}

// S32: the rotation is strict under a burst too: told at once, each routee gets every
// third job, in order.
#[tapio::test(start_paused = true)]
async fn s32_round_robin_holds_under_a_burst(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let router = system
        .spawn(Routers::pool(3, Worker::default).unwrap(), "workers")
        .unwrap();
    for n in 1..=30 {
        router.tell(Work(n, probe.actor_ref().clone()));
    }
    let mut by_routee: HashMap<String, Vec<u64>> = HashMap::new();
    for line in probe.receive_messages(30, SECOND).await {
        let (name, n) = line.split_once(':').unwrap();
        by_routee
            .entry(name.to_owned())
            .or_default()
            .push(n.parse().unwrap());
    }
    for (name, first) in [("routee-1", 1), ("routee-2", 2), ("routee-3", 3)] {
        let expected: Vec<u64> = (first..=30).step_by(3).collect();
        assert_eq!(by_routee[name], expected, "{name}");
    }
}

// S32: a request asked of the router is answered by the routee that gets it.
#[tapio::test(start_paused = true)]
async fn s32_a_request_asked_of_the_router_is_answered_by_a_routee(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let router = system
        .spawn(Routers::pool(2, Worker::default).unwrap(), "workers")
        .unwrap();
    work_one_by_one(&router, &mut probe, 1..=3).await;
    // routee-2 did one job, routee-1 two; the rotation is at routee-2.
    assert_eq!(router.ask(HowMany).await.unwrap(), 1);
    assert_eq!(router.ask(HowMany).await.unwrap(), 2);
}

// S32: a routee that stops leaves the pool (the router watches it), and the rotation
// carries on over the others from where it was, not from the first.
#[tapio::test(start_paused = true)]
async fn s32_a_poisoned_routee_leaves_and_the_rotation_carries_on(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let router = system
        .spawn(Routers::pool(3, Worker::default).unwrap(), "workers")
        .unwrap();
    let refs = routees(&router, &system, 3).await;
    assert_eq!(
        work_one_by_one(&router, &mut probe, 1..=1).await,
        ["routee-1:1"]
    );
    // The rotation is at routee-2: the poison is its turn.
    probe.watch(&refs[1]);
    router.tell(Poison);
    // The router is told in the same step as the probe, on its system lane, which
    // it reads before the next message.
    probe.expect_terminated(&refs[1], SECOND).await;
    assert_eq!(
        work_one_by_one(&router, &mut probe, 2..=7).await,
        [
            "routee-3:2",
            "routee-1:3",
            "routee-3:4",
            "routee-1:5",
            "routee-3:6",
            "routee-1:7"
        ]
    );
}

// S32: a routee ahead in the rotation that stops (here the first, while the rotation
// is at the third) leaves without anyone losing or getting an extra turn.
#[tapio::test(start_paused = true)]
async fn s32_a_routee_that_stops_behind_the_cursor_leaves_the_order_intact(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let router = system
        .spawn(Routers::pool(3, Worker::default).unwrap(), "workers")
        .unwrap();
    let refs = routees(&router, &system, 3).await;
    let mut holds = TestProbe::<String>::new(&system);
    let (open, gate) = watch::channel(false);
    router.tell(Hold(gate, holds.actor_ref().clone()));
    assert_eq!(holds.expect_message(SECOND).await, "routee-1 holds");
    assert_eq!(
        work_one_by_one(&router, &mut probe, 1..=1).await,
        ["routee-2:1"]
    );
    probe.watch(&refs[0]);
    open.send_replace(true);
    probe.expect_terminated(&refs[0], SECOND).await;
    assert_eq!(
        work_one_by_one(&router, &mut probe, 2..=5).await,
        ["routee-3:2", "routee-2:3", "routee-3:4", "routee-2:5"]
    );
}

// S32: when the last routee stops, the router stops, and its watcher hears
// `Terminated`.
#[tapio::test(start_paused = true)]
async fn s32_the_router_stops_with_its_last_routee(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let router = system
        .spawn(Routers::pool(2, Worker::default).unwrap(), "workers")
        .unwrap();
    probe.watch(&router);
    router.tell(Poison);
    probe.expect_no_termination(Duration::from_millis(50)).await;
    router.tell(Poison);
    probe.expect_terminated(&router, SECOND).await;
}

// S32: a message handed to a routee that can no longer take it becomes a dead letter
// addressed to that routee: here one queued behind the job the routee stops after.
#[tapio::test(start_paused = true)]
async fn s32_a_message_for_a_stopped_routee_is_a_dead_letter(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let router = system
        .spawn(Routers::pool(2, Worker::default).unwrap(), "workers")
        .unwrap();
    let refs = routees(&router, &system, 2).await;
    let mut holds = TestProbe::<String>::new(&system);
    let (open, gate) = watch::channel(false);
    router.tell(Hold(gate, holds.actor_ref().clone()));
    assert_eq!(holds.expect_message(SECOND).await, "routee-1 holds");
    router.tell(Work(1, probe.actor_ref().clone())); // routee-2
    router.tell(Work(2, probe.actor_ref().clone())); // routee-1, queued behind the gate
    router.tell(Work(3, probe.actor_ref().clone())); // routee-2
    assert_eq!(
        probe.receive_messages(2, SECOND).await,
        ["routee-2:1", "routee-2:3"]
    );
    // The router handles messages in order: `Work(2)` is in routee-1's mailbox.
    probe.watch(&refs[0]);
    open.send_replace(true);
    probe.expect_terminated(&refs[0], SECOND).await;
    let letter = letter_within(&mut letters, SECOND).await;
    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(letter.recipient(), refs[0].path());
    let Work(n, _) = letter.take_message::<Work>().unwrap();
    assert_eq!(n, 2);
    probe.expect_no_message(Duration::from_millis(50)).await;
}

// S32: supervision of routees is what their behavior declares: a supervised routee
// that fails restarts in place, with fresh state, and keeps its place in the pool.
#[tapio::test(start_paused = true)]
async fn s32_a_supervised_routee_restarts_in_place(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let pool = Routers::pool(2, || {
        Worker::default()
            .supervise()
            .on_failure::<Refused>(SupervisorStrategy::restart())
    })
    .unwrap();
    let router = system.spawn(pool, "workers").unwrap();
    let refs = routees(&router, &system, 2).await;
    probe.watch(&refs[0]);
    work_one_by_one(&router, &mut probe, 1..=4).await; // two jobs each
    router.tell(Boom); // routee-1 fails and restarts
    assert_eq!(
        work_one_by_one(&router, &mut probe, 5..=8).await,
        ["routee-2:5", "routee-1:6", "routee-2:7", "routee-1:8"]
    );
    // The same actor, with fresh state: routee-1 counts only the jobs it did since
    // the restart (6 and 8); routee-2 counts all four of its own.
    assert_eq!(
        routees(&router, &system, 2).await,
        [refs[1].clone(), refs[0].clone()]
    );
    assert_eq!(router.ask(HowMany).await.unwrap(), 4);
    assert_eq!(router.ask(HowMany).await.unwrap(), 2);
    probe.expect_no_termination(Duration::from_millis(50)).await;
}

/// A routee that answers each number with `"{its name}:{n}"`.
fn echo(to: ActorRef<String>) -> Behavior<u64> {
    Behaviors::receive(move |ctx, n: u64| to.tell(format!("{}:{n}", ctx.path().name()))).into()
}

// S32: broadcast hands every routee its own clone.
#[tapio::test(start_paused = true)]
async fn s32_broadcast_reaches_every_routee(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let pool = Routers::pool(3, move || echo(to.clone()))
        .unwrap()
        .broadcast();
    let router = system.spawn(pool, "echoes").unwrap();
    for n in [7, 8] {
        router.tell(n);
        let mut heard = probe.receive_messages(3, SECOND).await;
        heard.sort();
        assert_eq!(heard, [1, 2, 3].map(|k| format!("routee-{k}:{n}")));
    }
    probe.expect_no_message(Duration::from_millis(50)).await;
}

/// A message routed by its key.
#[message]
pub enum Keyed {
    /// Answer with the routee's name and ref.
    Get(u64, ActorRef<Owner>),
    /// The routee stops.
    Stop(u64),
}

impl Keyed {
    fn key(&self) -> u64 {
        match self {
            Self::Get(key, _) | Self::Stop(key) => *key,
        }
    }
}

#[message]
#[derive(Debug)]
pub struct Owner(pub String, pub ActorRef<Keyed>);

fn keyed() -> Behavior<Keyed> {
    Behaviors::receive(|ctx, message: Keyed| match message {
        Keyed::Get(_, to) => {
            to.tell(Owner(ctx.path().name().to_owned(), ctx.self_ref().clone()));
            Behaviors::same()
        }
        Keyed::Stop(_) => Behaviors::stopped(),
    })
    .into()
}

/// Who owns each of `keys`, asked one at a time.
async fn owners(router: &ActorRef<Keyed>, probe: &mut TestProbe<Owner>, keys: u64) -> Vec<Owner> {
    let mut owners = Vec::new();
    for key in 0..keys {
        router.tell(Keyed::Get(key, probe.actor_ref().clone()));
        owners.push(probe.expect_message(SECOND).await);
    }
    owners
}

// S32: consistent hashing sends a key to the same routee every time while the pool
// is unchanged; when a routee leaves, only its keys move.
#[tapio::test(start_paused = true)]
async fn s32_consistent_hashing_keeps_keys_on_their_routees(system: ActorSystem) {
    let mut probe = TestProbe::<Owner>::new(&system);
    let pool = Routers::pool(4, keyed).unwrap().consistent_hash(Keyed::key);
    let router = system.spawn(pool, "shards").unwrap();
    let before = owners(&router, &mut probe, 64).await;
    let again = owners(&router, &mut probe, 64).await;
    let names = |owners: &[Owner]| owners.iter().map(|o| o.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&before), names(&again));
    for k in 1..=4 {
        let name = format!("routee-{k}");
        assert!(names(&before).contains(&name), "{name} owns no key of 64");
    }

    // The owner of key 0 stops.
    let gone = before[0].1.clone();
    probe.watch(&gone);
    router.tell(Keyed::Stop(0));
    probe.expect_terminated(&gone, SECOND).await;
    let after = owners(&router, &mut probe, 64).await;
    for (key, (old, new)) in before.iter().zip(&after).enumerate() {
        if old.1 == gone {
            assert_ne!(new.1, gone, "key {key} still goes to the stopped routee");
        } else {
            assert_eq!(old.0, new.0, "key {key} moved though its routee stayed");
        }
    }
}

// S32: a group routes over refs it was given, round-robin in their order; a routee
// that stops leaves; the router stops when none is left, and never stops them.
#[tapio::test(start_paused = true)]
async fn s32_a_group_routes_over_refs_it_was_given(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let workers: Vec<ActorRef<WorkerMsg>> = ["a", "b", "c"]
        .into_iter()
        .map(|name| system.spawn(Worker::default(), name).unwrap())
        .collect();
    // A ref given twice counts once.
    let mut given = workers.clone();
    given.push(workers[0].clone());
    let router = system
        .spawn(Routers::group(given).unwrap(), "group")
        .unwrap();
    assert_eq!(
        work_one_by_one(&router, &mut probe, 1..=4).await,
        ["a:1", "b:2", "c:3", "a:4"]
    );
    probe.watch(&router);
    probe.watch(&workers[1]);
    workers[1].tell(Poison);
    probe.expect_terminated(&workers[1], SECOND).await;
    assert_eq!(
        work_one_by_one(&router, &mut probe, 5..=7).await,
        ["c:5", "a:6", "c:7"]
    );
    workers[0].tell(Poison);
    workers[2].tell(Poison);
    probe.expect_terminated(&router, SECOND).await;
}

// S32: stopping a group router leaves its routees running: they are not its children.
#[tapio::test(start_paused = true)]
async fn s32_a_group_does_not_own_its_routees(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let worker = system.spawn(Worker::default(), "solo").unwrap();
    let router = system
        .spawn(Routers::group([worker.clone()]).unwrap(), "group")
        .unwrap();
    probe.watch(&router);
    probe.watch(&worker);
    system.stop(&router).unwrap();
    probe.expect_terminated(&router, SECOND).await;
    worker.tell(Work(1, probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(SECOND).await, "solo:1");
}

// S32: a group hashes by key too.
#[tapio::test(start_paused = true)]
async fn s32_a_group_hashes_by_key(system: ActorSystem) {
    let mut probe = TestProbe::<Owner>::new(&system);
    let shards: Vec<ActorRef<Keyed>> = (1..=3)
        .map(|k| system.spawn(keyed(), &format!("shard-{k}")).unwrap())
        .collect();
    let group = Routers::group(shards).unwrap().consistent_hash(Keyed::key);
    let router = system.spawn(group, "shards").unwrap();
    let before = owners(&router, &mut probe, 32).await;
    let again = owners(&router, &mut probe, 32).await;
    for (old, new) in before.iter().zip(&again) {
        assert_eq!(old.1, new.1);
    }
}

// S32: bad input is refused at construction with a typed error that says what to do.
#[test]
fn s32_construction_refuses_an_empty_router() {
    let none = Routers::pool(0, Worker::default);
    assert_eq!(none.as_ref().err(), Some(&RouterError::EmptyPool));
    let message = none.err().unwrap().to_string();
    assert!(message.contains("at least one routee"), "{message}");
    assert!(message.contains("stop the router"), "{message}");

    let nobody = Routers::group(Vec::<ActorRef<WorkerMsg>>::new());
    assert_eq!(nobody.as_ref().err(), Some(&RouterError::EmptyGroup));
    let message = nobody.err().unwrap().to_string();
    assert!(
        message.contains("pass one or more `ActorRef`s"),
        "{message}"
    );

    // A consistent-hash router cannot be had without routees: the logic is chosen on
    // a router that already has them.
    let hashed =
        Routers::group(Vec::<ActorRef<Keyed>>::new()).map(|g| g.consistent_hash(Keyed::key));
    assert_eq!(hashed.err(), Some(RouterError::EmptyGroup));
    let hashed = Routers::pool(0, keyed).map(|p| p.consistent_hash(Keyed::key));
    assert_eq!(hashed.err(), Some(RouterError::EmptyPool));

    // Nor can a pool be resized to nothing.
    let handle = Routers::pool(1, Worker::default).unwrap().handle();
    assert_eq!(handle.resize(0), Err(RouterError::EmptyPool));
}

// S32: a pool runs as one router at a time: the same recipe started again while the
// first router runs fails to start (and stops), and leaves the first alone.
#[tapio::test(start_paused = true)]
async fn s32_a_pool_runs_as_one_router_at_a_time(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let recipe: Behavior<WorkerMsg> = Routers::pool(2, Worker::default).unwrap().into_behavior();
    let first = system.spawn(recipe.clone(), "first").unwrap();
    work_one_by_one(&first, &mut probe, 1..=1).await;
    let second = system.spawn(recipe, "second").unwrap();
    probe.watch(&second);
    probe.expect_terminated(&second, SECOND).await;
    assert_eq!(
        work_one_by_one(&first, &mut probe, 2..=3).await,
        ["routee-2:2", "routee-1:3"]
    );
}

// S32: a routee whose bounded mailbox is full when the router hands it a message
// refuses it, and the message is a dead letter addressed to that routee.
#[tapio::test(start_paused = true)]
async fn s32_a_message_for_a_full_routee_is_a_dead_letter(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let mut holds = TestProbe::<String>::new(&system);
    let one = MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap();
    let pool = Routers::pool(2, Worker::default)
        .unwrap()
        .routee_mailbox(one);
    let router = system.spawn(pool, "workers").unwrap();
    let refs = routees(&router, &system, 2).await;
    let (open, gate) = watch::channel(false);
    router.tell(Hold(gate, holds.actor_ref().clone())); // routee-1
    assert_eq!(holds.expect_message(SECOND).await, "routee-1 holds");
    assert_eq!(
        work_one_by_one(&router, &mut probe, 1..=1).await,
        ["routee-2:1"]
    );
    router.tell(Work(2, probe.actor_ref().clone())); // routee-1: its one place
    assert_eq!(
        work_one_by_one(&router, &mut probe, 3..=3).await,
        ["routee-2:3"]
    );
    router.tell(Work(4, probe.actor_ref().clone())); // routee-1: full
    let letter = letter_within(&mut letters, SECOND).await;
    assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull);
    assert_eq!(letter.recipient(), refs[0].path());
    let Work(n, _) = letter.take_message::<Work>().unwrap();
    assert_eq!(n, 4);
    open.send_replace(true);
}

// S32: growing a pool spawns new routees at the end of the rotation, which carries
// on from where it was.
#[tapio::test(start_paused = true)]
async fn s32_growing_a_pool_adds_routees_at_the_end_of_the_rotation(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let pool = Routers::pool(2, Worker::default).unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "workers").unwrap();
    assert_eq!(
        work_one_by_one(&router, &mut probe, 1..=3).await,
        ["routee-1:1", "routee-2:2", "routee-1:3"]
    );
    handle.resize(4).unwrap();
    assert_eq!(
        work_one_by_one(&router, &mut probe, 4..=9).await,
        [
            "routee-2:4",
            "routee-3:5",
            "routee-4:6",
            "routee-1:7",
            "routee-2:8",
            "routee-3:9"
        ]
    );
    let names: Vec<String> = handle
        .routees()
        .iter()
        .map(|routee| routee.path().name().to_owned())
        .collect();
    assert_eq!(names, ["routee-1", "routee-2", "routee-3", "routee-4"]);
    assert_eq!(handle.router(), Some(router));
}

// S32: shrinking a pool takes its newest routees out of the rotation at once and
// stops them; the rotation carries on over the rest, and the router runs on.
#[tapio::test(start_paused = true)]
async fn s32_shrinking_a_pool_stops_its_newest_routees(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let pool = Routers::pool(4, Worker::default).unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "workers").unwrap();
    assert_eq!(
        work_one_by_one(&router, &mut probe, 1..=2).await,
        ["routee-1:1", "routee-2:2"]
    );
    let refs = handle.routees();
    let mut third = TestProbe::<String>::new(&system);
    let mut fourth = TestProbe::<String>::new(&system);
    third.watch(&refs[2]);
    fourth.watch(&refs[3]);
    probe.watch(&router);
    // The rotation was at routee-3: with it gone, it is at routee-1 again.
    handle.resize(2).unwrap();
    assert_eq!(
        work_one_by_one(&router, &mut probe, 3..=6).await,
        ["routee-1:3", "routee-2:4", "routee-1:5", "routee-2:6"]
    );
    third.expect_terminated(&refs[2], SECOND).await;
    fourth.expect_terminated(&refs[3], SECOND).await;
    assert_eq!(handle.routees(), refs[..2]);
    probe.expect_no_termination(Duration::from_millis(50)).await;
}

// S32: a resize before the router starts sets the size it starts with; one after it
// has stopped says so.
#[tapio::test(start_paused = true)]
async fn s32_a_resize_before_the_start_and_after_the_stop(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let pool = Routers::pool(1, Worker::default).unwrap();
    let handle = pool.handle();
    handle.resize(3).unwrap();
    assert_eq!(handle.router(), None);
    let router = system.spawn(pool, "workers").unwrap();
    assert_eq!(
        work_one_by_one(&router, &mut probe, 1..=4).await,
        ["routee-1:1", "routee-2:2", "routee-3:3", "routee-1:4"]
    );
    probe.watch(&router);
    for _ in 0..3 {
        router.tell(Poison);
    }
    probe.expect_terminated(&router, SECOND).await;
    let error = handle.resize(2).unwrap_err();
    assert_eq!(
        error,
        RouterError::RouterStopped {
            router: router.path().clone()
        }
    );
    assert!(
        error.to_string().contains("build and spawn a new pool"),
        "{error}"
    );
}

// S32: a routee's escalated failure is the router's, under the router's own
// supervision: a restarted router spawns its pool again, at the size last asked for,
// and its watchers hear nothing.
#[tapio::test(start_paused = true)]
async fn s32_a_restarted_router_spawns_its_pool_again(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let pool = Routers::pool(2, || {
        Worker::default()
            .supervise()
            .on_failure::<Refused>(SupervisorStrategy::escalate())
    })
    .unwrap();
    let handle = pool.handle();
    let supervised =
        Behaviors::supervise(pool).on_failure::<Refused>(SupervisorStrategy::restart());
    let router = system.spawn(supervised, "workers").unwrap();
    handle.resize(3).unwrap();
    assert_eq!(
        work_one_by_one(&router, &mut probe, 1..=3).await,
        ["routee-1:1", "routee-2:2", "routee-3:3"]
    );
    let first = handle.routees()[0].clone();
    let mut routee = TestProbe::<String>::new(&system);
    routee.watch(&first);
    probe.watch(&router);
    router.tell(Boom); // routee-1 escalates; the router restarts
    // The router hears of the escalation in the same step as the probe hears of the
    // stop, on its system lane, which it reads before the next message.
    routee.expect_terminated(&first, SECOND).await;
    assert_eq!(
        work_one_by_one(&router, &mut probe, 4..=7).await,
        ["routee-4:4", "routee-5:5", "routee-6:6", "routee-4:7"]
    );
    probe.expect_no_termination(Duration::from_millis(50)).await;
}
