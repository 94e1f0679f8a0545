//! Restarts: backoff and the restart window (S12), absent-not-dead during a backoff
//! (S13), what a restart keeps (S14), and `PreRestart` and `PostStop` (S15).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::ms;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tapio::Restart;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::time::Instant;

const SECOND: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
#[error("refused")]
pub struct Refused;

/// What one incarnation of a flaky actor reports.
#[message]
#[derive(Debug, PartialEq)]
pub enum Report {
    Started { incarnation: u32, at: Instant },
    Failed { at: Instant },
    Sum(u64),
}

/// An actor that fails on `0` and sums everything else, reporting each start.
fn flaky(to: ActorRef<Report>, strategy: Restart) -> Behavior<u64> {
    let incarnations = Arc::new(AtomicU32::new(0));
    Behaviors::supervise(Behaviors::setup(move |_| {
        let incarnation = incarnations.fetch_add(1, Ordering::SeqCst) + 1;
        to.tell(Report::Started {
            incarnation,
            at: Instant::now(),
        });
        let to = to.clone();
        let sum = Arc::new(AtomicU32::new(0));
        Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                to.tell(Report::Failed { at: Instant::now() });
                return Err(Refused);
            }
            if n == u64::MAX {
                to.tell(Report::Sum(u64::from(sum.load(Ordering::SeqCst))));
            } else {
                sum.fetch_add(n as u32, Ordering::SeqCst);
            }
            Ok(())
        })
    }))
    .on_failure::<Refused>(strategy)
    .into()
}

async fn started(probe: &mut TestProbe<Report>) -> (u32, Instant) {
    match probe.expect_message(Duration::from_secs(60)).await {
        Report::Started { incarnation, at } => (incarnation, at),
        other => panic!("expected a start, got {other:?}"),
    }
}

async fn failed(probe: &mut TestProbe<Report>) -> Instant {
    match probe.expect_message(Duration::from_secs(60)).await {
        Report::Failed { at } => at,
        other => panic!("expected a failure, got {other:?}"),
    }
}

// S12: each restart in a window waits `min * 2^n`, capped at `max` (no jitter here,
// so the delays are exact on the paused clock).
#[tapio::test(start_paused = true)]
async fn backoff_delays_grow_and_respect_max(system: ActorSystem) {
    let mut probe = TestProbe::<Report>::new(&system);
    let strategy = SupervisorStrategy::restart()
        .with_limit(10, Duration::from_secs(60))
        .unwrap()
        .with_backoff(Backoff::new(ms(100), ms(500), 0.0).unwrap());
    let actor = system
        .spawn(flaky(probe.actor_ref().clone(), strategy), "flaky")
        .unwrap();
    started(&mut probe).await;
    let mut delays = Vec::new();
    for _ in 0..5 {
        actor.tell(0_u64);
        let failed_at = failed(&mut probe).await;
        let (_, started_at) = started(&mut probe).await;
        delays.push(started_at - failed_at);
    }
    assert_eq!(delays, [ms(100), ms(200), ms(400), ms(500), ms(500)]);
}

// S12: with jitter, every delay stays within [base, base * (1 + random_factor)],
// where base is `min * 2^n` capped at `max`.
#[tapio::test(start_paused = true)]
async fn jittered_delays_stay_within_bounds(system: ActorSystem) {
    let mut probe = TestProbe::<Report>::new(&system);
    let strategy = SupervisorStrategy::restart()
        .with_limit(10, Duration::from_secs(60))
        .unwrap()
        .with_backoff(Backoff::new(ms(100), ms(300), 1.0).unwrap());
    let actor = system
        .spawn(flaky(probe.actor_ref().clone(), strategy), "flaky")
        .unwrap();
    started(&mut probe).await;
    let bases = [ms(100), ms(200), ms(300), ms(300)];
    for base in bases {
        actor.tell(0_u64);
        let failed_at = failed(&mut probe).await;
        let (_, started_at) = started(&mut probe).await;
        let delay = started_at - failed_at;
        assert!(
            delay >= base && delay <= base * 2,
            "{delay:?} outside [{base:?}, {:?}]",
            base * 2
        );
    }
}

// S12: the random factor stretches the delay after the cap, so actors that keep
// failing together at the plateau still restart apart, each within
// [max, max * (1 + random_factor)]. The delays are long so that two draws landing on
// the same millisecond of the timer (a false failure) is a one-in-a-million chance.
#[tapio::test(start_paused = true)]
async fn s12_actors_failing_together_at_the_plateau_restart_apart(system: ActorSystem) {
    let hour = Duration::from_secs(3600);
    let (min, max) = (Duration::from_secs(250), Duration::from_secs(1000));
    let strategy = SupervisorStrategy::restart()
        .with_limit(10, hour)
        .unwrap()
        .with_backoff(Backoff::new(min, max, 1.0).unwrap());
    let mut probes = [
        TestProbe::<Report>::new(&system).with_max_wait(hour),
        TestProbe::<Report>::new(&system).with_max_wait(hour),
    ];
    let actors: Vec<ActorRef<u64>> = probes
        .iter()
        .zip(["first", "second"])
        .map(|(probe, name)| {
            let to = probe.actor_ref().clone();
            system.spawn(flaky(to, strategy.clone()), name).unwrap()
        })
        .collect();
    for probe in &mut probes {
        started(probe).await;
    }
    // The bases of four rounds in a row: 250 s, 500 s, then the cap twice.
    for base in [min, min * 2, max, max] {
        for actor in &actors {
            actor.tell(0_u64);
        }
        let mut restarts = Vec::new();
        for probe in &mut probes {
            let failed_at = failed(probe).await;
            let restarted_at = match probe.expect_message(hour).await {
                Report::Started { at, .. } => at,
                other => panic!("expected a restart, got {other:?}"),
            };
            let delay = restarted_at - failed_at;
            assert!(
                delay >= base && delay < base * 2,
                "{delay:?} outside [{base:?}, {:?})",
                base * 2
            );
            restarts.push((failed_at, restarted_at));
        }
        assert_eq!(
            restarts[0].0, restarts[1].0,
            "both failed at the same instant"
        );
        if base == max {
            assert_ne!(
                restarts[0].1, restarts[1].1,
                "at the plateau both restarted at the same instant"
            );
        }
    }
}

// S12: a restart storm stays within `max_restarts` per window; the failure after that
// stops the actor. Once the window has passed, restarts are allowed again.
#[tapio::test(start_paused = true)]
async fn a_restart_storm_stays_within_the_limit(system: ActorSystem) {
    let mut probe = TestProbe::<Report>::new(&system);
    let strategy = SupervisorStrategy::restart().with_limit(3, SECOND).unwrap();
    let actor = system
        .spawn(flaky(probe.actor_ref().clone(), strategy), "storm")
        .unwrap();
    probe.watch(&actor);
    assert_eq!(started(&mut probe).await.0, 1);
    // Two failures, two restarts; then the window passes.
    for incarnation in 2..=3 {
        actor.tell(0_u64);
        failed(&mut probe).await;
        assert_eq!(started(&mut probe).await.0, incarnation);
    }
    // Move the paused clock past the window.
    tokio::time::advance(ms(1100)).await;
    // A fresh window: three more restarts are allowed...
    for incarnation in 4..=6 {
        actor.tell(0_u64);
        failed(&mut probe).await;
        assert_eq!(started(&mut probe).await.0, incarnation);
    }
    // ...and the fourth failure in it stops the actor, with no further start.
    for _ in 0..10 {
        actor.tell(0_u64);
    }
    failed(&mut probe).await;
    probe.expect_terminated(&actor, SECOND).await;
    probe.expect_no_message(SECOND).await;
}

// S13: while an actor backs off it is absent, not dead: tells succeed, the mailbox
// keeps filling, and the next incarnation handles all of it. A thousand messages sent
// into the backoff window are all handled after it.
#[tapio::test(start_paused = true)]
async fn messages_sent_during_a_backoff_are_all_handled_after_it(system: ActorSystem) {
    let mut probe = TestProbe::<Report>::new(&system);
    let strategy =
        SupervisorStrategy::restart().with_backoff(Backoff::new(SECOND, SECOND, 0.0).unwrap());
    let actor = system
        .spawn(flaky(probe.actor_ref().clone(), strategy), "absent")
        .unwrap();
    started(&mut probe).await;
    actor.tell(0_u64);
    let failed_at = failed(&mut probe).await;
    for _ in 0..1000 {
        actor.tell(1_u64);
    }
    actor.tell(u64::MAX);
    let (incarnation, started_at) = started(&mut probe).await;
    assert_eq!((incarnation, started_at - failed_at), (2, SECOND));
    assert_eq!(probe.expect_message(SECOND).await, Report::Sum(1000));
}

#[message]
pub enum Family {
    SpawnTemp,
    Fail,
    Describe(ActorRef<String>),
}

// S14: a restart keeps the ref, the path and the uid; watchers hear nothing; children
// spawned in setup come back (as new incarnations), children spawned in a handler do
// not. S15: `PreRestart` reaches the failing incarnation before the new one starts.
#[tapio::test(start_paused = true)]
async fn a_restart_keeps_identity_and_rebuilds_setup_children(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let mut watcher = TestProbe::<String>::new(&system);
    let to = log.actor_ref().clone();
    let behavior = Behaviors::supervise(Behaviors::setup(move |ctx| {
        let kept: ActorRef<u64> = ctx.spawn(Behaviors::ignore(), "kept").unwrap();
        to.tell(format!("setup, kept#{}", kept.uid()));
        let to = to.clone();
        Behaviors::receive(move |ctx, message: Family| {
            match message {
                Family::SpawnTemp => {
                    ctx.spawn(Behaviors::ignore::<u64>(), "temp").unwrap();
                }
                Family::Fail => return Err(tapio::Failure::new(Refused)),
                Family::Describe(reply) => {
                    let children: Vec<_> = ctx
                        .children()
                        .iter()
                        .map(|c| c.path().name().to_owned())
                        .collect();
                    reply.tell(format!("{} {} {:?}", ctx.self_ref(), ctx.path(), children));
                }
            }
            Ok(Behaviors::same())
        })
        .on_signal({
            let to = to.clone();
            move |_, signal| to.tell(format!("{signal:?}"))
        })
    }))
    .on_failure::<Refused>(SupervisorStrategy::restart());
    let actor = system.spawn(behavior, "family").unwrap();
    watcher.watch(&actor);
    let first_setup = log.expect_message(SECOND).await;
    actor.tell(Family::SpawnTemp);
    actor.tell(Family::Describe(log.actor_ref().clone()));
    let before = log.expect_message(SECOND).await;
    assert!(
        before.ends_with(r#"/user/family ["kept", "temp"]"#),
        "{before}"
    );

    actor.tell(Family::Fail);
    assert_eq!(log.expect_message(SECOND).await, "PreRestart");
    let second_setup = log.expect_message(SECOND).await;
    assert_ne!(
        first_setup, second_setup,
        "the setup child is a new incarnation"
    );
    actor.tell(Family::Describe(log.actor_ref().clone()));
    let after = log.expect_message(SECOND).await;
    let same_ref = format!("{actor} /user/family");
    assert!(after.starts_with(&same_ref), "{after} is not {same_ref}");
    assert!(
        after.ends_with(r#"["kept"]"#),
        "the handler's child came back: {after}"
    );
    // The watcher heard nothing of the restart, and hears the final stop once.
    watcher.expect_no_termination(SECOND).await;
    system.terminate().await;
    watcher.expect_terminated(&actor, SECOND).await;
}

// A setup that panics during a restart is a failure of that incarnation, under the
// same strategy: the limit and the backoff hold, so it is never a tight loop.
#[tapio::test(start_paused = true)]
async fn a_setup_failing_on_restart_counts_against_the_same_strategy(system: ActorSystem) {
    let mut probe = TestProbe::<u32>::new(&system);
    let attempts = Arc::new(AtomicU32::new(0));
    let (counter, to) = (attempts.clone(), probe.actor_ref().clone());
    let behavior = Behaviors::supervise(Behaviors::setup(move |_| {
        let attempt = counter.fetch_add(1, Ordering::SeqCst) + 1;
        to.tell(attempt);
        if attempt > 1 {
            panic!("setup {attempt} cannot start");
        }
        Behaviors::receive_message(|_: u64| Err::<(), _>(Refused))
    }))
    // Only `Refused` has a clause: the panics of the restarted setups are decided by
    // it all the same, because it ordered those restarts.
    .on_failure::<Refused>(
        SupervisorStrategy::restart()
            .with_limit(3, Duration::from_secs(60))
            .unwrap()
            .with_backoff(Backoff::new(ms(100), SECOND, 0.0).unwrap()),
    );
    let actor = system.spawn(behavior, "phoenix").unwrap();
    probe.watch(&actor);
    assert_eq!(probe.expect_message(SECOND).await, 1);
    let started = Instant::now();
    actor.tell(1_u64);
    let attempts_seen = probe.receive_messages(3, Duration::from_secs(10)).await;
    assert_eq!(attempts_seen, [2, 3, 4]);
    probe
        .expect_terminated(&actor, Duration::from_secs(10))
        .await;
    // Backoffs of 100, 200 and 400 ms were waited, and the third restart used up the
    // limit: the panicking setups did not spin.
    assert_eq!(started.elapsed(), ms(700));
    assert_eq!(attempts.load(Ordering::SeqCst), 4);
}

// S12: each clause counts its own restarts in its own window: a clause with a short
// window restarting in between does not reset the count of one with a long window.
#[tapio::test(start_paused = true)]
async fn each_clause_keeps_its_own_restart_limit(system: ActorSystem) {
    let mut probe = TestProbe::<&'static str>::new(&system);
    let to = probe.actor_ref().clone();
    let behavior = Behaviors::supervise(Behaviors::setup(move |_| {
        to.tell("started");
        Behaviors::receive_message(|n: u64| {
            if n == 0 {
                Err::<(), _>(Refused)
            } else {
                panic!("odd input {n}")
            }
        })
    }))
    .on_failure::<Refused>(
        SupervisorStrategy::restart()
            .with_limit(2, Duration::from_secs(60))
            .unwrap(),
    )
    .on_failure::<Panicked>(SupervisorStrategy::restart().with_limit(5, SECOND).unwrap());
    let actor = system.spawn(behavior, "two-clocks").unwrap();
    probe.watch(&actor);
    assert_eq!(probe.expect_message(SECOND).await, "started");
    for input in [0_u64, 0, 1] {
        tokio::time::advance(Duration::from_secs(2)).await;
        actor.tell(input);
        assert_eq!(probe.expect_message(SECOND).await, "started");
    }
    // A third `Refused` within its minute: that clause's limit of two is used up,
    // although the panic clause restarted (and forgot its own, older restarts) since.
    tokio::time::advance(Duration::from_secs(2)).await;
    actor.tell(0_u64);
    probe.expect_terminated(&actor, SECOND).await;
}

// A failure while the system terminates restarts nothing and does not hold the
// shutdown: an actor backing off when `terminate()` comes stops at once.
#[tokio::test(start_paused = true)]
async fn termination_does_not_wait_for_a_backoff() {
    let system = ActorSystem::builder("hurry")
        .shutdown_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let observer = ActorSystem::new("observer").unwrap();
    let mut probe = TestProbe::<Report>::new(&observer);
    let strategy = SupervisorStrategy::restart().with_backoff(
        Backoff::new(Duration::from_secs(3600), Duration::from_secs(3600), 0.0).unwrap(),
    );
    let actor = system
        .spawn(flaky(probe.actor_ref().clone(), strategy), "slow")
        .unwrap();
    started(&mut probe).await;
    actor.tell(0_u64);
    failed(&mut probe).await;
    let began = Instant::now();
    system.terminate().await;
    assert!(began.elapsed() < SECOND, "waited {:?}", began.elapsed());
    probe.expect_no_message(SECOND).await;
    observer.terminate().await;
}

// S12: the backoff grows with restarts in a row even when each delay is longer than
// the restart window (so each restart is alone in its window).
#[tapio::test(start_paused = true)]
async fn backoff_grows_even_past_the_window(system: ActorSystem) {
    let mut probe = TestProbe::<Report>::new(&system);
    let strategy = SupervisorStrategy::restart()
        .with_limit(2, ms(100))
        .unwrap()
        .with_backoff(Backoff::new(ms(200), SECOND, 0.0).unwrap());
    let actor = system
        .spawn(flaky(probe.actor_ref().clone(), strategy), "slow-window")
        .unwrap();
    started(&mut probe).await;
    let mut delays = Vec::new();
    for _ in 0..4 {
        actor.tell(0_u64);
        let failed_at = failed(&mut probe).await;
        let (_, started_at) = started(&mut probe).await;
        delays.push(started_at - failed_at);
    }
    assert_eq!(delays, [ms(200), ms(400), ms(800), SECOND]);
}

#[message]
pub struct Late;

/// Fails once its gate opens; logs its restarts and its stop.
#[derive(Clone)]
struct LateFailer {
    log: ActorRef<&'static str>,
}

#[actor]
impl LateFailer {
    fn late(&mut self, _: Late) -> Result<(), Refused> {
        self.log.tell("entered");
        Err(Refused)
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        match signal {
            Signal::PreRestart => self.log.tell("restarting"),
            Signal::PostStop => self.log.tell("stopped"),
            _ => {}
        }
    }
}

/// Does nothing; says when it has stopped.
fn canary(log: ActorRef<&'static str>) -> Behavior<u64> {
    Behaviors::receive_message(|_: u64| ())
        .on_signal(move |_, signal| {
            if *signal == Signal::PostStop {
                log.tell("canary stopped");
            }
        })
        .into()
}

// Bad input: a failure that happens while the system terminates restarts nothing and
// does not hold the termination: here the handler fails on a message it takes after
// `terminate()` has begun (before the stop reaches it), under a restart strategy
// with an hour's backoff, and termination ends as soon as the actor has stopped, far
// inside its 30 s deadline.
#[tokio::test(start_paused = true)]
async fn a_failure_during_termination_does_not_hold_it() {
    let system = ActorSystem::builder("failing_late")
        .shutdown_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let observer = ActorSystem::new("observer").unwrap();
    let mut log = TestProbe::<&'static str>::new(&observer);
    let hour = Duration::from_secs(3600);
    let strategy =
        SupervisorStrategy::restart().with_backoff(Backoff::new(hour, hour, 0.0).unwrap());
    let failer = system
        .spawn(
            Behaviors::supervise(LateFailer {
                log: log.actor_ref().clone(),
            })
            .on_failure::<Refused>(strategy),
            "failer",
        )
        .unwrap();
    system
        .spawn(canary(log.actor_ref().clone()), "canary")
        .unwrap();
    failer.tell(Late);
    let began = Instant::now();
    let terminated = system.terminate();
    assert!(system.is_terminating());
    terminated.await;
    let took = began.elapsed();
    assert!(took < SECOND, "termination took {took:?}");
    let mut seen = log.receive_messages(3, SECOND).await;
    seen.sort();
    assert_eq!(seen, ["canary stopped", "entered", "stopped"]);
    log.expect_no_message(SECOND).await;
    observer.terminate().await;
}

// A `PostStop` handler that panics during termination is logged and ignored: the
// actor still counts as stopped, its parent still sees its own `PostStop` after it,
// and termination ends inside its deadline.
#[tokio::test(start_paused = true)]
async fn a_panicking_post_stop_does_not_hold_termination() {
    let system = ActorSystem::builder("panicky_end")
        .shutdown_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let observer = ActorSystem::new("observer").unwrap();
    let mut log = TestProbe::<&'static str>::new(&observer);
    let (to_child, to_parent) = (log.actor_ref().clone(), log.actor_ref().clone());
    system
        .spawn(
            Behaviors::setup(move |ctx| {
                let to_child = to_child.clone();
                let child = Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                    if *signal == Signal::PostStop {
                        to_child.tell("child panics");
                        panic!("PostStop cannot close what it holds");
                    }
                });
                ctx.spawn(child, "child")?;
                let to_parent = to_parent.clone();
                Ok::<_, tapio::SpawnError>(Behaviors::receive_message(|_: u64| ()).on_signal(
                    move |_, signal| {
                        if *signal == Signal::PostStop {
                            to_parent.tell("parent stopped");
                        }
                    },
                ))
            }),
            "parent",
        )
        .unwrap();
    let began = Instant::now();
    system.terminate().await;
    assert!(
        began.elapsed() < SECOND,
        "termination took {:?}",
        began.elapsed()
    );
    assert_eq!(
        log.receive_messages(2, SECOND).await,
        ["child panics", "parent stopped"]
    );
    assert_eq!(system.live_actors(), 0);
    observer.terminate().await;
}

// S14: the system lane survives a restart too: a watch that arrives while the actor
// backs off is kept, and honoured when the next incarnation later stops.
#[tapio::test(start_paused = true)]
async fn a_watch_sent_during_a_backoff_is_kept(system: ActorSystem) {
    let mut probe = TestProbe::<Report>::new(&system);
    let strategy =
        SupervisorStrategy::restart().with_backoff(Backoff::new(SECOND, SECOND, 0.0).unwrap());
    let actor = system
        .spawn(flaky(probe.actor_ref().clone(), strategy), "watched-late")
        .unwrap();
    started(&mut probe).await;
    actor.tell(0_u64);
    let failed_at = failed(&mut probe).await;
    // Backing off now: the watch queues on the system lane.
    let mut watcher = TestProbe::<u64>::new(&system);
    watcher.watch(&actor);
    let (incarnation, started_at) = started(&mut probe).await;
    assert_eq!((incarnation, started_at - failed_at), (2, SECOND));
    watcher.expect_no_termination(SECOND).await;
    system.terminate().await;
    watcher.expect_terminated(&actor, SECOND).await;
}

/// A state of a machine whose every state is supervised anew: each message switches
/// to `supervise(state)` again, and `0` fails.
fn resupervised(to: ActorRef<&'static str>) -> Behavior<u64> {
    Behaviors::supervise(Behaviors::setup(move |_| {
        to.tell("started");
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                return Err(Refused);
            }
            Ok(resupervised(to.clone()))
        })
    }))
    .on_failure::<Refused>(
        SupervisorStrategy::restart()
            .with_limit(2, Duration::from_secs(60))
            .unwrap(),
    )
    .into()
}

// S12: a state machine whose states each return `supervise(next)` still has a restart
// limit: a switch to a state supervised the same way takes over the restart count,
// so switching and restarting in turn neither resets it nor piles up supervisors.
#[tapio::test(start_paused = true)]
async fn switching_to_the_same_supervision_keeps_the_restart_count(system: ActorSystem) {
    let mut probe = TestProbe::<&'static str>::new(&system);
    let actor = system
        .spawn(resupervised(probe.actor_ref().clone()), "machine")
        .unwrap();
    probe.watch(&actor);
    assert_eq!(probe.expect_message(SECOND).await, "started");
    for _ in 0..2 {
        actor.tell(1_u64); // a switch: one more `supervise` in the chain
        assert_eq!(probe.expect_message(SECOND).await, "started");
        actor.tell(0_u64); // a restart, counted
        assert_eq!(probe.expect_message(SECOND).await, "started");
    }
    actor.tell(1_u64);
    assert_eq!(probe.expect_message(SECOND).await, "started");
    actor.tell(0_u64); // the third restart within the minute: the limit is two
    probe.expect_terminated(&actor, SECOND).await;
}
