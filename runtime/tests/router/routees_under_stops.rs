//! Routers under stops and restarts: asks into a full router, groups with repeated
//! refs, restarting and stash-overflowing routees, asks through adapters, resizes,
//! stashed asks, timers of removed routees, and the testkit running or watching routers
//! (S11, S15, S18, S21, S23, S25-S29, S31, S32, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use crate::support::stops_and_restarts::*;
use outside::{
    Boom, T, describe, entries, expect_lines, letters, letters_for, ms, new_log, next, push,
};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, LeakReport, Outcome, TestInbox, TestProbe};
use tapio::{
    AskError, DeadLetterReason, MailboxConfig, OverflowStrategy, StashBuffer, StashOverflow,
};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::{Instant, timeout};

/// The number in the name of a pool's routee (`routee-{n}`).
fn routee_number<M: Message>(ctx: &ActorContext<M>) -> u64 {
    ctx.path()
        .name()
        .trim_start_matches("routee-")
        .parse()
        .unwrap()
}

/// Tells `router` jobs 1 to 3 (each made a message by `wrap`), answered to `probe`.
fn tell_jobs_one_to_three<M: Message>(
    router: &ActorRef<M>,
    probe: &TestProbe<u64>,
    wrap: impl Fn(Job) -> M,
) {
    for n in 1..=3 {
        router.tell(wrap(Job {
            n,
            reply_to: probe.actor_ref().clone(),
        }));
    }
}

/// Poll `check` until it holds, for at most `T` (sleeping a millisecond between
/// looks, which costs nothing on a paused clock).
async fn until(mut check: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + T;
    while !check() {
        assert!(Instant::now() < deadline, "not within {T:?}: {what}");
        tokio::time::sleep(ms(1)).await;
    }
}

/// A worker that reports `{name} {n}` on its reply ref.
#[message]
pub struct Job {
    pub n: u64,
    pub reply_to: ActorRef<u64>,
}

/// S21, S29, S32: a router's own bound applies to asks too: an ask into a pool
/// router whose bounded drop-new mailbox is full fails at once with `MailboxFull`
/// naming the router, while what the router had taken is answered.
#[tapio::test(start_paused = true)]
async fn s21_s29_s32_an_ask_into_a_routers_full_mailbox_fails_at_once_naming_the_router(
    system: ActorSystem,
) {
    let pool = Routers::pool(2, || {
        Behaviors::receive_message(|job: Job| job.reply_to.tell(job.n * 2))
    })
    .unwrap();
    let router = system
        .spawn_with(
            pool,
            "bounded-router",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    // Nothing runs between these two lines on this one thread: the router has not
    // read its mailbox, whose one place the first request takes.
    let first = router.ask_with(|reply_to| Job { n: 1, reply_to });
    let second = router.ask_with(|reply_to| Job { n: 2, reply_to });
    let second = second.timeout(Duration::from_secs(60)).await;
    assert!(
        matches!(&second, Err(AskError::MailboxFull { target }) if target == router.path()),
        "{second:?}"
    );
    assert_eq!(first.timeout(T).await, Ok(2));
    assert_eq!(
        router
            .ask_with(|reply_to| Job { n: 3, reply_to })
            .timeout(T)
            .await,
        Ok(6)
    );
}

// =================================================================================
// 2. Routers (S32, S11, S18, S23, S26, S28)
// =================================================================================

/// A routee that reports `{label} {n}` and stops on 0.
fn labelled(label: &'static str, to: ActorRef<String>) -> Behavior<u64> {
    Behaviors::receive_message(move |n: u64| {
        if n == 0 {
            return Behaviors::stopped();
        }
        to.tell(format!("{label} {n}"));
        Behaviors::same()
    })
    .into()
}

/// S32, S18: a ref given twice to a group counts once: strict rotation goes a, b, a,
/// b; and once both stop the router stops (a ref counted twice would keep it alive).
#[tapio::test(start_paused = true)]
async fn s32_s18_a_group_given_a_ref_twice_rotates_over_it_once_and_stops_with_the_last(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let a = system
        .spawn(labelled("a", probe.actor_ref().clone()), "a")
        .unwrap();
    let b = system
        .spawn(labelled("b", probe.actor_ref().clone()), "b")
        .unwrap();
    let router = system
        .spawn(
            Routers::group([a.clone(), b.clone(), a.clone()]).unwrap(),
            "twice",
        )
        .unwrap();
    for n in 1..=4_u64 {
        router.tell(n);
    }
    let mut got = probe.receive_messages(4, T).await;
    got.sort();
    assert_eq!(got, ["a 1", "a 3", "b 2", "b 4"]);
    probe.watch(&router);
    a.tell(0_u64);
    b.tell(0_u64);
    probe.expect_terminated(&router, T).await;
}

/// S32, S11, S14, S18: a group routee that restarts keeps its place in the rotation:
/// a restart is not an end, so the group neither drops it nor stops.
#[tapio::test(start_paused = true)]
async fn s32_s11_a_group_routee_that_restarts_keeps_its_place(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let setups = Arc::new(AtomicU64::new(0));
    let counted = setups.clone();
    let a = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
                counted.fetch_add(1, SeqCst);
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| {
                    if n == 13 {
                        return Err(Boom);
                    }
                    to.tell(format!("a {n}"));
                    Ok(())
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "a",
        )
        .unwrap();
    let b = system
        .spawn(labelled("b", probe.actor_ref().clone()), "b")
        .unwrap();
    let router = system
        .spawn(Routers::group([a.clone(), b.clone()]).unwrap(), "group")
        .unwrap();
    probe.watch(&router);
    probe.watch(&a);
    for n in [13, 2, 3, 4, 5, 6] {
        router.tell(n);
    }
    let mut got = probe.receive_messages(5, T).await;
    got.sort();
    assert_eq!(got, ["a 3", "a 5", "b 2", "b 4", "b 6"]);
    assert_eq!(setups.load(SeqCst), 2);
    probe.expect_no_termination(ms(200)).await;
}

/// S32, S26, S14, S31: routees that stash, overflow and restart do so in place: each
/// letters the overflowing message (`StashFull`) and then what its stash held
/// (`StashDiscarded`), in that order, naming itself; the pool keeps its routees and
/// its rotation, and the restarted stashes fill and replay again.
#[tapio::test(start_paused = true)]
async fn s32_s26_stash_overflows_restart_routees_in_place_and_letter_their_stashes(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let (mut probe, to) = probe_and_ref(&system);
    let pool = Routers::pool(2, move || {
        let to = to.clone();
        Behaviors::supervise(
            Behaviors::with_stash(2, move |stash: StashBuffer<u64>| {
                let to = to.clone();
                Behaviors::receive(move |ctx, n: u64| {
                    if n == 0 {
                        let name = ctx.path().name().to_owned();
                        let to = to.clone();
                        return Ok(stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                            to.tell(format!("{name} {n}"))
                        })));
                    }
                    stash.stash(n).map(|()| Behaviors::same())
                })
            })
            .unwrap(),
        )
        .on_failure::<StashOverflow>(SupervisorStrategy::restart())
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "stashers").unwrap();
    until(
        || handle.routees().len() == 2,
        "the router starts its routees",
    )
    .await;
    for n in 1..=6_u64 {
        router.tell(n);
    }
    let routees = handle.routees();
    assert_eq!(routees.len(), 2);
    for (routee, odd) in routees.iter().zip([true, false]) {
        let got: Vec<(u64, DeadLetterReason)> = letters_for(&mut dead, routee.path(), 3)
            .await
            .iter()
            .map(|l| (l.take_message::<u64>().unwrap(), l.reason().clone()))
            .collect();
        let (x, y, z) = if odd { (5, 1, 3) } else { (6, 2, 4) };
        assert_eq!(
            got,
            [
                (x, DeadLetterReason::StashFull),
                (y, DeadLetterReason::StashDiscarded),
                (z, DeadLetterReason::StashDiscarded)
            ]
        );
    }
    assert_eq!(handle.routees(), routees, "the same routees, in place");
    for n in [7, 8, 0, 0] {
        router.tell(n);
    }
    let mut got = probe.receive_messages(2, T).await;
    got.sort();
    assert_eq!(got, ["routee-1 7", "routee-2 8"]);
}

/// A holder's adapter, built in setup, and the id it answers with.
fn answering_owner(
    id: u64,
    adapter_tx: mpsc::UnboundedSender<ActorRef<Foreign>>,
) -> Behavior<Held> {
    Behaviors::setup(move |ctx: &mut ActorContext<Held>| {
        let adapter = ctx.message_adapter(|foreign: Foreign| match foreign {
            Foreign::Value(n) => Held::N(n),
            Foreign::Lookup(n, reply_to) => Held::Ask(n, reply_to),
        });
        let _ = adapter_tx.send(adapter);
        Behaviors::receive_message(move |held: Held| {
            if let Held::Ask(n, reply_to) = held {
                reply_to.tell(n * 10 + id);
            }
        })
    })
}

/// S32, S28, S21: `ask_with` through a group of adapters is answered by their
/// owners in strict rotation (the reply ref travels inside the translated message);
/// when both owners stop, their adapters leave and the group stops.
#[tapio::test(start_paused = true)]
async fn s32_s28_asks_through_a_group_of_adapters_are_answered_by_their_owners(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel();
    let one = system
        .spawn(answering_owner(1, adapter_tx.clone()), "one")
        .unwrap();
    let two = system.spawn(answering_owner(2, adapter_tx), "two").unwrap();
    let adapters = [next(&mut adapter_rx).await, next(&mut adapter_rx).await];
    let router = system
        .spawn(Routers::group(adapters).unwrap(), "adapters")
        .unwrap();
    let mut answers = Vec::new();
    for n in 1..=4 {
        answers.push(
            router
                .ask_with(|reply_to| Foreign::Lookup(n, reply_to))
                .timeout(T)
                .await
                .unwrap(),
        );
    }
    // Which owner's adapter came first depends on which setup ran first.
    let ids: Vec<u64> = answers.iter().map(|a| a % 10).collect();
    assert!(ids == [1, 2, 1, 2] || ids == [2, 1, 2, 1], "{answers:?}");
    assert_eq!(
        answers.iter().map(|a| a / 10).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    probe.watch(&router);
    system.stop(&one).unwrap();
    system.stop(&two).unwrap();
    probe.expect_terminated(&router, T).await;
}

/// S32, S18: a routee that stopped on its own leaves the pool, and a resize to the
/// size the pool was built with replaces it, at the end of the rotation.
#[tapio::test(start_paused = true)]
async fn s32_a_resize_replaces_a_routee_that_stopped_on_its_own(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let pool = Routers::pool(3, || {
        Behaviors::receive(|ctx, job: Job| {
            if job.n == 0 {
                return Behaviors::stopped();
            }
            let id = routee_number(ctx);
            job.reply_to.tell(id);
            Behaviors::same()
        })
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "resized").unwrap();
    until(
        || handle.routees().len() == 3,
        "the router starts its routees",
    )
    .await;
    let first = handle.routees()[0].clone();
    probe.watch(&first);
    router.tell(Job {
        n: 0,
        reply_to: probe.actor_ref().clone(),
    });
    probe.expect_terminated(&first, T).await;
    until(
        || handle.routees().len() == 2,
        "the pool drops the stopped routee",
    )
    .await;
    handle.resize(3).unwrap();
    tell_jobs_one_to_three(&router, &probe, |job| job);
    let mut ids = probe.receive_messages(3, T).await;
    ids.sort();
    assert_eq!(ids, [2, 3, 4]);
    let names: Vec<String> = handle
        .routees()
        .iter()
        .map(|r| r.path().name().to_owned())
        .collect();
    assert_eq!(names, ["routee-2", "routee-3", "routee-4"]);
}

/// S32: before its router starts, a pool's handle has no router and a resize sets
/// the size the router starts with.
#[tapio::test(start_paused = true)]
async fn s32_a_resize_before_the_router_starts_sets_its_starting_size(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let pool = Routers::pool(1, || {
        Behaviors::receive(|ctx, job: Job| {
            let id = routee_number(ctx);
            job.reply_to.tell(id);
        })
    })
    .unwrap();
    let handle = pool.handle();
    assert!(handle.router().is_none());
    handle.resize(3).unwrap();
    let router = system.spawn(pool, "presized").unwrap();
    tell_jobs_one_to_three(&router, &probe, |job| job);
    let mut ids = probe.receive_messages(3, T).await;
    ids.sort();
    assert_eq!(ids, [1, 2, 3]);
    assert_eq!(handle.router().as_ref(), Some(&router));
    assert_eq!(handle.routees().len(), 3);
}

/// A request a stashing routee holds until `Open`.
#[message]
pub enum Desk {
    Ask(u64, ActorRef<u64>),
    Open,
}

/// S23, S32, S27, S31: a request a routee holds in its stash fails at once when the
/// router is stopped (the routee stops with it), and is lettered naming the routee.
#[tapio::test(start_paused = true)]
async fn s23_s32_s27_an_ask_stashed_in_a_routee_fails_at_once_when_the_router_stops(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let (mut probe, to) = probe_and_ref(&system);
    let pool = Routers::pool(1, move || {
        let to = to.clone();
        Behaviors::with_stash(4, move |stash: StashBuffer<Desk>| {
            let to = to.clone();
            Behaviors::receive_message(move |desk: Desk| {
                to.tell("stashed".to_owned());
                stash.stash(desk).map(|()| Behaviors::same())
            })
        })
        .unwrap()
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "desks").unwrap();
    let asked = router
        .ask_with(|reply_to| Desk::Ask(7, reply_to))
        .timeout(Duration::from_secs(60));
    let asked = tokio::spawn(async move { asked.await });
    assert_eq!(probe.expect_message(T).await, "stashed");
    let routee = handle.routees()[0].clone();
    let started = Instant::now();
    system.stop(&router).unwrap();
    let asked = timeout(T, asked).await.unwrap().unwrap();
    assert!(
        matches!(&asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    let letter = letters_for(&mut dead, routee.path(), 1).await.remove(0);
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::RecipientStopped,
        "{}",
        describe(&letter)
    );
}

/// S27, S31, S23: a clone of a stash buffer kept outside the actor does not keep
/// what the stash held past the actor's stop: at the stop, a stashed ask fails at
/// once and its request is lettered `RecipientStopped`; a message stashed into the
/// clone afterwards is lettered at once, never held where nothing will replay it.
/// (Before the fix, both letters waited for the last clone to be dropped, and the
/// message stashed after the stop sat in the clone; 1 of 1 runs failed.)
#[tapio::test(start_paused = true)]
async fn s27_s31_s23_a_stash_clone_kept_outside_holds_nothing_past_the_actors_stop(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let (stash_tx, mut stash_rx) = mpsc::unbounded_channel::<StashBuffer<Desk>>();
    let actor = system
        .spawn(
            Behaviors::with_stash(4, move |stash: StashBuffer<Desk>| {
                let _ = stash_tx.send(stash.clone());
                Behaviors::receive_message(move |desk: Desk| {
                    stash.stash(desk).map(|()| Behaviors::same())
                })
            })
            .unwrap(),
            "orphan",
        )
        .unwrap();
    let kept = next(&mut stash_rx).await;
    let asked = actor
        .ask_with(|reply_to| Desk::Ask(1, reply_to))
        .timeout(Duration::from_secs(60));
    let asked = tokio::spawn(async move { asked.await });
    until(|| kept.len() == 1, "the actor stashes the request").await;
    probe.watch(&actor);
    let started = Instant::now();
    system.stop(&actor).unwrap();
    probe.expect_terminated(&actor, T).await;
    let asked = timeout(T, asked).await.unwrap().unwrap();
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let first = letters_for(&mut dead, actor.path(), 1).await.remove(0);
    assert_eq!(
        first.reason(),
        &DeadLetterReason::RecipientStopped,
        "{}",
        describe(&first)
    );
    assert!(matches!(
        first.take_message::<Desk>(),
        Some(Desk::Ask(1, _))
    ));
    assert!(kept.is_empty());
    assert_eq!(kept.stash(Desk::Open), Ok(()));
    assert!(kept.is_empty(), "nothing is held for an actor that stopped");
    let second = letters_for(&mut dead, actor.path(), 1).await.remove(0);
    assert_eq!(
        second.reason(),
        &DeadLetterReason::RecipientStopped,
        "{}",
        describe(&second)
    );
    assert!(matches!(second.take_message::<Desk>(), Some(Desk::Open)));
    drop(kept);
    outside::no_letter_for(&mut dead, actor.path(), ms(100)).await;
}

/// S25, S32, S48: shrinking a pool stops the routees it removes, and their timers
/// with them: no tick of a removed routee after its `PostStop`, and the leak check
/// of `#[tapio::test]` finds no timer left.
#[tapio::test(start_paused = true)]
async fn s25_s32_shrinking_a_pool_ends_the_timers_of_the_routees_it_removes(system: ActorSystem) {
    let log = new_log();
    let mut probe = TestProbe::<String>::new(&system);
    let for_pool = log.clone();
    let pool = Routers::pool(3, move || {
        let log = for_pool.clone();
        Behaviors::with_timers(move |timers| {
            timers.start_fixed_rate("beat", 0_u64, ms(10)).unwrap();
            let (log, on_signal) = (log.clone(), log.clone());
            Behaviors::receive(move |ctx, _: u64| push(&log, format!("tick {}", ctx.path().name())))
                .on_signal(move |ctx, signal| {
                    if matches!(signal, Signal::PostStop) {
                        push(&on_signal, format!("stop {}", ctx.path().name()));
                    }
                })
        })
    })
    .unwrap();
    let handle = pool.handle();
    let _router = system.spawn(pool, "beaters").unwrap();
    until(
        || handle.routees().len() == 3,
        "the router starts its routees",
    )
    .await;
    let routees = handle.routees();
    let mut removed = [
        TestProbe::<String>::new(&system),
        TestProbe::<String>::new(&system),
    ];
    for (probe, routee) in removed.iter().zip(&routees[1..]) {
        probe.watch(routee);
    }
    probe.watch(&routees[0]);
    tokio::time::sleep(ms(35)).await;
    handle.resize(1).unwrap();
    for (probe, routee) in removed.iter_mut().zip(&routees[1..]) {
        probe.expect_terminated(routee, T).await;
    }
    let at_stop = entries(&log).len();
    tokio::time::sleep(ms(200)).await;
    let log = entries(&log);
    for name in ["routee-2", "routee-3"] {
        let stop = log
            .iter()
            .position(|e| *e == format!("stop {name}"))
            .unwrap_or_else(|| panic!("no PostStop for {name}: {log:?}"));
        assert!(
            !log[stop..].contains(&format!("tick {name}")),
            "a tick of {name} after its stop: {log:?}"
        );
        assert!(log[..stop].contains(&format!("tick {name}")), "{log:?}");
    }
    assert!(log.len() > at_stop, "routee-1 still ticks");
    assert!(
        log[at_stop..].iter().all(|e| e == "tick routee-1"),
        "{log:?}"
    );
    probe.expect_no_termination(ms(10)).await;
}

// =================================================================================
// 8. The testkit (S48, S25, S32, S33, S34)
// =================================================================================

/// S48, S32: the behavior kit runs a group router over inboxes: it records a watch of
/// each routee, answers `Same`, and hands the messages on in strict rotation.
#[test]
fn s48_s32_the_kit_runs_a_group_router_over_inboxes() {
    let mut a = TestInbox::<u64>::named("a").unwrap();
    let mut b = TestInbox::<u64>::named("b").unwrap();
    let group = Routers::group([a.actor_ref().clone(), b.actor_ref().clone()]).unwrap();
    let mut kit = BehaviorTestKit::new(group);
    let watched: Vec<String> = kit
        .effects()
        .iter()
        .filter_map(|e| match e {
            Effect::Watched { actor } => Some(actor.path().to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(watched, ["/user/a", "/user/b"]);
    for n in 1..=5_u64 {
        assert_eq!(kit.run(n), Ok(Outcome::Same));
    }
    assert_eq!(a.messages(), [1, 3, 5]);
    assert_eq!(b.messages(), [2, 4]);
}

/// S48, S32, S31: a probe sees a broadcast pool end when its routees all stop on
/// one broadcast, and a tell to the router after that is a dead letter naming it.
#[tapio::test(start_paused = true)]
async fn s48_s32_a_probe_sees_a_pool_end_with_its_last_routee(system: ActorSystem) {
    let mut dead = letters(&system);
    let (mut probe, to) = probe_and_ref(&system);
    let pool = Routers::pool(3, move || labelled("routee", to.clone()))
        .unwrap()
        .broadcast();
    let router = system.spawn(pool, "quitters").unwrap();
    probe.watch(&router);
    router.tell(1_u64);
    expect_lines(&mut probe, &["routee 1", "routee 1", "routee 1"]).await;
    router.tell(0_u64);
    probe.expect_terminated(&router, T).await;
    router.tell(2_u64);
    let letter = letters_for(&mut dead, router.path(), 1).await.remove(0);
    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(letter.take_message::<u64>(), Some(2));
    let report = LeakReport::after_terminating(&system).await;
    assert!(report.is_clean(), "{report}");
}

// =================================================================================
// 8b. Routers with stop, supervision and bounds (S15, S19, S21, S23, S25, S29, S32)
// =================================================================================

/// A routee that answers `Job`s with its number and, told 0, shrinks its own pool
/// to one through the handle it was given.
#[message]
pub enum Crew {
    Job(Job),
    Shrink,
}

/// S32: a routee may resize its own pool from a handler (the resize is queued on
/// the router, not waited for): shrinking to one stops the newest routees, the
/// asking one among them, and the rotation goes on over the one left.
#[tapio::test(start_paused = true)]
async fn s32_a_routee_that_shrinks_its_own_pool_stops_with_the_newest(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let handle_slot: Arc<Mutex<Option<tapio::router::PoolHandle<Crew>>>> =
        Arc::new(Mutex::new(None));
    let slot = handle_slot.clone();
    let pool = Routers::pool(3, move || {
        let slot = slot.clone();
        Behaviors::receive(move |ctx, crew: Crew| match crew {
            Crew::Job(job) => {
                let id = routee_number(ctx);
                job.reply_to.tell(id);
            }
            Crew::Shrink => {
                let handle = slot.lock().unwrap().clone();
                if let Some(handle) = handle {
                    handle.resize(1).unwrap();
                }
            }
        })
    })
    .unwrap();
    *handle_slot.lock().unwrap() = Some(pool.handle());
    let handle = pool.handle();
    let router = system.spawn(pool, "crew").unwrap();
    until(
        || handle.routees().len() == 3,
        "the router starts its routees",
    )
    .await;
    let routees = handle.routees();
    let mut third = TestProbe::<String>::new(&system);
    third.watch(&routees[2]);
    routees[2].tell(Crew::Shrink);
    third.expect_terminated(&routees[2], T).await;
    until(|| handle.routees().len() == 1, "the pool shrinks to one").await;
    tell_jobs_one_to_three(&router, &probe, Crew::Job);
    assert_eq!(probe.receive_messages(3, T).await, [1, 1, 1]);
}

/// S15, S19, S32: stopping a pool router stops its routees first: each routee's
/// `PostStop` has run by the time a watcher hears the router's `Terminated`.
#[tapio::test(start_paused = true)]
async fn s15_s32_a_stopped_pool_router_ends_after_every_routee_saw_post_stop(system: ActorSystem) {
    let log = new_log();
    let mut probe = TestProbe::<String>::new(&system);
    let for_pool = log.clone();
    let pool = Routers::pool(3, move || {
        let log = for_pool.clone();
        Behaviors::receive_message(|_: u64| ()).on_signal(move |ctx, signal| {
            if matches!(signal, Signal::PostStop) {
                push(&log, format!("stop {}", ctx.path().name()));
            }
        })
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "stopped-pool").unwrap();
    until(
        || handle.routees().len() == 3,
        "the router starts its routees",
    )
    .await;
    probe.watch(&router);
    system.stop(&router).unwrap();
    probe.expect_terminated(&router, T).await;
    let mut stops = entries(&log);
    stops.sort();
    assert_eq!(stops, ["stop routee-1", "stop routee-2", "stop routee-3"]);
}

/// S21, S23, S29, S32: an ask through a router to a routee whose bounded drop-new
/// mailbox is full: the routee cannot take the request, which is lettered naming
/// it, and the ask (nobody keeping the letter) fails at once, not at its deadline.
#[tapio::test(start_paused = true)]
async fn s21_s29_s32_an_ask_routed_to_a_full_routee_fails_at_once(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (to, held) = (probe.actor_ref().clone(), gate.clone());
    let pool = Routers::pool(1, move || {
        let (adapter_tx, _) = mpsc::unbounded_channel();
        holder(to.clone(), held.clone(), adapter_tx)
    })
    .unwrap()
    .routee_mailbox(MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap());
    let router = system.spawn(pool, "full-routee").unwrap();
    hold(&router, &mut probe).await;
    router.tell(Held::N(1)); // the routee's one place
    let started = Instant::now();
    let asked = router
        .ask_with(|reply_to| Held::Ask(2, reply_to))
        .timeout(Duration::from_secs(60))
        .await;
    assert!(matches!(&asked, Err(e) if not_a_timeout(e)), "{asked:?}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    gate.add_permits(1);
    assert_eq!(probe.expect_message(T).await, "n 1");
    assert_eq!(
        router
            .ask_with(|reply_to| Held::Ask(3, reply_to))
            .timeout(T)
            .await,
        Ok(30)
    );
}

/// S25, S32, S14, S16, S48: a supervised pool router restarted by a routee's
/// escalation brings fresh routees whose timers start again, while the old routees'
/// timers end with them: once the old routees are heard to end, only the new ones
/// tick, and the leak check finds no timer left.
#[tapio::test(start_paused = true)]
async fn s25_s32_s16_a_restarted_pool_ends_its_old_routees_timers(system: ActorSystem) {
    let log = new_log();
    let for_pool = log.clone();
    let generation = Arc::new(AtomicU64::new(0));
    let counted = generation.clone();
    let pool = Routers::pool(2, move || {
        let (log, generation) = (for_pool.clone(), counted.clone());
        Behaviors::supervise(Behaviors::with_timers(move |timers| {
            timers.start_fixed_rate("beat", 0_u64, ms(10)).unwrap();
            let born = generation.load(SeqCst);
            let log = log.clone();
            Behaviors::receive(move |ctx, n: u64| {
                if n == 13 {
                    return Err(Boom);
                }
                push(&log, format!("g{born} {}", ctx.path().name()));
                Ok(())
            })
        }))
        .on_failure::<Boom>(SupervisorStrategy::escalate())
    })
    .unwrap();
    let handle = pool.handle();
    let router = system
        .spawn(
            Behaviors::supervise(pool).on_failure::<Boom>(SupervisorStrategy::restart()),
            "restarting-pool",
        )
        .unwrap();
    until(
        || handle.routees().len() == 2,
        "the router starts its routees",
    )
    .await;
    let old = handle.routees();
    let mut watchers = [
        TestProbe::<String>::new(&system),
        TestProbe::<String>::new(&system),
    ];
    for (watcher, routee) in watchers.iter().zip(&old) {
        watcher.watch(routee);
    }
    tokio::time::sleep(ms(25)).await;
    generation.store(1, SeqCst);
    router.tell(13_u64);
    for (watcher, routee) in watchers.iter_mut().zip(&old) {
        watcher.expect_terminated(routee, T).await;
    }
    let at_end = entries(&log).len();
    tokio::time::sleep(ms(100)).await;
    let log = entries(&log);
    assert!(
        log[..at_end].iter().any(|e| e.starts_with("g0 ")),
        "{log:?}"
    );
    let after = &log[at_end..];
    assert!(!after.is_empty(), "the new routees tick");
    assert!(
        after.iter().all(|e| e.starts_with("g1 ")),
        "an old routee ticked: {log:?}"
    );
    until(|| handle.routees().len() == 2, "a full pool again").await;
    assert!(handle.routees().iter().all(|r| !old.contains(r)));
}

/// S32, S29, S31, S5: a group of three bounded drop-new routees fed through the
/// router by four tasks: every message is handled or lettered `MailboxFull` naming a
/// routee, exactly once, and each routee sees each task's messages in order (20 runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s32_s29_a_group_of_bounded_routees_fed_by_four_tasks_accounts_every_message() {
    for run in 0..RUNS {
        let system = ActorSystem::new("group-race").unwrap();
        let mut dead = every_letter(&system);
        let handled = Arc::new(Mutex::new(Vec::<(usize, u64)>::new()));
        let routees: Vec<ActorRef<u64>> = (0..3)
            .map(|r| {
                let seen = handled.clone();
                system
                    .spawn_with(
                        Behaviors::receive_message(move |n: u64| seen.lock().unwrap().push((r, n))),
                        &format!("r{r}"),
                        MailboxConfig::bounded(2, OverflowStrategy::DropNew).unwrap(),
                    )
                    .unwrap()
            })
            .collect();
        let router = system
            .spawn(Routers::group(routees.clone()).unwrap(), "group")
            .unwrap();
        let tasks: Vec<_> = (0..4_u64)
            .map(|t| {
                let router = router.clone();
                tokio::spawn(async move {
                    for i in 0..100 {
                        router.tell(t * 1000 + i);
                        if i.is_multiple_of(8) {
                            tokio::task::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            timeout(T, task).await.unwrap().unwrap();
        }
        let paths: BTreeSet<String> = routees.iter().map(|r| r.path().to_string()).collect();
        let mut lettered = Vec::new();
        let deadline = Instant::now() + T;
        loop {
            while let Some(letter) = dead.try_recv() {
                assert!(
                    paths.contains(&letter.recipient().to_string()),
                    "run {run}: {}",
                    describe(&letter)
                );
                assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull, "run {run}");
                lettered.push(letter.take_message::<u64>().unwrap());
            }
            if handled.lock().unwrap().len() + lettered.len() >= 400 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "run {run}: not all accounted for"
            );
            tokio::time::sleep(ms(2)).await;
        }
        let got = handled.lock().unwrap().clone();
        for r in 0..3 {
            for t in 0..4_u64 {
                let seen: Vec<u64> = got
                    .iter()
                    .filter(|(at, n)| *at == r && n / 1000 == t)
                    .map(|(_, n)| *n)
                    .collect();
                assert!(
                    seen.windows(2).all(|w| w[0] < w[1]),
                    "run {run}: out of order"
                );
            }
        }
        let mut all: Vec<u64> = got.iter().map(|(_, n)| *n).chain(lettered).collect();
        all.sort();
        let want: Vec<u64> = (0..4)
            .flat_map(|t| (0..100).map(move |i| t * 1000 + i))
            .collect();
        assert_eq!(all, want, "run {run}: each message once");
        timeout(T, system.terminate()).await.unwrap();
    }
}

/// S21, S23, S11, S14, S32: asks through a pool whose routees fail and restart
/// under them, from two tasks: an ask whose own handler fails is `Unanswered` at
/// once; every other one, queued across the restart, is answered by the next
/// incarnation; none waits for its deadline (20 runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s21_s23_s32_asks_through_a_pool_of_restarting_routees_are_answered_or_unanswered_at_once()
{
    for run in 0..RUNS {
        let system = ActorSystem::new("pool-asks").unwrap();
        let pool = Routers::pool(2, || {
            Behaviors::supervise(Behaviors::receive_message(|job: Job| {
                if job.n.is_multiple_of(7) {
                    return Err(Boom);
                }
                job.reply_to.tell(job.n * 2);
                Ok(())
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart()
                    .with_limit(u32::MAX, Duration::from_secs(1))
                    .unwrap(),
            )
        })
        .unwrap();
        let router = system.spawn(pool, "askers").unwrap();
        let started = Instant::now();
        let tasks: Vec<_> = (0..2_u64)
            .map(|t| {
                let router = router.clone();
                tokio::spawn(async move {
                    let asks: Vec<_> = (1..=50_u64)
                        .map(|i| {
                            let n = t * 100 + i;
                            let ask = router
                                .ask_with(move |reply_to| Job { n, reply_to })
                                .timeout(Duration::from_secs(60));
                            async move { (n, ask.await) }
                        })
                        .collect();
                    let mut out = Vec::new();
                    for ask in asks {
                        out.push(ask.await);
                    }
                    out
                })
            })
            .collect();
        for task in tasks {
            for (n, asked) in timeout(T, task).await.unwrap().unwrap() {
                if n.is_multiple_of(7) {
                    assert!(
                        matches!(asked, Err(AskError::Unanswered { .. })),
                        "run {run}: ask {n}: {asked:?}"
                    );
                } else {
                    assert_eq!(asked, Ok(n * 2), "run {run}: ask {n}");
                }
            }
        }
        assert!(started.elapsed() < T, "run {run}: {:?}", started.elapsed());
        timeout(T, system.terminate()).await.unwrap();
    }
}
