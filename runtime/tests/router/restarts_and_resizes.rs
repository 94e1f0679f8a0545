//! Routers under restarts, shrinks, backoff, resizes, broadcast asks and escalation:
//! routees rebuilt at the last size, watched when removed, reached after a backoff, and
//! answers after the first lettered (S13, S14, S16, S18, S21, S31, S32).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::later_combinations::*;
use crate::support::outside;
use outside::{Boom, T, describe, letters, ms};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use tapio::DeadLetterReason;
use tapio::prelude::*;
use tapio::router::{Pool, PoolHandle, RouterError};
use tapio::testkit::TestProbe;
use tokio::time::Instant;

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
        let letter = letter_where(&mut sub, T, |l| l.is::<String>()).await;
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
