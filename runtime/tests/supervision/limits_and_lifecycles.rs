//! Restart limits and lifecycle corners: a used-up limit stopping the actor, failing
//! setups, `ChildFailed` handlers that stop or fail, children of restarting parents,
//! the default stop's letters, escalations using up a parent's limit, and death pacts
//! restarted (S7, S9-S12, S14-S18, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::lifecycle_corners::*;
use crate::support::outside;
use outside::{Boom, Other, T, entries, ms, new_log as log, push};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{BoxError, DeadLetter, DeadLetterReason, DeathPact};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

#[message]
enum Cmd {
    Add(u64),
    Fail,
    Get(ActorRef<u64>),
    Hire,
    Kids(ActorRef<u64>),
}

// =================================================================================
// 1. Lifecycle and supervision
// =================================================================================

// S12 + S15 + S31: a restart limit of 2 in a window: two failures restart (each
// failing incarnation sees `PreRestart`, never `PostStop`), the third stops the actor
// instead. The last incarnation sees `PostStop` (and no `PreRestart`), the watcher
// hears `Terminated` once, and what was queued behind the failure becomes exactly
// one `RecipientStopped` dead letter each, with its value.
#[tapio::test(start_paused = true)]
async fn s12_s15_a_used_up_limit_stops_with_post_stop_and_letters_the_rest(system: ActorSystem) {
    let seen = log();
    let mut probe = TestProbe::<u64>::new(&system);
    let mut letters = system.events().subscribe::<DeadLetter>();
    let strategy = SupervisorStrategy::restart()
        .with_limit(2, Duration::from_secs(10))
        .unwrap();
    let runs = Arc::new(AtomicU64::new(0));
    let (s, r) = (seen.clone(), runs.clone());
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| {
                let n = r.fetch_add(1, SeqCst) + 1;
                push(&s, format!("setup {n}"));
                let s = s.clone();
                Behaviors::receive_message(move |c: Cmd| -> Result<(), Boom> {
                    match c {
                        Cmd::Fail => return Err(Boom),
                        Cmd::Get(to) => to.tell(n),
                        _ => {}
                    }
                    Ok(())
                })
                .on_signal(move |_, signal| match signal {
                    Signal::PreRestart => push(&s, format!("pre-restart {n}")),
                    Signal::PostStop => push(&s, format!("post-stop {n}")),
                    _ => {}
                })
            }))
            .on_failure::<Boom>(strategy),
            "limited",
        )
        .unwrap();
    probe.watch(&actor);
    actor.tell(Cmd::Fail);
    actor.tell(Cmd::Get(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, 2);
    actor.tell(Cmd::Fail);
    actor.tell(Cmd::Get(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, 3);
    actor.tell(Cmd::Fail);
    actor.tell(Cmd::Get(probe.actor_ref().clone()));
    actor.tell(Cmd::Add(5));
    probe.expect_terminated(&actor, T).await;
    probe.expect_no_message(ms(200)).await;
    probe.expect_no_termination(ms(200)).await;
    assert_eq!(
        entries(&seen),
        [
            "setup 1",
            "pre-restart 1",
            "setup 2",
            "pre-restart 2",
            "setup 3",
            "post-stop 3"
        ]
    );
    let found = letters_for(&mut letters, actor.path(), ms(300)).await;
    assert_eq!(found.len(), 2, "one letter per queued message: {found:?}");
    assert!(
        found
            .iter()
            .all(|l| l.reason() == &DeadLetterReason::RecipientStopped)
    );
    assert!(matches!(found[0].take_message::<Cmd>(), Some(Cmd::Get(_))));
    assert!(matches!(found[1].take_message::<Cmd>(), Some(Cmd::Add(5))));
}

// S12 + S10 + S16: a used-up restart limit stops the actor "instead" of restarting it
// (Restart docs). It is a decision, not an unmatched failure: it does not fall through
// to the `supervise` around it (which would escalate), so the parent hears the child's
// `Terminated` and no `ChildFailed`, and nothing reaches the guardian.
#[tapio::test(start_paused = true)]
async fn s12_s16_a_used_up_limit_stops_and_does_not_fall_through_to_escalate(system: ActorSystem) {
    let mut reports = TestProbe::<String>::new(&system);
    let report = reports.actor_ref().clone();
    let runs = Arc::new(AtomicU64::new(0));
    let r = runs.clone();
    let (tx, mut rx) = mpsc::unbounded_channel::<ActorRef<Cmd>>();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let r = r.clone();
                let child = Behaviors::setup(move |_| {
                    r.fetch_add(1, SeqCst);
                    Behaviors::receive_message(|c: Cmd| -> Result<(), Boom> {
                        match c {
                            Cmd::Fail => Err(Boom),
                            _ => Ok(()),
                        }
                    })
                });
                let limited = Behaviors::supervise(child).on_failure::<Boom>(
                    SupervisorStrategy::restart()
                        .with_limit(1, Duration::from_secs(60))
                        .unwrap(),
                );
                let outer = Behaviors::supervise(limited)
                    .on_failure::<Boom>(SupervisorStrategy::escalate());
                let kid: ActorRef<Cmd> = ctx.spawn(outer, "kid").unwrap();
                ctx.watch(&kid);
                let _ = tx.send(kid);
                let report = report.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| match signal {
                    Signal::ChildFailed(failed) => {
                        report.tell(format!("child-failed {}", failed.child().path().name()))
                    }
                    Signal::Terminated(ended) => {
                        report.tell(format!("terminated {}", ended.actor().path().name()))
                    }
                    _ => {}
                })
            }),
            "parent",
        )
        .unwrap();
    let kid = timeout(T, rx.recv()).await.unwrap().unwrap();
    let mut watcher = TestProbe::<u64>::new(&system);
    watcher.watch(&parent);
    kid.tell(Cmd::Fail); // restart 1 of 1
    kid.tell(Cmd::Fail); // would be restart 2: stopped instead
    assert_eq!(reports.expect_message(T).await, "terminated kid");
    reports.expect_no_message(ms(300)).await;
    assert_eq!(runs.load(SeqCst), 2);
    watcher.expect_no_termination(ms(100)).await;
    assert!(!system.is_terminating());
}

// S12 + S7: "If the restarted incarnation cannot start (its setup fails or panics),
// the clause that ordered the restart decides that failure too, whatever its type: it
// counts against the same limit and waits out the same backoff". A setup that fails
// with `Other` on every restart, under a `Boom` clause with a limit of 3 and a backoff
// of 100 ms doubling (no jitter): three restarts after 100, 200 and 400 ms, then the
// fourth failure stops it, 700 ms after the first.
#[tapio::test(start_paused = true)]
async fn s12_a_restart_setup_failing_with_another_type_counts_and_backs_off(system: ActorSystem) {
    let runs = Arc::new(AtomicU64::new(0));
    let r = runs.clone();
    let strategy = SupervisorStrategy::restart()
        .with_limit(3, Duration::from_secs(60))
        .unwrap()
        .with_backoff(Backoff::new(ms(100), ms(1000), 0.0).unwrap());
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| -> Result<Behavior<Cmd>, Other> {
                if r.fetch_add(1, SeqCst) > 0 {
                    return Err(Other);
                }
                Ok(Behaviors::receive_message(|c: Cmd| -> Result<(), Boom> {
                    match c {
                        Cmd::Fail => Err(Boom),
                        _ => Ok(()),
                    }
                })
                .into())
            }))
            .on_failure::<Boom>(strategy),
            "broken-restart",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&actor);
    let started = Instant::now();
    actor.tell(Cmd::Fail);
    probe.expect_terminated(&actor, T).await;
    let took = started.elapsed();
    assert_eq!(runs.load(SeqCst), 4, "one start and three restarts");
    assert!(
        took >= ms(700) && took < ms(750),
        "three backoffs of 100, 200 and 400 ms: took {took:?}"
    );
}

// S7 + S10 + S11: a setup that fails on the actor's first start is a failure like any
// other: `supervise(setup(..)).on_failure::<Boom>(restart())` restarts it, so a setup
// that fails twice and then works yields a working actor on its third run.
#[tapio::test(start_paused = true)]
async fn s7_s10_a_failing_first_setup_is_decided_by_supervision(system: ActorSystem) {
    let runs = Arc::new(AtomicU64::new(0));
    let r = runs.clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| -> Result<Behavior<Cmd>, Boom> {
                let n = r.fetch_add(1, SeqCst) + 1;
                if n <= 2 {
                    return Err(Boom);
                }
                Ok(Behaviors::receive_message(move |c: Cmd| {
                    if let Cmd::Get(to) = c {
                        to.tell(n);
                    }
                })
                .into())
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "late-starter",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&actor);
    actor.tell(Cmd::Get(probe.actor_ref().clone()));
    assert_eq!(
        probe.receive_message(T).await,
        Some(3),
        "runs: {}",
        runs.load(SeqCst)
    );
    probe.expect_no_termination(ms(100)).await;
}

/// A child that fails with `Boom` on `Fail` and escalates it; `Get` answers `n`.
fn escalating_kid(n: u64, report: ActorRef<String>) -> Behavior<Cmd> {
    Behaviors::supervise(
        Behaviors::receive_message(move |c: Cmd| -> Result<(), Boom> {
            match c {
                Cmd::Fail => return Err(Boom),
                Cmd::Get(to) => to.tell(n),
                _ => {}
            }
            Ok(())
        })
        .on_signal(move |_, signal| {
            if *signal == Signal::PostStop {
                report.tell(format!("kid post-stop {n}"));
            }
        }),
    )
    .on_failure::<Boom>(SupervisorStrategy::escalate())
    .into()
}

/// Takes the kid the parent sent on `kids` and makes it fail; `reports` then hears
/// the kid's post-stop and the parent's `ChildFailed` handler, in that order.
async fn fail_the_kid(
    kids: &mut mpsc::UnboundedReceiver<ActorRef<Cmd>>,
    reports: &mut TestProbe<String>,
) {
    let kid = timeout(T, kids.recv()).await.unwrap().unwrap();
    kid.tell(Cmd::Fail);
    assert_eq!(reports.expect_message(T).await, "kid post-stop 1");
    assert_eq!(reports.expect_message(T).await, "child-failed");
}

// S16 + Signal::ChildFailed docs: "the decision is not the handler's: whatever it
// answers, this actor then fails with the child's error, under its own supervision (a
// `resume` clause for that error type absorbs the escalation)". A handler that answers
// `Behaviors::stopped()` does not stop a parent that resumes `Boom`.
#[tapio::test(start_paused = true)]
async fn s16_a_child_failed_handler_answering_stopped_does_not_decide(system: ActorSystem) {
    let mut reports = TestProbe::<String>::new(&system);
    let report = reports.actor_ref().clone();
    let runs = Arc::new(AtomicU64::new(0));
    let r = runs.clone();
    let (tx, mut rx) = mpsc::unbounded_channel::<ActorRef<Cmd>>();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let n = r.fetch_add(1, SeqCst) + 1;
                let kid = ctx.spawn(escalating_kid(n, report.clone()), "kid").unwrap();
                let _ = tx.send(kid);
                let report = report.clone();
                Behaviors::receive_message(move |c: Cmd| {
                    if let Cmd::Get(to) = c {
                        to.tell(n * 100);
                    }
                })
                .on_signal(move |_, signal| {
                    if let Signal::ChildFailed(_) = signal {
                        report.tell("child-failed".to_string());
                        return Behaviors::stopped();
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume()),
            "parent",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&parent);
    fail_the_kid(&mut rx, &mut reports).await;
    parent.tell(Cmd::Get(probe.actor_ref().clone()));
    assert_eq!(
        probe.receive_message(T).await,
        Some(100),
        "the parent resumed"
    );
    probe.expect_no_termination(ms(200)).await;
    assert_eq!(runs.load(SeqCst), 1);
}

// S16 + Signal::ChildFailed docs: "A handler that itself fails makes its own failure
// the one decided on." The child escalates `Boom` (resumed by the parent's clause);
// the `ChildFailed` handler fails with `Other` (restarted by the parent's other
// clause): the parent restarts.
#[tapio::test(start_paused = true)]
async fn s16_a_failing_child_failed_handler_makes_its_own_failure_decided(system: ActorSystem) {
    let mut reports = TestProbe::<String>::new(&system);
    let report = reports.actor_ref().clone();
    let runs = Arc::new(AtomicU64::new(0));
    let r = runs.clone();
    let (tx, mut rx) = mpsc::unbounded_channel::<ActorRef<Cmd>>();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let n = r.fetch_add(1, SeqCst) + 1;
                let kid = ctx.spawn(escalating_kid(n, report.clone()), "kid").unwrap();
                let _ = tx.send(kid);
                let report = report.clone();
                Behaviors::receive_message(move |c: Cmd| {
                    if let Cmd::Get(to) = c {
                        to.tell(n * 100);
                    }
                })
                .on_signal(move |_, signal| -> Result<(), Other> {
                    if let Signal::ChildFailed(_) = signal {
                        report.tell("child-failed".to_string());
                        return Err(Other);
                    }
                    Ok(())
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume())
            .on_failure::<Other>(SupervisorStrategy::restart()),
            "parent",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&parent);
    fail_the_kid(&mut rx, &mut reports).await;
    parent.tell(Cmd::Get(probe.actor_ref().clone()));
    assert_eq!(
        probe.receive_message(T).await,
        Some(200),
        "the parent restarted"
    );
    assert_eq!(runs.load(SeqCst), 2);
    probe.expect_no_termination(ms(200)).await;
    reports.expect_no_message(ms(100)).await;
}

#[message]
enum Pc {
    /// Tell the kid to fail, then fail too.
    Both,
    /// Ask the current kid for its number.
    Get(ActorRef<u64>),
}

// S14 + S16 + S31: a parent fails while its child has just been told to fail (and
// escalate). The restart stops the child first; a stop outranks queued messages, so
// the child never handles `Fail`, the parent restarts exactly once, hears no
// `ChildFailed`, and the `Fail` is one `RecipientStopped` dead letter. The new
// incarnation's child answers.
#[tapio::test(start_paused = true)]
async fn s14_s16_a_child_told_to_fail_as_its_parent_restarts_is_stopped_first(system: ActorSystem) {
    let mut reports = TestProbe::<String>::new(&system);
    let report = reports.actor_ref().clone();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let runs = Arc::new(AtomicU64::new(0));
    let r = runs.clone();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let n = r.fetch_add(1, SeqCst) + 1;
                let kid = ctx.spawn(escalating_kid(n, report.clone()), "kid").unwrap();
                let report = report.clone();
                Behaviors::receive_message(move |m: Pc| -> Result<(), Other> {
                    match m {
                        Pc::Both => {
                            kid.tell(Cmd::Fail);
                            return Err(Other);
                        }
                        Pc::Get(to) => kid.tell(Cmd::Get(to)),
                    }
                    Ok(())
                })
                .on_signal(move |_, signal| {
                    if let Signal::ChildFailed(_) = signal {
                        report.tell("child-failed".to_string());
                    }
                })
            }))
            .on_failure::<Other>(SupervisorStrategy::restart())
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "parent",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&parent);
    parent.tell(Pc::Both);
    parent.tell(Pc::Get(probe.actor_ref().clone()));
    assert_eq!(reports.expect_message(T).await, "kid post-stop 1");
    assert_eq!(
        probe.receive_message(T).await,
        Some(2),
        "the second incarnation's kid"
    );
    reports.expect_no_message(ms(300)).await;
    assert_eq!(runs.load(SeqCst), 2);
    probe.expect_no_termination(ms(100)).await;
    let found = letters_to(&mut letters, "/user/parent/kid", ms(200)).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].reason(), &DeadLetterReason::RecipientStopped);
    assert!(matches!(found[0].take_message::<Cmd>(), Some(Cmd::Fail)));
}

// S7 + S6 + S15 + S2 + S31: a setup that answers `Behaviors::stopped()` stops the actor
// at once: the child it spawned stops first (its `PostStop` before the watcher hears
// `Terminated`), a message told before it started is one `RecipientStopped` letter,
// and the name is free again.
#[tapio::test(start_paused = true)]
async fn s7_s15_a_setup_answering_stopped_stops_children_first_and_letters_the_queue(
    system: ActorSystem,
) {
    let mut reports = TestProbe::<String>::new(&system);
    let report = reports.actor_ref().clone();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let r = report.clone();
    let short: ActorRef<u64> = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let r = r.clone();
                let _kid: ActorRef<u64> = ctx
                    .spawn(
                        Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                            if *signal == Signal::PostStop {
                                r.tell("kid post-stop".to_string());
                            }
                        }),
                        "kid",
                    )
                    .unwrap();
                Behaviors::stopped::<u64>()
            }),
            "short-lived",
        )
        .unwrap();
    short.tell(7_u64);
    let target = short.clone();
    let _watcher = system
        .spawn(
            Behaviors::setup(move |ctx| {
                ctx.watch(&target);
                let report = report.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                    if let Signal::Terminated(ended) = signal {
                        report.tell(format!("terminated {}", ended.actor().path().name()));
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    assert_eq!(reports.expect_message(T).await, "kid post-stop");
    assert_eq!(reports.expect_message(T).await, "terminated short-lived");
    reports.expect_no_message(ms(100)).await;
    let found = letters_for(&mut letters, short.path(), ms(200)).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(found[0].take_message::<u64>(), Some(7));
    let again = system.spawn(Behaviors::ignore::<u64>(), "short-lived");
    assert!(again.is_ok(), "{again:?}");
}

// S9 + S15 + S31: with no supervision a failure stops the actor: it sees `PostStop`,
// not `PreRestart`; the messages queued behind the failing one become exactly one
// `RecipientStopped` dead letter each, in the order they were sent.
#[tapio::test(start_paused = true)]
async fn s9_s15_s31_the_default_stop_letters_the_queue_exactly(system: ActorSystem) {
    let seen = log();
    let s = seen.clone();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let actor = system
        .spawn(
            Behaviors::setup(move |_| {
                let sum = AtomicU64::new(0);
                let s = s.clone();
                Behaviors::receive_message(move |c: Cmd| -> Result<(), Boom> {
                    match c {
                        Cmd::Add(n) => {
                            sum.fetch_add(n, SeqCst);
                        }
                        Cmd::Fail => return Err(Boom),
                        Cmd::Get(to) => to.tell(sum.load(SeqCst)),
                        _ => {}
                    }
                    Ok(())
                })
                .on_signal(move |_, signal| match signal {
                    Signal::PreRestart => push(&s, "pre-restart"),
                    Signal::PostStop => push(&s, "post-stop"),
                    _ => {}
                })
            }),
            "fragile",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&actor);
    actor.tell(Cmd::Add(1));
    actor.tell(Cmd::Fail);
    actor.tell(Cmd::Add(2));
    actor.tell(Cmd::Add(3));
    actor.tell(Cmd::Get(probe.actor_ref().clone()));
    probe.expect_terminated(&actor, T).await;
    probe.expect_no_message(ms(100)).await;
    assert_eq!(entries(&seen), ["post-stop"]);
    let found = letters_for(&mut letters, actor.path(), ms(200)).await;
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(
        found
            .iter()
            .all(|l| l.reason() == &DeadLetterReason::RecipientStopped)
    );
    assert!(matches!(found[0].take_message::<Cmd>(), Some(Cmd::Add(2))));
    assert!(matches!(found[1].take_message::<Cmd>(), Some(Cmd::Add(3))));
    assert!(matches!(found[2].take_message::<Cmd>(), Some(Cmd::Get(_))));
}

// S16 + S12 + S17: a child escalates twice to a parent whose restart limit is 1: the
// first escalation restarts the parent (its setup spawns a new child), the second
// uses the limit up and stops the parent, after its child. The parent stopping on its
// limit is not an escalation: the system runs on.
#[tapio::test(start_paused = true)]
async fn s16_s12_escalations_that_use_up_the_parents_limit_stop_it_not_the_system(
    system: ActorSystem,
) {
    let mut reports = TestProbe::<String>::new(&system);
    let report = reports.actor_ref().clone();
    let runs = Arc::new(AtomicU64::new(0));
    let r = runs.clone();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let n = r.fetch_add(1, SeqCst) + 1;
                let kid = ctx.spawn(escalating_kid(n, report.clone()), "kid").unwrap();
                let report = report.clone();
                Behaviors::receive_message(move |c: Cmd| kid.tell(c)).on_signal(move |_, signal| {
                    if *signal == Signal::PostStop {
                        report.tell(format!("parent post-stop {n}"));
                    }
                })
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart()
                    .with_limit(1, Duration::from_secs(60))
                    .unwrap(),
            ),
            "parent",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&parent);
    parent.tell(Cmd::Fail);
    assert_eq!(reports.expect_message(T).await, "kid post-stop 1");
    parent.tell(Cmd::Get(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, 2);
    parent.tell(Cmd::Fail);
    assert_eq!(reports.expect_message(T).await, "kid post-stop 2");
    assert_eq!(reports.expect_message(T).await, "parent post-stop 2");
    probe.expect_terminated(&parent, T).await;
    reports.expect_no_message(ms(200)).await;
    assert_eq!(runs.load(SeqCst), 2);
    assert!(!system.is_terminating());
    assert!(system.spawn(Behaviors::ignore::<u64>(), "after").is_ok());
}

// S18 + S12 + S14: a watcher that leaves `Terminated` unhandled fails with
// `DeathPact`; restarted on it, its setup watches the (dead) target again, which is a
// new watch that hears `Terminated` again at once: so each incarnation fails the same
// way, and the restart limit (3) stops it after one start and three restarts.
#[tapio::test(start_paused = true)]
async fn s18_s12_a_death_pact_restarted_rewatches_and_stops_at_the_limit(system: ActorSystem) {
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&target);
    system.stop(&target).unwrap();
    probe.expect_terminated(&target, T).await;
    let runs = Arc::new(AtomicU64::new(0));
    let r = runs.clone();
    let t = target.clone();
    let pact = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                r.fetch_add(1, SeqCst);
                ctx.watch(&t);
                Behaviors::ignore::<u64>()
            }))
            .on_failure::<DeathPact>(
                SupervisorStrategy::restart()
                    .with_limit(3, Duration::from_secs(60))
                    .unwrap(),
            ),
            "pact",
        )
        .unwrap();
    probe.watch(&pact);
    probe.expect_terminated(&pact, T).await;
    assert_eq!(runs.load(SeqCst), 4);
}

// S11: resume keeps the state and the children spawned in handlers, drops only the
// failing message, and delivers no `PreRestart`; the setup does not run again.
#[tapio::test(start_paused = true)]
async fn s11_resume_keeps_state_and_handler_children_without_pre_restart(system: ActorSystem) {
    let seen = log();
    let s = seen.clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| {
                push(&s, "setup");
                let sum = AtomicU64::new(0);
                let s = s.clone();
                Behaviors::receive(move |ctx, c: Cmd| -> Result<(), BoxError> {
                    match c {
                        Cmd::Add(n) => {
                            sum.fetch_add(n, SeqCst);
                        }
                        Cmd::Fail => return Err(Boom.into()),
                        Cmd::Get(to) => to.tell(sum.load(SeqCst)),
                        Cmd::Hire => {
                            ctx.spawn(Behaviors::ignore::<u64>(), "hand")?;
                        }
                        Cmd::Kids(to) => to.tell(ctx.children().len() as u64),
                    }
                    Ok(())
                })
                .on_signal(move |_, signal| {
                    if *signal == Signal::PreRestart {
                        push(&s, "pre-restart");
                    }
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume()),
            "resumer",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&actor);
    actor.tell(Cmd::Add(2));
    actor.tell(Cmd::Hire);
    actor.tell(Cmd::Fail);
    actor.tell(Cmd::Add(3));
    actor.tell(Cmd::Get(probe.actor_ref().clone()));
    actor.tell(Cmd::Kids(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, 5);
    assert_eq!(probe.expect_message(T).await, 1);
    probe.expect_no_termination(ms(100)).await;
    assert_eq!(entries(&seen), ["setup"]);
}
