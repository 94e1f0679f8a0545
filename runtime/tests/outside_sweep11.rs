//! An eleventh outside-in sweep, written from the promises (S1..S49 in SEMANTICS.md),
//! README.md, docs/testing.md and docs/remoting.md only. It tries combinations the
//! earlier sweeps left alone:
//!
//! 1. Routers (S32, S14, S13, S16, S18, S21): a supervised pool router that fails
//!    and restarts (fresh routees, at the size last asked for, not doubled when it
//!    keeps its children, and it does not stop on hearing its old routees go); a
//!    router backing off keeps what it is told; a routee's escalation rebuilds the
//!    whole pool; a routee removed by a shrink, watched from outside; a resize after
//!    the router stopped with its last routee; an ask broadcast to a pool (one
//!    answer, the others lettered as second answers).
//! 2. Supervision with stash and timers (S14, S16, S25, S26, S11, S18): an
//!    escalation that restarts a parent holding stashed messages; a stash overflow
//!    restart with a fixed-rate timer (one timer after, not two); resume keeps the
//!    timer running; a tick stashed and replayed in arrival order; adapted messages
//!    stashed and replayed with direct ones; a handler child stopped by its parent's
//!    restart, heard by its watcher.
//! 3. Mailboxes and names (S29, S30, S2): an offer on a full drop-oldest mailbox waits
//!    and drops nothing while a tell pushes out; `spawn_anonymous_with`; a name free
//!    as soon as an outside watcher hears `Terminated`, in a loop.
//! 4. Ask on the paused clock (S22), user events (S49), `#[actor]` struct actors
//!    restarted, and state machines (S34): a queued ask meeting a state that refuses
//!    it; a backlog stashed by two states in a row.
//! 5. Remoting on loopback (S36..S47): asks under `drop_next` and `delay`; a late
//!    reply; `drop_next` sparing a watch; a ref inside a message watched from the far
//!    side across a restart; a ref to a fresh anonymous actor inside a reply; remote
//!    asks held in a stash (restart: the ask ends; stop: it fails fast); a remote ask
//!    to a broadcast pool; tell/offer/ask keeping FIFO on one association; `offer`
//!    resolving on local room; a timer's tells through a short partition; an ask to a
//!    port nobody listens on; two remote watchers of which one unwatches; unwatching
//!    in the turn that stops the watched actor.
//!
//! Every wait is bounded; timing is asserted under tokio's paused clock, or with wide
//! margins on real time.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/outside.rs"]
mod outside;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::{PeerUnreachable, RemoteSettings};
use tapio::router::{Pool, PoolHandle, RouterError};
use tapio::testkit::{TestProbe, TwoNodes, two_nodes};
use tapio::{
    AskError, BoxError, DeadLetter, DeadLetterReason, MailboxConfig, OverflowStrategy, StashBuffer,
    StashOverflow, Subscription,
};
use tokio::sync::{Notify, mpsc};
use tokio::time::{Instant, timeout};

use outside::{Boom, T, describe, expect_lines, letters, letters_for, ms, next, no_letter_for};

// =================================================================================
// helpers
// =================================================================================

/// The first dead letter for which `want` holds, within `T`.
async fn letter_where(
    sub: &mut Subscription<DeadLetter>,
    want: impl Fn(&DeadLetter) -> bool,
) -> DeadLetter {
    let deadline = Instant::now() + T;
    let mut seen = Vec::new();
    loop {
        match tokio::time::timeout_at(deadline, sub.recv()).await {
            Ok(Some(letter)) if want(&letter) => return letter,
            Ok(Some(letter)) => seen.push(describe(&letter)),
            Ok(None) | Err(_) => panic!("no matching dead letter within {T:?}; saw {seen:?}"),
        }
    }
}

/// An actor that forwards what it is told to a channel.
fn sink<M: Message>(tx: mpsc::UnboundedSender<M>) -> Behavior<M> {
    Behaviors::receive_message(move |m: M| {
        let _ = tx.send(m);
    })
    .into()
}

// =================================================================================
// 1. Routers
// =================================================================================

#[message]
pub struct Job {
    pub key: u64,
    pub done: ActorRef<String>,
}

/// A routee that answers "<its name> <how many jobs it has done>".
fn counting_routee() -> Behavior<Job> {
    Behaviors::setup(|_ctx| {
        let count = AtomicU64::new(0);
        Behaviors::receive(move |ctx, job: Job| {
            let n = count.fetch_add(1, SeqCst) + 1;
            job.done.tell(format!("{} {n}", ctx.path().name()));
        })
    })
}

/// A consistent-hash pool of `size` [`counting_routee`]s keyed by `Job::key`, whose
/// key function panics on the poisoned key 13.
fn poisoned_pool(size: usize) -> Pool<Job> {
    Routers::pool(size, counting_routee)
        .unwrap()
        .consistent_hash(|job: &Job| {
            assert!(job.key != 13, "a poisoned key");
            job.key
        })
}

/// Tells `router` a `Job` for each of `keys`, each to be answered to `done`.
fn tell_jobs(router: &ActorRef<Job>, keys: impl IntoIterator<Item = u64>, done: &ActorRef<String>) {
    for key in keys {
        router.tell(Job {
            key,
            done: done.clone(),
        });
    }
}

/// The routees of `handle` now, each as its path and uid.
fn routee_ids(handle: &PoolHandle<Job>) -> HashSet<(String, u64)> {
    handle
        .routees()
        .iter()
        .map(|r| (r.path().to_string(), r.uid()))
        .collect()
}

fn parse(line: &str) -> (String, u64) {
    let (name, n) = line.split_once(' ').unwrap();
    (name.to_string(), n.parse().unwrap())
}

/// S32, S14: a consistent-hash pool router under `restart` whose key function panics
/// fails, restarts and comes back with fresh routees at the size last asked for
/// (`PoolHandle::resize` docs); the jobs queued behind the poison are all handled by
/// the new routees, and the router does not stop on hearing its old routees go.
#[tapio::test]
async fn s32_s14_a_supervised_pool_router_restarts_with_fresh_routees_at_its_last_size(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let done = probe.actor_ref().clone();
    let pool = poisoned_pool(2);
    let handle = pool.handle();
    let router = system
        .spawn(
            Behaviors::supervise(pool).on_any_failure(SupervisorStrategy::restart()),
            "hashed",
        )
        .unwrap();
    let mut watcher = TestProbe::<String>::new(&system);
    watcher.watch(&router);
    handle.resize(3).unwrap();
    tell_jobs(&router, 200..230, &done);
    let before_lines = probe.receive_messages(30, T).await;
    let before = routee_ids(&handle);
    assert_eq!(before.len(), 3, "the resize to 3 took effect");
    let names_before: HashSet<String> = before_lines.iter().map(|l| parse(l).0).collect();
    assert_eq!(names_before.len(), 3, "{before_lines:?}");

    tell_jobs(&router, [13], &done);
    tell_jobs(&router, 100..130, &done);
    let after_lines = probe.receive_messages(30, T).await;
    let mut per_routee: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for line in &after_lines {
        let (name, n) = parse(line);
        per_routee.entry(name).or_default().push(n);
    }
    for (name, counts) in &per_routee {
        let expected: Vec<u64> = (1..=counts.len() as u64).collect();
        assert_eq!(counts, &expected, "{name} starts afresh: {after_lines:?}");
    }
    let after = routee_ids(&handle);
    assert_eq!(after.len(), 3, "back at the size last asked for: {after:?}");
    assert!(
        after.is_disjoint(&before),
        "new routees: {before:?} / {after:?}"
    );
    watcher.expect_no_termination(ms(200)).await;
    // Still routing.
    router.tell(Job { key: 7, done });
    probe.expect_message(T).await;
}

/// S32, S18: a routee taken out by a shrink is stopped (an outside watcher hears it
/// once), leaves the handle's list, and the rotation goes on strictly over the rest.
#[tapio::test]
async fn s32_s18_a_routee_removed_by_a_shrink_is_seen_terminated_by_an_outside_watcher(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let done = probe.actor_ref().clone();
    let pool = Routers::pool(3, counting_routee).unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "rr").unwrap();
    tell_jobs(&router, 0..3, &done);
    probe.receive_messages(3, T).await;
    let routees = handle.routees();
    assert_eq!(routees.len(), 3);
    let mut watcher = TestProbe::<String>::new(&system);
    watcher.watch(&routees[2]);
    handle.resize(2).unwrap();
    watcher.expect_terminated(&routees[2], T).await;
    watcher.expect_no_termination(ms(100)).await;
    let left: Vec<String> = handle
        .routees()
        .iter()
        .map(|r| r.path().to_string())
        .collect();
    assert_eq!(
        left,
        [routees[0].path().to_string(), routees[1].path().to_string()]
    );
    tell_jobs(&router, 0..6, &done);
    let lines = probe.receive_messages(6, T).await;
    let mut per: BTreeMap<String, u64> = BTreeMap::new();
    for line in &lines {
        *per.entry(parse(line).0).or_default() += 1;
    }
    assert_eq!(per.len(), 2, "{lines:?}");
    assert!(per.values().all(|&n| n == 3), "{lines:?}");
    assert!(!per.contains_key(routees[2].path().name()), "{lines:?}");
}

/// S32, S14, S1: a pool router restarted with `with_stop_children(false)` still comes
/// back at the size last asked for; its old routees are not left running beside the
/// new ones (the system counts as many live actors after as before).
#[tapio::test]
async fn s32_s14_a_pool_router_restarted_keeping_children_does_not_double_its_routees(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let done = probe.actor_ref().clone();
    let pool = poisoned_pool(3);
    let handle = pool.handle();
    let router = system
        .spawn(
            Behaviors::supervise(pool)
                .on_any_failure(SupervisorStrategy::restart().with_stop_children(false)),
            "keeping",
        )
        .unwrap();
    tell_jobs(&router, 100..110, &done);
    probe.receive_messages(10, T).await;
    let live_before = system.live_actors();
    tell_jobs(&router, [13], &done);
    tell_jobs(&router, 200..210, &done);
    probe.receive_messages(10, T).await;
    let routees = handle.routees();
    assert_eq!(routees.len(), 3, "the size last asked for");
    assert_eq!(
        system.live_actors(),
        live_before,
        "as many actors after the restart as before"
    );
}

/// S13, S32: a pool router backing off before its restart keeps what it is told;
/// nothing is routed during the backoff, and all of it reaches the new routees after.
#[tapio::test(start_paused = true)]
async fn s13_s32_jobs_told_to_a_pool_router_during_its_backoff_reach_the_new_routees(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let done = probe.actor_ref().clone();
    let pool = poisoned_pool(2);
    let router = system
        .spawn(
            Behaviors::supervise(pool).on_any_failure(
                SupervisorStrategy::restart()
                    .with_backoff(tapio::Backoff::new(ms(500), ms(500), 0.0).unwrap()),
            ),
            "patient",
        )
        .unwrap();
    tell_jobs(&router, [1], &done);
    probe.expect_message(T).await;
    let failed_at = Instant::now();
    tell_jobs(&router, [13], &done);
    tell_jobs(&router, 20..30, &done);
    let first = probe.expect_message(T).await;
    assert!(
        failed_at.elapsed() >= ms(500),
        "{first} came after {:?}, inside the backoff",
        failed_at.elapsed()
    );
    let mut lines = vec![first];
    lines.extend(probe.receive_messages(9, T).await);
    let mut per: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for line in &lines {
        let (name, n) = parse(line);
        per.entry(name).or_default().push(n);
    }
    for (name, counts) in &per {
        let expected: Vec<u64> = (1..=counts.len() as u64).collect();
        assert_eq!(counts, &expected, "{name}: {lines:?}");
    }
}

#[message]
pub enum Work {
    Quit,
    Hello(ActorRef<String>),
}

/// S32: after a shrink to one, that routee stopping stops the router (its watchers
/// hear it), and a resize then is refused as `RouterStopped`, naming the router.
#[tapio::test]
async fn s32_a_resize_after_the_router_stopped_with_its_last_routee_is_refused(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let pool = Routers::pool(3, || {
        Behaviors::receive(|ctx, w: Work| match w {
            Work::Quit => Behaviors::stopped(),
            Work::Hello(to) => {
                to.tell(ctx.path().name().to_string());
                Behaviors::same()
            }
        })
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "shrinking").unwrap();
    probe.watch(&router);
    handle.resize(1).unwrap();
    for _ in 0..2 {
        router.tell(Work::Hello(probe.actor_ref().clone()));
    }
    let names = probe.receive_messages(2, T).await;
    assert_eq!(names[0], names[1], "one routee left: {names:?}");
    router.tell(Work::Quit);
    probe.expect_terminated(&router, T).await;
    match handle.resize(2) {
        Err(RouterError::RouterStopped { router: path }) => assert_eq!(&path, router.path()),
        other => panic!("expected RouterStopped, got {other:?}"),
    }
}

#[message]
#[derive(Clone)]
pub struct Poll {
    pub reply_to: ActorRef<String>,
}

/// S32, S21, S31: an ask through a broadcast pool reaches every routee; the first
/// answer resolves the ask, and each other answer is a dead letter saying the ask
/// had its answer already.
#[tapio::test]
async fn s32_s21_s31_an_ask_broadcast_to_a_pool_takes_one_answer_and_letters_the_rest(
    system: ActorSystem,
) {
    let mut sub = letters(&system);
    let pool = Routers::pool(3, || {
        Behaviors::receive(|ctx, p: Poll| p.reply_to.tell(ctx.path().name().to_string()))
    })
    .unwrap()
    .broadcast();
    let router = system.spawn(pool, "everyone").unwrap();
    let first = router
        .ask_with(|reply_to| Poll { reply_to })
        .timeout(T)
        .await
        .unwrap();
    let mut names = HashSet::from([first.clone()]);
    for _ in 0..2 {
        let letter = letter_where(&mut sub, |l| l.is::<String>()).await;
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::AlreadyAnswered,
            "{}",
            describe(&letter)
        );
        names.insert(letter.take_message::<String>().unwrap());
    }
    assert_eq!(names.len(), 3, "{names:?}");
    let deadline = Instant::now() + ms(200);
    if let Ok(Some(extra)) = tokio::time::timeout_at(deadline, sub.recv()).await {
        panic!("an extra dead letter: {}", describe(&extra));
    }
}

// =================================================================================
// 2. Supervision with stash and timers
// =================================================================================

#[message]
pub enum Front {
    Hold(u64),
    Kick,
    Kids(ActorRef<String>),
}

fn front(to: ActorRef<String>, generations: Arc<AtomicU64>) -> Behavior<Front> {
    Behaviors::with_stash(8, move |stash: StashBuffer<Front>| {
        let to = to.clone();
        let generations = generations.clone();
        Behaviors::setup(move |ctx| -> Result<Behavior<Front>, tapio::SpawnError> {
            let generation = generations.fetch_add(1, SeqCst) + 1;
            let kid = ctx.spawn(
                Behaviors::supervise(Behaviors::receive_message(
                    |_: String| -> Result<(), Boom> { Err(Boom) },
                ))
                .on_failure::<Boom>(SupervisorStrategy::escalate()),
                "kid",
            )?;
            to.tell(format!("setup g{generation}"));
            let stash = stash.clone();
            Ok(Behaviors::receive(
                move |ctx, m: Front| -> Result<Behavior<Front>, StashOverflow> {
                    match m {
                        Front::Hold(n) => stash.stash(Front::Hold(n))?,
                        Front::Kick => kid.tell("fail".to_string()),
                        Front::Kids(reply) => {
                            reply.tell(format!(
                                "kids {} stash {}",
                                ctx.children().len(),
                                stash.len()
                            ));
                        }
                    }
                    Ok(Behaviors::same())
                },
            )
            .into())
        })
    })
    .unwrap()
}

/// S16, S14, S31: a child escalates; its parent, under `restart`, is rebuilt with its
/// setup children, and what its stash held becomes dead letters (`StashDiscarded`)
/// in arrival order; a sibling of the parent is untouched.
#[tapio::test]
async fn s16_s14_an_escalation_restarts_a_parent_that_held_stashed_messages(system: ActorSystem) {
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let generations = Arc::new(AtomicU64::new(0));
    let parent = system
        .spawn(
            Behaviors::supervise(front(probe.actor_ref().clone(), generations.clone()))
                .on_failure::<Boom>(SupervisorStrategy::restart()),
            "front",
        )
        .unwrap();
    let sibling = system
        .spawn(Behaviors::receive_message(|_: u64| ()), "sibling")
        .unwrap();
    probe.watch(&sibling);
    probe.watch(&parent);
    expect_lines(&mut probe, &["setup g1"]).await;
    for n in 1..=3 {
        parent.tell(Front::Hold(n));
    }
    parent.tell(Front::Kick);
    expect_lines(&mut probe, &["setup g2"]).await;
    let got = letters_for(&mut sub, parent.path(), 3).await;
    let held: Vec<u64> = got
        .iter()
        .map(|l| match l.take_message::<Front>() {
            Some(Front::Hold(n)) => n,
            _ => panic!("not a Hold: {}", describe(l)),
        })
        .collect();
    assert_eq!(held, [1, 2, 3]);
    for letter in &got {
        assert_eq!(letter.reason(), &DeadLetterReason::StashDiscarded);
    }
    parent.tell(Front::Kids(probe.actor_ref().clone()));
    expect_lines(&mut probe, &["kids 1 stash 0"]).await;
    probe.expect_no_termination(ms(100)).await;
    assert_eq!(generations.load(SeqCst), 2);
}

#[message]
#[derive(Clone)]
pub enum Pulse {
    Tick,
    Item(u64),
    Fail,
}

/// S14, S25, S26: a stash overflow restarts an actor whose setup starts a fixed-rate
/// timer: the letters say `StashFull` for the overflowing item and `StashDiscarded`
/// for the held ones; afterwards exactly one timer ticks (at its rate, not twice it),
/// and every tick comes from the new incarnation.
#[tapio::test(start_paused = true)]
async fn s14_s25_s26_a_stash_overflow_restart_leaves_exactly_one_fixed_rate_timer(
    system: ActorSystem,
) {
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let generations = Arc::new(AtomicU64::new(0));
    let behavior = Behaviors::with_stash(2, move |stash: StashBuffer<Pulse>| {
        let to = to.clone();
        let generations = generations.clone();
        Behaviors::setup(move |ctx| {
            let g = generations.fetch_add(1, SeqCst) + 1;
            to.tell(format!("start g{g}"));
            ctx.timers()
                .start_fixed_rate("pulse", Pulse::Tick, ms(100))
                .unwrap();
            let stash = stash.clone();
            let to = to.clone();
            Behaviors::receive_message(move |p: Pulse| -> Result<(), BoxError> {
                match p {
                    Pulse::Tick => to.tell(format!("tick g{g}")),
                    Pulse::Item(n) => stash.stash(Pulse::Item(n))?,
                    Pulse::Fail => return Err(Boom.into()),
                }
                Ok(())
            })
        })
    })
    .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(behavior)
                .on_failure::<StashOverflow>(SupervisorStrategy::restart()),
            "pulsar",
        )
        .unwrap();
    expect_lines(&mut probe, &["start g1"]).await;
    for n in 1..=3 {
        actor.tell(Pulse::Item(n));
    }
    expect_lines(&mut probe, &["start g2"]).await;
    let started = Instant::now();
    let mut got = letters_for(&mut sub, actor.path(), 3).await;
    got.sort_by_key(|l| match l.take_message::<Pulse>() {
        Some(Pulse::Item(n)) => n,
        _ => u64::MAX,
    });
    let reasons: Vec<DeadLetterReason> = got.iter().map(|l| l.reason().clone()).collect();
    assert_eq!(
        reasons,
        [
            DeadLetterReason::StashDiscarded,
            DeadLetterReason::StashDiscarded,
            DeadLetterReason::StashFull
        ]
    );
    let mut ticks = Vec::new();
    loop {
        let left = ms(1_050).saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        match probe.receive_message(left).await {
            Some(line) => ticks.push(line),
            None => break,
        }
    }
    assert!(
        ticks.iter().all(|t| t == "tick g2"),
        "only the new incarnation ticks: {ticks:?}"
    );
    assert!(
        (9..=11).contains(&ticks.len()),
        "one timer at 100 ms gives about 10 ticks in a second, got {}",
        ticks.len()
    );
}

/// S11, S25: under `resume` the timers are not touched: the fixed-rate timer started
/// in setup keeps its rate across a failure, setup does not run again, and nothing
/// doubles.
#[tapio::test(start_paused = true)]
async fn s11_s25_resume_keeps_the_running_timer_at_its_rate(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                to.tell("start".to_string());
                ctx.timers()
                    .start_fixed_rate("pulse", Pulse::Tick, ms(100))
                    .unwrap();
                let to = to.clone();
                Behaviors::receive_message(move |p: Pulse| -> Result<(), Boom> {
                    match p {
                        Pulse::Tick => to.tell("tick".to_string()),
                        Pulse::Fail => return Err(Boom),
                        Pulse::Item(_) => {}
                    }
                    Ok(())
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume()),
            "steady",
        )
        .unwrap();
    expect_lines(&mut probe, &["start", "tick"]).await;
    actor.tell(Pulse::Fail);
    let started = Instant::now();
    let mut lines = Vec::new();
    loop {
        let left = ms(1_050).saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        match probe.receive_message(left).await {
            Some(line) => lines.push(line),
            None => break,
        }
    }
    assert!(lines.iter().all(|l| l == "tick"), "{lines:?}");
    assert!((9..=11).contains(&lines.len()), "{} ticks", lines.len());
}

#[message]
#[derive(Clone, Debug)]
pub enum Gate {
    Tick,
    Item(u64),
    Open,
}

/// S24, S27: a timer tick is an ordinary message: stashed with the tells around it,
/// it is replayed in arrival order among them.
#[tapio::test(start_paused = true)]
async fn s24_s27_a_stashed_tick_is_replayed_in_arrival_order_among_tells(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(8, move |stash: StashBuffer<Gate>| {
        let to = to.clone();
        Behaviors::setup(move |ctx| {
            ctx.timers().start_single_timer("once", Gate::Tick, ms(50));
            let stash = stash.clone();
            let to = to.clone();
            to.tell("ready".to_string());
            Behaviors::receive_message(move |g: Gate| -> Result<Behavior<Gate>, StashOverflow> {
                match g {
                    Gate::Open => {
                        let to = to.clone();
                        Ok(
                            stash.unstash_all(Behaviors::receive_message(move |g: Gate| {
                                to.tell(format!("{g:?}"));
                            })),
                        )
                    }
                    other => stash.stash(other).map(|()| Behaviors::same()),
                }
            })
        })
    })
    .unwrap();
    let actor = system.spawn(behavior, "gatekeeper").unwrap();
    expect_lines(&mut probe, &["ready"]).await;
    actor.tell(Gate::Item(1));
    tokio::time::sleep(ms(100)).await;
    actor.tell(Gate::Item(2));
    actor.tell(Gate::Open);
    actor.tell(Gate::Item(3));
    expect_lines(&mut probe, &["Item(1)", "Tick", "Item(2)", "Item(3)"]).await;
    probe.expect_no_message(ms(200)).await;
}

#[message]
pub struct Word(pub String);

#[message]
pub enum Inbox {
    Adapted(String),
    Direct(String),
    Open,
}

/// S28, S27: messages through an adapter are stashed like the owner's own, and
/// replayed with them in arrival order ahead of what comes after the switch.
#[tapio::test]
async fn s28_s27_adapted_and_direct_messages_are_stashed_and_replayed_in_order(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel::<ActorRef<Word>>();
    let behavior = Behaviors::with_stash(8, move |stash: StashBuffer<Inbox>| {
        let to = to.clone();
        let adapter_tx = adapter_tx.clone();
        Behaviors::setup(move |ctx| {
            let adapter = ctx.message_adapter(|w: Word| Inbox::Adapted(w.0));
            let _ = adapter_tx.send(adapter);
            let stash = stash.clone();
            let to = to.clone();
            Behaviors::receive_message(move |m: Inbox| -> Result<Behavior<Inbox>, StashOverflow> {
                match m {
                    Inbox::Open => {
                        let to = to.clone();
                        Ok(
                            stash.unstash_all(Behaviors::receive_message(
                                move |m: Inbox| match m {
                                    Inbox::Adapted(s) => to.tell(format!("adapted {s}")),
                                    Inbox::Direct(s) => to.tell(format!("direct {s}")),
                                    Inbox::Open => to.tell("open again".to_string()),
                                },
                            )),
                        )
                    }
                    other => stash.stash(other).map(|()| Behaviors::same()),
                }
            })
        })
    })
    .unwrap();
    let owner = system.spawn(behavior, "owner").unwrap();
    let adapter = next(&mut adapter_rx).await;
    adapter.tell(Word("a".into()));
    owner.tell(Inbox::Direct("b".into()));
    adapter.tell(Word("c".into()));
    owner.tell(Inbox::Open);
    adapter.tell(Word("d".into()));
    owner.tell(Inbox::Direct("e".into()));
    expect_lines(
        &mut probe,
        &[
            "adapted a",
            "direct b",
            "adapted c",
            "adapted d",
            "direct e",
        ],
    )
    .await;
}

// =================================================================================
// 3. Mailboxes and names
// =================================================================================

/// S30, S29, S31: on a full drop-oldest mailbox an `offer` waits and pushes nothing
/// out ("an offer never drops anything"), while a `tell` there pushes out the
/// oldest; once there is room the offer is accepted and its message handled.
#[tapio::test(start_paused = true)]
async fn s30_s29_an_offer_on_a_full_drop_oldest_mailbox_waits_and_drops_nothing(
    system: ActorSystem,
) {
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let gate = Arc::new(Notify::new());
    let held = gate.clone();
    let actor = system
        .spawn_with(
            Behaviors::receive_message_async(async move |n: u64| {
                if n == 0 {
                    to.tell("in 0".to_string());
                    held.notified().await;
                }
                to.tell(format!("got {n}"));
            }),
            "oldest",
            MailboxConfig::bounded(2, OverflowStrategy::DropOldest).unwrap(),
        )
        .unwrap();
    actor.tell(0_u64);
    expect_lines(&mut probe, &["in 0"]).await;
    actor.tell(1_u64);
    actor.tell(2_u64);
    let offering = actor.clone();
    let offer = tokio::spawn(async move { offering.offer(3_u64).await });
    tokio::time::sleep(ms(100)).await;
    assert!(!offer.is_finished(), "the offer waits for room");
    no_letter_for(&mut sub, actor.path(), ms(50)).await;
    actor.tell(4_u64);
    let pushed = letters_for(&mut sub, actor.path(), 1).await.remove(0);
    assert_eq!(pushed.reason(), &DeadLetterReason::PushedOut);
    assert_eq!(pushed.take_message::<u64>(), Some(1));
    assert!(!offer.is_finished(), "still waiting after the tell");
    gate.notify_one();
    assert!(timeout(T, offer).await.unwrap().unwrap(), "accepted");
    let mut got = probe.receive_messages(4, T).await;
    got.sort();
    assert_eq!(got, ["got 0", "got 2", "got 3", "got 4"]);
    no_letter_for(&mut sub, actor.path(), ms(200)).await;
}

/// S2, S29: `spawn_anonymous_with`, from the system and from a context, gives a
/// generated (`$`) name under the right parent and applies the mailbox bound given.
#[tapio::test(start_paused = true)]
async fn s2_s29_spawn_anonymous_with_gets_a_generated_name_and_its_bound(system: ActorSystem) {
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(Notify::new());
    let gated = {
        let gate = gate.clone();
        let to = probe.actor_ref().clone();
        move || {
            let gate = gate.clone();
            let to = to.clone();
            Behaviors::receive_message_async(async move |n: u64| {
                to.tell(format!("in {n}"));
                if n == 1 {
                    gate.notified().await;
                }
            })
        }
    };
    let bound = MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap();
    let top: ActorRef<u64> = system.spawn_anonymous_with(gated(), bound).unwrap();
    assert!(top.path().name().starts_with('$'), "{}", top.path());
    assert_eq!(
        top.path().to_string(),
        format!("/user/{}", top.path().name())
    );

    let (child_tx, mut child_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let make = gated.clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let child = ctx.spawn_anonymous_with(make(), bound).unwrap();
                let _ = child_tx.send(child);
                Behaviors::receive_message(|_: u64| ())
            }),
            "parent",
        )
        .unwrap();
    let child = next(&mut child_rx).await;
    assert!(child.path().name().starts_with('$'), "{}", child.path());
    assert_eq!(
        child.path().to_string(),
        format!("{}/{}", parent.path(), child.path().name())
    );
    for actor in [&top, &child] {
        actor.tell(1_u64);
        expect_lines(&mut probe, &["in 1"]).await;
        actor.tell(2_u64);
        actor.tell(3_u64);
        let letter = letters_for(&mut sub, actor.path(), 1).await.remove(0);
        assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull);
        assert_eq!(letter.take_message::<u64>(), Some(3));
    }
    gate.notify_one();
    gate.notify_one();
    let mut got = probe.receive_messages(2, T).await;
    got.sort();
    assert_eq!(got, ["in 2", "in 2"]);
}

/// S2, S18: a name is free as soon as a watcher that is not the parent hears
/// `Terminated`, whichever way the actor stopped; over many rounds on two workers.
#[tapio::test(worker_threads = 2)]
async fn s2_s18_a_name_is_free_once_an_outside_watcher_hears_terminated(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let behavior = || Behaviors::receive_message(|_: u64| Behaviors::stopped());
    let mut slot: ActorRef<u64> = system.spawn(behavior(), "slot").unwrap();
    for round in 0..150 {
        probe.watch(&slot);
        if round % 2 == 0 {
            system.stop(&slot).unwrap();
        } else {
            slot.tell(1_u64);
        }
        probe.expect_terminated(&slot, T).await;
        slot = match system.spawn(behavior(), "slot") {
            Ok(r) => r,
            Err(e) => panic!("round {round}: the name is still taken after Terminated: {e}"),
        };
    }
}

// =================================================================================
// 4. Ask on the paused clock, events, struct actors, state machines
// =================================================================================

#[message]
pub struct Count {
    pub reply_to: ActorRef<u64>,
}

/// S22: on the paused clock, an ask with a 30 s deadline is still waiting just
/// before it and fails with `Timeout { after: 30 s }` just after it; the answer sent
/// later is a dead letter `AskEnded` carrying the value.
#[tapio::test(start_paused = true)]
async fn s22_an_ask_times_out_at_its_deadline_not_before_and_the_late_answer_is_lettered(
    system: ActorSystem,
) {
    let mut sub = letters(&system);
    let (keep, mut kept) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let mute = system
        .spawn(
            Behaviors::receive_message(move |c: Count| {
                let _ = keep.send(c.reply_to);
            }),
            "mute",
        )
        .unwrap();
    let ask = mute
        .ask_with(|reply_to| Count { reply_to })
        .timeout(Duration::from_secs(30));
    let waiting = tokio::spawn(async move { ask.await });
    let reply_to = next(&mut kept).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    tokio::time::advance(Duration::from_millis(29_900)).await;
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert!(!waiting.is_finished(), "not before the deadline");
    tokio::time::advance(ms(200)).await;
    let outcome = timeout(T, waiting).await.unwrap().unwrap();
    match outcome {
        Err(AskError::Timeout { target, after }) => {
            assert_eq!(&target, mute.path());
            assert_eq!(after, Duration::from_secs(30));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    reply_to.tell(42_u64);
    let letter = letter_where(&mut sub, |l| l.is::<u64>()).await;
    assert_eq!(letter.reason(), &DeadLetterReason::AskEnded);
    assert_eq!(letter.take_message::<u64>(), Some(42));
}

#[derive(Clone, Debug, PartialEq)]
pub struct Weather(pub u32);

#[derive(Clone, Debug, PartialEq)]
pub struct Noise(pub u32);

/// S49: the event stream carries events of the user's own types, typed: a publish
/// reaches only the subscribers of its type, says how many, and an unsubscribe
/// takes one out; an actor publishes from its handler.
#[tapio::test]
async fn s49_user_events_reach_only_their_type_and_unsubscribe_counts(system: ActorSystem) {
    let events = system.events();
    let mut w1 = events.subscribe::<Weather>();
    let w2 = events.subscribe::<Weather>();
    let mut noise = events.subscribe::<Noise>();
    assert_eq!(events.subscriber_count::<Weather>(), 2);
    assert_eq!(events.subscriber_count::<Noise>(), 1);
    assert_eq!(events.publish(Weather(1)), 2);
    w2.unsubscribe();
    assert_eq!(events.subscriber_count::<Weather>(), 1);
    let reporter = system
        .spawn(
            Behaviors::receive(|ctx, n: u32| {
                ctx.system().events().publish(Weather(n));
            }),
            "reporter",
        )
        .unwrap();
    reporter.tell(2_u32);
    assert_eq!(timeout(T, w1.recv()).await.unwrap(), Some(Weather(1)));
    assert_eq!(timeout(T, w1.recv()).await.unwrap(), Some(Weather(2)));
    assert_eq!(noise.try_recv(), None);
    assert_eq!(events.publish(Noise(3)), 1);
    assert_eq!(timeout(T, noise.recv()).await.unwrap(), Some(Noise(3)));
    assert_eq!(w1.try_recv(), None);
}

#[message]
pub struct Add(pub u64);

#[message]
pub struct Crash;

#[message(reply = u64)]
pub struct Total;

#[derive(Clone)]
pub struct Tally {
    total: u64,
}

#[actor(helpers)]
impl Tally {
    fn add(&mut self, message: Add) {
        self.total += message.0;
    }

    fn crash(&mut self, _: Crash) -> Result<(), Boom> {
        Err(Boom)
    }

    fn total(&mut self, _: Total) -> u64 {
        self.total
    }
}

/// S7, S11, S14: an `#[actor]` struct spawned as a value, under `restart`, comes back
/// as that value (not as the state it had reached), keeps its ref and answers its
/// helpers; two refs spawned from clones of one value do not share state.
#[tapio::test]
async fn s7_s11_a_struct_actor_restarted_comes_back_as_the_value_spawned(system: ActorSystem) {
    let value = Tally { total: 10 };
    let a = system
        .spawn(
            Behaviors::supervise(value.clone()).on_failure::<Boom>(SupervisorStrategy::restart()),
            "tally-a",
        )
        .unwrap();
    let b = system.spawn(value, "tally-b").unwrap();
    a.add(5);
    a.add(7);
    assert_eq!(a.total().timeout(T).await.unwrap(), 22);
    assert_eq!(b.total().timeout(T).await.unwrap(), 10);
    a.crash();
    a.add(1);
    assert_eq!(a.total().timeout(T).await.unwrap(), 11);
    assert_eq!(b.total().timeout(T).await.unwrap(), 10);
}

mod door {
    use tapio::prelude::*;

    #[message]
    pub struct Lock;

    #[message]
    pub struct Unlock;

    #[message(reply = u64)]
    pub struct Peek;

    #[derive(Clone, Default)]
    pub struct Door {
        pub peeks: u64,
    }

    #[actor(helpers, messages(Lock, Unlock, Peek), states(Open => Locked, Locked => Open))]
    impl Door {}

    #[derive(Clone)]
    pub struct Open;

    #[state(Door)]
    impl Open {
        fn lock(self, _: Lock) -> Next<Self> {
            Next::to(Locked)
        }

        fn peek(&mut self, door: &mut Door, _: Peek) -> u64 {
            door.peeks += 1;
            door.peeks
        }
    }

    #[derive(Clone)]
    pub struct Locked;

    #[state(Door)]
    impl Locked {
        fn unlock(self, _: Unlock) -> Next<Self> {
            Next::to(Open)
        }
    }
}

/// S34, S23: an ask queued behind a switch meets the state switched to: refused at
/// once (`NotHandled`, naming that state) although the state it was sent in handles
/// it; after switching back, the same helper is answered.
#[tapio::test]
async fn s34_s23_an_ask_queued_behind_a_switch_is_refused_by_the_state_it_meets(
    system: ActorSystem,
) {
    use door::*;
    let door = system
        .spawn(Machine::new(Door::default(), Open), "door")
        .unwrap();
    assert_eq!(door.peek().timeout(T).await.unwrap(), 1);
    door.lock();
    let started = Instant::now();
    let refused = door.peek().timeout(Duration::from_secs(20)).await;
    match refused {
        Err(AskError::NotHandled { target, state }) => {
            assert_eq!(&target, door.path());
            assert_eq!(state, "Locked");
        }
        other => panic!("expected NotHandled, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    door.unlock();
    assert_eq!(door.peek().timeout(T).await.unwrap(), 2);
}

#[message]
pub enum Flaky {
    Boom,
    Hello(ActorRef<String>),
}

fn escalating_routee() -> Behavior<Flaky> {
    Behaviors::supervise(Behaviors::receive(|ctx, m: Flaky| -> Result<(), Boom> {
        match m {
            Flaky::Boom => Err(Boom),
            Flaky::Hello(to) => {
                to.tell(ctx.path().name().to_string());
                Ok(())
            }
        }
    }))
    .on_failure::<Boom>(SupervisorStrategy::escalate())
    .into()
}

/// S16, S32, S14: a routee that escalates makes its router fail with the routee's
/// error; the router, under `restart`, rebuilds its whole pool (every routee new,
/// the sibling that did not fail too), keeps its ref, and routes again.
#[tapio::test]
async fn s16_s32_a_routee_escalation_restarts_the_router_and_rebuilds_every_routee(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let pool = Routers::pool(2, escalating_routee).unwrap();
    let handle = pool.handle();
    let router = system
        .spawn(
            Behaviors::supervise(pool).on_failure::<Boom>(SupervisorStrategy::restart()),
            "escalated",
        )
        .unwrap();
    probe.watch(&router);
    for _ in 0..2 {
        router.tell(Flaky::Hello(probe.actor_ref().clone()));
    }
    probe.receive_messages(2, T).await;
    let before = handle.routees();
    assert_eq!(before.len(), 2);
    let mut sibling_watch = TestProbe::<String>::new(&system);
    sibling_watch.watch(&before[1]);
    // Round-robin: the next message goes to the first routee.
    router.tell(Flaky::Boom);
    sibling_watch.expect_terminated(&before[1], T).await;
    for _ in 0..4 {
        router.tell(Flaky::Hello(probe.actor_ref().clone()));
    }
    let mut names = probe.receive_messages(4, T).await;
    names.sort();
    names.dedup();
    let after = handle.routees();
    assert_eq!(after.len(), 2, "rebuilt at its size");
    let after_names: Vec<String> = after.iter().map(|r| r.path().name().to_string()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    for name in &names {
        assert!(after_names.contains(name), "{name} not in {after_names:?}");
    }
    for old in &before {
        assert!(
            after.iter().all(|r| r.uid() != old.uid()),
            "{} survived the router's restart",
            old.path()
        );
    }
    probe.expect_no_termination(ms(100)).await;
}

#[message]
pub enum Nest {
    SpawnKid(ActorRef<ActorRef<u64>>),
    Fail,
}

/// S14, S18: a child spawned in a handler does not come back after its parent's
/// restart: it is stopped, so an actor that watched it (not its parent) hears
/// `Terminated` exactly once, and the parent's setup child is still there.
#[tapio::test]
async fn s14_s18_a_handler_child_stopped_by_its_parents_restart_is_heard_by_its_watcher(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut refs = TestProbe::<ActorRef<u64>>::new(&system);
    let generations = Arc::new(AtomicU64::new(0));
    let to = probe.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let g = generations.fetch_add(1, SeqCst) + 1;
                ctx.spawn(Behaviors::receive_message(|_: u64| ()), "from-setup")
                    .unwrap();
                to.tell(format!("g{g} children {}", ctx.children().len()));
                Behaviors::receive(|ctx, m: Nest| -> Result<(), Boom> {
                    match m {
                        Nest::SpawnKid(reply) => {
                            let kid = ctx
                                .spawn(Behaviors::receive_message(|_: u64| ()), "from-handler")
                                .unwrap();
                            reply.tell(kid);
                            Ok(())
                        }
                        Nest::Fail => Err(Boom),
                    }
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "nest",
        )
        .unwrap();
    expect_lines(&mut probe, &["g1 children 1"]).await;
    parent.tell(Nest::SpawnKid(refs.actor_ref().clone()));
    let kid = refs.expect_message(T).await;
    probe.watch(&kid);
    probe.watch(&parent);
    parent.tell(Nest::Fail);
    probe.expect_terminated(&kid, T).await;
    expect_lines(&mut probe, &["g2 children 1"]).await;
    probe.expect_no_termination(ms(200)).await;
    kid.tell(5_u64);
}

mod relay {
    use tapio::prelude::*;

    #[message]
    pub struct Step;

    #[message]
    pub struct Finish;

    #[message(reply = Vec<String>)]
    pub struct Seen;

    #[message]
    pub struct Note(pub String);

    #[derive(Clone, Default)]
    pub struct Relay {
        pub seen: Vec<String>,
    }

    #[actor(
        messages(Step, Finish, Seen, Note),
        states(First => Second, Second => Third, Third)
    )]
    impl Relay {}

    #[derive(Clone)]
    pub struct First;

    #[state(Relay, unhandled = stash)]
    impl First {
        fn step(self, relay: &mut Relay, _: Step) -> Next<Self> {
            relay.seen.push("to second".into());
            Next::to(Second)
        }
    }

    #[derive(Clone)]
    pub struct Second;

    #[state(Relay, unhandled = stash)]
    impl Second {
        fn finish(self, relay: &mut Relay, _: Finish) -> Next<Self> {
            relay.seen.push("to third".into());
            Next::to(Third)
        }
    }

    #[derive(Clone)]
    pub struct Third;

    #[state(Relay)]
    impl Third {
        fn seen(&mut self, relay: &mut Relay, _: Seen) -> Vec<String> {
            relay.seen.clone()
        }

        fn note(&mut self, relay: &mut Relay, Note(text): Note) {
            relay.seen.push(text);
        }
    }
}

/// S34, S27, S21: what a stashing state holds is replayed into the next state, which
/// stashes it again; the state after that takes it all in arrival order, the ask
/// among it is answered, and what came after the switches follows.
#[tapio::test]
async fn s34_s27_a_backlog_stashed_by_two_states_in_a_row_is_taken_in_arrival_order(
    system: ActorSystem,
) {
    use relay::*;
    let relay = system
        .spawn(Machine::new(Relay::default(), First), "relay")
        .unwrap();
    relay.tell(Note("a".into()));
    let asked = relay.ask(Seen).timeout(T);
    relay.tell(Note("b".into()));
    relay.tell(Step);
    relay.tell(Note("c".into()));
    relay.tell(Finish);
    relay.tell(Note("d".into()));
    let seen = asked.await.unwrap();
    assert_eq!(seen, ["to second", "to third", "a"]);
    let all = relay.ask(Seen).timeout(T).await.unwrap();
    assert_eq!(all, ["to second", "to third", "a", "b", "c", "d"]);
}

// =================================================================================
// 5. Remoting on loopback
// =================================================================================

#[message(remote = "sw11.n.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct N(pub u64);

#[message(remote = "sw11.echo.v1", reply = N)]
pub struct Echo(pub u64);

#[derive(Clone, Default)]
pub struct Echoer {
    seen: Arc<AtomicU64>,
}

#[actor]
impl Echoer {
    fn echo(&mut self, message: Echo) -> N {
        self.seen.fetch_add(1, SeqCst);
        N(message.0)
    }
}

#[message(remote = "sw11.cmd.v1")]
#[derive(Debug, Clone)]
pub enum Cmd {
    Crash,
    Say(u64),
}

#[message(remote = "sw11.watcher.v1")]
pub enum WatchProto {
    WatchMe(ActorRef<Cmd>),
    Poke(u64),
}

#[message(remote = "sw11.desk.v1")]
pub enum Desk {
    Ask { n: u64, reply_to: ActorRef<N> },
    Open,
    Crash,
}

#[message(remote = "sw11.mixed.v1")]
pub enum Mixed {
    Tell(u64),
    Ask { n: u64, reply_to: ActorRef<N> },
}

fn settings() -> RemoteSettings {
    RemoteSettings::loopback()
        .heartbeat_interval(ms(100))
        .unreachable_after(Duration::from_secs(3))
}

fn pair() -> TwoNodes {
    two_nodes(settings()).expect("two nodes")
}

fn uri(system: &ActorSystem, path: &str) -> String {
    format!("{}{}", system.address(), path)
}

/// S44, S45, S40: a request lost on the way (`drop_next` toward B) and a reply lost
/// on the way back (`drop_next` toward A) each end the ask as `Timeout` at its
/// deadline, not as a failure of the target; nothing is retried, and the next ask
/// is answered.
#[tokio::test]
async fn s44_s45_a_lost_request_or_reply_is_a_timeout_and_the_next_ask_answers() {
    let nodes = pair();
    let seen = Arc::new(AtomicU64::new(0));
    nodes
        .b
        .spawn(Echoer { seen: seen.clone() }, "echo")
        .unwrap();
    let echo = nodes
        .a
        .resolve::<EchoerMsg>(&uri(&nodes.b, "/user/echo"))
        .unwrap();
    assert_eq!(echo.ask(Echo(0)).timeout(T).await.unwrap(), N(0));

    nodes.a_to_b().drop_next(1);
    let started = Instant::now();
    let lost = echo.ask(Echo(1)).timeout(ms(600)).await;
    assert!(matches!(lost, Err(AskError::Timeout { .. })), "{lost:?}");
    assert!(started.elapsed() >= ms(600), "{:?}", started.elapsed());
    assert_eq!(seen.load(SeqCst), 1, "the request never arrived");
    assert_eq!(echo.ask(Echo(2)).timeout(T).await.unwrap(), N(2));
    assert_eq!(seen.load(SeqCst), 2);

    nodes.b_to_a().drop_next(1);
    let started = Instant::now();
    let lost = echo.ask(Echo(3)).timeout(ms(600)).await;
    assert!(matches!(lost, Err(AskError::Timeout { .. })), "{lost:?}");
    assert!(started.elapsed() >= ms(600), "{:?}", started.elapsed());
    assert_eq!(
        seen.load(SeqCst),
        3,
        "the request arrived, its answer did not"
    );
    assert_eq!(echo.ask(Echo(4)).timeout(T).await.unwrap(), N(4));
    nodes.terminate().await;
}

/// S22, S44, S45: a reply held back by a delay past the deadline ends the ask as
/// `Timeout`; when it arrives it is a dead letter on the asking system (`AskEnded`)
/// with its value; after the delay is cleared an ask is answered.
#[tokio::test]
async fn s22_s44_s45_a_reply_delayed_past_the_deadline_is_lettered_on_the_asker() {
    let nodes = pair();
    let mut sub = letters(&nodes.a);
    nodes.b.spawn(Echoer::default(), "echo").unwrap();
    let echo = nodes
        .a
        .resolve::<EchoerMsg>(&uri(&nodes.b, "/user/echo"))
        .unwrap();
    assert_eq!(echo.ask(Echo(0)).timeout(T).await.unwrap(), N(0));
    nodes.b_to_a().delay(ms(700));
    let late = echo.ask(Echo(5)).timeout(ms(200)).await;
    assert!(matches!(late, Err(AskError::Timeout { .. })), "{late:?}");
    let letter = letter_where(&mut sub, |l| l.is::<N>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::AskEnded,
        "{}",
        describe(&letter)
    );
    assert_eq!(letter.take_message::<N>(), Some(N(5)));
    nodes.b_to_a().clear();
    assert_eq!(echo.ask(Echo(6)).timeout(T).await.unwrap(), N(6));
    nodes.terminate().await;
}

/// S40, S44, S45: twenty asks in flight at once over a link delayed both ways are each
/// answered with their own value, no sooner than the two delays.
#[tokio::test]
async fn s40_s44_pipelined_asks_over_a_delayed_link_each_get_their_own_answer() {
    let nodes = pair();
    nodes.b.spawn(Echoer::default(), "echo").unwrap();
    let echo = nodes
        .a
        .resolve::<EchoerMsg>(&uri(&nodes.b, "/user/echo"))
        .unwrap();
    assert_eq!(echo.ask(Echo(0)).timeout(T).await.unwrap(), N(0));
    nodes.a_to_b().delay(ms(60));
    nodes.b_to_a().delay(ms(60));
    let started = Instant::now();
    let asks: Vec<_> = (1..=20_u64)
        .map(|n| {
            let ask = echo.ask(Echo(n)).timeout(T);
            tokio::spawn(async move { (n, ask.await) })
        })
        .collect();
    for task in asks {
        let (n, answer) = timeout(T, task).await.unwrap().unwrap();
        assert_eq!(answer.unwrap(), N(n));
    }
    assert!(started.elapsed() >= ms(120), "{:?}", started.elapsed());
    nodes.terminate().await;
}

/// S36, S18, S41, S14: A sends B a ref to its own actor inside a message; B watches it
/// and uses it. A restart of the actor is not a stop (B hears nothing, and the ref
/// still reaches the new incarnation); its stop is heard on B exactly once.
#[tokio::test]
async fn s36_s41_s14_a_ref_sent_inside_a_message_is_watched_across_a_restart_then_a_stop() {
    let nodes = pair();
    let (said_tx, mut said) = mpsc::unbounded_channel::<String>();
    let generations = Arc::new(AtomicU64::new(0));
    let target = nodes
        .a
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx| {
                let g = generations.fetch_add(1, SeqCst) + 1;
                let said = said_tx.clone();
                let _ = said.send(format!("start g{g}"));
                Behaviors::receive_message(move |c: Cmd| -> Result<(), Boom> {
                    match c {
                        Cmd::Crash => Err(Boom),
                        Cmd::Say(n) => {
                            let _ = said.send(format!("g{g} says {n}"));
                            Ok(())
                        }
                    }
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "target",
        )
        .unwrap();
    assert_eq!(next(&mut said).await, "start g1");

    let (heard_tx, mut heard) = mpsc::unbounded_channel::<String>();
    let kept: Arc<std::sync::Mutex<Option<ActorRef<Cmd>>>> = Arc::default();
    let on_signal = heard_tx.clone();
    nodes
        .b
        .spawn(
            Behaviors::receive(move |ctx, m: WatchProto| match m {
                WatchProto::WatchMe(r) => {
                    ctx.watch(&r);
                    r.tell(Cmd::Say(1));
                    *kept.lock().unwrap() = Some(r);
                }
                WatchProto::Poke(n) => {
                    if let Some(r) = kept.lock().unwrap().as_ref() {
                        r.tell(Cmd::Say(n));
                    }
                }
            })
            .on_signal(move |_ctx, signal| {
                if let Signal::Terminated(t) = signal {
                    let _ = on_signal.send(format!("terminated {}", t.actor().path().name()));
                }
            }),
            "watcher",
        )
        .unwrap();
    let watcher = nodes
        .a
        .resolve::<WatchProto>(&uri(&nodes.b, "/user/watcher"))
        .unwrap();
    watcher.tell(WatchProto::WatchMe(target.clone()));
    assert_eq!(next(&mut said).await, "g1 says 1");
    target.tell(Cmd::Crash);
    assert_eq!(next(&mut said).await, "start g2");
    watcher.tell(WatchProto::Poke(2));
    assert_eq!(next(&mut said).await, "g2 says 2");
    assert!(
        timeout(ms(300), heard.recv()).await.is_err(),
        "a restart is not a stop"
    );
    nodes.a.stop(&target).unwrap();
    assert_eq!(next(&mut heard).await, "terminated target");
    assert!(
        timeout(ms(300), heard.recv()).await.is_err(),
        "Terminated comes once"
    );
    nodes.terminate().await;
}

/// S14, S23, S44, S31: a remote ask held in a stash on B when B's actor restarts:
/// B letters the request (`StashDiscarded`), A's ask ends without an answer (it is
/// not left hanging past its deadline), and the next incarnation answers a new ask.
#[tokio::test]
async fn s14_s44_a_remote_ask_held_in_a_stash_discarded_by_a_restart_ends() {
    let nodes = pair();
    let mut b_letters = letters(&nodes.b);
    let (stashed_tx, mut stashed) = mpsc::unbounded_channel::<u64>();
    let desk = Behaviors::with_stash(8, move |stash: StashBuffer<Desk>| {
        let stashed_tx = stashed_tx.clone();
        Behaviors::receive_message(move |d: Desk| -> Result<Behavior<Desk>, BoxError> {
            match d {
                Desk::Ask { n, reply_to } => {
                    stash.stash(Desk::Ask { n, reply_to })?;
                    let _ = stashed_tx.send(n);
                    Ok(Behaviors::same())
                }
                Desk::Open => Ok(stash.unstash_all(Behaviors::receive_message(|d: Desk| {
                    if let Desk::Ask { n, reply_to } = d {
                        reply_to.tell(N(n * 10));
                    }
                }))),
                Desk::Crash => Err(Boom.into()),
            }
        })
    })
    .unwrap();
    let on_b = nodes
        .b
        .spawn(
            Behaviors::supervise(desk).on_failure::<Boom>(SupervisorStrategy::restart()),
            "desk",
        )
        .unwrap();
    let remote = desk_on_b(&nodes);
    let ask = remote
        .ask_with(|reply_to| Desk::Ask { n: 1, reply_to })
        .timeout(ms(2_500));
    let started = Instant::now();
    let waiting = tokio::spawn(async move { ask.await });
    assert_eq!(next(&mut stashed).await, 1);
    remote.tell(Desk::Crash);
    let letter = letters_for(&mut b_letters, on_b.path(), 1).await.remove(0);
    assert_eq!(letter.reason(), &DeadLetterReason::StashDiscarded);
    let outcome = timeout(T, waiting).await.unwrap().unwrap();
    assert!(
        matches!(
            outcome,
            Err(AskError::Unanswered { .. } | AskError::Timeout { .. })
        ),
        "{outcome:?}"
    );
    // Locally this ask fails at once as `Unanswered`; across the link it waits
    // for its deadline (see sweep11-findings.rs). Either way it ends.
    assert!(started.elapsed() < T, "{:?}", started.elapsed());
    let again = remote
        .ask_with(|reply_to| Desk::Ask { n: 2, reply_to })
        .timeout(T);
    let again = tokio::spawn(async move { again.await });
    assert_eq!(next(&mut stashed).await, 2);
    remote.tell(Desk::Open);
    assert_eq!(timeout(T, again).await.unwrap().unwrap().unwrap(), N(20));
    nodes.terminate().await;
}

/// S40, S47, S44: a tell, an offer, an ask and a tell from one system to one actor go
/// on one association and arrive in the order sent, whatever way each was sent.
#[tokio::test]
async fn s40_s47_tell_offer_ask_and_tell_keep_their_order_on_one_association() {
    let nodes = pair();
    let (tx, mut rx) = mpsc::unbounded_channel::<u64>();
    nodes
        .b
        .spawn(
            Behaviors::receive_message(move |m: Mixed| match m {
                Mixed::Tell(n) => {
                    let _ = tx.send(n);
                }
                Mixed::Ask { n, reply_to } => {
                    let _ = tx.send(n);
                    reply_to.tell(N(n));
                }
            }),
            "mixed",
        )
        .unwrap();
    let remote = nodes
        .a
        .resolve::<Mixed>(&uri(&nodes.b, "/user/mixed"))
        .unwrap();
    for round in 0..5_u64 {
        let base = round * 10;
        remote.tell(Mixed::Tell(base + 1));
        assert!(remote.offer(Mixed::Tell(base + 2)).await);
        let ask = remote
            .ask_with(|reply_to| Mixed::Ask {
                n: base + 3,
                reply_to,
            })
            .timeout(T);
        remote.tell(Mixed::Tell(base + 4));
        assert!(remote.offer(Mixed::Tell(base + 5)).await);
        assert_eq!(ask.await.unwrap(), N(base + 3));
        let mut got = Vec::new();
        for _ in 0..5 {
            got.push(next(&mut rx).await);
        }
        assert_eq!(got, [base + 1, base + 2, base + 3, base + 4, base + 5]);
    }
    nodes.terminate().await;
}

#[message]
#[derive(Clone)]
pub struct Beat;

/// S25, S42, S40: a fixed-rate timer on A telling an actor on B keeps going through a
/// partition shorter than `unreachable_after`: when it heals every tick's message
/// arrives, in order, none twice, and nobody was given up on.
#[tokio::test]
async fn s25_s42_a_timers_tells_through_a_short_partition_all_arrive_in_order() {
    let nodes = pair();
    let mut gave_up = nodes.a.events().subscribe::<PeerUnreachable>();
    let (tx, mut rx) = mpsc::unbounded_channel::<N>();
    nodes.b.spawn(sink(tx), "beats").unwrap();
    let to_b = nodes.a.resolve::<N>(&uri(&nodes.b, "/user/beats")).unwrap();
    nodes
        .a
        .spawn(
            Behaviors::setup(move |ctx| {
                ctx.timers().start_fixed_rate("beat", Beat, ms(20)).unwrap();
                let sent = AtomicU64::new(0);
                let to_b = to_b.clone();
                Behaviors::receive(move |ctx, _: Beat| {
                    let n = sent.fetch_add(1, SeqCst) + 1;
                    to_b.tell(N(n));
                    if n == 40 {
                        ctx.timers().cancel("beat");
                    }
                })
            }),
            "drummer",
        )
        .unwrap();
    let mut got = Vec::new();
    while got.len() < 5 {
        got.push(next(&mut rx).await.0);
    }
    nodes.partition();
    // The fault lasts this long; nothing waits on it for an outcome.
    tokio::time::sleep(ms(400)).await;
    nodes.heal();
    while got.len() < 40 {
        got.push(next(&mut rx).await.0);
    }
    assert_eq!(got, (1..=40).collect::<Vec<u64>>());
    assert!(
        timeout(ms(200), rx.recv()).await.is_err(),
        "nothing twice, nothing after the cancel"
    );
    assert!(gave_up.try_recv().is_none(), "nobody was given up on");
    nodes.terminate().await;
}

/// S39, S44: an ask to a port nobody listens on fails fast with `Unreachable` (not at
/// its deadline), and its request is a dead letter naming that peer.
#[tokio::test]
async fn s39_s44_an_ask_to_a_port_nobody_listens_on_is_unreachable_at_once() {
    let system = ActorSystem::builder("lonely")
        .remote(settings())
        .build()
        .unwrap();
    let mut sub = letters(&system);
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let ghost = system
        .resolve::<EchoerMsg>(&format!("tapio://ghost@127.0.0.1:{port}/user/echo"))
        .unwrap();
    let started = Instant::now();
    let outcome = ghost.ask(Echo(1)).timeout(Duration::from_secs(20)).await;
    assert!(
        matches!(outcome, Err(AskError::Unreachable { .. })),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let letter = letter_where(&mut sub, |l| l.is::<Echo>() || l.is::<EchoerMsg>()).await;
    match letter.reason() {
        DeadLetterReason::Unreachable { peer } => assert_eq!(peer, ghost.path().address()),
        other => panic!("expected Unreachable, got {other:?}"),
    }
    system.terminate().await;
}

/// S47, S40: `offer` toward a peer resolves as soon as this system's outbound buffer
/// takes the message, not when the far actor gets it: over a link delayed by 600 ms
/// the offer is done long before the message arrives, and it does arrive.
#[tokio::test]
async fn s47_an_offer_to_a_peer_resolves_on_local_room_not_on_delivery() {
    let nodes = pair();
    let (tx, mut rx) = mpsc::unbounded_channel::<N>();
    nodes.b.spawn(sink(tx), "slowly").unwrap();
    let to_b = nodes
        .a
        .resolve::<N>(&uri(&nodes.b, "/user/slowly"))
        .unwrap();
    assert!(to_b.offer(N(0)).await);
    assert_eq!(next(&mut rx).await, N(0));
    nodes.a_to_b().delay(ms(600));
    let started = Instant::now();
    assert!(timeout(T, to_b.offer(N(1))).await.unwrap());
    let offered = started.elapsed();
    assert!(
        offered < ms(300),
        "the offer waited for delivery: {offered:?}"
    );
    assert_eq!(next(&mut rx).await, N(1));
    assert!(started.elapsed() >= ms(600), "{:?}", started.elapsed());
    nodes.terminate().await;
}

/// S45, S41: `drop_next` loses messages, never the link's own frames: a watch made
/// just before a dropped message still holds (the stop is heard), while the message
/// after the watch is the one lost, and the next one arrives.
#[tokio::test]
async fn s45_s41_drop_next_loses_the_message_not_the_watch_made_before_it() {
    let nodes = pair();
    let (tx, mut rx) = mpsc::unbounded_channel::<N>();
    let target = nodes.b.spawn(sink(tx), "target").unwrap();
    let on_b = nodes
        .a
        .resolve::<N>(&uri(&nodes.b, "/user/target"))
        .unwrap();
    on_b.tell(N(0));
    assert_eq!(next(&mut rx).await, N(0));
    let (heard_tx, mut heard) = mpsc::unbounded_channel::<String>();
    let (go_tx, mut go) = mpsc::unbounded_channel::<()>();
    nodes.a_to_b().drop_next(1);
    let watched = on_b.clone();
    nodes
        .a
        .spawn(
            Behaviors::setup(move |ctx| {
                ctx.watch(&watched);
                watched.tell(N(1));
                watched.tell(N(2));
                let _ = go_tx.send(());
                Behaviors::receive_message(|_: u64| ()).on_signal({
                    let heard = heard_tx.clone();
                    move |_ctx, signal| {
                        if let Signal::Terminated(t) = signal {
                            let _ = heard.send(t.actor().path().name().to_string());
                        }
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    next(&mut go).await;
    assert_eq!(next(&mut rx).await, N(2), "N(1) is the message lost");
    nodes.b.stop(&target).unwrap();
    assert_eq!(next(&mut heard).await, "target");
    nodes.terminate().await;
}

/// S23, S44, S27: a remote ask held in a stash on B when B's actor stops: A's ask
/// fails with `TargetTerminated` long before its deadline.
#[tokio::test]
async fn s23_s44_a_remote_ask_held_in_a_stash_fails_fast_when_its_holder_stops() {
    let nodes = pair();
    let (stashed_tx, mut stashed) = mpsc::unbounded_channel::<u64>();
    let desk = Behaviors::with_stash(8, move |stash: StashBuffer<Desk>| {
        let stashed_tx = stashed_tx.clone();
        Behaviors::receive_message(move |d: Desk| -> Result<Behavior<Desk>, StashOverflow> {
            match d {
                Desk::Ask { n, reply_to } => {
                    stash.stash(Desk::Ask { n, reply_to })?;
                    let _ = stashed_tx.send(n);
                    Ok(Behaviors::same())
                }
                Desk::Open => Ok(Behaviors::same()),
                Desk::Crash => Ok(Behaviors::stopped()),
            }
        })
    })
    .unwrap();
    nodes.b.spawn(desk, "desk").unwrap();
    let remote = desk_on_b(&nodes);
    let ask = remote
        .ask_with(|reply_to| Desk::Ask { n: 1, reply_to })
        .timeout(Duration::from_secs(20));
    let waiting = tokio::spawn(async move { ask.await });
    assert_eq!(next(&mut stashed).await, 1);
    let started = Instant::now();
    remote.tell(Desk::Crash);
    let outcome = timeout(T, waiting).await.unwrap().unwrap();
    assert!(
        matches!(outcome, Err(AskError::TargetTerminated { .. })),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    nodes.terminate().await;
}

#[message(remote = "sw11.poll.v1")]
#[derive(Clone)]
pub struct RemotePoll {
    pub reply_to: ActorRef<N>,
}

/// S44, S32, S22: an ask from A to a broadcast pool on B is answered by every routee:
/// the first answer resolves the ask, and the others are dead letters on A saying
/// the promise had its answer already.
#[tokio::test]
async fn s44_s32_a_remote_ask_to_a_broadcast_pool_letters_the_extra_answers_on_the_asker() {
    let nodes = pair();
    let mut a_letters = letters(&nodes.a);
    let pool = Routers::pool(3, || {
        Behaviors::receive(|ctx, p: RemotePoll| {
            let n: u64 = ctx
                .path()
                .name()
                .trim_start_matches("routee-")
                .parse()
                .unwrap();
            p.reply_to.tell(N(n));
        })
    })
    .unwrap()
    .broadcast();
    nodes.b.spawn(pool, "fanout").unwrap();
    let remote = nodes
        .a
        .resolve::<RemotePoll>(&uri(&nodes.b, "/user/fanout"))
        .unwrap();
    let first = remote
        .ask_with(|reply_to| RemotePoll { reply_to })
        .timeout(T)
        .await
        .unwrap();
    let mut got = vec![first.0];
    for _ in 0..2 {
        let letter = letter_where(&mut a_letters, |l| l.is::<N>()).await;
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::AlreadyAnswered,
            "{}",
            describe(&letter)
        );
        got.push(letter.take_message::<N>().unwrap().0);
    }
    got.sort_unstable();
    assert_eq!(got, [1, 2, 3]);
    nodes.terminate().await;
}

#[message(remote = "sw11.open-session.v1", reply = Session)]
pub struct OpenSession;

#[message(remote = "sw11.session.v1")]
pub struct Session {
    pub worker: ActorRef<Cmd>,
}

#[derive(Clone)]
pub struct Sessions {
    said: mpsc::UnboundedSender<u64>,
}

#[actor]
impl Sessions {
    fn open(&mut self, ctx: &mut Ctx<Self>, _: OpenSession) -> Session {
        let said = self.said.clone();
        let worker = ctx
            .spawn_anonymous(Behaviors::receive_message(move |c: Cmd| match c {
                Cmd::Say(n) => {
                    let _ = said.send(n);
                    Behaviors::same()
                }
                Cmd::Crash => Behaviors::stopped(),
            }))
            .unwrap();
        Session { worker }
    }
}

/// S36, S2, S41, S44: the answer to a remote ask carries a ref to an anonymous actor
/// the answering actor just spawned; on A it is a live ref to it (its tells arrive,
/// in order), A watches it, and hears `Terminated` when it stops.
#[tokio::test]
async fn s36_s41_a_ref_to_a_fresh_anonymous_child_inside_a_reply_is_live_and_watchable() {
    let nodes = pair();
    let (said_tx, mut said) = mpsc::unbounded_channel::<u64>();
    nodes
        .b
        .spawn(Sessions { said: said_tx }, "sessions")
        .unwrap();
    let sessions = nodes
        .a
        .resolve::<SessionsMsg>(&uri(&nodes.b, "/user/sessions"))
        .unwrap();
    let session = sessions.ask(OpenSession).timeout(T).await.unwrap();
    let worker = session.worker;
    assert!(worker.path().name().starts_with('$'), "{}", worker.path());
    assert_eq!(worker.path().address(), nodes.b.address());
    for n in 1..=5 {
        worker.tell(Cmd::Say(n));
    }
    for n in 1..=5 {
        assert_eq!(next(&mut said).await, n);
    }
    let mut probe = TestProbe::<String>::new(&nodes.a);
    probe.watch(&worker);
    worker.tell(Cmd::Crash);
    probe.expect_terminated(&worker, T).await;
    nodes.terminate().await;
}

#[message]
pub enum Watcher {
    Watch(ActorRef<Cmd>),
    Unwatch(ActorRef<Cmd>),
    WatchStopUnwatch(ActorRef<Cmd>),
}

/// A local actor that watches, unwatches, and reports each `Terminated` it hears
/// (name of the watcher, name of the actor).
fn watcher(name: &'static str, heard: mpsc::UnboundedSender<String>) -> Behavior<Watcher> {
    Behaviors::receive(move |ctx, m: Watcher| match m {
        Watcher::Watch(r) => ctx.watch(&r),
        Watcher::Unwatch(r) => ctx.unwatch(&r),
        Watcher::WatchStopUnwatch(r) => {
            ctx.watch(&r);
            r.tell(Cmd::Crash);
            ctx.unwatch(&r);
        }
    })
    .on_signal(move |_ctx, signal| {
        if let Signal::Terminated(t) = signal {
            let _ = heard.send(format!("{name} heard {}", t.actor().path().name()));
        }
    })
    .into()
}

/// A B-side actor that stops on `Crash` and reports `Say`.
fn stoppable(said: mpsc::UnboundedSender<u64>) -> Behavior<Cmd> {
    Behaviors::receive_message(move |c: Cmd| match c {
        Cmd::Say(n) => {
            let _ = said.send(n);
            Behaviors::same()
        }
        Cmd::Crash => Behaviors::stopped(),
    })
    .into()
}

/// S18, S41: two actors on A watch one actor on B; one of them unwatches; when the
/// actor stops, the other still hears `Terminated` (once), the one that unwatched
/// hears nothing.
#[tokio::test]
async fn s18_s41_one_of_two_remote_watchers_unwatching_leaves_the_other_watching() {
    let nodes = pair();
    let (said_tx, mut said) = mpsc::unbounded_channel::<u64>();
    nodes.b.spawn(stoppable(said_tx), "watched").unwrap();
    let on_b = nodes
        .a
        .resolve::<Cmd>(&uri(&nodes.b, "/user/watched"))
        .unwrap();
    let (heard_tx, mut heard) = mpsc::unbounded_channel::<String>();
    let w1 = nodes
        .a
        .spawn(watcher("w1", heard_tx.clone()), "w1")
        .unwrap();
    let w2 = nodes.a.spawn(watcher("w2", heard_tx), "w2").unwrap();
    w1.tell(Watcher::Watch(on_b.clone()));
    w2.tell(Watcher::Watch(on_b.clone()));
    // A round trip after both watches were made: each watch has reached B by then.
    on_b.tell(Cmd::Say(1));
    assert_eq!(next(&mut said).await, 1);
    w1.tell(Watcher::Unwatch(on_b.clone()));
    on_b.tell(Cmd::Say(2));
    assert_eq!(next(&mut said).await, 2);
    on_b.tell(Cmd::Crash);
    assert_eq!(next(&mut heard).await, "w2 heard watched");
    assert!(
        timeout(ms(400), heard.recv()).await.is_err(),
        "only w2, and once"
    );
    nodes.terminate().await;
}

/// S18, S41: an actor that watches a remote actor, tells it to stop and unwatches it,
/// all in one handler, never hears `Terminated`, though the stop happens and its
/// notice crosses the link; over twenty actors at once.
#[tokio::test]
async fn s18_s41_unwatching_a_remote_actor_in_the_turn_that_stops_it_hears_nothing() {
    let nodes = pair();
    let (said_tx, mut said) = mpsc::unbounded_channel::<u64>();
    let (heard_tx, mut heard) = mpsc::unbounded_channel::<String>();
    let mut targets = Vec::new();
    for i in 0..20 {
        let name = format!("t{i}");
        let local = nodes.b.spawn(stoppable(said_tx.clone()), &name).unwrap();
        let remote = nodes
            .a
            .resolve::<Cmd>(&uri(&nodes.b, &format!("/user/{name}")))
            .unwrap();
        targets.push((local, remote));
    }
    for (_, remote) in &targets {
        remote.tell(Cmd::Say(0));
    }
    for _ in 0..20 {
        assert_eq!(next(&mut said).await, 0);
    }
    let mut ends = TestProbe::<String>::new(&nodes.b);
    for (local, _) in &targets {
        ends.watch(local);
    }
    let w = nodes.a.spawn(watcher("w", heard_tx.clone()), "w").unwrap();
    for (_, remote) in &targets {
        w.tell(Watcher::WatchStopUnwatch(remote.clone()));
    }
    for (local, _) in &targets {
        ends.expect_terminated(local, T).await;
    }
    // A control watch made afterwards is heard: the notices had time to cross.
    let control = nodes.b.spawn(stoppable(said_tx), "control").unwrap();
    let control_remote = nodes
        .a
        .resolve::<Cmd>(&uri(&nodes.b, "/user/control"))
        .unwrap();
    w.tell(Watcher::Watch(control_remote.clone()));
    control_remote.tell(Cmd::Say(9));
    assert_eq!(next(&mut said).await, 9);
    nodes.b.stop(&control).unwrap();
    assert_eq!(next(&mut heard).await, "w heard control");
    assert!(
        timeout(ms(300), heard.recv()).await.is_err(),
        "nothing for the unwatched ones"
    );
    nodes.terminate().await;
}

// ----------------------------------------------------------- requests dropped there

/// Ask `target` for `Desk::Ask { n: 1 }`, wait until `held` says its actor has the
/// request, do `then`, and give the ask's outcome. The deadline is far: an outcome
/// other than `Timeout` came from the other side.
async fn ask_desk(
    target: &ActorRef<Desk>,
    held: &mut mpsc::UnboundedReceiver<u64>,
    then: impl FnOnce(),
) -> Result<N, AskError> {
    let ask = target
        .ask_with(|reply_to| Desk::Ask { n: 1, reply_to })
        .timeout(Duration::from_secs(30));
    let waiting = tokio::spawn(async move { ask.await });
    assert_eq!(next(held).await, 1);
    then();
    timeout(T, waiting)
        .await
        .expect("the ask ended before the test's bound")
        .expect("the ask's task")
}

/// The ref, resolved on a, to the actor named "desk" on b.
fn desk_on_b(nodes: &TwoNodes) -> ActorRef<Desk> {
    nodes
        .a
        .resolve::<Desk>(&uri(&nodes.b, "/user/desk"))
        .unwrap()
}

/// A desk on b that drops each request's reply ref unanswered and then says which
/// request it had; the ref to it from a, and what it says.
fn dropping_desk_on_b(nodes: &TwoNodes) -> (ActorRef<Desk>, mpsc::UnboundedReceiver<u64>) {
    let (held_tx, held) = mpsc::unbounded_channel::<u64>();
    nodes
        .b
        .spawn(
            Behaviors::receive_message(move |d: Desk| {
                if let Desk::Ask { n, reply_to } = d {
                    drop(reply_to);
                    let _ = held_tx.send(n);
                }
            }),
            "desk",
        )
        .unwrap();
    (desk_on_b(nodes), held)
}

/// S14, S44: a request from another system held in a stash that a restart discards
/// fails its ask at once with `Unanswered`, as a local one does, not at the deadline.
#[tokio::test]
async fn s14_s44_a_remote_request_discarded_from_a_stash_is_unanswered_at_once() {
    let nodes = pair();
    let (held_tx, mut held) = mpsc::unbounded_channel::<u64>();
    let desk = Behaviors::supervise(
        Behaviors::with_stash(8, move |stash: StashBuffer<Desk>| {
            let held_tx = held_tx.clone();
            Behaviors::receive_message(move |d: Desk| -> Result<(), BoxError> {
                match d {
                    Desk::Ask { n, reply_to } => {
                        stash.stash(Desk::Ask { n, reply_to })?;
                        let _ = held_tx.send(n);
                    }
                    Desk::Open => {}
                    Desk::Crash => return Err(Boom.into()),
                }
                Ok(())
            })
        })
        .unwrap(),
    )
    .on_failure::<Boom>(SupervisorStrategy::restart());
    nodes.b.spawn(desk, "desk").unwrap();
    let remote = desk_on_b(&nodes);
    let outcome = ask_desk(&remote, &mut held, || remote.tell(Desk::Crash)).await;
    assert!(
        matches!(&outcome, Err(AskError::Unanswered { target }) if target.name() == "desk"),
        "{outcome:?}"
    );
    nodes.terminate().await;
}

/// S21, S44: a handler on another system that drops the request's reply ref without
/// answering fails the ask at once with `Unanswered`, as a local handler does.
#[tokio::test]
async fn s21_s44_a_remote_handler_that_drops_the_reply_ref_is_unanswered_at_once() {
    let nodes = pair();
    let (remote, mut held) = dropping_desk_on_b(&nodes);
    let outcome = ask_desk(&remote, &mut held, || ()).await;
    assert!(
        matches!(outcome, Err(AskError::Unanswered { .. })),
        "{outcome:?}"
    );
    nodes.terminate().await;
}

/// S44, S36: a handler that passes the reply ref on, in a message to an actor of a
/// third place (here back on the asking system), has not dropped the request: the
/// answer that actor gives reaches the ask.
#[tokio::test]
async fn s44_s36_a_reply_ref_passed_on_across_the_link_is_not_unanswered() {
    let nodes = pair();
    let answerer = nodes
        .a
        .spawn(
            Behaviors::receive_message(|d: Desk| {
                if let Desk::Ask { n, reply_to } = d {
                    reply_to.tell(N(n * 10));
                }
            }),
            "answerer",
        )
        .unwrap();
    let onward = nodes.b.resolve::<Desk>(&answerer.to_string()).unwrap();
    let (held_tx, mut held) = mpsc::unbounded_channel::<u64>();
    nodes
        .b
        .spawn(
            Behaviors::receive_message(move |d: Desk| {
                if let Desk::Ask { n, reply_to } = d {
                    onward.tell(Desk::Ask { n, reply_to });
                    let _ = held_tx.send(n);
                }
            }),
            "desk",
        )
        .unwrap();
    let remote = desk_on_b(&nodes);
    for _ in 0..20 {
        let outcome = ask_desk(&remote, &mut held, || ()).await;
        assert_eq!(outcome, Ok(N(10)));
    }
    nodes.terminate().await;
}

/// S23, S44: the target passes the request to a worker of its own, which stops
/// holding it. The target did not stop, so the ask fails at once with `Unanswered`,
/// as a local one does; `TargetTerminated` is for the target's own end.
#[tokio::test]
async fn s23_s44_a_request_passed_to_a_worker_that_stops_is_unanswered_not_terminated() {
    let nodes = pair();
    let (held_tx, mut held) = mpsc::unbounded_channel::<u64>();
    let worker = nodes
        .b
        .spawn(
            Behaviors::setup(move |_| {
                let held_tx = held_tx.clone();
                let kept = std::sync::Mutex::new(Vec::new());
                Behaviors::receive_message(move |d: Desk| match d {
                    Desk::Ask { n, reply_to } => {
                        kept.lock().unwrap().push(reply_to);
                        let _ = held_tx.send(n);
                        Behaviors::same()
                    }
                    Desk::Open | Desk::Crash => Behaviors::stopped(),
                })
            }),
            "worker",
        )
        .unwrap();
    let to_worker = worker.clone();
    nodes
        .b
        .spawn(
            Behaviors::receive_message(move |d: Desk| to_worker.tell(d)),
            "desk",
        )
        .unwrap();
    let remote = desk_on_b(&nodes);
    let outcome = ask_desk(&remote, &mut held, || worker.tell(Desk::Crash)).await;
    assert!(
        matches!(outcome, Err(AskError::Unanswered { .. })),
        "{outcome:?}"
    );
    nodes.terminate().await;
}

/// S37, S44: a peer's message carrying a ref to a promise at some third address,
/// which the actor drops unused, does not make this system dial that address: only
/// a system it is linked with hears that a request went unanswered.
#[tokio::test]
async fn s37_s44_an_unused_promise_ref_naming_a_third_address_dials_nobody() {
    let nodes = pair();
    let elsewhere = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = elsewhere.local_addr().unwrap().port();
    let (remote, mut held) = dropping_desk_on_b(&nodes);
    let third = format!("tapio://third@127.0.0.1:{port}/system/promises/7");
    let reply_to = nodes.a.resolve::<N>(&third).unwrap();
    remote.tell(Desk::Ask { n: 5, reply_to });
    assert_eq!(next(&mut held).await, 5);
    // The drop happened before `held` heard; a dial would follow at once.
    let dialled = timeout(ms(500), elsewhere.accept()).await;
    assert!(dialled.is_err(), "b dialled the address a peer's ref named");
    nodes.terminate().await;
}

#[message(remote = "sw11.failing.v1", reply = N)]
pub struct Failing(pub u64);

/// Answers a `Failing` with an error: its handler fails.
#[derive(Clone, Default)]
pub struct Failer;

#[actor]
impl Failer {
    fn failing(&mut self, _: Failing) -> Result<N, Boom> {
        Err(Boom)
    }
}

/// S9, S23, S44: a request whose handler fails, with the default decision (stop):
/// the ask fails at once as it does locally, with `TargetTerminated`, whether the
/// target is here or on another system.
#[tokio::test]
async fn s9_s23_s44_a_request_whose_handler_fails_and_stops_the_target_is_terminated() {
    let nodes = pair();
    let local = nodes.a.spawn(Failer, "failer").unwrap();
    nodes.b.spawn(Failer, "failer").unwrap();
    let remote = nodes
        .a
        .resolve::<FailerMsg>(&uri(&nodes.b, "/user/failer"))
        .unwrap();
    for target in [local, remote] {
        let outcome = timeout(T, target.ask(Failing(1)).timeout(Duration::from_secs(30)))
            .await
            .expect("the ask ended before the test's bound");
        assert!(
            matches!(outcome, Err(AskError::TargetTerminated { .. })),
            "{target}: {outcome:?}"
        );
    }
    nodes.terminate().await;
}
