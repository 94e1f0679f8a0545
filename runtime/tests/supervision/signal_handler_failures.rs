//! Failures in signal handlers and setups, asks across a backoff, and escalations
//! through resuming or awaiting parents (S12, S13, S15, S16, S19, S23).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::{dead_letter_for, entries, eventually};
use crate::support::under_supervision::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, DeadLetter, DeadLetterReason};
use tokio::time::{Instant, timeout};

#[message]
enum Cmd {
    Add(u64),
    Fail,
    Panic,
    Get(ActorRef<u64>),
}

/// A counter whose setup runs are counted; `Fail` fails with `Boom`, `Panic` panics.
fn counter(setups: Arc<AtomicUsize>) -> Behavior<Cmd> {
    Behaviors::setup(move |_| {
        setups.fetch_add(1, Ordering::SeqCst);
        let sum = AtomicUsize::new(0);
        Behaviors::receive_message(move |message: Cmd| -> Result<(), Boom> {
            match message {
                Cmd::Add(n) => {
                    sum.fetch_add(n as usize, Ordering::SeqCst);
                }
                Cmd::Fail => return Err(Boom),
                Cmd::Panic => panic!("counter panics"),
                Cmd::Get(to) => to.tell(sum.load(Ordering::SeqCst) as u64),
            }
            Ok(())
        })
    })
}

// ---------------------------------------------------------------------------------
// Failures inside signal handlers and setups
// ---------------------------------------------------------------------------------

// S15 + S9 + S11: a `PreRestart` handler that panics does not wedge the actor: the
// restart decided on still happens (fresh state, same ref), or the actor stops and
// its watcher hears it; it never hangs, and the panic never reaches the sender.
#[tapio::test(start_paused = true)]
async fn s15_a_panicking_pre_restart_does_not_wedge_the_actor(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let counted = setups.clone();
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                let sum = AtomicUsize::new(0);
                Behaviors::receive_message(move |message: Cmd| -> Result<(), Boom> {
                    match message {
                        Cmd::Add(n) => {
                            sum.fetch_add(n as usize, Ordering::SeqCst);
                        }
                        Cmd::Fail => return Err(Boom),
                        Cmd::Panic => panic!("unused"),
                        Cmd::Get(to) => to.tell(sum.load(Ordering::SeqCst) as u64),
                    }
                    Ok(())
                })
                .on_signal(|_, signal| {
                    if *signal == Signal::PreRestart {
                        panic!("pre-restart panics");
                    }
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "pre-restart-panics",
        )
        .unwrap();
    probe.watch(&actor);
    actor.tell(Cmd::Add(7));
    actor.tell(Cmd::Fail);
    actor.tell(Cmd::Get(probe.actor_ref().clone()));
    // The restart was decided before `PreRestart`; the handler's panic must not undo
    // it into a hang. The next incarnation answers with a fresh state.
    let answer = probe.receive_message(T).await;
    assert_eq!(
        answer,
        Some(0),
        "the next incarnation answers with a fresh state (setups: {})",
        setups.load(Ordering::SeqCst)
    );
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    probe.expect_no_termination(Duration::from_millis(50)).await;
}

// S15 + S18 + S2: a child whose `PostStop` panics, stopped by its parent: the parent
// still hears `Terminated` exactly once, the name is free again, and the parent's own
// `PostStop` at termination still comes after.
#[tapio::test(start_paused = true)]
async fn s15_a_panicking_post_stop_still_tells_watchers_and_frees_the_name(system: ActorSystem) {
    let seen = log();
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let s = seen.clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let kid = |ctx: &mut ActorContext<u64>| {
                    let kid: ActorRef<u64> = ctx
                        .spawn(
                            Behaviors::receive_message(|_: u64| ()).on_signal(|_, signal| {
                                if *signal == Signal::PostStop {
                                    panic!("post-stop panics");
                                }
                            }),
                            "kid",
                        )
                        .unwrap();
                    ctx.watch(&kid);
                    kid
                };
                let first = kid(ctx);
                ctx.stop(&first).unwrap();
                let report = report.clone();
                let s = s.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |ctx, signal| {
                    match signal {
                        Signal::Terminated(who) => {
                            report.tell(format!("terminated {}", who.actor().path().name()));
                            // The name is free right here.
                            let again = ctx.spawn(Behaviors::ignore::<u64>(), "kid");
                            report.tell(format!("respawn ok={}", again.is_ok()));
                        }
                        Signal::PostStop => push(&s, "parent post-stop"),
                        _ => {}
                    }
                })
            }),
            "parent",
        )
        .unwrap();
    assert_eq!(probe.expect_message(T).await, "terminated kid");
    assert_eq!(probe.expect_message(T).await, "respawn ok=true");
    probe.expect_no_message(Duration::from_millis(100)).await;
    system.stop(&parent).unwrap();
    eventually(|| entries(&seen) == ["parent post-stop"]).await;
}

// S7 + S12 + S9: a setup that panics on a restart is a failure decided on like any
// other (here a `Panicked` restart with a limit of 2): it is counted against the
// limit, so the actor stops after the limit instead of looping, and the messages it
// never got to handle become dead letters.
#[tapio::test(start_paused = true)]
async fn s12_a_setup_panicking_on_restart_counts_against_the_limit(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let counted = setups.clone();
    let mut probe = TestProbe::<u64>::new(&system);
    let mut letters = system.events().subscribe::<DeadLetter>();
    let strategy = SupervisorStrategy::restart()
        .with_limit(2, Duration::from_secs(60))
        .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| {
                if counted.fetch_add(1, Ordering::SeqCst) > 0 {
                    panic!("setup panics on every restart");
                }
                Behaviors::receive_message(|message: Cmd| {
                    if let Cmd::Panic = message {
                        panic!("handler panics");
                    }
                })
            }))
            .on_failure::<Panicked>(strategy),
            "setup-panics",
        )
        .unwrap();
    probe.watch(&actor);
    actor.tell(Cmd::Panic);
    actor.tell(Cmd::Add(1));
    probe.expect_terminated(&actor, T).await;
    // One start, then two restarts whose setups panicked; the third failure stops.
    assert_eq!(setups.load(Ordering::SeqCst), 3);
    let letter = dead_letter_for(&mut letters, actor.path()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::RecipientStopped,
        "{letter}"
    );
    assert_eq!(
        letter
            .take_message::<Cmd>()
            .map(|m| matches!(m, Cmd::Add(1))),
        Some(true)
    );
}

// ---------------------------------------------------------------------------------
// Escalation
// ---------------------------------------------------------------------------------

#[message]
enum Tree {
    Bump,
    FailGrandchild,
    Count(ActorRef<String>),
}

// S16 + S11: a grandchild escalates to a child that escalates too; the parent resumes
// that error type. The grandchild and child stop (the parent hears both `ChildFailed`
// and `Terminated` of the child), the parent keeps its state, and the parent's own
// parent hears nothing.
#[tapio::test(start_paused = true)]
async fn s16_escalation_through_a_resuming_parent_keeps_its_state(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let top_heard = probe.actor_ref().clone();
    let top = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let report = report.clone();
                let parent: ActorRef<Tree> = ctx
                    .spawn(
                        Behaviors::supervise(Behaviors::setup(move |ctx| {
                            let child: ActorRef<Tree> = ctx
                                .spawn(
                                    Behaviors::supervise(Behaviors::setup(|ctx| {
                                        let grandchild: ActorRef<Tree> = ctx
                                            .spawn(
                                                Behaviors::supervise(Behaviors::receive_message(
                                                    |m: Tree| match m {
                                                        Tree::FailGrandchild => Err(Boom),
                                                        _ => Ok(Behaviors::same()),
                                                    },
                                                ))
                                                .on_failure::<Boom>(SupervisorStrategy::escalate()),
                                                "grandchild",
                                            )
                                            .unwrap();
                                        Behaviors::receive_message(move |m: Tree| {
                                            grandchild.tell(m);
                                        })
                                    }))
                                    .on_failure::<Boom>(SupervisorStrategy::escalate()),
                                    "child",
                                )
                                .unwrap();
                            ctx.watch(&child);
                            let bumps = AtomicUsize::new(0);
                            let report = report.clone();
                            let heard = report.clone();
                            Behaviors::receive_message(move |m: Tree| match m {
                                Tree::Bump => {
                                    bumps.fetch_add(1, Ordering::SeqCst);
                                }
                                Tree::Count(to) => {
                                    to.tell(format!("bumps {}", bumps.load(Ordering::SeqCst)));
                                }
                                Tree::FailGrandchild => child.tell(Tree::FailGrandchild),
                            })
                            .on_signal(move |_, signal| {
                                match signal {
                                    Signal::ChildFailed(failed) => heard.tell(format!(
                                        "child-failed {}",
                                        failed.child().path().name()
                                    )),
                                    Signal::Terminated(who) => {
                                        heard.tell(format!(
                                            "terminated {}",
                                            who.actor().path().name()
                                        ));
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
                ctx.watch(&parent);
                let top_heard = top_heard.clone();
                Behaviors::receive_message(move |m: Tree| parent.tell(m)).on_signal(
                    move |_, signal| {
                        top_heard.tell(format!("top heard {signal:?}"));
                        Behaviors::same()
                    },
                )
            }),
            "top",
        )
        .unwrap();
    top.tell(Tree::Bump);
    top.tell(Tree::Bump);
    top.tell(Tree::FailGrandchild);
    let mut heard = vec![probe.expect_message(T).await];
    while let Some(more) = probe.receive_message(Duration::from_millis(200)).await {
        heard.push(more);
    }
    assert!(
        heard.contains(&"child-failed child".to_string()),
        "{heard:?}"
    );
    assert!(heard.contains(&"terminated child".to_string()), "{heard:?}");
    assert!(
        !heard.iter().any(|h| h.starts_with("top heard")),
        "{heard:?}"
    );
    top.tell(Tree::Bump);
    top.tell(Tree::Count(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "bumps 3");
}

// ---------------------------------------------------------------------------------
// Asks across restarts and backoffs
// ---------------------------------------------------------------------------------

// S13 + S21 + S12: an ask sent while its target backs off is kept and answered by the
// next incarnation, after the backoff, within the ask's deadline.
#[tapio::test(start_paused = true)]
async fn s13_an_ask_sent_during_a_backoff_is_answered_by_the_next_incarnation(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let strategy = SupervisorStrategy::restart()
        .with_backoff(Backoff::new(Duration::from_secs(1), Duration::from_secs(1), 0.0).unwrap());
    let actor = system
        .spawn(
            Behaviors::supervise(counter(setups.clone())).on_failure::<Boom>(strategy),
            "backing-off",
        )
        .unwrap();
    actor.tell(Cmd::Add(3));
    actor.tell(Cmd::Fail);
    tokio::time::sleep(Duration::from_millis(100)).await; // inside the backoff
    let started = Instant::now();
    let answer = actor
        .ask_with(Cmd::Get)
        .timeout(Duration::from_secs(3))
        .await;
    assert_eq!(answer, Ok(0));
    assert!(
        started.elapsed() >= Duration::from_millis(800),
        "answered after the backoff: {:?}",
        started.elapsed()
    );
    assert_eq!(setups.load(Ordering::SeqCst), 2);
}

// S23 + S12 + S13: an ask queued while its target backs off, when the target then uses
// up its restarts and stops, fails at once with `TargetTerminated`, not at its
// (much later) deadline.
#[tapio::test(start_paused = true)]
async fn s23_an_ask_queued_in_a_backoff_fails_fast_when_the_limit_stops_it(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let strategy = SupervisorStrategy::restart()
        .with_limit(1, Duration::from_secs(60))
        .unwrap()
        .with_backoff(Backoff::new(Duration::from_secs(1), Duration::from_secs(1), 0.0).unwrap());
    let actor = system
        .spawn(
            Behaviors::supervise(counter(setups.clone())).on_failure::<Boom>(strategy),
            "limited",
        )
        .unwrap();
    actor.tell(Cmd::Fail); // restart 1, after 1 s
    actor.tell(Cmd::Fail); // one too many: stop
    let started = Instant::now();
    let answer = actor
        .ask_with(Cmd::Get)
        .timeout(Duration::from_secs(60))
        .await;
    assert!(
        matches!(answer, Err(AskError::TargetTerminated { .. })),
        "{answer:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "failed fast: {:?}",
        started.elapsed()
    );
}

#[message]
enum Held {
    /// Make the child fail, then await (forever) inside the handler; answer nothing.
    Hold(ActorRef<u64>),
    Get(ActorRef<u64>),
}

/// Counts drops of the guard an interrupted handler holds.
struct Guard(Arc<AtomicUsize>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

// S16 + S21 + S22 + lib docs "cancel safety": an async handler awaiting while a child
// escalates is dropped where it awaits (its guard runs); the parent restarts; the ask
// it was handling fails (it is not handled again) rather than hanging, and an ask
// queued behind it is answered by the next incarnation.
#[tapio::test(start_paused = true)]
async fn s16_an_escalation_interrupts_an_awaiting_handler_and_asks_still_end(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let drops = Arc::new(AtomicUsize::new(0));
    let counted = setups.clone();
    let dropped = drops.clone();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let generation = counted.fetch_add(1, Ordering::SeqCst) as u64 + 1;
                let child: ActorRef<u64> = ctx
                    .spawn(
                        Behaviors::supervise(Behaviors::receive_message(|_: u64| {
                            Err::<(), _>(Boom)
                        }))
                        .on_failure::<Boom>(SupervisorStrategy::escalate()),
                        "child",
                    )
                    .unwrap();
                let dropped = dropped.clone();
                Behaviors::receive_async(async move |_ctx, message: Held| match message {
                    Held::Hold(_reply_to) => {
                        let _guard = Guard(dropped.clone());
                        child.tell(1);
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    }
                    Held::Get(to) => to.tell(generation),
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "parent",
        )
        .unwrap();
    let held = parent.ask_with(Held::Hold).timeout(Duration::from_secs(2));
    let queued = parent.ask_with(Held::Get).timeout(Duration::from_secs(2));
    let (held, queued) = timeout(Duration::from_secs(10), async {
        tokio::join!(held, queued)
    })
    .await
    .expect("both asks end");
    assert!(
        matches!(
            held,
            Err(AskError::Timeout { .. } | AskError::Unanswered { .. })
        ),
        "{held:?}"
    );
    assert_eq!(queued, Ok(2), "answered by the second incarnation");
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the handler was dropped");
    assert_eq!(setups.load(Ordering::SeqCst), 2);
}

// S19 + S13: `terminate()` while a grandchild backs off (for an hour) is prompt: it does
// not wait for the backoff or the deadline, and every actor above it sees `PostStop`,
// bottom-up.
#[tapio::test(start_paused = true, shutdown_timeout_ms = 5000)]
async fn s19_terminate_while_a_grandchild_backs_off_is_prompt(system: ActorSystem) {
    let seen = log();
    let s = seen.clone();
    let strategy = SupervisorStrategy::restart().with_backoff(
        Backoff::new(Duration::from_secs(3600), Duration::from_secs(3600), 0.0).unwrap(),
    );
    let top = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let s1 = s.clone();
                let strategy = strategy.clone();
                let middle: ActorRef<u64> = ctx
                    .spawn(
                        Behaviors::setup(move |ctx| {
                            let leaf: ActorRef<u64> = ctx
                                .spawn(
                                    Behaviors::supervise(Behaviors::receive_message(|_: u64| {
                                        Err::<(), _>(Boom)
                                    }))
                                    .on_failure::<Boom>(strategy.clone()),
                                    "leaf",
                                )
                                .unwrap();
                            let s2 = s1.clone();
                            Behaviors::receive_message(move |n: u64| leaf.tell(n)).on_signal(
                                move |_, signal| {
                                    if *signal == Signal::PostStop {
                                        push(&s2, "middle");
                                    }
                                },
                            )
                        }),
                        "middle",
                    )
                    .unwrap();
                let s3 = s.clone();
                Behaviors::receive_message(move |n: u64| middle.tell(n)).on_signal(
                    move |_, signal| {
                        if *signal == Signal::PostStop {
                            push(&s3, "top");
                        }
                    },
                )
            }),
            "top",
        )
        .unwrap();
    top.tell(1);
    tokio::time::sleep(Duration::from_millis(100)).await; // the leaf is backing off
    top.tell(2); // queued for the absent leaf
    let started = Instant::now();
    system.terminate().await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "terminate took {:?}",
        started.elapsed()
    );
    assert_eq!(entries(&seen), ["middle", "top"]);
}
