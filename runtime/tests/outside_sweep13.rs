//! A thirteenth outside-in sweep, written from the promises (S1..S49 in SEMANTICS.md),
//! README.md, docs/testing.md and the rustdoc of the public API only. It goes after
//! combinations and edge orders that single-feature tests miss:
//!
//! 1. Supervision (S10, S11, S16, S17): clauses match the error's own type, not its
//!    source; a `Failure` returned by a handler, bare or boxed; a `ChildFailed`
//!    handler failing with the child's failure; a death pact escalated to the
//!    guardian; an escalation to the guardian under a storm of tells, with every
//!    message handled or lettered.
//! 2. Watching across restarts (S14, S18): a watch made in a handler is dropped by
//!    the watcher's restart, one made in setup is made again and heard once.
//! 3. Backoff (S2, S12, S13, S22, S23, S25): a name taken during a backoff; an ask
//!    that times out during a backoff and its late answer; a fixed-rate timer from
//!    setup on its exact schedule across a backoff; a timer started in `PreRestart`.
//! 4. Mailboxes (S29, S30, S31, S16): waiting offers when their target is stopped;
//!    a fail-overflow escalated to the parent.
//! 5. Ask (S21, S22, S23, S31): a reply ref handed to a worker whose target stops;
//!    answers given twice.
//! 6. Dead letters (S49, S31): bounded, unbounded and dropped subscriptions under a
//!    storm from several tasks.
//! 7. Termination (S19, S31): terminate amid timers, waiting offers, stashed asks,
//!    backoffs and queued tells, with every message accounted for.
//! 8. The testkit against the live runtime (S48): a stashing script, a timer.
//! 9. Escalation racing `terminate`, inside `scope`; offers and asks in odd orders.
//! 10. Fail-on-overflow mailboxes against a tick, a replay, a backoff, a terminate.
//! 11. What a failing incarnation does in `PreRestart` and `PostStop`.
//! 12. Names, watches and stashes at an escalation; events published at the end.
//! 13. Races on two workers: timer storms, asks racing restarts, watch storms.
//! 14. An escalation into a parent that backs off (it was dropped: fixed with this
//!     sweep); adapters of a dead owner; unhandled lifecycle signals.
//!
//! Every wait is bounded; timing is asserted only under tokio's paused clock.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/outside.rs"]
mod outside;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{
    AskError, Backoff, BoxError, DeadLetter, DeadLetterReason, Failure, MailboxConfig,
    OverflowStrategy,
};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, timeout};

use outside::{Boom, Other, T, describe, expect_lines, letters, letters_for, ms, next};

// =================================================================================
// helpers
// =================================================================================

/// A request answered with a `u64`, carrying its reply ref.
#[message]
pub struct Q {
    pub n: u64,
    pub reply_to: ActorRef<u64>,
}

/// An error whose source is a `Boom`: it is not a `Boom` itself.
#[derive(Debug, thiserror::Error)]
#[error("wrapped")]
pub struct Wrapped(#[source] pub Boom);

fn climbed(failure: &Failure) -> Vec<String> {
    failure.climbed().iter().map(|p| p.to_string()).collect()
}

/// Counts the setups and the handled numbers of an actor that fails on 0 with
/// `fail` and reports "setup N" and "got n" on `to`.
fn reporting(
    to: ActorRef<String>,
    fail: fn() -> Result<(), BoxError>,
) -> impl Fn(&mut ActorContext<u64>) -> Behavior<u64> + Send + Sync + Clone + 'static {
    let setups = Arc::new(AtomicU64::new(0));
    move |_ctx: &mut ActorContext<u64>| {
        let run = setups.fetch_add(1, SeqCst) + 1;
        to.tell(format!("setup {run}"));
        let to = to.clone();
        let sum = Arc::new(AtomicU64::new(0));
        Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                return fail();
            }
            let s = sum.fetch_add(n, SeqCst) + n;
            to.tell(format!("sum {s}"));
            Ok(())
        })
        .into()
    }
}

// =================================================================================
// 1. Supervision (S10, S11, S16, S17)
// =================================================================================

/// S10: a clause matches the failure by the type of the error, not by its source
/// chain: an error whose `source()` is a `Boom` is not decided by the `Boom` clause
/// (resume) but by the catch-all (restart), which runs setup again.
#[tapio::test(start_paused = true)]
async fn s10_a_clause_matches_the_errors_own_type_not_its_source(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(reporting(
                probe.actor_ref().clone(),
                || Err(Box::new(Wrapped(Boom))),
            )))
            .on_failure::<Boom>(SupervisorStrategy::resume())
            .on_any_failure(SupervisorStrategy::restart()),
            "wrapped",
        )
        .unwrap();
    expect_lines(&mut probe, &["setup 1"]).await;
    actor.tell(2_u64);
    actor.tell(0_u64);
    actor.tell(3_u64);
    // Restarted (fresh sum), not resumed (which would say "sum 5").
    expect_lines(&mut probe, &["sum 2", "setup 2", "sum 3"]).await;
}

/// S10, S11: a handler may fail with a `Failure` itself, bare or in a `BoxError`: it
/// is matched by the error inside it, as the docs of `Failure::from_boxed` and
/// `IntoFailure` say ("a Failure in the box comes out as itself").
#[tapio::test(start_paused = true)]
async fn s10_s11_a_failure_returned_bare_or_boxed_is_matched_by_the_error_inside(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let setups = Arc::new(AtomicU64::new(0));
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
                let run = setups.fetch_add(1, SeqCst) + 1;
                to.tell(format!("setup {run}"));
                let to = to.clone();
                let sum = Arc::new(AtomicU64::new(0));
                Behaviors::receive_message(move |n: u64| -> Result<(), BoxError> {
                    match n {
                        0 => Err(Box::new(Failure::new(Boom))),
                        1 => Err(Box::new(Failure::new(Other))),
                        _ => {
                            let s = sum.fetch_add(n, SeqCst) + n;
                            to.tell(format!("sum {s}"));
                            Ok(())
                        }
                    }
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume())
            .on_failure::<Other>(SupervisorStrategy::restart())
            .on_any_failure(SupervisorStrategy::stop()),
            "failing-failures",
        )
        .unwrap();
    probe.watch(&actor);
    expect_lines(&mut probe, &["setup 1"]).await;
    actor.tell(2_u64);
    actor.tell(0_u64); // a boxed Failure(Boom): resumed
    actor.tell(3_u64);
    actor.tell(1_u64); // a boxed Failure(Other): restarted
    actor.tell(4_u64);
    expect_lines(&mut probe, &["sum 2", "sum 5", "setup 2", "sum 4"]).await;

    // And a bare `Failure` as the handler's error type.
    let to = probe.actor_ref().clone();
    let bare = system
        .spawn(
            Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
                if n == 0 {
                    return Err(Failure::new(Boom));
                }
                to.tell(format!("bare {n}"));
                Ok(())
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume())
            .on_any_failure(SupervisorStrategy::stop()),
            "bare",
        )
        .unwrap();
    probe.watch(&bare);
    bare.tell(0_u64);
    bare.tell(7_u64);
    expect_lines(&mut probe, &["bare 7"]).await;
    probe.expect_no_termination(ms(50)).await;
}

/// S16, S17: a parent whose `ChildFailed` handler fails with the child's own
/// failure (a clone of it), escalating: the guardian's failure is the child's
/// error, it begins at the child, ends at `/user`, and names no actor twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s16_s17_a_child_failed_handler_failing_with_the_childs_failure_climbs_once_per_actor() {
    let system = ActorSystem::new("refail").unwrap();
    let (leaf_tx, mut leaf_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let parent = Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        let child = ctx
            .spawn(
                Behaviors::supervise(Behaviors::receive_message(|_: u64| Err::<(), _>(Boom)))
                    .on_any_failure(SupervisorStrategy::escalate()),
                "child",
            )
            .unwrap();
        let _ = leaf_tx.send(child);
        Behaviors::receive_message(|_: u64| ()).on_signal(|_ctx, signal| match signal {
            Signal::ChildFailed(failed) => Err(failed.failure().clone()),
            _ => Ok(Behaviors::same()),
        })
    }))
    .on_any_failure(SupervisorStrategy::escalate());
    system.spawn(parent, "parent").unwrap();
    let child = next(&mut leaf_rx).await;
    child.tell(1_u64);
    let failure = timeout(T, system.when_terminated())
        .await
        .expect("the escalation ends the system")
        .expect_err("with a failure");
    assert!(failure.is::<Boom>(), "{failure}");
    let paths = climbed(&failure);
    assert_eq!(
        paths.first().map(String::as_str),
        Some("/user/parent/child")
    );
    assert_eq!(paths.last().map(String::as_str), Some("/user"));
    let mut unique = paths.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), paths.len(), "a path named twice: {paths:?}");
    assert_eq!(paths, ["/user/parent/child", "/user/parent", "/user"]);
    timeout(T, system.terminate()).await.unwrap();
    assert_eq!(system.live_actors(), 0);
}

/// S18, S16, S17: a watcher without a `Terminated` handler fails with `DeathPact`;
/// a clause escalates it, its parent escalates too, and the system ends with the
/// death pact as its failure, climbed from the watcher to `/user`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s18_s16_s17_a_death_pact_escalated_to_the_guardian_ends_the_system_with_it() {
    let system = ActorSystem::new("pact").unwrap();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let watched = target.clone();
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<()>();
    let parent = Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        let watched = watched.clone();
        let ready = ready_tx.clone();
        ctx.spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&watched);
                let _ = ready.send(());
                Behaviors::receive_message(|_: u64| ())
            }))
            .on_failure::<tapio::DeathPact>(SupervisorStrategy::escalate())
            .on_any_failure(SupervisorStrategy::stop()),
            "watcher",
        )
        .unwrap();
        Behaviors::receive_message(|_: u64| ())
    }))
    .on_any_failure(SupervisorStrategy::escalate());
    system.spawn(parent, "parent").unwrap();
    next(&mut ready_rx).await;
    system.stop(&target).unwrap();
    let failure = timeout(T, system.when_terminated())
        .await
        .expect("the death pact ends the system")
        .expect_err("with a failure");
    assert!(failure.is::<tapio::DeathPact>(), "{failure}");
    assert_eq!(
        climbed(&failure),
        ["/user/parent/watcher", "/user/parent", "/user"]
    );
    timeout(T, system.terminate()).await.unwrap();
    assert_eq!(system.live_actors(), 0);
}

/// S17, S31, S3: while producers tell every level of `/user/a/b/c` and a bystander,
/// the leaf escalates to the guardian. Every message told is either handled or a
/// dead letter, exactly once, and the system ends with the leaf's error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s17_s31_an_escalation_to_the_guardian_under_a_storm_of_tells_loses_nothing() {
    for round in 0..3 {
        let system = ActorSystem::new(&format!("storm-{round}")).unwrap();
        let mut dead = letters(&system);
        let handled: Arc<std::sync::Mutex<BTreeMap<String, u64>>> = Arc::default();
        let (refs_tx, mut refs_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();

        fn level(
            names: &'static [&'static str],
            handled: Arc<std::sync::Mutex<BTreeMap<String, u64>>>,
            refs: mpsc::UnboundedSender<ActorRef<u64>>,
        ) -> Behavior<u64> {
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let _ = refs.send(ctx.self_ref().clone());
                if names.len() > 1 {
                    ctx.spawn(level(&names[1..], handled.clone(), refs.clone()), names[1])
                        .unwrap();
                }
                let me = ctx.path().to_string();
                let handled = handled.clone();
                Behaviors::receive_message(move |n: u64| {
                    *handled.lock().unwrap().entry(me.clone()).or_default() += 1;
                    if n == u64::MAX { Err(Boom) } else { Ok(()) }
                })
            }))
            .on_any_failure(SupervisorStrategy::escalate())
            .into()
        }
        static NAMES: [&str; 3] = ["a", "b", "c"];
        system
            .spawn(level(&NAMES, handled.clone(), refs_tx.clone()), "a")
            .unwrap();
        let counter = handled.clone();
        let bystander = system
            .spawn(
                Behaviors::receive_message(move |_: u64| {
                    *counter
                        .lock()
                        .unwrap()
                        .entry("/user/bystander".into())
                        .or_default() += 1;
                }),
                "bystander",
            )
            .unwrap();
        let mut targets = vec![bystander];
        for _ in 0..3 {
            targets.push(next(&mut refs_rx).await);
        }
        let leaf = targets[3].clone();
        assert_eq!(leaf.path().to_string(), "/user/a/b/c");
        const EACH: u64 = 500;
        let mut producers = Vec::new();
        for p in 0..4_u64 {
            let targets = targets.clone();
            producers.push(tokio::spawn(async move {
                for i in 0..EACH {
                    targets[((i + p) % 4) as usize].tell(i);
                    if i % 64 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            }));
        }
        tokio::task::yield_now().await;
        leaf.tell(u64::MAX);
        for producer in producers {
            timeout(T, producer).await.unwrap().unwrap();
        }
        let failure = timeout(T, system.when_terminated())
            .await
            .unwrap()
            .expect_err("the leaf's failure");
        assert!(failure.is::<Boom>(), "{failure}");
        // Each target was told EACH messages (the leaf one more).
        let deadline = Instant::now() + T;
        let mut lettered: BTreeMap<String, u64> = BTreeMap::new();
        loop {
            let handled_now = handled.lock().unwrap().clone();
            let all = targets.iter().all(|t| {
                let path = t.path().to_string();
                let sent = EACH + u64::from(path == "/user/a/b/c");
                handled_now.get(&path).copied().unwrap_or(0)
                    + lettered.get(&path).copied().unwrap_or(0)
                    == sent
            });
            if all {
                break;
            }
            match tokio::time::timeout_at(deadline, dead.recv()).await {
                Ok(Some(letter)) => {
                    assert!(letter.is::<u64>(), "{}", describe(&letter));
                    *lettered.entry(letter.recipient().to_string()).or_default() += 1;
                }
                _ => panic!(
                    "round {round}: not every message accounted for: handled {handled_now:?}, lettered {lettered:?}"
                ),
            }
        }
        // And nothing more comes: no message was both handled and lettered.
        assert!(dead.try_recv().is_none());
        assert_eq!(system.live_actors(), 0);
    }
}

// =================================================================================
// 2. Watching across restarts (S14, S18)
// =================================================================================

#[message]
pub enum Watcher {
    Watch(ActorRef<u64>),
    Fail,
}

/// S14, S18: the supervision docs: "Watches the old incarnation held are dropped;
/// setup watches again what it needs". A watch made in a handler does not survive
/// the watcher's restart (no `Terminated`, so no death pact either); a watch made
/// in setup is made again by each incarnation and heard exactly once.
#[tapio::test(start_paused = true)]
async fn s14_s18_a_handlers_watch_ends_with_a_restart_and_a_setups_watch_is_heard_once(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let in_setup = system
        .spawn(Behaviors::ignore::<u64>(), "in-setup")
        .unwrap();
    let watched = in_setup.clone();
    let setups = Arc::new(AtomicU64::new(0));
    let watcher = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<Watcher>| {
                ctx.watch(&watched);
                let run = setups.fetch_add(1, SeqCst) + 1;
                to.tell(format!("setup {run}"));
                let on_signal = to.clone();
                let to = to.clone();
                Behaviors::receive(move |ctx, message: Watcher| match message {
                    Watcher::Watch(target) => {
                        ctx.watch(&target);
                        to.tell(format!("watching {}", target.path().name()));
                        Ok(Behaviors::same())
                    }
                    Watcher::Fail => Err(Boom),
                })
                .on_signal(move |_ctx, signal| {
                    if let Signal::Terminated(t) = signal {
                        on_signal.tell(format!("terminated {}", t.actor().path().name()));
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart())
            .on_any_failure(SupervisorStrategy::stop()),
            "watcher",
        )
        .unwrap();
    probe.watch(&watcher);
    expect_lines(&mut probe, &["setup 1"]).await;
    let in_handler = system
        .spawn(Behaviors::ignore::<u64>(), "in-handler")
        .unwrap();
    watcher.tell(Watcher::Watch(in_handler.clone()));
    expect_lines(&mut probe, &["watching in-handler"]).await;
    watcher.tell(Watcher::Fail);
    watcher.tell(Watcher::Fail);
    expect_lines(&mut probe, &["setup 2", "setup 3"]).await;
    system.stop(&in_handler).unwrap();
    system.stop(&in_setup).unwrap();
    expect_lines(&mut probe, &["terminated in-setup"]).await;
    probe.expect_no_message(ms(200)).await;
    probe.expect_no_termination(ms(10)).await;
}

/// S18: watch, unwatch, watch and watch again of a live target: one watch stands,
/// and its `Terminated` comes exactly once.
#[tapio::test(start_paused = true)]
async fn s18_watch_unwatch_watch_watch_of_a_live_target_hears_one_terminated(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let watched = target.clone();
    let _watcher = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&watched);
                ctx.unwatch(&watched);
                ctx.watch(&watched);
                ctx.watch(&watched);
                to.tell("set".to_string());
                let to = to.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                    if let Signal::Terminated(t) = signal {
                        to.tell(format!("terminated {}", t.actor().path().name()));
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    expect_lines(&mut probe, &["set"]).await;
    system.stop(&target).unwrap();
    expect_lines(&mut probe, &["terminated target"]).await;
    probe.expect_no_message(ms(200)).await;
}

// =================================================================================
// 3. Backoff (S2, S12, S13, S22, S23, S25)
// =================================================================================

fn fixed_backoff(d: Duration) -> Backoff {
    Backoff::new(d, d, 0.0).unwrap()
}

/// S13, S22: an ask sent while its target backs off times out at its deadline; the
/// next incarnation still handles the request (nothing is lost), and its answer,
/// now late, is a dead letter `AskEnded` carrying the value.
#[tapio::test(start_paused = true)]
async fn s13_s22_an_ask_timing_out_during_a_backoff_is_answered_late_into_a_letter(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::receive_message(|q: Q| {
                if q.n == 0 {
                    return Err(Boom);
                }
                q.reply_to.tell(q.n * 10);
                Ok(())
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart().with_backoff(fixed_backoff(Duration::from_secs(1))),
            ),
            "slow-back",
        )
        .unwrap();
    let (sink, _keep) = (
        system.spawn(Behaviors::ignore::<u64>(), "sink").unwrap(),
        (),
    );
    actor.tell(Q {
        n: 0,
        reply_to: sink,
    });
    // Let the failure happen: the actor is now absent for a second.
    tokio::time::sleep(ms(10)).await;
    let started = Instant::now();
    let asked = actor
        .ask_with(|reply_to| Q { n: 4, reply_to })
        .timeout(ms(100))
        .await;
    assert!(matches!(asked, Err(AskError::Timeout { .. })), "{asked:?}");
    assert_eq!(started.elapsed(), ms(100));
    let deadline = Instant::now() + T;
    let letter = loop {
        let letter = tokio::time::timeout_at(deadline, dead.recv())
            .await
            .expect("the late answer is lettered")
            .unwrap();
        if letter.is::<u64>() {
            break letter;
        }
    };
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::AskEnded,
        "{}",
        describe(&letter)
    );
    assert_eq!(letter.take_message::<u64>(), Some(40));
    // The answer came from the next incarnation, a second after the failure.
    assert!(started.elapsed() >= ms(980), "{:?}", started.elapsed());
}

/// S2, S13, S12: while an actor backs off it is absent, not dead: its name stays
/// taken. When the restart limit is used up it stops, and once a watcher has heard
/// `Terminated` the name is free again.
#[tapio::test(start_paused = true)]
async fn s2_s13_a_name_stays_taken_during_a_backoff_and_frees_after_the_limit_stops_it(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let flaky = system
        .spawn(
            Behaviors::supervise(Behaviors::receive_message(|n: u64| {
                if n == 0 { Err(Boom) } else { Ok(()) }
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart()
                    .with_limit(1, Duration::from_secs(60))
                    .unwrap()
                    .with_backoff(fixed_backoff(Duration::from_secs(1))),
            ),
            "flaky",
        )
        .unwrap();
    probe.watch(&flaky);
    flaky.tell(0_u64);
    tokio::time::sleep(ms(10)).await;
    let again = system.spawn(Behaviors::ignore::<u64>(), "flaky");
    assert!(
        matches!(again, Err(tapio::SpawnError::NameTaken { .. })),
        "{again:?}"
    );
    // Still absent: the tell waits for the next incarnation, which fails again and
    // uses up the limit.
    flaky.tell(0_u64);
    probe.expect_no_termination(ms(900)).await;
    probe.expect_terminated(&flaky, T).await;
    let reborn = system.spawn(Behaviors::ignore::<u64>(), "flaky").unwrap();
    assert_ne!(reborn.uid(), flaky.uid());
}

#[message]
#[derive(Clone)]
pub struct Tick;

/// S25, S12, S14: a fixed-rate timer started in a `with_timers` inside `supervise`
/// ticks on its schedule, is cancelled by the failure, is silent for the whole
/// backoff, and starts again from the new incarnation's start: exact instants on
/// the paused clock.
#[tapio::test(start_paused = true)]
async fn s25_s12_a_fixed_rate_timer_from_setup_stops_for_the_backoff_and_starts_over(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let zero = Instant::now();
    let _ticker = system
        .spawn(
            Behaviors::supervise(Behaviors::with_timers(move |timers| {
                timers.start_fixed_rate("tick", Tick, ms(100)).unwrap();
                let to = to.clone();
                to.tell(format!("start @{}", zero.elapsed().as_millis()));
                let ticks = AtomicU64::new(0);
                Behaviors::receive_message(move |_: Tick| {
                    let n = ticks.fetch_add(1, SeqCst) + 1;
                    to.tell(format!("tick {n} @{}", zero.elapsed().as_millis()));
                    if n == 3 { Err(Boom) } else { Ok(()) }
                })
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart().with_backoff(fixed_backoff(Duration::from_secs(1))),
            ),
            "ticker",
        )
        .unwrap();
    expect_lines(
        &mut probe,
        &[
            "start @0",
            "tick 1 @100",
            "tick 2 @200",
            "tick 3 @300",
            "start @1300",
            "tick 1 @1400",
            "tick 2 @1500",
        ],
    )
    .await;
}

/// S25, S15, S14: a timer started from the `PreRestart` handler belongs to the
/// incarnation that is being replaced: the restart cancels it, the new
/// incarnation does not see it active, and its tick never comes.
#[tapio::test(start_paused = true)]
async fn s25_s15_a_timer_started_in_pre_restart_is_cancelled_by_that_restart(system: ActorSystem) {
    #[message]
    #[derive(Clone)]
    pub enum Pr {
        Fail,
        Ask,
        Late,
    }
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<Pr>| {
                let to = to.clone();
                let on_signal = to.clone();
                Behaviors::receive(move |ctx, message: Pr| match message {
                    Pr::Fail => Err(Boom),
                    Pr::Ask => {
                        to.tell(format!("active {}", ctx.timers().is_active("late")));
                        Ok(Behaviors::same())
                    }
                    Pr::Late => {
                        to.tell("late tick".to_string());
                        Ok(Behaviors::same())
                    }
                })
                .on_signal(move |ctx, signal| {
                    if *signal == Signal::PreRestart {
                        ctx.timers().start_single_timer("late", Pr::Late, ms(50));
                        ctx.timers()
                            .start_fixed_rate("late-rate", Pr::Late, ms(20))
                            .unwrap();
                        on_signal.tell("pre-restart".to_string());
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "pre",
        )
        .unwrap();
    actor.tell(Pr::Fail);
    actor.tell(Pr::Ask);
    expect_lines(&mut probe, &["pre-restart", "active false"]).await;
    probe.expect_no_message(Duration::from_secs(1)).await;
}

/// S13, S23, S15: a parent stops its child while the child backs off with an ask
/// queued in its mailbox: the ask fails at once with `TargetTerminated`, long
/// before its deadline.
#[tapio::test(start_paused = true)]
async fn s13_s23_an_ask_queued_during_a_backoff_fails_at_once_when_the_parent_stops_it(
    system: ActorSystem,
) {
    let (child_tx, mut child_rx) = mpsc::unbounded_channel::<ActorRef<Q>>();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let child: ActorRef<Q> = ctx
                    .spawn(
                        Behaviors::supervise(Behaviors::receive_message(|q: Q| {
                            if q.n == 0 {
                                return Err(Boom);
                            }
                            q.reply_to.tell(q.n);
                            Ok(())
                        }))
                        .on_failure::<Boom>(
                            SupervisorStrategy::restart()
                                .with_backoff(fixed_backoff(Duration::from_secs(600))),
                        ),
                        "child",
                    )
                    .unwrap();
                let _ = child_tx.send(child.clone());
                Behaviors::receive(move |ctx, _: u64| {
                    ctx.stop(&child).unwrap();
                    Behaviors::same()
                })
            }),
            "parent",
        )
        .unwrap();
    let child = next(&mut child_rx).await;
    let sink = system.spawn(Behaviors::ignore::<u64>(), "sink").unwrap();
    child.tell(Q {
        n: 0,
        reply_to: sink,
    });
    tokio::time::sleep(ms(10)).await;
    let ask = child
        .ask_with(|reply_to| Q { n: 5, reply_to })
        .timeout(Duration::from_secs(3600));
    let asked = tokio::spawn(ask.into_future());
    tokio::time::sleep(ms(10)).await;
    let started = Instant::now();
    parent.tell(1_u64);
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
}

// =================================================================================
// 4. Mailboxes (S29, S30, S31, S16)
// =================================================================================

/// A behavior whose first message parks its handler on `gate` until it opens; it
/// reports "got n" for each message on `to`.
fn gated(to: ActorRef<String>, gate: Arc<tokio::sync::Notify>) -> Behavior<u64> {
    Behaviors::receive_message_async(async move |n: u64| {
        if n == 1 {
            // Said before it waits, so a test knows the message is in hand.
            to.tell("waiting 1".to_string());
            gate.notified().await;
        }
        to.tell(format!("got {n}"));
    })
    .into()
}

/// S30, S31, S19: offers waiting for room in a full bounded mailbox resolve `false`
/// as soon as their target is stopped (not at their own deadline), and the queued
/// tell and each refused offer are one dead letter each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s30_s31_waiting_offers_resolve_false_when_their_target_is_stopped() {
    for round in 0..5 {
        let system = ActorSystem::new(&format!("offers-{round}")).unwrap();
        let mut dead = letters(&system);
        let mut probe = TestProbe::<String>::new(&system);
        let gate = Arc::new(tokio::sync::Notify::new());
        let actor = system
            .spawn_with(
                gated(probe.actor_ref().clone(), gate.clone()),
                "gated",
                MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
            )
            .unwrap();
        actor.tell(1_u64);
        // The first message in hand: the mailbox then has room for one.
        expect_lines(&mut probe, &["waiting 1"]).await;
        assert!(timeout(T, actor.offer(2_u64)).await.unwrap());
        let a = actor.clone();
        let waiting = tokio::spawn(async move { a.offer(3_u64).await });
        let a = actor.clone();
        let within =
            tokio::spawn(async move { a.offer_within(4_u64, Duration::from_secs(60)).await });
        tokio::time::sleep(ms(20)).await;
        assert!(!waiting.is_finished() && !within.is_finished());
        let started = Instant::now();
        system.stop(&actor).unwrap();
        assert!(!timeout(T, waiting).await.unwrap().unwrap());
        assert!(!timeout(T, within).await.unwrap().unwrap());
        assert!(started.elapsed() < Duration::from_secs(5));
        let got = letters_for(&mut dead, actor.path(), 3).await;
        let mut values: Vec<u64> = got
            .iter()
            .map(|l| l.take_message::<u64>().unwrap())
            .collect();
        values.sort_unstable();
        assert_eq!(
            values,
            [2, 3, 4],
            "{:?}",
            got.iter().map(describe).collect::<Vec<_>>()
        );
        probe.expect_no_message(ms(20)).await;
        gate.notify_one();
        timeout(T, system.terminate()).await.unwrap();
    }
}

/// S29, S16, S31: a child with a bounded fail-on-overflow mailbox escalates its
/// `MailboxOverflow`: the parent's signal handler sees `ChildFailed` with it and the
/// capacity, a `resume` clause keeps the parent running, and the overflowing
/// message is a `MailboxFull` letter while the queued ones are lettered as the
/// child stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s29_s16_s31_a_fail_overflow_escalated_reaches_the_parent_and_letters_the_rest() {
    let system = ActorSystem::new("overflow-up").unwrap();
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let gate = Arc::new(tokio::sync::Notify::new());
    let (child_tx, mut child_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let child_gate = gate.clone();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<String>| {
                let child = ctx
                    .spawn_with(
                        Behaviors::supervise(gated(to.clone(), child_gate.clone()))
                            .on_any_failure(SupervisorStrategy::escalate()),
                        "child",
                        MailboxConfig::bounded(2, OverflowStrategy::Fail).unwrap(),
                    )
                    .unwrap();
                let _ = child_tx.send(child);
                let to = to.clone();
                let on_signal = to.clone();
                Behaviors::receive_message(move |s: String| to.tell(format!("parent {s}")))
                    .on_signal(move |_ctx, signal| {
                        if let Signal::ChildFailed(failed) = signal {
                            let overflow = failed
                                .failure()
                                .downcast_ref::<tapio::MailboxOverflow>()
                                .map(|o| o.capacity());
                            on_signal.tell(format!(
                                "child failed {} {overflow:?}",
                                failed.child().path().name()
                            ));
                        }
                        Behaviors::same()
                    })
            }))
            .on_failure::<tapio::MailboxOverflow>(SupervisorStrategy::resume())
            .on_any_failure(SupervisorStrategy::stop()),
            "parent",
        )
        .unwrap();
    probe.watch(&parent);
    let child = next(&mut child_rx).await;
    child.tell(1_u64);
    // The first message in hand; then fill the mailbox and overflow it.
    expect_lines(&mut probe, &["waiting 1"]).await;
    child.tell(2_u64);
    child.tell(3_u64);
    child.tell(4_u64);
    // The overflow is the child's failure, decided once the handler in hand is
    // done: one message at a time (S4).
    probe.expect_no_message(ms(50)).await;
    gate.notify_one();
    expect_lines(&mut probe, &["got 1", "child failed child Some(2)"]).await;
    parent.tell("still here".to_string());
    expect_lines(&mut probe, &["parent still here"]).await;
    let got = letters_for(&mut dead, child.path(), 3).await;
    let by_value: BTreeMap<u64, DeadLetterReason> = got
        .iter()
        .map(|l| (l.take_message::<u64>().unwrap(), l.reason().clone()))
        .collect();
    assert_eq!(
        by_value.len(),
        3,
        "{:?}",
        got.iter().map(describe).collect::<Vec<_>>()
    );
    assert_eq!(by_value[&4], DeadLetterReason::MailboxFull);
    assert_eq!(by_value[&2], DeadLetterReason::RecipientStopped);
    assert_eq!(by_value[&3], DeadLetterReason::RecipientStopped);
    probe.expect_no_termination(ms(20)).await;
    timeout(T, system.terminate()).await.unwrap();
}

// =================================================================================
// 5. Ask (S21, S22, S23, S31)
// =================================================================================

/// S23, S22: a target hands the reply ref of an ask to a worker and stops. The ask,
/// which watches its target, fails at once with `TargetTerminated`, though the
/// reply ref lives on; the worker's answer afterwards is an `AskEnded` letter.
#[tapio::test(start_paused = true)]
async fn s23_s22_a_reply_ref_handed_to_a_worker_fails_fast_when_the_target_stops(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let (held_tx, mut held_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let (go_tx, go_rx) = oneshot::channel::<()>();
    let go_rx = Arc::new(std::sync::Mutex::new(Some(go_rx)));
    let worker = system
        .spawn(
            Behaviors::receive_message_async(async move |reply_to: ActorRef<u64>| {
                let go = go_rx.lock().unwrap().take();
                let _ = held_tx.send(reply_to.clone());
                if let Some(go) = go {
                    let _ = go.await;
                }
                reply_to.tell(99);
            }),
            "worker",
        )
        .unwrap();
    let target = system
        .spawn(
            Behaviors::receive_message_async(async move |q: Q| {
                worker.tell(q.reply_to);
                // Give the ask time to start watching, then stop.
                tokio::time::sleep(ms(20)).await;
                Behaviors::stopped()
            }),
            "target",
        )
        .unwrap();
    let started = Instant::now();
    let asked = target
        .ask_with(|reply_to| Q { n: 1, reply_to })
        .timeout(Duration::from_secs(3600))
        .await;
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let _held = next(&mut held_rx).await;
    go_tx.send(()).unwrap();
    let deadline = Instant::now() + T;
    let letter = loop {
        let letter = tokio::time::timeout_at(deadline, dead.recv())
            .await
            .expect("the late answer is lettered")
            .unwrap();
        if letter.is::<u64>() {
            break letter;
        }
    };
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::AskEnded,
        "{}",
        describe(&letter)
    );
    assert_eq!(letter.take_message::<u64>(), Some(99));
}

/// S21, S31: a handler that answers an ask three times: the asker gets the first
/// answer, and the second and third are each an `AlreadyAnswered` letter with
/// their value, also after the asker has taken its answer.
#[tapio::test(start_paused = true)]
async fn s21_s31_answers_after_the_first_are_already_answered_letters(system: ActorSystem) {
    let mut dead = letters(&system);
    let (relay_tx, mut relay_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let target = system
        .spawn(
            Behaviors::receive_message(move |q: Q| {
                q.reply_to.tell(q.n);
                q.reply_to.tell(q.n + 1);
                let _ = relay_tx.send(q.reply_to);
            }),
            "chatty",
        )
        .unwrap();
    let answer = target
        .ask_with(|reply_to| Q { n: 10, reply_to })
        .timeout(T)
        .await
        .unwrap();
    assert_eq!(answer, 10);
    let kept = next(&mut relay_rx).await;
    kept.tell(12);
    let mut got = Vec::new();
    let deadline = Instant::now() + T;
    while got.len() < 2 {
        let letter = tokio::time::timeout_at(deadline, dead.recv())
            .await
            .expect("two letters")
            .unwrap();
        got.push((letter.take_message::<u64>(), letter.reason().clone()));
    }
    assert_eq!(
        got,
        [
            (Some(11), DeadLetterReason::AlreadyAnswered),
            (Some(12), DeadLetterReason::AlreadyAnswered)
        ]
    );
}

// =================================================================================
// 6. Dead letters (S49, S31)
// =================================================================================

/// S49, S31: a storm of dead letters from four tasks, seen by an unbounded-enough
/// subscription, a small one and one dropped mid-storm. The big one sees every
/// letter; the small one sees its capacity, then a loss of exactly the rest, then
/// the letters after the storm; dropping one changes nothing for the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s49_s31_a_storm_seen_by_big_small_and_dropped_subscriptions() {
    let system = ActorSystem::new("storm-letters").unwrap();
    let mut big = letters(&system);
    let mut small = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(8)
        .unwrap();
    let dropped = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(16)
        .unwrap();
    assert_eq!(system.events().subscriber_count::<DeadLetter>(), 3);
    let gone = system.spawn(Behaviors::ignore::<u64>(), "gone").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&gone);
    system.stop(&gone).unwrap();
    probe.expect_terminated(&gone, T).await;
    let mut tasks = Vec::new();
    for p in 0..4_u64 {
        let gone = gone.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..250 {
                gone.tell(p * 1000 + i);
            }
        }));
    }
    drop(dropped);
    for task in tasks {
        timeout(T, task).await.unwrap().unwrap();
    }
    assert_eq!(system.events().subscriber_count::<DeadLetter>(), 2);
    let got = letters_for(&mut big, gone.path(), 1000).await;
    let mut values: Vec<u64> = got
        .iter()
        .map(|l| l.take_message::<u64>().unwrap())
        .collect();
    values.sort_unstable();
    values.dedup();
    assert_eq!(values.len(), 1000);
    // The small subscription: 8 letters, then the loss of 992.
    let mut events = Vec::new();
    for _ in 0..9 {
        match timeout(T, small.recv_with_loss()).await.unwrap().unwrap() {
            tapio::events::Received::Event(_) => events.push("event".to_string()),
            tapio::events::Received::Lost(n) => events.push(format!("lost {n}")),
        }
    }
    let mut expected = vec!["event".to_string(); 8];
    expected.push("lost 992".to_string());
    assert_eq!(events, expected);
    assert_eq!(small.lost(), 992);
    // After the storm it hears the next letter.
    gone.tell(7_u64);
    let letter = timeout(T, small.recv()).await.unwrap().unwrap();
    assert_eq!(letter.take_message::<u64>(), Some(7));
    timeout(T, system.terminate()).await.unwrap();
}

// =================================================================================
// 7. Termination (S19, S31)
// =================================================================================

#[message]
pub enum Held {
    Put(u64),
    Get(ActorRef<u64>),
}

/// S19, S31, S30, S23, S13, S25: terminate while, under one parent, a ticker runs a
/// fast fixed-rate timer, a gated bounded actor has offers waiting, a stasher holds
/// tells and an ask, and a flaky child backs off with tells queued. `terminate`
/// returns within the bound; every offer and the ask resolve; each message told is
/// handled or lettered; children see `PostStop` before the parent; nothing is left
/// running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_s31_terminate_amid_timers_offers_stash_asks_and_backoff_accounts_for_everything() {
    for round in 0..3 {
        let system = ActorSystem::new(&format!("busy-{round}")).unwrap();
        let mut dead = letters(&system);
        let (stops_tx, mut stops_rx) = mpsc::unbounded_channel::<String>();
        let (refs_tx, mut refs_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
        let (stasher_tx, mut stasher_rx) = mpsc::unbounded_channel::<ActorRef<Held>>();
        let handled: Arc<std::sync::Mutex<Vec<(String, u64)>>> = Arc::default();
        let gate = Arc::new(tokio::sync::Notify::new());

        fn stop_report<P: Message>(
            name: &'static str,
            stops: mpsc::UnboundedSender<String>,
        ) -> impl Fn(&mut ActorContext<P>, &Signal) -> Behavior<P> + Send + Sync + 'static {
            move |_ctx, signal| {
                if *signal == Signal::PostStop {
                    let _ = stops.send(name.to_string());
                }
                Behaviors::same()
            }
        }

        let (h, s, r, g) = (
            handled.clone(),
            stops_tx.clone(),
            refs_tx.clone(),
            gate.clone(),
        );
        let st = stasher_tx.clone();
        let root = system
            .spawn(
                Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                    // The ticker.
                    let hh = h.clone();
                    let _ticker: ActorRef<Tick> = ctx
                        .spawn(
                            Behaviors::with_timers(move |timers| {
                                timers.start_fixed_rate("t", Tick, ms(1)).unwrap();
                                let hh = hh.clone();
                                Behaviors::receive_message(move |_: Tick| {
                                    hh.lock().unwrap().push(("ticker".into(), 0));
                                })
                            }),
                            "ticker",
                        )
                        .unwrap();
                    // The gated, bounded one.
                    let hh = h.clone();
                    let gg = g.clone();
                    let gated: ActorRef<u64> = ctx
                        .spawn_with(
                            Behaviors::receive_message_async(async move |n: u64| {
                                hh.lock().unwrap().push(("gated".into(), n));
                                if n == 1 {
                                    gg.notified().await;
                                }
                            })
                            .on_signal(stop_report("gated", s.clone())),
                            "gated",
                            MailboxConfig::bounded(2, OverflowStrategy::DropNew).unwrap(),
                        )
                        .unwrap();
                    let _ = r.send(gated);
                    // The stasher: holds everything.
                    let stasher: ActorRef<Held> = ctx
                        .spawn(
                            Behaviors::with_stash(100, |stash| {
                                Behaviors::receive_message(move |m: Held| {
                                    stash.stash(m).map(|()| Behaviors::same())
                                })
                            })
                            .unwrap(),
                            "stasher",
                        )
                        .unwrap();
                    let _ = st.send(stasher);
                    // The flaky one, backing off for an hour after its first message.
                    let hh = h.clone();
                    let restarting = h.clone();
                    let stops = stop_report("flaky", s.clone());
                    let flaky: ActorRef<u64> = ctx
                        .spawn(
                            Behaviors::supervise(
                                Behaviors::receive_message(move |n: u64| {
                                    hh.lock().unwrap().push(("flaky".into(), n));
                                    if n == 0 { Err(Boom) } else { Ok(()) }
                                })
                                .on_signal(move |ctx, signal| {
                                    if *signal == Signal::PreRestart {
                                        restarting
                                            .lock()
                                            .unwrap()
                                            .push(("flaky pre-restart".into(), 0));
                                    }
                                    stops(ctx, signal)
                                }),
                            )
                            .on_failure::<Boom>(
                                SupervisorStrategy::restart()
                                    .with_backoff(fixed_backoff(Duration::from_secs(3600))),
                            ),
                            "flaky",
                        )
                        .unwrap();
                    let _ = r.send(flaky);
                    Behaviors::receive_message(|_: u64| ())
                        .on_signal(stop_report("root", s.clone()))
                }),
                "root",
            )
            .unwrap();
        drop(root);
        let gated = next(&mut refs_rx).await;
        let flaky = next(&mut refs_rx).await;
        let stasher = next(&mut stasher_rx).await;

        // The gated actor takes 1 and parks; 2 and 3 fill its mailbox; offers wait.
        gated.tell(1_u64);
        let deadline = Instant::now() + T;
        while !handled.lock().unwrap().contains(&("gated".into(), 1)) {
            assert!(Instant::now() < deadline);
            tokio::task::yield_now().await;
        }
        gated.tell(2_u64);
        gated.tell(3_u64);
        let mut offers = Vec::new();
        for n in 4..8_u64 {
            let g = gated.clone();
            offers.push(tokio::spawn(async move { g.offer(n).await }));
        }
        // The stasher holds tells and an ask.
        for n in 0..5 {
            stasher.tell(Held::Put(n));
        }
        let held_ask = stasher
            .ask_with(Held::Get)
            .timeout(Duration::from_secs(3600));
        let held_ask = tokio::spawn(held_ask.into_future());
        // The flaky one fails, then is told more during its backoff.
        flaky.tell(0_u64);
        for n in 1..6 {
            flaky.tell(n);
        }
        // It backs off once its `PreRestart` has run (the backoff begins in that turn).
        let deadline = Instant::now() + T;
        while !handled
            .lock()
            .unwrap()
            .contains(&("flaky pre-restart".into(), 0))
        {
            assert!(Instant::now() < deadline, "the flaky one never failed on 0");
            tokio::task::yield_now().await;
        }

        timeout(T, system.terminate())
            .await
            .expect("terminate returns within the bound");
        assert_eq!(system.live_actors(), 0, "round {round}");
        let mut accepted = 0;
        for offer in offers {
            if timeout(T, offer).await.unwrap().unwrap() {
                accepted += 1;
            }
        }
        let asked = timeout(T, held_ask).await.unwrap().unwrap();
        assert!(
            matches!(asked, Err(AskError::TargetTerminated { .. })),
            "{asked:?}"
        );

        // Accounting: gated got 1 (in hand, dropped at the stop) and 2..8 go to
        // it or to letters; the refused offers each are a letter too.
        let mut lettered: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        let mut stash_letters = 0;
        let wanted = |lettered: &BTreeMap<String, Vec<u64>>, stash_letters: usize| {
            let gated_n = lettered.get("gated").map_or(0, Vec::len);
            let flaky_n = lettered.get("flaky").map_or(0, Vec::len);
            gated_n == 6 && flaky_n == 5 && stash_letters == 6
        };
        let deadline = Instant::now() + T;
        while !wanted(&lettered, stash_letters) {
            let letter = match tokio::time::timeout_at(deadline, dead.recv()).await {
                Ok(Some(letter)) => letter,
                _ => panic!(
                    "round {round}: accepted {accepted} offers; lettered {lettered:?}, {stash_letters} from the stash; handled {:?}",
                    handled
                        .lock()
                        .unwrap()
                        .iter()
                        .filter(|(w, _)| w != "ticker")
                        .collect::<Vec<_>>()
                ),
            };
            let name = letter.recipient().name().to_string();
            if name == "stasher" {
                stash_letters += 1;
            } else if let Some(n) = letter.take_message::<u64>() {
                lettered.entry(name).or_default().push(n);
            }
        }
        let mut g = lettered["gated"].clone();
        g.sort_unstable();
        assert_eq!(g, [2, 3, 4, 5, 6, 7]);
        let mut f = lettered["flaky"].clone();
        f.sort_unstable();
        assert_eq!(f, [1, 2, 3, 4, 5]);
        assert!(
            !handled
                .lock()
                .unwrap()
                .iter()
                .any(|(w, n)| (w == "gated" && *n > 1) || (w == "flaky" && *n > 0))
        );
        // PostStop: the gated child before root. The flaky one, between
        // incarnations, has none running to see it (its failing incarnation saw
        // `PreRestart`).
        // `terminate` has returned: every PostStop has been sent.
        let mut stops = Vec::new();
        while let Ok(s) = stops_rx.try_recv() {
            stops.push(s);
        }
        assert_eq!(stops, ["gated", "root"]);
        gate.notify_waiters();
    }
}

// =================================================================================
// 8. The testkit against the live runtime (S48, S27, S25, S6)
// =================================================================================

#[message]
pub enum Cmd {
    Add(u64),
    Hold,
    Release,
    Report(ActorRef<String>),
    Odd,
}

fn tally_open(sum: Arc<AtomicU64>, stash: tapio::StashBuffer<Cmd>) -> Behavior<Cmd> {
    Behaviors::receive_message(move |cmd: Cmd| match cmd {
        Cmd::Add(n) => {
            sum.fetch_add(n, SeqCst);
            Behaviors::same()
        }
        Cmd::Hold => tally_holding(sum.clone(), stash.clone()),
        Cmd::Release => Behaviors::same(),
        Cmd::Report(to) => {
            to.tell(format!("sum {}", sum.load(SeqCst)));
            Behaviors::same()
        }
        Cmd::Odd => Behaviors::unhandled(),
    })
    .into()
}

fn tally_holding(sum: Arc<AtomicU64>, stash: tapio::StashBuffer<Cmd>) -> Behavior<Cmd> {
    Behaviors::receive_message(move |cmd: Cmd| match cmd {
        Cmd::Release => Ok(stash.unstash_all(tally_open(sum.clone(), stash.clone()))),
        Cmd::Odd => Ok(Behaviors::unhandled()),
        other => stash.stash(other).map(|()| Behaviors::same()),
    })
    .into()
}

fn tally() -> Behavior<Cmd> {
    Behaviors::with_stash(16, |stash| tally_open(Arc::new(AtomicU64::new(0)), stash)).unwrap()
}

/// S48, S27, S6: one script through `BehaviorTestKit` and through a live actor:
/// the same reports in the same order, `unhandled` as `Outcome::Unhandled` in the
/// kit and as an `Unhandled` letter live, in both states, and a stash replayed
/// ahead of what came after the release.
#[tapio::test(start_paused = true)]
async fn s48_s27_s6_the_kit_and_a_live_actor_agree_on_a_stashing_script(system: ActorSystem) {
    let mut inbox = tapio::testkit::TestInbox::<String>::new();
    let mut probe = TestProbe::<String>::new(&system);
    let mut dead = letters(&system);
    let script = |to: &ActorRef<String>| {
        vec![
            Cmd::Add(1),
            Cmd::Report(to.clone()),
            Cmd::Hold,
            Cmd::Add(2),
            Cmd::Report(to.clone()),
            Cmd::Odd,
            Cmd::Add(3),
            Cmd::Release,
            Cmd::Add(4),
            Cmd::Report(to.clone()),
            Cmd::Odd,
        ]
    };
    let mut kit = tapio::testkit::BehaviorTestKit::new(tally());
    let mut outcomes = Vec::new();
    for cmd in script(inbox.actor_ref()) {
        outcomes.push(kit.run(cmd).unwrap());
    }
    use tapio::testkit::Outcome::{Same, Switched, Unhandled};
    assert_eq!(
        outcomes,
        [
            Same, Same, Switched, Same, Same, Unhandled, Same, Switched, Same, Same, Unhandled
        ]
    );
    let from_kit = inbox.messages();

    let live = system.spawn(tally(), "tally").unwrap();
    for cmd in script(probe.actor_ref()) {
        live.tell(cmd);
    }
    let from_live = probe.receive_messages(from_kit.len(), T).await;
    assert_eq!(from_kit, ["sum 1", "sum 3", "sum 10"]);
    assert_eq!(from_live, from_kit);
    probe.expect_no_message(ms(50)).await;
    let odd = letters_for(&mut dead, live.path(), 2).await;
    for letter in &odd {
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::Unhandled,
            "{}",
            describe(letter)
        );
        // The handler took the value and answered `unhandled`: only the type is left.
        assert!(
            letter.message_type().contains("Cmd"),
            "{}",
            describe(letter)
        );
    }
}

#[message]
#[derive(Clone)]
pub enum Metro {
    Start,
    Beat,
    Stop,
}

fn metronome(to: ActorRef<String>) -> Behavior<Metro> {
    Behaviors::with_timers(move |timers| {
        let to = to.clone();
        let zero = Instant::now();
        Behaviors::receive_message(move |m: Metro| {
            match m {
                Metro::Start => timers
                    .start_fixed_rate("beat", Metro::Beat, ms(100))
                    .unwrap(),
                Metro::Beat => to.tell(format!("beat @{}", zero.elapsed().as_millis())),
                Metro::Stop => timers.cancel("beat"),
            }
            Behaviors::same()
        })
    })
}

/// S48, S25: the kit records the fixed-rate timer a message starts and the cancel
/// another makes; the same behavior live, on the paused clock, beats exactly on
/// the period until the cancel, then never again.
#[tapio::test(start_paused = true)]
async fn s48_s25_the_kits_timer_effects_match_the_live_beats(system: ActorSystem) {
    use tapio::testkit::Effect;
    let inbox = tapio::testkit::TestInbox::<String>::new();
    let mut kit = tapio::testkit::BehaviorTestKit::new(metronome(inbox.actor_ref().clone()));
    kit.run(Metro::Start).unwrap();
    kit.expect_effect(Effect::TimerStarted {
        key: "beat".into(),
        mode: tapio::TimerMode::FixedRate,
        delay: ms(100),
    });
    kit.run(Metro::Stop).unwrap();
    kit.expect_effect(Effect::TimerCancelled { key: "beat".into() });

    let mut probe = TestProbe::<String>::new(&system);
    let live = system
        .spawn(metronome(probe.actor_ref().clone()), "metronome")
        .unwrap();
    live.tell(Metro::Start);
    let beats = probe.receive_messages(5, T).await;
    assert_eq!(
        beats,
        [
            "beat @100",
            "beat @200",
            "beat @300",
            "beat @400",
            "beat @500"
        ]
    );
    live.tell(Metro::Stop);
    probe.expect_no_message(Duration::from_secs(2)).await;
}

// =================================================================================
// 9. More edges: escalation against terminate, scope, offers and asks in odd orders
// =================================================================================

/// S19, S17, S15: a leaf escalates to the guardian in the same moment `terminate`
/// is called. Whichever wins, termination ends once: `terminate` returns within
/// the bound, `when_terminated` says the same twice, every actor saw `PostStop`
/// after its children, and nothing runs afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_s17_terminate_racing_an_escalation_ends_once_children_first() {
    for round in 0..20 {
        let system = ActorSystem::new(&format!("race-{round}")).unwrap();
        let (stops_tx, mut stops_rx) = mpsc::unbounded_channel::<String>();
        let (leaf_tx, mut leaf_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();

        fn level(
            names: &'static [&'static str],
            stops: mpsc::UnboundedSender<String>,
            leaf: mpsc::UnboundedSender<ActorRef<u64>>,
        ) -> Behavior<u64> {
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                if names.len() > 1 {
                    ctx.spawn(level(&names[1..], stops.clone(), leaf.clone()), names[1])
                        .unwrap();
                } else {
                    let _ = leaf.send(ctx.self_ref().clone());
                }
                let me = names[0];
                let stops = stops.clone();
                Behaviors::receive_message(|_: u64| Err::<(), _>(Boom)).on_signal(
                    move |_ctx, signal| {
                        if *signal == Signal::PostStop {
                            let _ = stops.send(me.to_string());
                        }
                    },
                )
            }))
            .on_any_failure(SupervisorStrategy::escalate())
            .into()
        }
        static NAMES: [&str; 3] = ["a", "b", "c"];
        system
            .spawn(level(&NAMES, stops_tx.clone(), leaf_tx), "a")
            .unwrap();
        let leaf = next(&mut leaf_rx).await;
        leaf.tell(1_u64);
        if round % 2 == 0 {
            tokio::task::yield_now().await;
        }
        timeout(T, system.terminate())
            .await
            .expect("terminate returns");
        let first = timeout(T, system.when_terminated()).await.unwrap();
        let second = timeout(T, system.when_terminated()).await.unwrap();
        assert_eq!(
            first.as_ref().map_err(|f| f.to_string()),
            second.as_ref().map_err(|f| f.to_string())
        );
        if let Err(failure) = &first {
            assert!(failure.is::<Boom>(), "{failure}");
            assert_eq!(
                climbed(failure),
                ["/user/a/b/c", "/user/a/b", "/user/a", "/user"]
            );
        }
        assert_eq!(system.live_actors(), 0, "round {round}");
        let mut stops = Vec::new();
        while let Ok(s) = stops_rx.try_recv() {
            stops.push(s);
        }
        assert_eq!(stops, ["c", "b", "a"], "round {round}: {first:?}");
    }
}

/// S1, S17: inside `ActorSystem::scope`, an escalation to the guardian ends the
/// system while the block runs; the block sees it through `when_terminated`, with
/// the original error and its path, and `scope` returns the block's value with
/// nothing left running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s1_s17_a_scope_sees_an_escalation_end_its_system_and_returns_the_blocks_value() {
    let (paths, system) = timeout(
        T,
        ActorSystem::scope("scoped-escalation", |system| async move {
            let failing = system.spawn(
                Behaviors::supervise(Behaviors::receive_message(|_: u64| Err::<(), _>(Other)))
                    .on_any_failure(SupervisorStrategy::escalate()),
                "failing",
            )?;
            failing.tell(1_u64);
            let failure = timeout(T, system.when_terminated())
                .await
                .unwrap()
                .expect_err("the escalation");
            assert!(failure.is::<Other>(), "{failure}");
            // A spawn after the end is refused.
            assert!(system.spawn(Behaviors::ignore::<u64>(), "late").is_err());
            Ok::<_, tapio::SpawnError>((climbed(&failure), system))
        }),
    )
    .await
    .unwrap()
    .unwrap()
    .unwrap();
    assert_eq!(paths, ["/user/failing", "/user"]);
    assert_eq!(system.live_actors(), 0);
}

/// S30, S13, S31: an `offer_within` to a full bounded mailbox whose actor backs off
/// gives up at its deadline: `false`, and its message is an `OfferTimedOut` letter;
/// the queued message is handled by the next incarnation.
#[tapio::test(start_paused = true)]
async fn s30_s13_an_offer_within_expiring_during_a_backoff_is_an_offer_timed_out_letter(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn_with(
            Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
                if n == 0 {
                    return Err(Boom);
                }
                to.tell(format!("got {n}"));
                Ok(())
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart().with_backoff(fixed_backoff(Duration::from_secs(1))),
            ),
            "backing",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    actor.tell(0_u64);
    tokio::time::sleep(ms(10)).await;
    actor.tell(1_u64); // fills the mailbox during the backoff
    let started = Instant::now();
    assert!(!actor.offer_within(2_u64, ms(200)).await);
    assert_eq!(started.elapsed(), ms(200));
    let got = letters_for(&mut dead, actor.path(), 1).await;
    assert_eq!(
        got[0].reason(),
        &DeadLetterReason::OfferTimedOut,
        "{}",
        describe(&got[0])
    );
    assert_eq!(got[0].take_message::<u64>(), Some(2));
    expect_lines(&mut probe, &["got 1"]).await;
    assert!(started.elapsed() >= ms(700), "{:?}", started.elapsed());
}

/// S23, S4, S21: an async handler asks a child that stops on the request without
/// answering: the ask inside the handler fails at once with `TargetTerminated`,
/// and the handler goes on to the next message.
#[tapio::test(start_paused = true)]
async fn s23_s4_an_ask_from_a_handler_to_a_child_that_stops_on_it_fails_at_once(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, n: u64| {
                let child: ActorRef<Q> = ctx
                    .spawn_anonymous(Behaviors::receive_message(|_: Q| Behaviors::stopped()))
                    .unwrap();
                let started = Instant::now();
                let asked = child
                    .ask_with(|reply_to| Q { n, reply_to })
                    .timeout(Duration::from_secs(3600))
                    .await;
                let kind = match asked {
                    Err(AskError::TargetTerminated { .. }) => "terminated",
                    Err(AskError::Unanswered { .. }) => "unanswered",
                    Err(_) => "other error",
                    Ok(_) => "answered",
                };
                to.tell(format!(
                    "{n}: {kind} in {}ms",
                    started.elapsed().as_millis()
                ));
            }),
            "asker",
        )
        .unwrap();
    parent.tell(1_u64);
    parent.tell(2_u64);
    expect_lines(
        &mut probe,
        &["1: terminated in 0ms", "2: terminated in 0ms"],
    )
    .await;
}

/// S22, S31, S23: an ask that timed out while its request waited in the mailbox
/// behind a parked handler; then the target is stopped. The request is one dead
/// letter (`RecipientStopped`), and no answer or second letter follows.
#[tapio::test(start_paused = true)]
async fn s22_s31_a_timed_out_request_still_queued_is_lettered_once_at_the_stop(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let gate = Arc::new(tokio::sync::Notify::new());
    let held = gate.clone();
    let actor = system
        .spawn(
            Behaviors::receive_message_async(async move |q: Q| {
                if q.n == 0 {
                    held.notified().await;
                }
                q.reply_to.tell(q.n);
            }),
            "parked",
        )
        .unwrap();
    let sink = system.spawn(Behaviors::ignore::<u64>(), "sink").unwrap();
    actor.tell(Q {
        n: 0,
        reply_to: sink,
    });
    let asked = actor
        .ask_with(|reply_to| Q { n: 5, reply_to })
        .timeout(ms(50))
        .await;
    assert!(matches!(asked, Err(AskError::Timeout { .. })), "{asked:?}");
    system.stop(&actor).unwrap();
    let got = letters_for(&mut dead, actor.path(), 1).await;
    assert_eq!(
        got[0].reason(),
        &DeadLetterReason::RecipientStopped,
        "{}",
        describe(&got[0])
    );
    assert!(got[0].is::<Q>(), "{}", describe(&got[0]));
    // Nothing more, for the actor or as an answer.
    let quiet = Instant::now() + Duration::from_secs(1);
    if let Ok(Some(letter)) = tokio::time::timeout_at(quiet, dead.recv()).await {
        panic!("an unexpected letter: {}", describe(&letter));
    }
}

/// S16, S14, S18, S2: a child escalates and its parent restarts, rebuilding its
/// subtree: a watcher of the parent hears nothing, a watcher of the old child hears
/// its `Terminated` once, the new child is a new incarnation under the same path,
/// and a tell through the old child's ref is a dead letter, never the new child's.
#[tapio::test(start_paused = true)]
async fn s16_s14_s18_a_parents_restart_by_escalation_ends_the_old_child_only(system: ActorSystem) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (child_tx, mut child_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let to = to.clone();
                let child = ctx
                    .spawn(
                        Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
                            if n == 0 {
                                return Err(Boom);
                            }
                            to.tell(format!("child got {n}"));
                            Ok(())
                        }))
                        .on_any_failure(SupervisorStrategy::escalate()),
                        "child",
                    )
                    .unwrap();
                let _ = child_tx.send(child);
                Behaviors::receive_message(|_: u64| ())
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "parent",
        )
        .unwrap();
    let mut watcher = TestProbe::<u64>::new(&system);
    let old = next(&mut child_rx).await;
    watcher.watch(&parent);
    watcher.watch(&old);
    old.tell(0_u64);
    let new = next(&mut child_rx).await;
    watcher.expect_terminated(&old, T).await;
    watcher.expect_no_termination(ms(100)).await;
    assert_eq!(new.path(), old.path());
    assert_ne!(new.uid(), old.uid());
    old.tell(7_u64);
    new.tell(8_u64);
    expect_lines(&mut probe, &["child got 8"]).await;
    let got = letters_for(&mut dead, old.path(), 1).await;
    assert_eq!(
        got[0].take_message::<u64>(),
        Some(7),
        "{}",
        describe(&got[0])
    );
    probe.expect_no_message(ms(50)).await;
}

// =================================================================================
// 10. Fail-on-overflow mailboxes against ticks, replays and backoffs (S24, S27,
//     S29, S13)
// =================================================================================

#[message]
#[derive(Clone)]
pub enum Gated {
    N(u64),
    Tick,
    Release,
}

/// A behavior counting its setups on `to` ("setup N"), whose `N(1)` parks the
/// handler on `gate`, and which reports what it handles.
fn gated_setup(
    to: ActorRef<String>,
    gate: Arc<tokio::sync::Notify>,
    setups: Arc<AtomicU64>,
    tick_after: Option<Duration>,
) -> Behavior<Gated> {
    Behaviors::setup(move |ctx: &mut ActorContext<Gated>| {
        let run = setups.fetch_add(1, SeqCst) + 1;
        to.tell(format!("setup {run}"));
        if let Some(after) = tick_after {
            ctx.timers().start_single_timer("tick", Gated::Tick, after);
        }
        let to = to.clone();
        let gate = gate.clone();
        Behaviors::receive_message_async(async move |m: Gated| match m {
            Gated::N(n) => {
                if n == 1 {
                    gate.notified().await;
                }
                to.tell(format!("got {n}"));
            }
            Gated::Tick => to.tell("tick".to_string()),
            Gated::Release => {}
        })
    })
}

/// S24, S29: the README says a timer's tick is never refused by a mailbox's bound:
/// a tick due while a fail-on-overflow mailbox is full queues past the bound, and
/// is not an overflow (the actor neither fails nor restarts).
#[tapio::test(start_paused = true)]
async fn s24_s29_a_tick_into_a_full_fail_mailbox_queues_and_fails_nothing(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(tokio::sync::Notify::new());
    let setups = Arc::new(AtomicU64::new(0));
    let actor = system
        .spawn_with(
            Behaviors::supervise(gated_setup(
                probe.actor_ref().clone(),
                gate.clone(),
                setups,
                Some(ms(100)),
            ))
            .on_failure::<tapio::MailboxOverflow>(SupervisorStrategy::restart()),
            "ticked",
            MailboxConfig::bounded(1, OverflowStrategy::Fail).unwrap(),
        )
        .unwrap();
    expect_lines(&mut probe, &["setup 1"]).await;
    actor.tell(Gated::N(1));
    tokio::time::sleep(ms(10)).await;
    actor.tell(Gated::N(2)); // the mailbox is full now
    tokio::time::sleep(ms(200)).await; // the tick comes due
    gate.notify_waiters();
    expect_lines(&mut probe, &["got 1", "got 2", "tick"]).await;
    probe.expect_no_message(ms(100)).await;
}

/// S27, S29: a replay is never refused by the bound, also a fail-on-overflow one:
/// four stashed messages replayed into a mailbox of two are all handled, in order,
/// without an overflow.
#[tapio::test(start_paused = true)]
async fn s27_s29_a_replay_into_a_fail_mailbox_is_not_an_overflow(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let setups = Arc::new(AtomicU64::new(0));
    let actor = system
        .spawn_with(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<Gated>| {
                let run = setups.fetch_add(1, SeqCst) + 1;
                to.tell(format!("setup {run}"));
                let to = to.clone();
                Behaviors::with_stash(8, move |stash| {
                    let to = to.clone();
                    Behaviors::receive_message(move |m: Gated| match m {
                        Gated::Release => {
                            let to = to.clone();
                            Ok(
                                stash.unstash_all(Behaviors::receive_message(move |m: Gated| {
                                    if let Gated::N(n) = m {
                                        to.tell(format!("got {n}"));
                                    }
                                })),
                            )
                        }
                        other => {
                            to.tell("held".to_string());
                            stash.stash(other).map(|()| Behaviors::same())
                        }
                    })
                })
                .unwrap()
            }))
            .on_failure::<tapio::MailboxOverflow>(SupervisorStrategy::restart()),
            "replayed",
            MailboxConfig::bounded(2, OverflowStrategy::Fail).unwrap(),
        )
        .unwrap();
    expect_lines(&mut probe, &["setup 1"]).await;
    for n in 1..=4 {
        actor.tell(Gated::N(n));
        expect_lines(&mut probe, &["held"]).await;
    }
    actor.tell(Gated::Release);
    actor.tell(Gated::N(5));
    expect_lines(&mut probe, &["got 1", "got 2", "got 3", "got 4", "got 5"]).await;
    probe.expect_no_message(ms(100)).await;
}

/// S13, S29, S31: a fail-on-overflow mailbox overflowing while its actor backs off:
/// the overflowing message is a `MailboxFull` letter, the one queued is handled by
/// the next incarnation (nothing else is lost), and the actor runs on.
#[tapio::test(start_paused = true)]
async fn s13_s29_a_fail_overflow_during_a_backoff_loses_only_the_overflowing_message(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let setups = Arc::new(AtomicU64::new(0));
    let actor = system
        .spawn_with(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
                let run = setups.fetch_add(1, SeqCst) + 1;
                to.tell(format!("setup {run}"));
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| {
                    if n == 0 {
                        return Err(Boom);
                    }
                    to.tell(format!("got {n}"));
                    Ok(())
                })
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart().with_backoff(fixed_backoff(Duration::from_secs(1))),
            )
            .on_failure::<tapio::MailboxOverflow>(SupervisorStrategy::restart()),
            "backing-fail",
            MailboxConfig::bounded(1, OverflowStrategy::Fail).unwrap(),
        )
        .unwrap();
    probe.watch(&actor);
    expect_lines(&mut probe, &["setup 1"]).await;
    actor.tell(0_u64);
    tokio::time::sleep(ms(10)).await;
    actor.tell(1_u64);
    actor.tell(2_u64);
    let got = letters_for(&mut dead, actor.path(), 1).await;
    assert_eq!(
        got[0].reason(),
        &DeadLetterReason::MailboxFull,
        "{}",
        describe(&got[0])
    );
    assert_eq!(got[0].take_message::<u64>(), Some(2));
    let lines = probe.receive_messages(2, T).await;
    assert_eq!(lines, ["setup 2", "got 1"]);
    actor.tell(3_u64);
    expect_lines(&mut probe, &["got 3"]).await;
    probe.expect_no_termination(ms(10)).await;
}

// =================================================================================
// 11. What a failing incarnation does in `PreRestart` and `PostStop` (S14, S15,
//     S18, S31)
// =================================================================================

/// S14, S15, S31: a tell to itself from `PreRestart` stays in the kept mailbox and
/// is handled by the next incarnation; a tell to itself from `PostStop` is a dead
/// letter (`RecipientStopped`), not lost silently.
#[tapio::test(start_paused = true)]
async fn s14_s15_s31_self_tells_from_pre_restart_are_kept_and_from_post_stop_lettered(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| match n {
                    0 => Err(Boom),
                    1 => Ok(Behaviors::stopped()),
                    n => {
                        to.tell(format!("got {n}"));
                        Ok(Behaviors::same())
                    }
                })
                .on_signal(|ctx, signal| {
                    match signal {
                        Signal::PreRestart => ctx.self_ref().tell(100_u64),
                        Signal::PostStop => ctx.self_ref().tell(200_u64),
                        _ => {}
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "selfish",
        )
        .unwrap();
    actor.tell(0_u64);
    expect_lines(&mut probe, &["got 100"]).await;
    actor.tell(1_u64);
    let got = letters_for(&mut dead, actor.path(), 1).await;
    assert_eq!(
        got[0].take_message::<u64>(),
        Some(200),
        "{}",
        describe(&got[0])
    );
    assert_eq!(got[0].reason(), &DeadLetterReason::RecipientStopped);
}

/// S14, S15, S18, S2: a child spawned and a watch made from `PreRestart` belong to
/// the incarnation being replaced: the restart stops that child (its `PostStop`
/// comes), its name is free for the next incarnation's setup, and the watch is
/// dropped (the watched actor's later stop is not heard).
#[tapio::test(start_paused = true)]
async fn s14_s15_s18_a_child_and_a_watch_from_pre_restart_end_with_that_incarnation(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let outsider = system
        .spawn(Behaviors::ignore::<u64>(), "outsider")
        .unwrap();
    let watched = outsider.clone();
    let setups = Arc::new(AtomicU64::new(0));
    fn reporter(name: String, to: ActorRef<String>) -> Behavior<u64> {
        Behaviors::receive_message(|_: u64| ())
            .on_signal(move |_ctx, signal| {
                if *signal == Signal::PostStop {
                    to.tell(format!("{name} stopped"));
                }
            })
            .into()
    }
    let _actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let run = setups.fetch_add(1, SeqCst) + 1;
                if run > 1 {
                    // The name the last incarnation's PreRestart used is free.
                    let spawned = ctx.spawn(reporter(format!("late {run}"), to.clone()), "late");
                    to.tell(format!("setup {run}: spawned late {}", spawned.is_ok()));
                } else {
                    to.tell(format!("setup {run}"));
                }
                let to = to.clone();
                let watched = watched.clone();
                Behaviors::receive_message(|n: u64| if n == 0 { Err(Boom) } else { Ok(()) })
                    .on_signal(move |ctx, signal| {
                        match signal {
                            Signal::PreRestart => {
                                let spawned =
                                    ctx.spawn(reporter("late 1".into(), to.clone()), "late");
                                ctx.watch(&watched);
                                to.tell(format!("pre-restart: spawned {}", spawned.is_ok()));
                            }
                            Signal::Terminated(t) => {
                                to.tell(format!("terminated {}", t.actor().path().name()))
                            }
                            _ => {}
                        }
                        Behaviors::same()
                    })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "restarting",
        )
        .unwrap();
    expect_lines(&mut probe, &["setup 1"]).await;
    _actor.tell(0_u64);
    expect_lines(
        &mut probe,
        &[
            "pre-restart: spawned true",
            "late 1 stopped",
            "setup 2: spawned late true",
        ],
    )
    .await;
    system.stop(&outsider).unwrap();
    probe.expect_no_message(ms(200)).await;
}

/// S16, S12, S14: a parent whose children come from a setup outside `supervise`,
/// restarted by a child's escalation with `with_stop_children(false)`: the
/// escalating child is gone, the sibling keeps running with its state, and the
/// parent lists only it.
#[tapio::test(start_paused = true)]
async fn s16_s14_an_escalation_into_a_restart_that_keeps_children_keeps_the_sibling(
    system: ActorSystem,
) {
    #[message]
    pub enum Parent {
        Children(ActorRef<String>),
    }
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (kids_tx, mut kids_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<Parent>| {
                let failing = ctx
                    .spawn(
                        Behaviors::supervise(Behaviors::receive_message(|_: u64| {
                            Err::<(), _>(Boom)
                        }))
                        .on_any_failure(SupervisorStrategy::escalate()),
                        "failing",
                    )
                    .unwrap();
                let to = to.clone();
                let sum = Arc::new(AtomicU64::new(0));
                let counter = ctx
                    .spawn(
                        Behaviors::receive_message(move |n: u64| {
                            let s = sum.fetch_add(n, SeqCst) + n;
                            to.tell(format!("sum {s}"));
                        }),
                        "counter",
                    )
                    .unwrap();
                let _ = kids_tx.send(failing);
                let _ = kids_tx.send(counter);
                Behaviors::supervise(Behaviors::receive(|ctx, m: Parent| {
                    let Parent::Children(to) = m;
                    let mut names: Vec<String> = ctx
                        .children()
                        .iter()
                        .map(|c| c.path().name().to_string())
                        .collect();
                    names.sort();
                    to.tell(names.join(","));
                }))
                .on_failure::<Boom>(SupervisorStrategy::restart().with_stop_children(false))
            }),
            "keeper",
        )
        .unwrap();
    let failing = next(&mut kids_rx).await;
    let counter = next(&mut kids_rx).await;
    let mut watcher = TestProbe::<u64>::new(&system);
    watcher.watch(&failing);
    watcher.watch(&counter);
    watcher.watch(&parent);
    counter.tell(2_u64);
    expect_lines(&mut probe, &["sum 2"]).await;
    failing.tell(1_u64);
    watcher.expect_terminated(&failing, T).await;
    counter.tell(3_u64);
    expect_lines(&mut probe, &["sum 5"]).await;
    parent.tell(Parent::Children(probe.actor_ref().clone()));
    expect_lines(&mut probe, &["counter"]).await;
    watcher.expect_no_termination(ms(100)).await;
}

/// S18: an actor of a system that has terminated, watched from another system,
/// is heard `Terminated` once, at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s18_watching_an_actor_of_a_terminated_system_hears_terminated_once() {
    let gone = ActorSystem::new("gone").unwrap();
    let target = gone.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    timeout(T, gone.terminate()).await.unwrap();
    let live = ActorSystem::new("live").unwrap();
    let mut probe = TestProbe::<String>::new(&live);
    let to = probe.actor_ref().clone();
    let _watcher = live
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&target);
                let to = to.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                    if let Signal::Terminated(t) = signal {
                        to.tell(format!("terminated {}", t.actor().path()));
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    expect_lines(&mut probe, &["terminated /user/target"]).await;
    probe.expect_no_message(ms(100)).await;
    timeout(T, live.terminate()).await.unwrap();
}

/// S49, S31: subscribers made and dropped in a loop while four tasks publish dead
/// letters: no deadlock, the steady subscriber counts every letter, and the count
/// of subscribers ends where it began.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s49_s31_subscriptions_churning_during_a_storm_disturb_no_one() {
    let system = ActorSystem::new("churn").unwrap();
    let mut steady = letters(&system);
    let gone = system.spawn(Behaviors::ignore::<u64>(), "gone").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&gone);
    system.stop(&gone).unwrap();
    probe.expect_terminated(&gone, T).await;
    let events = system.events().clone();
    let churn = tokio::spawn(async move {
        for i in 0..500_usize {
            let mut sub = events
                .subscribe_with_capacity::<DeadLetter>(1 + i % 4)
                .unwrap();
            let _ = sub.try_recv();
            if i % 3 == 0 {
                tokio::task::yield_now().await;
            }
        }
    });
    let mut tasks = Vec::new();
    for p in 0..4_u64 {
        let gone = gone.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..500 {
                gone.tell(p * 1000 + i);
                if i % 50 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    for task in tasks {
        timeout(T, task).await.unwrap().unwrap();
    }
    timeout(T, churn).await.unwrap().unwrap();
    let got = letters_for(&mut steady, gone.path(), 2000).await;
    assert_eq!(got.len(), 2000);
    assert_eq!(steady.lost(), 0);
    assert_eq!(system.events().subscriber_count::<DeadLetter>(), 1);
    timeout(T, system.terminate()).await.unwrap();
}

/// S19, S29, S31, S17: producers storm a child with a fail-on-overflow mailbox of
/// one, which escalates, while `terminate` is called: termination ends once and
/// promptly, nothing runs afterwards, and every message told is handled or
/// lettered exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_s29_s31_terminate_while_a_fail_mailbox_overflows_and_escalates_loses_nothing() {
    for round in 0..5 {
        let system = ActorSystem::new(&format!("overflowing-{round}")).unwrap();
        let mut dead = letters(&system);
        let handled = Arc::new(AtomicU64::new(0));
        let (child_tx, mut child_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
        let h = handled.clone();
        system
            .spawn(
                Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                    let h = h.clone();
                    let child = ctx
                        .spawn_with(
                            Behaviors::supervise(Behaviors::receive_message_async(
                                async move |_: u64| {
                                    h.fetch_add(1, SeqCst);
                                    tokio::task::yield_now().await;
                                },
                            ))
                            .on_any_failure(SupervisorStrategy::escalate()),
                            "child",
                            MailboxConfig::bounded(1, OverflowStrategy::Fail).unwrap(),
                        )
                        .unwrap();
                    let _ = child_tx.send(child);
                    Behaviors::receive_message(|_: u64| ())
                }))
                .on_any_failure(SupervisorStrategy::restart()),
                "parent",
            )
            .unwrap();
        let mut children = vec![next(&mut child_rx).await];
        const EACH: u64 = 300;
        let mut producers = Vec::new();
        for p in 0..3_u64 {
            let child = children[0].clone();
            producers.push(tokio::spawn(async move {
                for i in 0..EACH {
                    child.tell(p * 10_000 + i);
                    if i % 16 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            }));
        }
        tokio::time::sleep(ms(2)).await;
        timeout(T, system.terminate())
            .await
            .expect("terminate returns");
        for producer in producers {
            timeout(T, producer).await.unwrap().unwrap();
        }
        assert_eq!(system.live_actors(), 0, "round {round}");
        // Later incarnations of the child (the parent restarts) share its path.
        while let Ok(c) = child_rx.try_recv() {
            children.push(c);
        }
        let path = children[0].path().to_string();
        let mut lettered = 0;
        let deadline = Instant::now() + T;
        while handled.load(SeqCst) + lettered < 3 * EACH {
            match tokio::time::timeout_at(deadline, dead.recv()).await {
                Ok(Some(letter)) if letter.recipient().to_string() == path => lettered += 1,
                Ok(Some(_)) => {}
                _ => panic!(
                    "round {round}: handled {} + lettered {lettered} of {}",
                    handled.load(SeqCst),
                    3 * EACH
                ),
            }
        }
        assert_eq!(handled.load(SeqCst) + lettered, 3 * EACH);
        assert!(
            dead.try_recv()
                .is_none_or(|l| l.recipient().to_string() != path)
        );
    }
}

// =================================================================================
// 12. Names, watches and stashes at an escalation; events at the end (S2, S16,
//     S18, S26, S31, S49)
// =================================================================================

/// S2, S16, S18: `ChildFailed` says the child "has stopped", so its name is free in
/// that very handler: the parent respawns it there. The parent, which watched the
/// old child, also hears its `Terminated` exactly once, and the new child works.
#[tapio::test(start_paused = true)]
async fn s2_s16_s18_a_child_failed_handler_respawns_the_name_at_once(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    fn kid(to: ActorRef<String>) -> Behavior<u64> {
        Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                return Err(Boom);
            }
            to.tell(format!("kid got {n}"));
            Ok(())
        }))
        .on_any_failure(SupervisorStrategy::escalate())
        .into()
    }
    let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let _parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let first = ctx.spawn(kid(to.clone()), "kid").unwrap();
                ctx.watch(&first);
                let _ = kid_tx.send(first);
                let to = to.clone();
                let kid_tx = kid_tx.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |ctx, signal| {
                    match signal {
                        Signal::ChildFailed(failed) => {
                            let name = failed.child().path().name().to_string();
                            match ctx.spawn(kid(to.clone()), &name) {
                                Ok(again) => {
                                    to.tell(format!("respawned {name}"));
                                    let _ = kid_tx.send(again);
                                }
                                Err(e) => to.tell(format!("respawn refused: {e}")),
                            }
                        }
                        Signal::Terminated(t) => {
                            to.tell(format!("terminated {}", t.actor().uid() != 0));
                        }
                        _ => {}
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume()),
            "parent",
        )
        .unwrap();
    let first = next(&mut kid_rx).await;
    first.tell(0_u64);
    let mut lines = probe.receive_messages(2, T).await;
    lines.sort();
    assert_eq!(lines, ["respawned kid", "terminated true"]);
    probe.expect_no_message(ms(100)).await;
    let again = next(&mut kid_rx).await;
    assert_ne!(again.uid(), first.uid());
    again.tell(4_u64);
    expect_lines(&mut probe, &["kid got 4"]).await;
}

/// S13, S18: a watcher that unwatches an actor while it backs off hears nothing
/// when that actor is then stopped; another watcher that kept its watch hears one
/// `Terminated`.
#[tapio::test(start_paused = true)]
async fn s13_s18_an_unwatch_during_the_targets_backoff_hears_nothing(system: ActorSystem) {
    #[message]
    pub enum W {
        Unwatch,
        Check(ActorRef<String>),
    }
    let mut probe = TestProbe::<String>::new(&system);
    let flaky = system
        .spawn(
            Behaviors::supervise(Behaviors::receive_message(|n: u64| {
                if n == 0 { Err(Boom) } else { Ok(()) }
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart().with_backoff(fixed_backoff(Duration::from_secs(600))),
            ),
            "flaky",
        )
        .unwrap();
    let watched = flaky.clone();
    let to = probe.actor_ref().clone();
    let watcher = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<W>| {
                ctx.watch(&watched);
                let watched = watched.clone();
                let to = to.clone();
                Behaviors::receive(move |ctx, w: W| {
                    match w {
                        W::Unwatch => ctx.unwatch(&watched),
                        W::Check(to) => to.tell("checked".to_string()),
                    }
                    Behaviors::same()
                })
                .on_signal(move |_ctx, signal| {
                    if let Signal::Terminated(_) = signal {
                        to.tell("watcher heard terminated".to_string());
                    }
                    Behaviors::same()
                })
            }),
            "watcher",
        )
        .unwrap();
    let mut keeper = TestProbe::<u64>::new(&system);
    keeper.watch(&flaky);
    flaky.tell(0_u64);
    tokio::time::sleep(ms(10)).await;
    watcher.tell(W::Unwatch);
    watcher.tell(W::Check(probe.actor_ref().clone()));
    expect_lines(&mut probe, &["checked"]).await;
    system.stop(&flaky).unwrap();
    keeper.expect_terminated(&flaky, T).await;
    probe.expect_no_message(ms(200)).await;
    keeper.expect_no_termination(ms(10)).await;
}

/// S26, S16, S31: a stash overflow escalated to the parent: the parent's
/// `ChildFailed` carries `StashOverflow`, the overflowing message is a `StashFull`
/// letter, and each message the stash held is lettered as the child stops: every
/// message told is accounted for once.
#[tapio::test(start_paused = true)]
async fn s26_s16_s31_a_stash_overflow_escalated_letters_the_stash_and_the_overflow(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let _parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let kid = ctx
                    .spawn(
                        Behaviors::supervise(
                            Behaviors::with_stash(3, |stash| {
                                Behaviors::receive_message(move |n: u64| {
                                    stash.stash(n).map(|()| Behaviors::same())
                                })
                            })
                            .unwrap(),
                        )
                        .on_any_failure(SupervisorStrategy::escalate()),
                        "hoarder",
                    )
                    .unwrap();
                let _ = kid_tx.send(kid);
                let to = to.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                    if let Signal::ChildFailed(failed) = signal {
                        to.tell(format!(
                            "child failed: stash overflow {}",
                            failed.failure().is::<tapio::StashOverflow>()
                        ));
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<tapio::StashOverflow>(SupervisorStrategy::resume()),
            "parent",
        )
        .unwrap();
    let kid = next(&mut kid_rx).await;
    for n in 1..=6 {
        kid.tell(n as u64);
    }
    expect_lines(&mut probe, &["child failed: stash overflow true"]).await;
    let got = letters_for(&mut dead, kid.path(), 6).await;
    let mut by_value: Vec<(u64, DeadLetterReason)> = got
        .iter()
        .map(|l| (l.take_message::<u64>().unwrap(), l.reason().clone()))
        .collect();
    by_value.sort_by_key(|(n, _)| *n);
    let values: Vec<u64> = by_value.iter().map(|(n, _)| *n).collect();
    assert_eq!(values, [1, 2, 3, 4, 5, 6], "{by_value:?}");
    assert_eq!(by_value[3].1, DeadLetterReason::StashFull, "{by_value:?}");
    for (n, reason) in &by_value[..3] {
        assert_ne!(reason, &DeadLetterReason::StashFull, "{n}: {by_value:?}");
    }
    assert_eq!(by_value[4].1, DeadLetterReason::RecipientStopped);
    assert_eq!(by_value[5].1, DeadLetterReason::RecipientStopped);
}

/// S49, S19, S15: events published from `PostStop` while the system terminates
/// are all read by a subscription made before, and only then does it end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s49_s19_events_published_in_post_stop_are_read_before_the_subscription_ends() {
    #[derive(Clone, Debug, PartialEq)]
    struct Bye(u64);
    let system = ActorSystem::new("byes").unwrap();
    let mut byes = system.events().subscribe::<Bye>();
    for n in 0..10_u64 {
        system
            .spawn(
                Behaviors::receive_message(|_: u64| ()).on_signal(move |ctx, signal| {
                    if *signal == Signal::PostStop {
                        ctx.system().events().publish(Bye(n));
                    }
                }),
                &format!("leaver-{n}"),
            )
            .unwrap();
    }
    timeout(T, system.terminate()).await.unwrap();
    let mut got = Vec::new();
    for _ in 0..10 {
        let bye = timeout(T, byes.recv())
            .await
            .expect("within the bound")
            .expect("all ten before the end");
        got.push(bye.0);
    }
    got.sort_unstable();
    assert_eq!(got, (0..10).collect::<Vec<_>>());
    assert!(byes.try_recv().is_none());
}

// =================================================================================
// 13. Races on two workers (S5, S11, S18, S21, S23, S25)
// =================================================================================

#[message]
#[derive(Clone)]
pub enum Timed {
    Fire(u64),
    Marker,
}

/// S25: four tasks start and cancel keys of one actor's scheduler from outside,
/// as fast as they can; then `cancel_all`, then a marker told to the actor. No tick
/// is handled after the marker: `cancel_all` silenced every key and dropped the
/// ticks already queued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s25_cancel_all_after_a_start_and_cancel_storm_from_four_tasks_leaves_no_tick() {
    for round in 0..5 {
        let system = ActorSystem::new(&format!("timer-storm-{round}")).unwrap();
        let (tx, mut rx) = mpsc::unbounded_channel::<tapio::TimerScheduler<Timed>>();
        let (seen_tx, mut seen_rx) = mpsc::unbounded_channel::<Option<u64>>();
        let actor = system
            .spawn(
                Behaviors::with_timers(move |timers| {
                    let _ = tx.send(timers.clone());
                    let seen = seen_tx.clone();
                    Behaviors::receive_message(move |m: Timed| {
                        let _ = seen.send(match m {
                            Timed::Fire(n) => Some(n),
                            Timed::Marker => None,
                        });
                    })
                }),
                "stormed",
            )
            .unwrap();
        let timers = next(&mut rx).await;
        let mut tasks = Vec::new();
        for p in 0..4_u64 {
            let timers = timers.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..300_u64 {
                    let key = format!("k{}", i % 7);
                    match i % 3 {
                        0 => timers.start_single_timer(key, Timed::Fire(p), ms(i % 3)),
                        1 => timers
                            .start_fixed_rate(key, Timed::Fire(p), ms(1 + i % 2))
                            .unwrap(),
                        _ => timers.cancel(key),
                    }
                    if i % 10 == 0 {
                        tokio::time::sleep(ms(1)).await;
                    }
                }
            }));
        }
        for task in tasks {
            timeout(T, task).await.unwrap().unwrap();
        }
        timers.cancel_all();
        actor.tell(Timed::Marker);
        // Read up to the marker, then nothing more may come.
        loop {
            if next(&mut seen_rx).await.is_none() {
                break;
            }
        }
        let quiet = timeout(ms(100), seen_rx.recv()).await;
        assert!(quiet.is_err(), "round {round}: after the marker: {quiet:?}");
        for k in 0..7 {
            assert!(!timers.is_active(format!("k{k}")));
        }
        timeout(T, system.terminate()).await.unwrap();
    }
}

/// S23: a target hands the reply ref of an ask to a worker and stops at once,
/// before the ask has begun to watch it: the ask still fails with
/// `TargetTerminated`, promptly, not at its hour-long deadline.
#[tapio::test(start_paused = true)]
async fn s23_a_target_stopping_at_once_after_handing_the_reply_ref_on_still_fails_fast(
    system: ActorSystem,
) {
    let (held_tx, mut held_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let worker = system
        .spawn(
            Behaviors::receive_message(move |reply_to: ActorRef<u64>| {
                // Keeps the reply ref, never answers.
                let _ = held_tx.send(reply_to);
            }),
            "keeper",
        )
        .unwrap();
    let target = system
        .spawn(
            Behaviors::receive_message(move |q: Q| {
                worker.tell(q.reply_to);
                Behaviors::stopped()
            }),
            "handing-on",
        )
        .unwrap();
    let started = Instant::now();
    let asked = target
        .ask_with(|reply_to| Q { n: 1, reply_to })
        .timeout(Duration::from_secs(3600))
        .await;
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?} after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let held = next(&mut held_rx).await;
    drop(held);
}

/// S21, S11, S13, S5: forty asks from four tasks to an actor that fails (and
/// restarts with a short backoff) on every request whose number ends in 7: each
/// other ask is answered with its own number; each of those fails at once as
/// `Unanswered` (its handler failed), none at its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s21_s11_s13_asks_racing_restarts_are_answered_or_unanswered_never_mixed_up() {
    let system = ActorSystem::new("ask-restarts").unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::receive_message(|q: Q| {
                if q.n % 10 == 7 {
                    return Err(Boom);
                }
                q.reply_to.tell(q.n);
                Ok(())
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart()
                    .with_limit(1_000, Duration::from_secs(60))
                    .unwrap()
                    .with_backoff(fixed_backoff(ms(5))),
            ),
            "flaky-answers",
        )
        .unwrap();
    let mut tasks = Vec::new();
    for p in 0..4_u64 {
        let actor = actor.clone();
        tasks.push(tokio::spawn(async move {
            let mut outcomes = Vec::new();
            for i in 0..10_u64 {
                let n = p * 10 + i;
                let started = std::time::Instant::now();
                let asked = actor
                    .ask_with(|reply_to| Q { n, reply_to })
                    .timeout(Duration::from_secs(30))
                    .await;
                outcomes.push((n, asked, started.elapsed()));
            }
            outcomes
        }));
    }
    for task in tasks {
        for (n, asked, took) in timeout(Duration::from_secs(20), task)
            .await
            .unwrap()
            .unwrap()
        {
            assert!(took < Duration::from_secs(5), "{n}: took {took:?}");
            if n % 10 == 7 {
                assert!(
                    matches!(asked, Err(AskError::Unanswered { .. })),
                    "{n}: {asked:?}"
                );
            } else {
                assert_eq!(asked.ok(), Some(n));
            }
        }
    }
    timeout(T, system.terminate()).await.unwrap();
}

/// S18, S14: a watcher spawned while its target fails and restarts again and again
/// hears nothing of the restarts, and exactly one `Terminated` when the target is
/// finally stopped, on each of twenty rounds on two workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s18_s14_a_watch_made_during_a_restart_storm_hears_one_terminated_at_the_end() {
    let system = ActorSystem::new("watch-storm").unwrap();
    for round in 0..20 {
        let target = system
            .spawn(
                Behaviors::supervise(Behaviors::receive_message(|n: u64| {
                    if n.is_multiple_of(2) {
                        Err(Boom)
                    } else {
                        Ok(())
                    }
                }))
                .on_failure::<Boom>(
                    SupervisorStrategy::restart()
                        .with_limit(10_000, Duration::from_secs(60))
                        .unwrap(),
                ),
                &format!("target-{round}"),
            )
            .unwrap();
        let (heard_tx, mut heard_rx) = mpsc::unbounded_channel::<u64>();
        let teller = target.clone();
        let storm = tokio::spawn(async move {
            for n in 0..200_u64 {
                teller.tell(n);
                if n % 20 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        });
        let watched = target.clone();
        let _watcher = system
            .spawn(
                Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                    ctx.watch(&watched);
                    let heard = heard_tx.clone();
                    Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                        if let Signal::Terminated(t) = signal {
                            let _ = heard.send(t.actor().uid());
                        }
                    })
                }),
                &format!("watcher-{round}"),
            )
            .unwrap();
        timeout(T, storm).await.unwrap().unwrap();
        assert!(
            timeout(ms(20), heard_rx.recv()).await.is_err(),
            "round {round}: a restart was heard"
        );
        system.stop(&target).unwrap();
        assert_eq!(next(&mut heard_rx).await, target.uid());
        assert!(
            timeout(ms(50), heard_rx.recv()).await.is_err(),
            "round {round}: heard twice"
        );
    }
    timeout(T, system.terminate()).await.unwrap();
}

// =================================================================================
// 14. Escalations into an absent parent; adapters of a dead owner; unhandled
//     lifecycle signals (S16, S17, S28, S2, S6)
// =================================================================================

/// S16, S17, S13, S14: a parent backing off (restart that keeps its children) when
/// a kept child escalates a failure of another type, whose clause escalates: the
/// failure is not lost while the parent is absent. It climbs to the guardian and
/// ends the system, with the child's error and both paths.
#[tokio::test(start_paused = true)]
async fn s16_s17_s13_an_escalation_into_a_backing_off_parent_still_climbs() {
    let system = ActorSystem::new("absent-parent").unwrap();
    let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let (parent_tx, mut parent_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let kid = ctx
                    .spawn(
                        Behaviors::supervise(Behaviors::receive_message(|_: u64| {
                            Err::<(), _>(Other)
                        }))
                        .on_any_failure(SupervisorStrategy::escalate()),
                        "kept",
                    )
                    .unwrap();
                let _ = kid_tx.send(kid);
                let _ = parent_tx.send(ctx.self_ref().clone());
                Behaviors::supervise(Behaviors::receive_message(|_: u64| Err::<(), _>(Boom)))
                    .on_failure::<Boom>(
                        SupervisorStrategy::restart()
                            .with_stop_children(false)
                            .with_backoff(fixed_backoff(Duration::from_secs(60))),
                    )
                    .on_failure::<Other>(SupervisorStrategy::escalate())
            }),
            "parent",
        )
        .unwrap();
    let kid = next(&mut kid_rx).await;
    let parent = next(&mut parent_rx).await;
    parent.tell(1_u64); // Boom: the parent backs off for a minute, keeping `kept`
    tokio::time::sleep(ms(10)).await;
    kid.tell(1_u64); // Other: escalated into the absent parent
    let started = Instant::now();
    let failure = timeout(Duration::from_secs(600), system.when_terminated())
        .await
        .expect("the escalation ends the system")
        .expect_err("with the failure");
    assert!(failure.is::<Other>(), "{failure}");
    assert_eq!(
        climbed(&failure),
        ["/user/parent/kept", "/user/parent", "/user"]
    );
    // Not lost, but it may wait for the parent's next incarnation: at most the
    // backoff.
    assert!(
        started.elapsed() <= Duration::from_secs(61),
        "{:?}",
        started.elapsed()
    );
    timeout(T, system.terminate()).await.unwrap();
    assert_eq!(system.live_actors(), 0);
}

/// S28, S2, S31: an adapter made by an actor that stopped, whose name a new actor
/// took: what is told through the old adapter is a dead letter, never a message to
/// the new actor of the same name.
#[tapio::test(start_paused = true)]
async fn s28_s2_s31_an_adapter_of_a_stopped_owner_never_reaches_its_namesake(system: ActorSystem) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    fn owner(
        tag: &'static str,
        to: ActorRef<String>,
        adapters: mpsc::UnboundedSender<ActorRef<u64>>,
    ) -> Behavior<String> {
        Behaviors::setup(move |ctx: &mut ActorContext<String>| {
            let adapter = ctx.message_adapter(|n: u64| format!("adapted {n}"));
            let _ = adapters.send(adapter);
            let to = to.clone();
            Behaviors::receive_message(move |s: String| to.tell(format!("{tag}: {s}")))
        })
    }
    let first = system
        .spawn(
            owner("first", probe.actor_ref().clone(), adapter_tx.clone()),
            "owner",
        )
        .unwrap();
    let old_adapter = next(&mut adapter_rx).await;
    old_adapter.tell(1_u64);
    expect_lines(&mut probe, &["first: adapted 1"]).await;
    let mut watcher = TestProbe::<u64>::new(&system);
    watcher.watch(&first);
    system.stop(&first).unwrap();
    watcher.expect_terminated(&first, T).await;
    let _second = system
        .spawn(
            owner("second", probe.actor_ref().clone(), adapter_tx),
            "owner",
        )
        .unwrap();
    let new_adapter = next(&mut adapter_rx).await;
    old_adapter.tell(2_u64);
    new_adapter.tell(3_u64);
    expect_lines(&mut probe, &["second: adapted 3"]).await;
    probe.expect_no_message(ms(50)).await;
    let deadline = Instant::now() + T;
    loop {
        let letter = tokio::time::timeout_at(deadline, dead.recv())
            .await
            .expect("the old adapter's message is lettered")
            .unwrap();
        if let Some(n) = letter.take_message::<u64>() {
            assert_eq!(n, 2, "{}", describe(&letter));
            break;
        }
    }
}

/// S6, S15, S11: `unhandled` from a signal handler for `PreRestart` and `PostStop`
/// is harmless (only `Terminated` makes a death pact): the restart happens once,
/// the actor runs on, and a stop is a plain stop.
#[tapio::test(start_paused = true)]
async fn s6_s15_unhandled_pre_restart_and_post_stop_are_harmless(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(reporting(
                probe.actor_ref().clone(),
                || Err(Box::new(Boom)),
            )))
            .on_failure::<Boom>(SupervisorStrategy::restart())
            .on_any_failure(SupervisorStrategy::resume()),
            "shrugging",
        )
        .unwrap();
    // `reporting` has no signal handler: wrap another with one that answers
    // unhandled to everything.
    let to = probe.actor_ref().clone();
    let setups = Arc::new(AtomicU64::new(0));
    let shrug = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
                let run = setups.fetch_add(1, SeqCst) + 1;
                to.tell(format!("shrug setup {run}"));
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| {
                    if n == 0 {
                        return Err(Boom);
                    }
                    to.tell(format!("shrug got {n}"));
                    Ok(())
                })
                .on_signal(|_ctx, _signal| Behaviors::unhandled())
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart())
            .on_any_failure(SupervisorStrategy::stop()),
            "shrug",
        )
        .unwrap();
    let mut lines = probe.receive_messages(2, T).await;
    lines.sort();
    assert_eq!(lines, ["setup 1", "shrug setup 1"]);
    actor.tell(0_u64);
    actor.tell(5_u64);
    expect_lines(&mut probe, &["setup 2", "sum 5"]).await;
    shrug.tell(0_u64);
    shrug.tell(6_u64);
    expect_lines(&mut probe, &["shrug setup 2", "shrug got 6"]).await;
    let mut watcher = TestProbe::<u64>::new(&system);
    watcher.watch(&shrug);
    system.stop(&shrug).unwrap();
    watcher.expect_terminated(&shrug, T).await;
    probe.expect_no_message(ms(50)).await;
}
