//! Supervision in unusual orders: clauses matching bare and boxed errors, escalation
//! climbing and reaching the guardian, watches across restarts, asks and names during a
//! backoff, and overflows escalated (S2, S10-S18, S22, S23, S29, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_orders::*;
use crate::support::outside;
use outside::{Boom, Other, T, describe, expect_lines, letters, letters_for, ms, next};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, BoxError, DeadLetterReason, Failure, MailboxConfig, OverflowStrategy};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

/// An error whose source is a `Boom`: it is not a `Boom` itself.
#[derive(Debug, thiserror::Error)]
#[error("wrapped")]
pub struct Wrapped(#[source] pub Boom);

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
    let letter = outside::letter_where(&mut dead, T, |l| l.is::<u64>()).await;
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
