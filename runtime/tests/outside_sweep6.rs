//! A sixth outside-in sweep, written from the promises (S1..S49 in SEMANTICS.md) and
//! the public docs only, in the areas the earlier sweeps covered least:
//!
//! 1. Lifecycle and supervision: restart limits used up (what is seen, what is
//!    dead-lettered, whether an outer clause or the parent hears of it), failing
//!    setups on the first start and on a restart, `ChildFailed` handlers that answer
//!    `stopped` or fail, a child told to fail as its parent restarts, a setup that
//!    answers `stopped`, watch/unwatch sequences on a dead actor, an actor watching
//!    itself, a death pact under restart, terminate called twice and concurrently,
//!    a name reused by a new incarnation.
//! 2. Timers under the paused clock: cancel then start the same key, a key reused
//!    with another message and mode, timers across a restart (inside and outside the
//!    supervised behavior), a single timer due after its actor stopped.
//! 3. Ask: a zero and a tiny deadline, a builder that drops the reply ref, a reply
//!    ref kept then dropped, an ask dropped unawaited or cancelled mid-wait, many
//!    asks answered in the order they were made.
//! 4. The testkit: the behavior kit's timer effects on a replaced key, a kit whose
//!    setup stops, a stopped child's kit, probe bounds, a probe watching twice, a
//!    leak report after an ask whose target stopped holding its reply ref.
//!
//! Every wait is bounded; timing is asserted under tokio's paused clock.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/outside.rs"]
mod outside;

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, LeakReport, TestKitError, TestProbe};
use tapio::{
    ActorPath, AskError, BoxError, DeadLetter, DeadLetterReason, DeathPact, SpawnError,
    Subscription, TimerMode, TimerScheduler,
};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep, timeout};

use outside::{Boom, Other, T, entries, ms, new_log as log, push};

/// Every dead letter for `path` until `quiet` passes without any letter at all
/// (the whole collection bounded by `T`).
async fn letters_for(
    letters: &mut Subscription<DeadLetter>,
    path: &ActorPath,
    quiet: Duration,
) -> Vec<DeadLetter> {
    letters_to(letters, &path.to_string(), quiet).await
}

/// [`letters_for`] by the recipient's path as text.
async fn letters_to(
    letters: &mut Subscription<DeadLetter>,
    path: &str,
    quiet: Duration,
) -> Vec<DeadLetter> {
    let deadline = Instant::now() + T;
    let mut found = Vec::new();
    while let Ok(Some(letter)) = timeout(quiet, letters.recv()).await {
        if letter.recipient().to_string() == path {
            found.push(letter);
        }
        assert!(Instant::now() < deadline, "dead letters kept coming");
    }
    found
}

/// The first dead letter whose reason is `reason`, within `T`.
async fn letter_with(
    letters: &mut Subscription<DeadLetter>,
    reason: DeadLetterReason,
) -> DeadLetter {
    timeout(T, async {
        loop {
            let letter = letters.recv().await.expect("the event stream is open");
            if *letter.reason() == reason {
                return letter;
            }
        }
    })
    .await
    .expect("a dead letter with that reason in time")
}

#[message]
enum Cmd {
    Add(u64),
    Fail,
    Get(ActorRef<u64>),
    Hire,
    Kids(ActorRef<u64>),
}

/// Something seen, and when (milliseconds of tokio time since the test's `t0`).
#[message]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At(pub String, pub u64);

fn at(what: impl Into<String>, t0: Instant) -> At {
    At(what.into(), t0.elapsed().as_millis() as u64)
}

/// `got` is `what`, seen at `at_ms` (to the millisecond the timer wheel rounds to).
fn assert_at(got: &At, what: &str, at_ms: u64) {
    assert_eq!(got.0, what, "{got:?}");
    assert!(
        got.1 >= at_ms && got.1 <= at_ms + 1,
        "{what:?} came at {}ms, expected at {at_ms}ms",
        got.1
    );
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

#[message]
enum W {
    Watch(ActorRef<u64>),
    WatchUnwatch(ActorRef<u64>),
    WatchUnwatchWatch(ActorRef<u64>),
    WatchTwice(ActorRef<u64>),
}

// S18 + ctx.watch/unwatch docs on an actor that has already stopped: watch then
// unwatch hears nothing ("no `Terminated` for it arrives after this call, even one
// already on its way"); watch, unwatch, watch hears exactly one; watching twice is
// watching once; once delivered, watching again is a new watch that hears it again.
#[tapio::test(start_paused = true)]
async fn s18_watch_sequences_on_a_dead_actor_hear_exactly_what_the_docs_say(system: ActorSystem) {
    let mut reports = TestProbe::<String>::new(&system);
    let report = reports.actor_ref().clone();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&target);
    system.stop(&target).unwrap();
    probe.expect_terminated(&target, T).await;

    let r = report.clone();
    let watcher = system
        .spawn(
            Behaviors::receive(move |ctx, w: W| {
                let label = match w {
                    W::Watch(t) => {
                        ctx.watch(&t);
                        "w"
                    }
                    W::WatchUnwatch(t) => {
                        ctx.watch(&t);
                        ctx.unwatch(&t);
                        "wu"
                    }
                    W::WatchUnwatchWatch(t) => {
                        ctx.watch(&t);
                        ctx.unwatch(&t);
                        ctx.watch(&t);
                        "wuw"
                    }
                    W::WatchTwice(t) => {
                        ctx.watch(&t);
                        ctx.watch(&t);
                        "ww"
                    }
                };
                r.tell(format!("done {label}"));
            })
            .on_signal(move |_, signal| {
                if let Signal::Terminated(ended) = signal {
                    report.tell(format!("terminated {}", ended.actor().path().name()));
                }
            }),
            "watcher",
        )
        .unwrap();

    watcher.tell(W::WatchUnwatch(target.clone()));
    assert_eq!(reports.expect_message(T).await, "done wu");
    reports.expect_no_message(ms(200)).await;

    watcher.tell(W::WatchUnwatchWatch(target.clone()));
    assert_eq!(reports.expect_message(T).await, "done wuw");
    assert_eq!(reports.expect_message(T).await, "terminated target");
    reports.expect_no_message(ms(200)).await;

    watcher.tell(W::WatchTwice(target.clone()));
    assert_eq!(reports.expect_message(T).await, "done ww");
    assert_eq!(reports.expect_message(T).await, "terminated target");
    reports.expect_no_message(ms(200)).await;

    watcher.tell(W::Watch(target.clone()));
    assert_eq!(reports.expect_message(T).await, "done w");
    assert_eq!(reports.expect_message(T).await, "terminated target");
    reports.expect_no_message(ms(200)).await;
}

// S18 + S15: an actor that watches itself and then stops: it sees `PostStop` once and
// cannot hear its own `Terminated` afterwards (`PostStop` is "the last thing the actor
// sees"); others watching it hear its end; nothing hangs.
#[tapio::test(start_paused = true)]
async fn s18_an_actor_watching_itself_stops_cleanly(system: ActorSystem) {
    let mut reports = TestProbe::<String>::new(&system);
    let report = reports.actor_ref().clone();
    let me = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let me = ctx.self_ref().clone();
                ctx.watch(&me);
                let report = report.clone();
                Behaviors::receive_message(|_: u64| Behaviors::stopped()).on_signal(
                    move |_, signal| match signal {
                        Signal::Terminated(_) => report.tell("self-terminated".to_string()),
                        Signal::PostStop => report.tell("post-stop".to_string()),
                        _ => {}
                    },
                )
            }),
            "narcissus",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&me);
    me.tell(1_u64);
    assert_eq!(reports.expect_message(T).await, "post-stop");
    probe.expect_terminated(&me, T).await;
    reports.expect_no_message(ms(200)).await;
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

// S31 + S18: a top-level actor stopped right after it was spawned, with a message
// already queued: it ends (its watcher hears it once), the message is accounted for
// exactly once (handled, or a `RecipientStopped` letter), and if its setup ran, it
// saw `PostStop` exactly once.
#[tapio::test(start_paused = true)]
async fn s31_s18_a_stop_before_the_first_message_accounts_for_it_once(system: ActorSystem) {
    let seen = log();
    let s = seen.clone();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let early = system
        .spawn(
            Behaviors::setup(move |_| {
                push(&s, "setup");
                let (s1, s2) = (s.clone(), s.clone());
                Behaviors::receive_message(move |n: u64| push(&s1, format!("handled {n}")))
                    .on_signal(move |_, signal| {
                        if *signal == Signal::PostStop {
                            push(&s2, "post-stop");
                        }
                    })
            }),
            "early",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&early);
    early.tell(1_u64);
    system.stop(&early).unwrap();
    probe.expect_terminated(&early, T).await;
    probe.expect_no_termination(ms(100)).await;
    let found = letters_for(&mut letters, early.path(), ms(200)).await;
    let log = entries(&seen);
    let handled = log.iter().filter(|e| e.starts_with("handled")).count();
    assert_eq!(handled + found.len(), 1, "log {log:?}, letters {found:?}");
    if let Some(letter) = found.first() {
        assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
        assert_eq!(letter.take_message::<u64>(), Some(1));
    }
    if log.contains(&"setup".to_string()) {
        assert_eq!(
            log.iter().filter(|e| *e == "post-stop").count(),
            1,
            "{log:?}"
        );
        assert_eq!(log.last().map(String::as_str), Some("post-stop"), "{log:?}");
    } else {
        assert!(log.is_empty(), "{log:?}");
    }
}

// S19 + S1: `terminate()` called twice from outside and once from inside a handler,
// with `when_terminated` awaited alongside: all end; each actor sees `PostStop` once,
// children first; then spawning anything (actor, anonymous actor, probe) is refused
// with `SystemTerminated`, stopping a stopped top-level actor does nothing, and a
// further `terminate` returns at once.
#[tapio::test(start_paused = true)]
async fn s19_s1_terminate_twice_and_from_inside_then_spawn_is_refused(system: ActorSystem) {
    let seen = log();
    let s = seen.clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let sk = s.clone();
                let _kid: ActorRef<u64> = ctx
                    .spawn(
                        Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                            if *signal == Signal::PostStop {
                                push(&sk, "kid post-stop");
                            }
                        }),
                        "kid",
                    )
                    .unwrap();
                let s = s.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                    if *signal == Signal::PostStop {
                        push(&s, "parent post-stop");
                    }
                })
            }),
            "parent",
        )
        .unwrap();
    let terminator = system
        .spawn(
            Behaviors::receive(|ctx, _: u64| {
                drop(ctx.system().terminate());
            }),
            "terminator",
        )
        .unwrap();
    terminator.tell(1_u64);
    let first = system.terminate();
    let second = system.terminate();
    let ended = timeout(T, async {
        tokio::join!(first, second, system.when_terminated())
    })
    .await
    .expect("every wait for the end ends");
    assert_eq!(ended.2, Ok(()));
    assert!(system.is_terminating());
    assert_eq!(system.live_actors(), 0);
    assert_eq!(entries(&seen), ["kid post-stop", "parent post-stop"]);
    let name = system.name().to_owned();
    assert_eq!(
        system
            .spawn(Behaviors::ignore::<u64>(), "late")
            .unwrap_err(),
        SpawnError::SystemTerminated {
            system: name.clone()
        }
    );
    assert_eq!(
        system
            .spawn_anonymous(Behaviors::ignore::<u64>())
            .unwrap_err(),
        SpawnError::SystemTerminated {
            system: name.clone()
        }
    );
    assert_eq!(
        TestProbe::<u64>::try_new(&system).err(),
        Some(SpawnError::SystemTerminated { system: name })
    );
    assert_eq!(system.stop(&parent), Ok(()));
    timeout(ms(10), system.terminate())
        .await
        .expect("a further terminate waits for the same, past end");
    assert_eq!(entries(&seen).len(), 2);
}

// S2 + ActorRef::uid docs: a name freed by a stop is taken by a new incarnation with
// the same path and another uid; the old ref names exactly the old one, so what it is
// told is a `RecipientStopped` letter and never reaches the new actor.
#[tapio::test(start_paused = true)]
async fn s2_a_reused_name_is_a_new_incarnation_the_old_ref_cannot_reach(system: ActorSystem) {
    let mut reports = TestProbe::<String>::new(&system);
    let mut letters = system.events().subscribe::<DeadLetter>();
    let r1 = reports.actor_ref().clone();
    let first = system
        .spawn(
            Behaviors::receive_message(move |n: u64| r1.tell(format!("first {n}"))),
            "dup",
        )
        .unwrap();
    reports.watch(&first);
    system.stop(&first).unwrap();
    reports.expect_terminated(&first, T).await;
    let r2 = reports.actor_ref().clone();
    let second = system
        .spawn(
            Behaviors::receive_message(move |n: u64| r2.tell(format!("second {n}"))),
            "dup",
        )
        .unwrap();
    assert_eq!(first.path(), second.path());
    assert_ne!(first.uid(), second.uid());
    assert_ne!(first, second);
    first.tell(1_u64);
    second.tell(2_u64);
    assert_eq!(reports.expect_message(T).await, "second 2");
    reports.expect_no_message(ms(200)).await;
    let found = letters_for(&mut letters, first.path(), ms(200)).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(found[0].take_message::<u64>(), Some(1));
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

// =================================================================================
// 2. Timers under the paused clock
// =================================================================================

#[message]
#[derive(Debug, Clone)]
enum Tk {
    Tick(u64),
    Stop,
}

// S25 + TimerScheduler docs: start a single timer, cancel its key, start the key again
// with another message and delay. `is_active` follows (true, false, true); only the
// new timer fires, once, at its own delay; a single timer is no longer active when
// its tick is handled.
#[tapio::test(start_paused = true)]
async fn s25_cancel_then_start_the_same_key_only_the_new_one_fires(system: ActorSystem) {
    let mut probe = TestProbe::<At>::new(&system);
    let report = probe.actor_ref().clone();
    let t0 = Instant::now();
    let _rekeyed = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_single_timer("k", Tk::Tick(1), ms(100));
                let a1 = timers.is_active("k");
                timers.cancel("k");
                let a2 = timers.is_active("k");
                timers.start_single_timer("k", Tk::Tick(2), ms(300));
                let a3 = timers.is_active("k");
                report.tell(at(format!("active {a1} {a2} {a3}"), t0));
                let report = report.clone();
                Behaviors::receive_message(move |m: Tk| {
                    if let Tk::Tick(n) = m {
                        report.tell(at(format!("tick {n} active {}", timers.is_active("k")), t0));
                    }
                })
            }),
            "rekeyed",
        )
        .unwrap();
    assert_at(&probe.expect_message(T).await, "active true false true", 0);
    assert_at(&probe.expect_message(T).await, "tick 2 active false", 300);
    probe.expect_no_message(Duration::from_secs(1)).await;
}

// S25: a fixed-rate key replaced, from its own tick, by a single timer with another
// message: the rate stops at once (no tick of it after the replacement), the single
// timer fires once at its delay, and the key is then inactive.
#[tapio::test(start_paused = true)]
async fn s25_a_key_reused_with_another_message_and_mode(system: ActorSystem) {
    let mut probe = TestProbe::<At>::new(&system);
    let report = probe.actor_ref().clone();
    let t0 = Instant::now();
    let _reused = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_fixed_rate("k", Tk::Tick(1), ms(100)).unwrap();
                let count = AtomicU64::new(0);
                let report = report.clone();
                Behaviors::receive_message(move |m: Tk| match m {
                    Tk::Tick(1) => {
                        report.tell(at("rate", t0));
                        if count.fetch_add(1, SeqCst) + 1 == 3 {
                            timers.start_single_timer("k", Tk::Tick(2), ms(50));
                        }
                    }
                    Tk::Tick(_) => {
                        report.tell(at(format!("single active {}", timers.is_active("k")), t0))
                    }
                    Tk::Stop => {}
                })
            }),
            "reused",
        )
        .unwrap();
    assert_at(&probe.expect_message(T).await, "rate", 100);
    assert_at(&probe.expect_message(T).await, "rate", 200);
    assert_at(&probe.expect_message(T).await, "rate", 300);
    assert_at(&probe.expect_message(T).await, "single active false", 350);
    probe.expect_no_message(Duration::from_secs(1)).await;
}

/// A heartbeat of `Tk::Tick` every 100 ms started by a `with_timers` factory, and a
/// handler that reports `beat {n}` (`n`: the factory's runs) and fails on `Tk::Stop`,
/// restarted by `supervise`: the `with_timers` inside the `supervise` when `inside`,
/// around it otherwise.
fn heartbeat(inside: bool, report: ActorRef<String>, runs: Arc<AtomicU64>) -> Behavior<Tk> {
    let beating = move |timers: TimerScheduler<Tk>| {
        let n = runs.fetch_add(1, SeqCst) + 1;
        timers
            .start_fixed_rate("beat", Tk::Tick(0), ms(100))
            .unwrap();
        let report = report.clone();
        Behaviors::receive_message(move |m: Tk| -> Result<(), Boom> {
            match m {
                Tk::Tick(_) => report.tell(format!("beat {n}")),
                Tk::Stop => return Err(Boom),
            }
            Ok(())
        })
    };
    if inside {
        Behaviors::supervise(Behaviors::with_timers(beating))
            .on_failure::<Boom>(SupervisorStrategy::restart())
            .into()
    } else {
        Behaviors::with_timers(move |timers| -> Behavior<Tk> {
            Behaviors::supervise(beating(timers))
                .on_failure::<Boom>(SupervisorStrategy::restart())
                .into()
        })
    }
}

// S25 + S14 + S7 + the `with_timers` docs: a restart cancels every timer of the cell.
// A `with_timers` inside the `supervise` runs again and starts its heartbeat again;
// one around it does not run again (a setup outside `supervise` never does), so the
// heartbeat ends at the restart while the actor runs on.
#[tapio::test(start_paused = true)]
async fn s25_s14_a_restart_restarts_only_the_timers_of_a_factory_inside_supervise(
    system: ActorSystem,
) {
    for inside in [true, false] {
        let mut probe = TestProbe::<String>::new(&system);
        let runs = Arc::new(AtomicU64::new(0));
        let name = if inside { "inside" } else { "around" };
        let beating = system
            .spawn(
                heartbeat(inside, probe.actor_ref().clone(), runs.clone()),
                name,
            )
            .unwrap();
        assert_eq!(probe.expect_message(T).await, "beat 1", "{name}");
        assert_eq!(probe.expect_message(T).await, "beat 1", "{name}");
        beating.tell(Tk::Stop);
        if inside {
            assert_eq!(probe.expect_message(T).await, "beat 2", "{name}");
            assert_eq!(probe.expect_message(T).await, "beat 2", "{name}");
            assert_eq!(runs.load(SeqCst), 2);
        } else {
            probe.expect_no_message(Duration::from_secs(1)).await;
            assert_eq!(runs.load(SeqCst), 1);
            // Restarted and alive: a tick told by hand is handled.
            beating.tell(Tk::Tick(7));
            assert_eq!(probe.expect_message(T).await, "beat 1", "{name}");
        }
        system.stop(&beating).unwrap();
        probe.watch(&beating);
        probe.expect_terminated(&beating, T).await;
    }
}

/// Reports when it starts handling each tick; the first `slow` ticks take 250 ms.
fn plodder(mode: TimerMode, slow: u64, report: ActorRef<At>, t0: Instant) -> Behavior<Tk> {
    Behaviors::with_timers(move |timers| {
        match mode {
            TimerMode::FixedDelay => timers
                .start_fixed_delay("tick", Tk::Tick(0), ms(100))
                .unwrap(),
            _ => timers
                .start_fixed_rate("tick", Tk::Tick(0), ms(100))
                .unwrap(),
        }
        let count = Arc::new(AtomicU64::new(0));
        let report = report.clone();
        Behaviors::receive_message_async(async move |_: Tk| {
            report.tell(at("tick", t0));
            if count.fetch_add(1, SeqCst) < slow {
                sleep(ms(250)).await;
            }
        })
    })
}

// S25 + TimerScheduler docs, as exact timelines under the paused clock (100 ms
// interval; the first four ticks take 250 ms each, the rest nothing):
// - fixed-delay: "never while that one still waits in the mailbox ... a tick that
//   comes due while the previous one waits is sent the moment that one is taken": the
//   actor starts ticks at 100, 350, 600, 850, then 1100 twice (the one waiting, and
//   the one sent when it was taken), then every 100 ms from there: 1200, 1300;
// - fixed-rate: every 100 ms regardless, so the ticks sent from 500 to 1100 (seven)
//   are all handled at 1100, then 1200, 1300.
#[tapio::test(start_paused = true)]
async fn s25_fixed_delay_and_fixed_rate_timelines_behind_a_slow_actor(system: ActorSystem) {
    for (mode, expected) in [
        (
            TimerMode::FixedDelay,
            vec![100, 350, 600, 850, 1100, 1100, 1200, 1300],
        ),
        (
            TimerMode::FixedRate,
            vec![
                100, 350, 600, 850, 1100, 1100, 1100, 1100, 1100, 1100, 1100, 1200, 1300,
            ],
        ),
    ] {
        let mut probe = TestProbe::<At>::new(&system);
        let t0 = Instant::now();
        let actor = system
            .spawn_anonymous(plodder(mode, 4, probe.actor_ref().clone(), t0))
            .unwrap();
        let got: Vec<u64> = probe
            .receive_messages(expected.len(), T)
            .await
            .into_iter()
            .map(|seen| seen.1)
            .collect();
        assert_eq!(got, expected, "{mode:?}");
        system.stop(&actor).unwrap();
        probe.watch(&actor);
        probe.expect_terminated(&actor, T).await;
    }
}

// S14 + S25: a fixed-rate timer started in a setup inside `supervise`: a restart
// cancels the old incarnation's timer and the new setup starts the key again, so the
// beat goes on once, from the new incarnation only, on its new schedule (no doubled
// ticks).
#[tapio::test(start_paused = true)]
async fn s14_s25_a_restart_restarts_a_timer_once_not_twice(system: ActorSystem) {
    let mut probe = TestProbe::<At>::new(&system);
    let report = probe.actor_ref().clone();
    let runs = Arc::new(AtomicU64::new(0));
    let r = runs.clone();
    let t0 = Instant::now();
    let beating = system
        .spawn(
            Behaviors::supervise(Behaviors::with_timers(move |timers| {
                let n = r.fetch_add(1, SeqCst) + 1;
                timers
                    .start_fixed_rate("beat", Tk::Tick(n), ms(100))
                    .unwrap();
                let report = report.clone();
                Behaviors::receive_message(move |m: Tk| -> Result<(), Boom> {
                    match m {
                        Tk::Tick(k) => report.tell(at(format!("beat {k}"), t0)),
                        Tk::Stop => return Err(Boom),
                    }
                    Ok(())
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "beating",
        )
        .unwrap();
    assert_at(&probe.expect_message(T).await, "beat 1", 100);
    assert_at(&probe.expect_message(T).await, "beat 1", 200);
    beating.tell(Tk::Stop);
    for k in 1..=4_u64 {
        assert_at(&probe.expect_message(T).await, "beat 2", 200 + 100 * k);
    }
    beating.tell(Tk::Stop);
    assert_at(&probe.expect_message(T).await, "beat 3", 700);
    assert_eq!(runs.load(SeqCst), 3);
}

// S25 + S31 + timer docs: a single timer still pending when its actor stops is
// cancelled by the stop: no tick is delivered, and (a cancelled timer's tick being
// "dropped unseen") no dead letter is published for it.
#[tapio::test(start_paused = true)]
async fn s25_s31_a_single_timer_due_after_its_actor_stopped_fires_nothing(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let short = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_single_timer("late", Tk::Tick(9), ms(200));
                let report = report.clone();
                Behaviors::receive_message(move |m: Tk| match m {
                    Tk::Stop => Behaviors::stopped(),
                    Tk::Tick(n) => {
                        report.tell(n);
                        Behaviors::same()
                    }
                })
            }),
            "short",
        )
        .unwrap();
    probe.watch(&short);
    short.tell(Tk::Stop);
    probe.expect_terminated(&short, T).await;
    let found = letters_for(&mut letters, short.path(), Duration::from_secs(1)).await;
    assert!(found.is_empty(), "{found:?}");
    probe.expect_no_message(ms(10)).await;
}

// =================================================================================
// 3. Ask
// =================================================================================

fn echo() -> Behavior<(u64, ActorRef<u64>)> {
    Behaviors::receive_message(|(n, to): (u64, ActorRef<u64>)| to.tell(n)).into()
}

/// Answers after 50 ms of tokio time.
fn slow_echo() -> Behavior<(u64, ActorRef<u64>)> {
    Behaviors::receive_message_async(async move |(n, to): (u64, ActorRef<u64>)| {
        sleep(ms(50)).await;
        to.tell(n);
    })
    .into()
}

// S21 + S22 + Ask docs: the deadline is "counted from when the ask starts to wait:
// its first poll, or one turn of the scheduler later when the answer did not come in
// that turn". On a current-thread runtime an idle actor that answers at once answers
// within that turn, so even a zero deadline gets the answer, every time.
#[tapio::test(start_paused = true)]
async fn s22_a_zero_deadline_takes_an_answer_given_in_the_first_turn(system: ActorSystem) {
    let echo = system.spawn(echo(), "echo").unwrap();
    for i in 0..20_u64 {
        let answer = timeout(T, echo.ask_with(|to| (i, to)).timeout(Duration::ZERO))
            .await
            .expect("no hang");
        assert_eq!(answer, Ok(i), "ask {i}");
    }
}

// S22: a deadline of one nanosecond on an actor that answers after 50 ms times out
// with exactly that deadline and the target's path; the answer that comes later is an
// `AskEnded` dead letter carrying its value, addressed to the ask's promise.
#[tapio::test(start_paused = true)]
async fn s22_a_tiny_deadline_times_out_and_the_late_answer_is_ask_ended(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let slow = system.spawn(slow_echo(), "slow").unwrap();
    let started = Instant::now();
    let asked = timeout(
        T,
        slow.ask_with(|to| (4, to)).timeout(Duration::from_nanos(1)),
    )
    .await
    .expect("no hang");
    assert_eq!(
        asked,
        Err(AskError::Timeout {
            target: slow.path().clone(),
            after: Duration::from_nanos(1)
        })
    );
    assert!(started.elapsed() < ms(2), "{:?}", started.elapsed());
    let letter = letter_with(&mut letters, DeadLetterReason::AskEnded).await;
    assert_eq!(letter.take_message::<u64>(), Some(4));
    assert!(
        letter
            .recipient()
            .to_string()
            .starts_with("/system/promises/"),
        "{}",
        letter.recipient()
    );
}

// S21 + AskError::Unanswered docs: a builder that drops the reply ref (the message
// does not carry it) still sends the message, and the ask fails with `Unanswered` at
// once, not at its 30 s deadline.
#[tapio::test(start_paused = true)]
async fn s21_ask_with_a_builder_that_drops_the_reply_ref_is_unanswered_at_once(
    system: ActorSystem,
) {
    let mut seen = TestProbe::<u64>::new(&system);
    let to = seen.actor_ref().clone();
    let sink = system
        .spawn(Behaviors::receive_message(move |n: u64| to.tell(n)), "sink")
        .unwrap();
    let started = Instant::now();
    let asked: Result<u64, AskError> = timeout(
        T,
        sink.ask_with(|_reply: ActorRef<u64>| 7_u64)
            .timeout(Duration::from_secs(30)),
    )
    .await
    .expect("well before the ask's own deadline");
    assert_eq!(
        asked,
        Err(AskError::Unanswered {
            target: sink.path().clone()
        })
    );
    assert!(started.elapsed() < ms(2), "{:?}", started.elapsed());
    assert_eq!(seen.expect_message(T).await, 7);
}

#[message]
enum Keeper {
    Hold(ActorRef<u64>),
    Forget,
}

/// An ask of `keeper` to hold its reply ref (deadline 30 s), awaited on a task that
/// returns its outcome and how long it took.
fn timed_hold(
    keeper: &ActorRef<Keeper>,
) -> tokio::task::JoinHandle<(Result<u64, AskError>, Duration)> {
    let ask = keeper
        .ask_with(Keeper::Hold)
        .timeout(Duration::from_secs(30));
    tokio::spawn(async move {
        let started = Instant::now();
        (ask.await, started.elapsed())
    })
}

fn keeper() -> Behavior<Keeper> {
    Behaviors::setup(|_| {
        let held = Mutex::new(Vec::new());
        Behaviors::receive_message(move |m: Keeper| match m {
            Keeper::Hold(to) => held.lock().unwrap().push(to),
            Keeper::Forget => held.lock().unwrap().clear(),
        })
    })
}

// S21 + AskError::Unanswered: a target that keeps the reply ref and later drops it
// without answering fails the ask when it drops it (2 s in), not at the deadline.
#[tapio::test(start_paused = true)]
async fn s21_a_reply_ref_kept_then_dropped_is_unanswered_when_dropped(system: ActorSystem) {
    let keeper = system.spawn(keeper(), "keeper").unwrap();
    let waiting = timed_hold(&keeper);
    sleep(Duration::from_secs(2)).await;
    keeper.tell(Keeper::Forget);
    let (asked, took) = timeout(T, waiting).await.unwrap().unwrap();
    assert_eq!(
        asked,
        Err(AskError::Unanswered {
            target: keeper.path().clone()
        })
    );
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_millis(2010),
        "{took:?}"
    );
}

// S22 + Ask docs: "The request was sent when the ask was made". An ask dropped without
// being awaited still delivers its request; the answer, which nobody waits for, is an
// `AskEnded` dead letter with its value.
#[tapio::test(start_paused = true)]
async fn s22_an_ask_dropped_unawaited_still_sends_and_its_answer_is_ask_ended(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut seen = TestProbe::<u64>::new(&system);
    let to = seen.actor_ref().clone();
    let echo = system
        .spawn(
            Behaviors::receive_message(move |(n, reply): (u64, ActorRef<u64>)| {
                to.tell(n);
                reply.tell(n * 10);
            }),
            "echo",
        )
        .unwrap();
    drop(echo.ask_with(|reply| (3_u64, reply)));
    assert_eq!(seen.expect_message(T).await, 3);
    let letter = letter_with(&mut letters, DeadLetterReason::AskEnded).await;
    assert_eq!(letter.take_message::<u64>(), Some(30));
}

// S22 + AskFuture cancel safety: "Dropping it ends the ask: an answer that comes later
// is a dead letter." An ask cancelled by an outer timeout mid-wait leaves its answer
// as an `AskEnded` letter, and no promise waiting (the test's leak check).
#[tapio::test(start_paused = true)]
async fn s22_an_ask_cancelled_mid_wait_leaves_an_ask_ended_letter(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let slow = system.spawn(slow_echo(), "slow").unwrap();
    let outer = timeout(ms(10), slow.ask_with(|to| (8, to)).timeout(T)).await;
    assert!(outer.is_err(), "the outer timeout came first: {outer:?}");
    let letter = letter_with(&mut letters, DeadLetterReason::AskEnded).await;
    assert_eq!(letter.take_message::<u64>(), Some(8));
}

#[message(reply = u64)]
pub struct Next;

#[derive(Clone, Default)]
pub struct Sequencer(u64);

#[actor]
impl Sequencer {
    fn next(&mut self, _: Next) -> u64 {
        self.0 += 1;
        self.0
    }
}

// S5 + S21 + Ask docs: a hundred asks made one after the other are sent in that order
// (each is sent when made) and each keeps its own answer until it is awaited: awaited
// in reverse, they still hold 1..=100 in the order they were made.
#[tapio::test(start_paused = true)]
async fn s5_s21_asks_made_in_order_are_answered_in_order_whatever_the_await_order(
    system: ActorSystem,
) {
    let sequencer = system.spawn(Sequencer::default(), "sequencer").unwrap();
    let asks: Vec<_> = (0..100).map(|_| sequencer.ask(Next).timeout(T)).collect();
    let mut answers = Vec::new();
    for ask in asks.into_iter().rev() {
        answers.push(timeout(T, ask).await.expect("no hang").expect("an answer"));
    }
    answers.reverse();
    assert_eq!(answers, (1..=100).collect::<Vec<u64>>());
}

// S23 + S48: an ask whose target holds the reply ref and is then stopped fails with
// `TargetTerminated` when it stops (1 s in), not at its 30 s deadline; terminating the
// system then leaves nothing behind: no ask waiting, no timer, no task.
#[tokio::test(start_paused = true)]
async fn s23_s48_an_ask_whose_target_stopped_holding_its_reply_ref_leaks_nothing() {
    let system = ActorSystem::builder("held-then-stopped")
        .track_leaks(true)
        .build()
        .unwrap();
    let keeper = system.spawn(keeper(), "keeper").unwrap();
    let waiting = timed_hold(&keeper);
    sleep(Duration::from_secs(1)).await;
    system.stop(&keeper).unwrap();
    let (asked, took) = timeout(T, waiting).await.unwrap().unwrap();
    assert_eq!(
        asked,
        Err(AskError::TargetTerminated {
            target: keeper.path().clone()
        })
    );
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(1010),
        "{took:?}"
    );
    let report = LeakReport::after_terminating(&system).await;
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.pending_asks, Some(0));
    assert_eq!(report.pending_timers, Some(0));
}

// =================================================================================
// 4. The testkit
// =================================================================================

#[message]
#[derive(Clone)]
enum Kt {
    Single,
    Rate,
    Cancel,
    CancelMissing,
    Tick,
}

// S48 + Effect docs: `TimerCancelled` is "a running timer cancelled, by its key or
// because a new timer took its key"; `TimerStarted` also records a restart of a key.
// Replacing a key records the cancel of the running timer and the new start;
// cancelling a key with no running timer records nothing.
#[test]
fn s48_kit_records_a_replaced_key_and_nothing_for_a_key_not_running() {
    let door: Behavior<Kt> = Behaviors::with_timers(|timers| {
        Behaviors::receive_message(move |m: Kt| match m {
            Kt::Single => timers.start_single_timer("k", Kt::Tick, Duration::from_secs(1)),
            Kt::Rate => timers
                .start_fixed_rate("k", Kt::Tick, Duration::from_secs(2))
                .unwrap(),
            Kt::Cancel => timers.cancel("k"),
            Kt::CancelMissing => timers.cancel("nope"),
            Kt::Tick => {}
        })
    });
    let mut kit = BehaviorTestKit::new(door);
    kit.run(Kt::Single).unwrap();
    assert_eq!(
        kit.effects(),
        [Effect::TimerStarted {
            key: "k".into(),
            mode: TimerMode::Single,
            delay: Duration::from_secs(1)
        }]
    );
    kit.run(Kt::Rate).unwrap();
    assert_eq!(
        kit.effects(),
        [
            Effect::TimerCancelled { key: "k".into() },
            Effect::TimerStarted {
                key: "k".into(),
                mode: TimerMode::FixedRate,
                delay: Duration::from_secs(2)
            }
        ]
    );
    kit.run(Kt::Cancel).unwrap();
    assert_eq!(kit.effects(), [Effect::TimerCancelled { key: "k".into() }]);
    kit.run(Kt::CancelMissing).unwrap();
    kit.run(Kt::Cancel).unwrap();
    assert_eq!(kit.effects(), []);
}

// S48 + BehaviorTestKit docs: a behavior whose setup spawns a child and answers
// `stopped` is not alive once the kit is built; the spawn was recorded; handing it a
// message panics ("If the behavior has stopped").
#[test]
fn s48_kit_setup_answering_stopped_is_not_alive_and_refuses_messages() {
    let mut kit = BehaviorTestKit::new(Behaviors::setup(|ctx: &mut ActorContext<u64>| {
        let _kid: ActorRef<u64> = ctx.spawn(Behaviors::ignore::<u64>(), "kid").unwrap();
        Behaviors::stopped::<u64>()
    }));
    assert!(!kit.is_alive());
    let effects = kit.effects();
    assert_eq!(
        effects.first(),
        Some(&Effect::Spawned { name: "kid".into() }),
        "{effects:?}"
    );
    let ran = std::panic::catch_unwind(AssertUnwindSafe(|| kit.run(1_u64)));
    assert!(ran.is_err(), "a stopped behavior takes no message");
}

#[message]
enum Kc {
    Hire,
    Fire,
}

// S48 + child_kit docs: a child the behavior stopped is no live child: its stop is
// recorded after its spawn, and asking for its kit is `NoSuchChild`.
#[test]
fn s48_kit_a_stopped_child_has_no_kit() {
    let boss: Behavior<Kc> = Behaviors::receive(|ctx, m: Kc| -> Result<(), BoxError> {
        match m {
            Kc::Hire => {
                ctx.spawn(Behaviors::ignore::<u64>(), "w")?;
            }
            Kc::Fire => {
                let child = ctx.child("w").ok_or("no child w")?;
                ctx.stop(&child)?;
            }
        }
        Ok(())
    })
    .into();
    let mut kit = BehaviorTestKit::new(boss);
    kit.run(Kc::Hire).unwrap();
    kit.run(Kc::Fire).unwrap();
    assert_eq!(
        kit.effects(),
        [
            Effect::Spawned { name: "w".into() },
            Effect::Stopped { name: "w".into() }
        ]
    );
    assert!(matches!(
        kit.child_kit::<u64>("w"),
        Err(TestKitError::NoSuchChild { name }) if name == "w"
    ));
}

// S48 + TestProbe docs: `receive_message` waits out its whole bound in silence and
// returns `None` without failing; "a bound of zero looks once, without waiting":
// `expect_no_message(ZERO)` passes at once in silence, and `expect_message(ZERO)`
// fails at once on an empty probe.
#[tapio::test(start_paused = true)]
async fn s48_probe_bounds_none_after_the_bound_and_zero_looks_once(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let started = Instant::now();
    assert_eq!(probe.receive_message(ms(250)).await, None);
    let waited = started.elapsed();
    assert!(waited >= ms(250) && waited <= ms(251), "{waited:?}");
    let started = Instant::now();
    probe.expect_no_message(Duration::ZERO).await;
    assert_eq!(started.elapsed(), Duration::ZERO);
    probe.actor_ref().tell(5_u64);
    assert_eq!(probe.expect_message(T).await, 5);
    let started = Instant::now();
    let empty = tokio::spawn(async move { probe.expect_message(Duration::ZERO).await });
    let failed = timeout(T, empty).await.expect("it looked once and ended");
    assert!(
        failed.is_err_and(|e| e.is_panic()),
        "nothing was there to expect"
    );
    assert!(started.elapsed() < ms(1), "{:?}", started.elapsed());
}

// S48 + S18: a probe that watches the same actor twice is told of its end once.
#[tapio::test(start_paused = true)]
async fn s48_a_probe_watching_twice_hears_one_end(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    probe.watch(&target);
    probe.watch(&target);
    system.stop(&target).unwrap();
    probe.expect_terminated(&target, T).await;
    probe.expect_no_termination(ms(500)).await;
}
