//! The supervision promises at their edges: the default stop, stacked and nested
//! clauses, backoff and restart limits and windows, restart and identity, signal order,
//! escalation, watching, bounded mailboxes, and `ChildFailed` priority (S9-S18, S29).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_cases::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{
    AskError, DeadLetter, DeadLetterReason, MailboxConfig, MailboxOverflow, OverflowStrategy,
    SpawnError,
};
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bang: another test failure")]
struct Bang;

/// A supervised behavior that fails with `error` on every number and escalates it.
fn escalating<E: std::error::Error + Clone + Send + Sync + 'static>(error: E) -> Behavior<u64> {
    Behaviors::supervise(Behaviors::receive_message(move |_: u64| {
        Err::<(), _>(error.clone())
    }))
    .on_failure::<E>(SupervisorStrategy::escalate())
    .into()
}

// ---------------------------------------------------------------------------------
// Failure and supervision
// ---------------------------------------------------------------------------------

#[message(reply = u64)]
struct Ask1;

#[derive(Clone)]
struct Refuser;

#[actor]
impl Refuser {
    fn ask1(&mut self, _: Ask1) -> Result<u64, Boom> {
        Err(Boom)
    }
}

// S9: a handler's panic and a handler's error never reach the sender; without a
// strategy the actor stops; an ask of it fails instead of panicking the asker.
#[tapio::test(start_paused = true)]
async fn s9_failures_never_reach_the_sender_default_is_stop(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let panicky = system
        .spawn(
            Behaviors::receive_message(|n: u64| {
                assert!(n != 13, "unlucky");
            }),
            "panicky",
        )
        .unwrap();
    let erring = system
        .spawn(
            Behaviors::receive_message(|n: u64| {
                if n == 13 {
                    Err(Boom)
                } else {
                    Ok(Behaviors::same())
                }
            }),
            "erring",
        )
        .unwrap();
    probe.watch(&panicky);
    probe.watch(&erring);
    panicky.tell(13_u64);
    panicky.tell(1_u64);
    probe.expect_terminated(&panicky, T).await;
    erring.tell(13_u64);
    erring.tell(1_u64);
    probe.expect_terminated(&erring, T).await;
    // A request to an actor that fails on it: the asker gets an error, not a panic.
    let asked = system.spawn(Refuser, "asked").unwrap();
    let answer = asked.ask(Ask1).timeout(T).await;
    assert!(
        matches!(
            answer,
            Err(AskError::TargetTerminated { .. } | AskError::Unanswered { .. })
        ),
        "{answer:?}"
    );
}

#[message]
enum Flaky {
    Add(u64),
    Fail(u8),
    Get(ActorRef<u64>),
}

/// An accumulator whose setup runs are counted; `Fail(k)` fails with Boom (1), Bang
/// (2), Crash (3) or a panic (4).
fn flaky(setups: Arc<AtomicUsize>) -> Behavior<Flaky> {
    Behaviors::setup(move |_| {
        setups.fetch_add(1, Ordering::SeqCst);
        let sum = AtomicUsize::new(0);
        Behaviors::receive_message(move |message: Flaky| -> Result<(), tapio::BoxError> {
            match message {
                Flaky::Add(n) => {
                    sum.fetch_add(n as usize, Ordering::SeqCst);
                }
                Flaky::Fail(1) => return Err(Boom.into()),
                Flaky::Fail(2) => return Err(Bang.into()),
                Flaky::Fail(3) => return Err(Crash.into()),
                Flaky::Fail(_) => panic!("flaky panics"),
                Flaky::Get(to) => to.tell(sum.load(Ordering::SeqCst) as u64),
            }
            Ok(())
        })
    })
}

// S10 + S11: stacked clauses each apply to their own error type only: resume keeps
// the state, restart rebuilds it, and an error no clause names stops the actor.
#[tapio::test(start_paused = true)]
async fn s10_s11_stacked_clauses_by_error_type(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(flaky(setups.clone()))
                .on_failure::<Boom>(SupervisorStrategy::resume())
                .on_failure::<Bang>(SupervisorStrategy::restart())
                .on_failure::<Panicked>(SupervisorStrategy::resume()),
            "stacked",
        )
        .unwrap();
    probe.watch(&actor);
    let me = probe.actor_ref().clone();
    actor.tell(Flaky::Add(5));
    actor.tell(Flaky::Fail(1)); // resume: keeps 5
    actor.tell(Flaky::Fail(4)); // a panic, resumed too
    actor.tell(Flaky::Get(me.clone()));
    assert_eq!(probe.expect_message(T).await, 5);
    assert_eq!(setups.load(Ordering::SeqCst), 1);
    actor.tell(Flaky::Fail(2)); // restart: back to 0
    actor.tell(Flaky::Get(me.clone()));
    assert_eq!(probe.expect_message(T).await, 0);
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    probe.expect_no_termination(Duration::from_millis(10)).await;
    actor.tell(Flaky::Fail(3)); // no clause: stop
    probe.expect_terminated(&actor, T).await;
    assert_eq!(setups.load(Ordering::SeqCst), 2);
}

// S10: a `supervise` nested in another: the inner clause decides its own type, and
// what it does not name falls through to the outer one.
#[tapio::test(start_paused = true)]
async fn s10_nested_supervise_falls_through_to_outer(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let mut probe = TestProbe::<u64>::new(&system);
    let inner = Behaviors::supervise(flaky(setups.clone()))
        .on_failure::<Boom>(SupervisorStrategy::resume());
    let actor = system
        .spawn(
            Behaviors::supervise(inner).on_failure::<Bang>(SupervisorStrategy::restart()),
            "nested",
        )
        .unwrap();
    probe.watch(&actor);
    actor.tell(Flaky::Add(2));
    actor.tell(Flaky::Fail(1));
    actor.tell(Flaky::Get(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, 2);
    actor.tell(Flaky::Fail(2));
    actor.tell(Flaky::Get(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, 0);
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    actor.tell(Flaky::Fail(3));
    probe.expect_terminated(&actor, T).await;
}

// S12: the backoff waits at least `min` before the first restart and grows; using up
// the window's restarts stops the actor.
#[tapio::test(start_paused = true)]
async fn s12_backoff_grows_and_the_limit_stops(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let started = Instant::now();
    let report = probe.actor_ref().clone();
    let strategy = SupervisorStrategy::restart()
        .with_limit(3, Duration::from_secs(60))
        .unwrap()
        .with_backoff(
            Backoff::new(Duration::from_millis(100), Duration::from_secs(1), 0.0).unwrap(),
        );
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| {
                report.tell(u64::try_from(started.elapsed().as_millis()).unwrap());
                Behaviors::receive_message(|_: u64| Err::<(), _>(Boom))
            }))
            .on_failure::<Boom>(strategy),
            "backing-off",
        )
        .unwrap();
    probe.watch(&actor);
    let mut starts = vec![probe.expect_message(T).await];
    for _ in 0..3 {
        let before = starts.len();
        actor.tell(1_u64);
        starts.push(probe.expect_message(Duration::from_secs(10)).await);
        assert_eq!(starts.len(), before + 1);
    }
    let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps[0] >= 100, "{gaps:?}");
    assert!(
        gaps[1] > gaps[0] && gaps[2] > gaps[1],
        "the backoff grows: {gaps:?}"
    );
    assert!(gaps.iter().all(|g| *g <= 1100), "{gaps:?}");
    // The fourth failure within the window is one restart too many.
    actor.tell(1_u64);
    probe
        .expect_terminated(&actor, Duration::from_secs(10))
        .await;
}

// S13: while it backs off the actor is absent, not dead: tells succeed and queue, the
// next incarnation handles every one in order, and nobody hears `Terminated`.
#[tapio::test(start_paused = true)]
async fn s13_backoff_keeps_every_message_for_the_next_incarnation(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let strategy = SupervisorStrategy::restart()
        .with_backoff(Backoff::new(Duration::from_secs(2), Duration::from_secs(2), 0.0).unwrap());
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
                if n == 0 {
                    return Err(Boom);
                }
                report.tell(n);
                Ok(Behaviors::same())
            }))
            .on_failure::<Boom>(strategy),
            "absent",
        )
        .unwrap();
    probe.watch(&actor);
    actor.tell(0_u64);
    actor.tell(1_u64);
    tokio::time::sleep(Duration::from_millis(500)).await; // well inside the backoff
    for n in 2..=50 {
        actor.tell(n);
    }
    probe.expect_no_message(Duration::from_secs(1)).await;
    let got = probe.receive_messages(50, Duration::from_secs(5)).await;
    assert_eq!(got, (1..=50).collect::<Vec<u64>>());
    probe
        .expect_no_termination(Duration::from_millis(100))
        .await;
}

#[message]
enum Keeper {
    Work(u64),
    Fail,
    Spawn,
    Kids(ActorRef<Vec<String>>),
    Uid(ActorRef<u64>),
}

// S14: a restart keeps the ref, path and uid, keeps a watch others hold on the actor
// (its `Terminated` still comes, once, at the real stop), keeps the user messages
// queued behind the failing one, brings back children spawned in setup but not
// those spawned in a handler.
#[tapio::test(start_paused = true)]
async fn s14_restart_keeps_identity_queue_and_setup_children(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let mut kids_probe = TestProbe::<Vec<String>>::new(&system);
    let report = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                ctx.spawn(Behaviors::ignore::<u64>(), "from-setup").unwrap();
                let report = report.clone();
                Behaviors::receive(move |ctx, message: Keeper| {
                    match message {
                        Keeper::Work(n) => report.tell(n),
                        Keeper::Fail => return Err(Boom),
                        Keeper::Spawn => {
                            ctx.spawn(Behaviors::ignore::<u64>(), "from-handler")
                                .unwrap();
                        }
                        Keeper::Kids(to) => {
                            let mut names: Vec<String> = ctx
                                .children()
                                .iter()
                                .map(|c| c.path().name().to_owned())
                                .collect();
                            names.sort();
                            to.tell(names);
                        }
                        Keeper::Uid(to) => to.tell(ctx.self_ref().uid()),
                    }
                    Ok(Behaviors::same())
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "keeper",
        )
        .unwrap();
    probe.watch(&actor);
    let uid = actor.uid();
    actor.tell(Keeper::Spawn);
    actor.tell(Keeper::Kids(kids_probe.actor_ref().clone()));
    assert_eq!(
        kids_probe.expect_message(T).await,
        ["from-handler", "from-setup"]
    );
    // Fail with work queued behind the failure.
    actor.tell(Keeper::Fail);
    for n in 1..=20 {
        actor.tell(Keeper::Work(n));
    }
    assert_eq!(
        probe.receive_messages(20, T).await,
        (1..=20).collect::<Vec<u64>>()
    );
    actor.tell(Keeper::Kids(kids_probe.actor_ref().clone()));
    assert_eq!(kids_probe.expect_message(T).await, ["from-setup"]);
    actor.tell(Keeper::Uid(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, uid);
    probe.expect_no_termination(Duration::from_millis(50)).await;
    // The watch survived the restart.
    system.stop(&actor).unwrap();
    probe.expect_terminated(&actor, T).await;
    probe.expect_no_termination(Duration::from_millis(50)).await;
}

// S15: `PreRestart` reaches the failing incarnation before the new one starts; its
// children have all seen `PostStop` before the new incarnation's setup runs.
#[tapio::test(start_paused = true)]
async fn s15_pre_restart_then_children_stop_then_setup_again(system: ActorSystem) {
    let order = log();
    let in_setup = order.clone();
    let probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let run = {
                    let mut order = in_setup.lock().unwrap();
                    order.push("setup".to_owned());
                    order.iter().filter(|e| *e == "setup").count()
                };
                for i in 0..3 {
                    let stops = in_setup.clone();
                    ctx.spawn(
                        Behaviors::receive_message(|_: u64| ()).on_signal(move |ctx, signal| {
                            if *signal == Signal::PostStop {
                                stops
                                    .lock()
                                    .unwrap()
                                    .push(format!("child-stop {}", ctx.path().name()));
                            }
                        }),
                        &format!("c{i}-{run}"),
                    )
                    .unwrap();
                }
                let signals = in_setup.clone();
                Behaviors::receive_message(|_: u64| Err::<(), _>(Boom)).on_signal(
                    move |_, signal| match signal {
                        Signal::PreRestart => signals.lock().unwrap().push("pre-restart".into()),
                        Signal::PostStop => signals.lock().unwrap().push("post-stop".into()),
                        _ => {}
                    },
                )
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "restarting",
        )
        .unwrap();
    probe.watch(&actor);
    actor.tell(1_u64);
    eventually(|| entries(&order).iter().filter(|e| *e == "setup").count() == 2).await;
    let seen = entries(&order);
    let pre = seen
        .iter()
        .position(|e| e == "pre-restart")
        .expect("PreRestart");
    let second_setup = seen.iter().rposition(|e| e == "setup").unwrap();
    assert!(pre < second_setup, "{seen:?}");
    for i in 0..3 {
        let stop = seen
            .iter()
            .position(|e| *e == format!("child-stop c{i}-1"))
            .unwrap_or_else(|| panic!("c{i}-1 stopped: {seen:?}"));
        assert!(stop < second_setup, "{seen:?}");
    }
    assert!(
        !seen.contains(&"post-stop".to_owned()),
        "a restart is not a stop: {seen:?}"
    );
}

#[message]
enum Tree {
    Bump,
    FailChild,
    Count(ActorRef<String>),
}

// S16: a child escalates; its parent hears `ChildFailed` and takes its own decision
// (restart), which rebuilds the parent's subtree; the parent's sibling keeps its
// state and is not restarted.
#[tapio::test(start_paused = true)]
async fn s16_escalation_restarts_the_parent_subtree_only(system: ActorSystem) {
    let setups = log();
    let mut probe = TestProbe::<String>::new(&system);
    let failed_seen = probe.actor_ref().clone();
    let s = setups.clone();
    let top = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let s1 = s.clone();
                let failed_seen = failed_seen.clone();
                let parent: ActorRef<Tree> = ctx
                    .spawn(
                        Behaviors::supervise(Behaviors::setup(move |ctx| {
                            s1.lock().unwrap().push("parent".into());
                            let s2 = s1.clone();
                            let child: ActorRef<Tree> = ctx
                                .spawn(
                                    Behaviors::supervise(Behaviors::setup(move |_| {
                                        s2.lock().unwrap().push("child".into());
                                        Behaviors::receive_message(|m: Tree| match m {
                                            Tree::FailChild => Err(Boom),
                                            _ => Ok(Behaviors::same()),
                                        })
                                    }))
                                    .on_failure::<Boom>(SupervisorStrategy::escalate()),
                                    "child",
                                )
                                .unwrap();
                            let failed_seen = failed_seen.clone();
                            Behaviors::receive_message(move |m: Tree| {
                                if let Tree::FailChild = m {
                                    child.tell(Tree::FailChild);
                                }
                            })
                            .on_signal(move |_, signal| {
                                if let Signal::ChildFailed(failed) = signal {
                                    failed_seen.tell(format!(
                                        "child-failed {} boom={}",
                                        failed.child().path().name(),
                                        failed.failure().is::<Boom>()
                                    ));
                                }
                                Behaviors::same()
                            })
                        }))
                        .on_failure::<Boom>(SupervisorStrategy::restart()),
                        "parent",
                    )
                    .unwrap();
                let s3 = s.clone();
                let sibling: ActorRef<Tree> = ctx
                    .spawn(
                        Behaviors::setup(move |_| {
                            s3.lock().unwrap().push("sibling".into());
                            let bumps = AtomicUsize::new(0);
                            Behaviors::receive_message(move |m: Tree| match m {
                                Tree::Bump => {
                                    bumps.fetch_add(1, Ordering::SeqCst);
                                }
                                Tree::Count(to) => {
                                    to.tell(format!("bumps {}", bumps.load(Ordering::SeqCst)));
                                }
                                Tree::FailChild => {}
                            })
                        }),
                        "sibling",
                    )
                    .unwrap();
                Behaviors::receive_message(move |m: Tree| match m {
                    Tree::FailChild => parent.tell(Tree::FailChild),
                    other => sibling.tell(other),
                })
            }),
            "top",
        )
        .unwrap();
    top.tell(Tree::Bump);
    top.tell(Tree::Bump);
    top.tell(Tree::FailChild);
    assert_eq!(
        probe.expect_message(T).await,
        "child-failed child boom=true"
    );
    eventually(|| entries(&setups).iter().filter(|e| *e == "child").count() == 2).await;
    top.tell(Tree::Count(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "bumps 2");
    let seen = entries(&setups);
    assert_eq!(
        seen.iter().filter(|e| *e == "parent").count(),
        2,
        "{seen:?}"
    );
    assert_eq!(
        seen.iter().filter(|e| *e == "sibling").count(),
        1,
        "{seen:?}"
    );
}

// S17: an escalation that reaches the guardian terminates the system, and
// `when_terminated` returns the original error with the path it climbed.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn s17_escalation_to_guardian_terminates_with_climbed_paths() {
    let system = ActorSystem::new("escalating").unwrap();
    let top = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(|ctx| {
                let leaf: ActorRef<u64> = ctx.spawn(escalating(Crash), "leaf").unwrap();
                Behaviors::receive_message(move |n: u64| leaf.tell(n))
            }))
            .on_failure::<Crash>(SupervisorStrategy::escalate()),
            "top",
        )
        .unwrap();
    top.tell(1_u64);
    let outcome = timeout(T, system.when_terminated())
        .await
        .expect("the system terminates");
    let failure = outcome.expect_err("an escalated failure");
    assert!(failure.is::<Crash>(), "{failure}");
    let climbed: Vec<String> = failure.climbed().iter().map(|p| p.to_string()).collect();
    assert!(
        climbed.iter().any(|p| p.ends_with("/user/top/leaf")),
        "{climbed:?}"
    );
    assert!(
        climbed.iter().any(|p| p.ends_with("/user/top")),
        "{climbed:?}"
    );
    assert_eq!(system.live_actors(), 0);
    assert!(matches!(
        system.spawn(Behaviors::ignore::<u64>(), "late"),
        Err(SpawnError::SystemTerminated { .. })
    ));
}

// S18: watching is not parenthood: a watched actor's failure stays with it; its
// watcher only hears `Terminated`, and is not restarted or stopped.
#[tapio::test(start_paused = true)]
async fn s18_watching_is_not_parenthood(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let (target_tx, mut target_rx) = tokio::sync::mpsc::unbounded_channel::<ActorRef<u64>>();
    let failed_seen = probe.actor_ref().clone();
    // The target's parent absorbs the escalation (resume); the watcher is elsewhere.
    let _parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let target: ActorRef<u64> = ctx.spawn(escalating(Crash), "escalator").unwrap();
                let _ = target_tx.send(target);
                let failed_seen = failed_seen.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                    if let Signal::ChildFailed(failed) = signal {
                        failed_seen.tell(format!("parent saw {}", failed.child().path().name()));
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<Crash>(SupervisorStrategy::resume()),
            "parent",
        )
        .unwrap();
    let target = timeout(T, target_rx.recv()).await.unwrap().unwrap();
    let setups = Arc::new(AtomicUsize::new(0));
    let counted = setups.clone();
    let report = probe.actor_ref().clone();
    let w = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                watcher(report.clone())
            }))
            .on_any_failure(SupervisorStrategy::restart()),
            "bystander",
        )
        .unwrap();
    w.tell(Watcher::Watch(target.clone()));
    w.tell(Watcher::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "pong");
    target.tell(1_u64);
    let mut heard = probe.receive_messages(2, T).await;
    heard.sort();
    assert_eq!(heard, ["parent saw escalator", "terminated escalator"]);
    probe.expect_no_message(Duration::from_millis(50)).await;
    assert_eq!(setups.load(Ordering::SeqCst), 1, "the watcher did not fail");
}

// S29: drop-new keeps what is queued and refuses the newcomer; fail refuses it too
// and fails the actor, and a restart keeps what was queued (nothing is lost).
#[tapio::test(start_paused = true)]
async fn s29_drop_new_and_fail_with_restart(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let (mut probe, gate, drop_new) =
        gated_setup(&system, "drop-new", (2, OverflowStrategy::DropNew));
    drop_new.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, 0);
    for n in 2..=5 {
        drop_new.tell(n);
    }
    let mut refused = Vec::new();
    for _ in 0..2 {
        let letter =
            letter_with(&mut letters, drop_new.path(), DeadLetterReason::MailboxFull).await;
        refused.push(letter.take_message::<u64>().unwrap());
    }
    assert_eq!(refused, [4, 5]);
    gate.add_permits(1);
    assert_eq!(probe.receive_messages(3, T).await, [1, 2, 3]);

    let setups = Arc::new(AtomicUsize::new(0));
    let counted = setups.clone();
    let report = probe.actor_ref().clone();
    let in_gate = gate.clone();
    let failing = system
        .spawn_with(
            Behaviors::supervise(Behaviors::setup(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                gated_sink(report.clone(), in_gate.clone(), 11)
            }))
            .on_failure::<MailboxOverflow>(SupervisorStrategy::restart()),
            "failing",
            MailboxConfig::bounded(2, OverflowStrategy::Fail).unwrap(),
        )
        .unwrap();
    probe.watch(&failing);
    failing.tell(11_u64);
    assert_eq!(probe.expect_message(T).await, 0);
    for n in 12..=14 {
        failing.tell(n);
    }
    expect_dead_letter(
        &mut letters,
        failing.path(),
        DeadLetterReason::MailboxFull,
        14_u64,
    )
    .await;
    gate.add_permits(1);
    let mut handled = probe.receive_messages(3, T).await;
    handled.sort_unstable();
    assert_eq!(handled, [11, 12, 13]);
    assert_eq!(
        setups.load(Ordering::SeqCst),
        2,
        "the overflow failed the actor"
    );
    probe.expect_no_termination(Duration::from_millis(50)).await;
}

// S12: only restarts inside the window count: after a quiet spell longer than the
// window, the actor may restart again.
#[tapio::test(start_paused = true)]
async fn s12_restarts_outside_the_window_do_not_count(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(flaky(setups.clone())).on_failure::<Boom>(
                SupervisorStrategy::restart()
                    .with_limit(2, Duration::from_secs(1))
                    .unwrap(),
            ),
            "windowed",
        )
        .unwrap();
    probe.watch(&actor);
    actor.tell(Flaky::Fail(1));
    actor.tell(Flaky::Fail(1));
    actor.tell(Flaky::Get(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, 0);
    assert_eq!(setups.load(Ordering::SeqCst), 3);
    tokio::time::sleep(Duration::from_secs(3)).await;
    actor.tell(Flaky::Fail(1));
    actor.tell(Flaky::Get(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, 0);
    assert_eq!(setups.load(Ordering::SeqCst), 4);
    actor.tell(Flaky::Fail(1));
    actor.tell(Flaky::Fail(1));
    probe.expect_terminated(&actor, T).await;
}

// S15: a parent's `PostStop` waits for its child's, even when the child's `PostStop`
// handler awaits; `ActorSystem::stop` takes the same path as `terminate`.
#[tapio::test(start_paused = true)]
async fn s15_post_stop_waits_for_an_async_child_post_stop(system: ActorSystem) {
    let order = log();
    let mut probe = TestProbe::<u64>::new(&system);
    let top = system
        .spawn(slow_chain(&["p", "q"], order.clone()), "p")
        .unwrap();
    probe.watch(&top);

    tokio::time::sleep(Duration::from_millis(10)).await;
    system.stop(&top).unwrap();
    probe.expect_terminated(&top, T).await;
    assert_eq!(entries(&order), ["begin q", "end q", "begin p", "end p"]);
}

#[message]
enum Boss {
    Go,
    Msg(u64),
}

// S16: `ChildFailed` comes on the parent's system lane, ahead of the messages it has
// queued (and interrupting the async handler it awaits); the parent's own decision
// here is resume, so it goes on with those messages, without the child.
#[tapio::test(start_paused = true)]
async fn s16_child_failed_outranks_queued_messages(system: ActorSystem) {
    let order = log();
    let (in_handler, in_signal) = (order.clone(), order.clone());
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let gate = Arc::new(Semaphore::new(0));
    let boss = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let child: ActorRef<u64> = ctx.spawn(escalating(Boom), "worker").unwrap();
                let (log, gate, report) = (in_handler.clone(), gate.clone(), report.clone());
                let signals = in_signal.clone();
                Behaviors::receive_async(async move |ctx, message: Boss| match message {
                    Boss::Go => {
                        child.tell(1_u64);
                        gate.acquire().await.unwrap().forget();
                        log.lock().unwrap().push("gate passed".into());
                    }
                    Boss::Msg(n) => {
                        log.lock().unwrap().push(format!("msg {n}"));
                        report.tell(ctx.children().len() as u64);
                    }
                })
                .on_signal(move |_, signal| {
                    if let Signal::ChildFailed(_) = signal {
                        signals.lock().unwrap().push("child-failed".into());
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume()),
            "boss",
        )
        .unwrap();
    boss.tell(Boss::Go);
    for n in 1..=3 {
        boss.tell(Boss::Msg(n));
    }
    assert_eq!(probe.receive_messages(3, T).await, [0, 0, 0]);
    assert_eq!(entries(&order), ["child-failed", "msg 1", "msg 2", "msg 3"]);
}

// S13 + S19: an actor waiting out a long backoff does not hold up a stop, nor the
// system's termination; what was queued for it becomes dead letters.
#[tapio::test(start_paused = true, shutdown_timeout_ms = 5000)]
async fn s13_stop_during_backoff_is_prompt(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let strategy = SupervisorStrategy::restart().with_backoff(
        Backoff::new(Duration::from_secs(3600), Duration::from_secs(3600), 0.0).unwrap(),
    );
    let make = |name: &str| {
        system
            .spawn(
                Behaviors::supervise(Behaviors::receive_message(|n: u64| {
                    if n == 0 {
                        Err(Boom)
                    } else {
                        Ok(Behaviors::same())
                    }
                }))
                .on_failure::<Boom>(strategy.clone()),
                name,
            )
            .unwrap()
    };
    let stopped = make("stopped");
    let _terminated = make("terminated");
    probe.watch(&stopped);
    stopped.tell(0_u64);
    stopped.tell(7_u64);
    _terminated.tell(0_u64);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let started = Instant::now();
    system.stop(&stopped).unwrap();
    probe
        .expect_terminated(&stopped, Duration::from_secs(10))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let letter = dead_letter_for(&mut letters, stopped.path()).await;
    assert_eq!(letter.take_message::<u64>(), Some(7));
    let started = Instant::now();
    system.terminate().await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[message]
enum Dependent {
    FailLater,
}

// S14 + S18: an actor that watches another in its setup, and restarts while that
// one's `Terminated` is already queued on its system lane, hears it exactly once.
#[tapio::test(start_paused = true)]
async fn s14_s18_terminated_queued_across_a_restart_comes_once(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let target = system
        .spawn(Behaviors::ignore::<u64>(), "dependency")
        .unwrap();
    let gate = Arc::new(Semaphore::new(0));
    let in_gate = gate.clone();
    let report = probe.actor_ref().clone();
    let watched = target.clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                ctx.watch(&watched);
                report.tell("setup".to_owned());
                let (gate, signal_report) = (in_gate.clone(), report.clone());
                Behaviors::receive_message_async(async move |_: Dependent| {
                    gate.acquire().await.unwrap().forget();
                    Err::<(), _>(Boom)
                })
                .on_signal(move |_, signal| {
                    if let Signal::Terminated(end) = signal {
                        signal_report.tell(format!("terminated {}", end.actor().path().name()));
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "dependent",
        )
        .unwrap();
    assert_eq!(probe.expect_message(T).await, "setup");
    actor.tell(Dependent::FailLater);
    tokio::time::sleep(Duration::from_millis(10)).await;
    ends.watch(&target);
    system.stop(&target).unwrap();
    ends.expect_terminated(&target, T).await;
    gate.add_permits(1);
    assert_eq!(probe.expect_message(T).await, "setup");
    assert_eq!(probe.expect_message(T).await, "terminated dependency");
    probe.expect_no_message(Duration::from_millis(200)).await;
}
