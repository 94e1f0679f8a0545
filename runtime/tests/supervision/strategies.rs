//! Supervision strategies: a failure never reaches the sender (S9), clauses match by
//! error type and stack (S10), and resume, restart, stop, escalate (S11).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::InvalidStrategy;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

const SECOND: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("transient: {0}")]
pub struct Transient(pub u32);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fatal")]
pub struct Fatal;

#[message]
pub enum Op {
    /// Add to the total.
    Add(u32),
    /// Fail with `Transient`.
    Flaky(u32),
    /// Fail with `Fatal`.
    Break,
    /// Panic.
    Panic,
    /// Report the total.
    Total(ActorRef<u32>),
}

/// Keeps a total in its fields; each incarnation says it started.
#[derive(Clone)]
struct Adder {
    total: u32,
    log: ActorRef<String>,
}

#[actor]
impl Adder {
    fn op(&mut self, op: Op) -> Result<(), tapio::Failure> {
        match op {
            Op::Add(n) => self.total += n,
            Op::Flaky(n) => return Err(tapio::Failure::new(Transient(n))),
            Op::Break => return Err(tapio::Failure::new(Fatal)),
            Op::Panic => panic!("adder panicked"),
            Op::Total(to) => to.tell(self.total),
        }
        Ok(())
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        self.log.tell(format!("{signal:?}"));
    }
}

fn adder(log: &TestProbe<String>) -> Behavior<AdderMsg> {
    let log = log.actor_ref().clone();
    Behaviors::setup(move |_| {
        log.tell("started".into());
        Adder {
            total: 0,
            log: log.clone(),
        }
    })
}

async fn total(of: &ActorRef<AdderMsg>, probe: &mut TestProbe<u32>) -> u32 {
    of.tell(Op::Total(probe.actor_ref().clone()));
    probe.expect_message(SECOND).await
}

// S9: a failure never raises into the sender. Here the sender is an actor that
// forwards a panicking and an erroring message to an unsupervised target (which the
// first failure stops): the sender fails with nothing, stops with nothing, and goes
// on handling its own messages.
#[tapio::test(start_paused = true)]
async fn a_failure_never_reaches_the_sender(system: ActorSystem) {
    let (mut log, mut watcher) = (TestProbe::new(&system), TestProbe::<u32>::new(&system));
    let target = system.spawn(adder(&log), "target").unwrap();
    assert_eq!(log.expect_message(SECOND).await, "started");
    let to = log.actor_ref().clone();
    let failing = target.clone();
    let sender = system
        .spawn(
            Behaviors::receive_message(move |op: Op| {
                let note = match &op {
                    Op::Panic => "sent a panic",
                    Op::Break => "sent a break",
                    _ => "sent",
                };
                failing.tell(op);
                to.tell(note.to_owned());
            }),
            "sender",
        )
        .unwrap();
    watcher.watch(&target);
    watcher.watch(&sender);
    sender.tell(Op::Panic);
    sender.tell(Op::Break);
    sender.tell(Op::Add(1));
    assert_eq!(
        log.receive_messages(3, SECOND).await,
        ["sent a panic", "sent a break", "sent"]
    );
    watcher.expect_terminated(&target, SECOND).await;
    watcher.expect_no_termination(SECOND).await;
}

// S9, S11: resume keeps the state and drops only the failing message; the sender of
// the failing message saw nothing (its `tell` returned `()`).
#[tapio::test(start_paused = true)]
async fn resume_keeps_the_state(system: ActorSystem) {
    let (mut log, mut totals) = (TestProbe::new(&system), TestProbe::new(&system));
    let actor = system
        .spawn(
            Behaviors::supervise(adder(&log)).on_failure::<Transient>(SupervisorStrategy::resume()),
            "adder",
        )
        .unwrap();
    assert_eq!(log.expect_message(SECOND).await, "started");
    actor.tell(Op::Add(2));
    actor.tell(Op::Flaky(1));
    actor.tell(Op::Add(3));
    assert_eq!(total(&actor, &mut totals).await, 5);
    log.expect_no_message(Duration::from_millis(100)).await;
}

// S11: restart builds fresh state from the supervised behavior; `PreRestart` first.
#[tapio::test(start_paused = true)]
async fn restart_starts_from_fresh_state(system: ActorSystem) {
    let (mut log, mut totals) = (TestProbe::new(&system), TestProbe::new(&system));
    let actor = system
        .spawn(
            Behaviors::supervise(adder(&log))
                .on_failure::<Transient>(SupervisorStrategy::restart()),
            "adder",
        )
        .unwrap();
    actor.tell(Op::Add(2));
    actor.tell(Op::Flaky(1));
    actor.tell(Op::Add(3));
    assert_eq!(total(&actor, &mut totals).await, 3);
    let lines = log.receive_messages(3, SECOND).await;
    assert_eq!(lines, ["started", "PreRestart", "started"]);
}

// S10: a clause applies only to its error type; other failures fall through to the
// default, stop. `PostStop` comes last.
#[tapio::test(start_paused = true)]
async fn other_error_types_fall_through_to_stop(system: ActorSystem) {
    let mut log = TestProbe::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(adder(&log)).on_failure::<Transient>(SupervisorStrategy::resume()),
            "adder",
        )
        .unwrap();
    log.watch(&actor);
    actor.tell(Op::Break);
    assert_eq!(
        log.receive_messages(2, SECOND).await,
        ["started", "PostStop"]
    );
    log.expect_terminated(&actor, SECOND).await;
}

// S10: clauses stack, and the first whose type matches decides; panics are matched
// as `Panicked`, and `on_any_failure` catches the rest.
#[tapio::test(start_paused = true)]
async fn stacked_clauses_are_tried_in_order(system: ActorSystem) {
    let (mut log, mut totals) = (TestProbe::new(&system), TestProbe::new(&system));
    let actor = system
        .spawn(
            Behaviors::supervise(adder(&log))
                .on_failure::<Transient>(SupervisorStrategy::resume())
                .on_failure::<Panicked>(SupervisorStrategy::restart())
                .on_failure::<Transient>(SupervisorStrategy::stop())
                .on_any_failure(SupervisorStrategy::resume()),
            "adder",
        )
        .unwrap();
    assert_eq!(log.expect_message(SECOND).await, "started");
    actor.tell(Op::Add(1));
    actor.tell(Op::Flaky(0)); // the first clause: resume, not the third's stop
    actor.tell(Op::Break); // no typed clause: `on_any_failure`, resume
    assert_eq!(total(&actor, &mut totals).await, 1);
    actor.tell(Op::Panic); // `Panicked`: restart
    assert_eq!(total(&actor, &mut totals).await, 0);
    assert_eq!(
        log.receive_messages(2, SECOND).await,
        ["PreRestart", "started"]
    );
}

// S11: stop, asked for explicitly.
#[tapio::test(start_paused = true)]
async fn stop_stops(system: ActorSystem) {
    let mut log = TestProbe::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(adder(&log)).on_failure::<Transient>(SupervisorStrategy::stop()),
            "adder",
        )
        .unwrap();
    log.watch(&actor);
    actor.tell(Op::Flaky(1));
    log.expect_terminated(&actor, SECOND).await;
}

// The macro style: every actor has `supervise()`; a restart clones the value spawned.
#[tapio::test(start_paused = true)]
async fn struct_actors_are_supervised_with_a_method(system: ActorSystem) {
    let (mut log, mut totals) = (TestProbe::new(&system), TestProbe::new(&system));
    let value = Adder {
        total: 10,
        log: log.actor_ref().clone(),
    };
    let actor = system
        .spawn(
            value
                .supervise()
                .on_failure::<Fatal>(SupervisorStrategy::restart()),
            "adder",
        )
        .unwrap();
    actor.tell(Op::Add(5));
    assert_eq!(total(&actor, &mut totals).await, 15);
    actor.tell(Op::Break);
    assert_eq!(total(&actor, &mut totals).await, 10);
    assert_eq!(log.expect_message(SECOND).await, "PreRestart");
}

// S9: the failure carries the error value and its type, for the supervisor to match
// and for whoever reads it later (here, the system it terminated).
#[tokio::test(start_paused = true)]
async fn a_failure_carries_its_error_and_type() {
    let system = ActorSystem::new("carrier").unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::receive_message(|n: u32| {
                Err::<(), _>(Transient(n))
            }))
            .on_failure::<Transient>(SupervisorStrategy::escalate()),
            "carrier",
        )
        .unwrap();
    actor.tell(42_u32);
    let failure = tokio::time::timeout(SECOND, system.when_terminated())
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(failure.downcast_ref::<Transient>(), Some(&Transient(42)));
    assert!(failure.error_type().ends_with("Transient"));
    assert_eq!(failure.to_string(), "transient: 42");
}

// Bad input: strategies that cannot work are refused when they are built.
#[test]
fn impossible_strategies_are_refused_at_construction() {
    let ms = Duration::from_millis;
    let zero = SupervisorStrategy::restart()
        .with_limit(0, SECOND)
        .err()
        .unwrap();
    assert!(zero.to_string().contains("use SupervisorStrategy::stop()"));
    assert!(
        SupervisorStrategy::restart()
            .with_limit(3, Duration::ZERO)
            .is_err()
    );
    assert_eq!(
        Backoff::new(ms(200), ms(100), 0.1),
        Err(InvalidStrategy::MinAboveMax {
            min: ms(200),
            max: ms(100)
        })
    );
    assert!(Backoff::new(Duration::ZERO, ms(100), 0.1).is_err());
    assert!(Backoff::new(ms(10), ms(100), 1.01).is_err());
    assert!(Backoff::new(ms(10), ms(100), -0.5).is_err());
    assert!(Backoff::new(ms(10), ms(100), f64::NAN).is_err());
    assert!(Backoff::new(ms(10), ms(100), 0.0).is_ok());
}

// A setup that fails, under a strategy that resumes: there is no state to resume
// with, so the actor stops instead of lingering with no incarnation.
#[tapio::test(start_paused = true)]
async fn resuming_a_failed_start_stops_the_actor(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let failing: Behavior<u64> = Behaviors::setup(|_| Err::<Behavior<u64>, _>(Fatal));
    let actor = system
        .spawn(
            Behaviors::supervise(failing).on_any_failure(SupervisorStrategy::resume()),
            "unstartable",
        )
        .unwrap();
    probe.watch(&actor);
    probe.expect_terminated(&actor, SECOND).await;
}

// By default a restart stops the children, so children spawned by a setup *outside*
// `supervise` (which a restart does not run again) are gone; a strategy that keeps
// them leaves them running.
#[tapio::test(start_paused = true)]
async fn a_restart_can_keep_the_children_of_an_outer_setup(system: ActorSystem) {
    for keep in [true, false] {
        let mut probe = TestProbe::<u64>::new(&system);
        let answer = probe.actor_ref().clone();
        let strategy = SupervisorStrategy::restart().with_stop_children(!keep);
        let parent = system
            .spawn_anonymous(Behaviors::setup(move |ctx| {
                let echo = answer.clone();
                let child: ActorRef<u64> = ctx
                    .spawn(
                        Behaviors::receive_message(move |n: u64| echo.tell(n)),
                        "child",
                    )
                    .unwrap();
                Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
                    if n == 0 {
                        return Err(Fatal);
                    }
                    child.tell(n);
                    Ok(())
                }))
                .on_failure::<Fatal>(strategy.clone())
            }))
            .unwrap();
        parent.tell(1_u64);
        assert_eq!(probe.expect_message(SECOND).await, 1);
        parent.tell(0_u64); // restart
        parent.tell(2_u64);
        if keep {
            assert_eq!(probe.expect_message(SECOND).await, 2);
        } else {
            probe.expect_no_message(SECOND).await;
        }
    }
}
