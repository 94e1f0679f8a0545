//! Outside-in scenarios for the local promises (S1-S20, S24-S34), written from
//! `SEMANTICS.md` and the public docs, the way a new user would read them: edge cases
//! and combinations (restart with a full mailbox, watch after stop, replay with a
//! stop, a routee leaving mid-rotation, timers under a stall, ...).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{
    AskError, DeadLetter, DeadLetterReason, InvalidNameReason, MailboxConfig, MailboxOverflow,
    OverflowStrategy, SpawnError, StashOverflow,
};
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout};

const T: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("boom: a test failure")]
struct Boom;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bang: another test failure")]
struct Bang;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("crash: a third test failure")]
struct Crash;

/// A shared, ordered log for what must be checked after the system has stopped
/// (probes live under `/system`, which stops after `/user`).
type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// The next dead letter meant for `recipient`, skipping others.
async fn dead_letter_for(
    letters: &mut tapio::Subscription<DeadLetter>,
    recipient: &tapio::ActorPath,
) -> DeadLetter {
    loop {
        let letter = timeout(T, letters.recv())
            .await
            .expect("a dead letter in time")
            .expect("the event stream is open");
        if letter.recipient() == recipient {
            return letter;
        }
    }
}

/// A sink that reports each number; on `block_on` it waits for a permit of `gate`
/// first (after reporting `0` to say it has started).
fn gated_sink(report: ActorRef<u64>, gate: Arc<Semaphore>, block_on: u64) -> Behavior<u64> {
    Behaviors::receive_message_async(async move |n: u64| {
        if n == block_on {
            report.tell(0);
            gate.acquire().await.unwrap().forget();
        }
        report.tell(n);
    })
    .into()
}

/// Spawns a `gated_sink` reporting to `probe`, named `name`, with a bounded mailbox.
fn spawn_gated(
    system: &ActorSystem,
    probe: &TestProbe<u64>,
    gate: &Arc<Semaphore>,
    block_on: u64,
    name: &str,
    mailbox: (usize, OverflowStrategy),
) -> ActorRef<u64> {
    system
        .spawn_with(
            gated_sink(probe.actor_ref().clone(), gate.clone(), block_on),
            name,
            MailboxConfig::bounded(mailbox.0, mailbox.1).unwrap(),
        )
        .unwrap()
}

/// A probe, a closed gate, and a `gated_sink` blocking on `1` that reports to them.
fn gated_setup(
    system: &ActorSystem,
    name: &str,
    mailbox: (usize, OverflowStrategy),
) -> (TestProbe<u64>, Arc<Semaphore>, ActorRef<u64>) {
    let probe = TestProbe::<u64>::new(system);
    let gate = Arc::new(Semaphore::new(0));
    let sink = spawn_gated(system, &probe, &gate, 1, name, mailbox);
    (probe, gate, sink)
}

/// The next dead letter meant for `recipient`, checked to have the `reason` given.
async fn letter_with(
    letters: &mut tapio::Subscription<DeadLetter>,
    recipient: &tapio::ActorPath,
    reason: DeadLetterReason,
) -> DeadLetter {
    let letter = dead_letter_for(letters, recipient).await;
    assert_eq!(letter.reason(), &reason, "{letter}");
    letter
}

/// Waits for a dead letter to `recipient` with `reason`, and checks it carries `message`.
async fn expect_dead_letter<M: Message + PartialEq + std::fmt::Debug>(
    letters: &mut tapio::Subscription<DeadLetter>,
    recipient: &tapio::ActorPath,
    reason: DeadLetterReason,
    message: M,
) {
    let letter = letter_with(letters, recipient, reason).await;
    assert_eq!(letter.take_message::<M>(), Some(message));
}

/// A supervised behavior that fails with `error` on every number and escalates it.
fn escalating<E: std::error::Error + Clone + Send + Sync + 'static>(error: E) -> Behavior<u64> {
    Behaviors::supervise(Behaviors::receive_message(move |_: u64| {
        Err::<(), _>(error.clone())
    }))
    .on_failure::<E>(SupervisorStrategy::escalate())
    .into()
}

/// An actor that ignores numbers and logs `post-stop` to `log` when it stops.
fn post_stop_logger(log: Log) -> Behavior<u64> {
    Behaviors::receive_message(|_: u64| ())
        .on_signal(move |_, signal| {
            if *signal == Signal::PostStop {
                log.lock().unwrap().push("post-stop".into());
            }
        })
        .into()
}

/// Wait (in bounded, virtual time) until `done` holds.
async fn eventually(mut done: impl FnMut() -> bool) {
    timeout(T, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("the condition came true in time");
}

// ---------------------------------------------------------------------------------
// Core
// ---------------------------------------------------------------------------------

// S1: top-level actors live under `/user`, their children below them, and the
// runtime's own actors (a probe) under `/system`.
#[tapio::test]
async fn s1_user_and_system_guardians(system: ActorSystem) {
    let mut probe = TestProbe::<Vec<String>>::new(&system);
    let to = probe.actor_ref().clone();
    let top = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let kid = ctx.spawn(Behaviors::ignore::<u64>(), "kid").unwrap();
                to.tell(
                    kid.path()
                        .elements()
                        .iter()
                        .map(|s| (*s).to_owned())
                        .collect::<Vec<_>>(),
                );
                Behaviors::ignore::<u64>()
            }),
            "alpha",
        )
        .unwrap();
    assert_eq!(top.path().elements(), ["user", "alpha"]);
    assert_eq!(probe.expect_message(T).await, ["user", "alpha", "kid"]);
    assert_eq!(probe.actor_ref().path().elements()[0], "system");
}

// S1: a system owned by a block ends with the block, even when the block panics:
// its actors still see `PostStop` before the panic goes on.
#[tokio::test(flavor = "current_thread")]
async fn s1_scope_terminates_on_panic() {
    let stops = log();
    let seen = stops.clone();
    let (kept_tx, kept_rx) = tokio::sync::oneshot::channel();
    let outcome = tokio::spawn(async move {
        ActorSystem::scope("scoped-panic", move |system| async move {
            let _ = kept_tx.send(system.clone());
            let seen = seen.clone();
            system
                .spawn(post_stop_logger(seen.clone()), "doomed")
                .unwrap();
            panic!("the block fails");
        })
        .await
    })
    .await;
    assert!(outcome.unwrap_err().is_panic());
    let system = kept_rx.await.unwrap();
    assert!(system.is_terminating());
    assert_eq!(entries(&stops), ["post-stop"]);
    assert_eq!(system.live_actors(), 0);
}

// S2: a name is taken while its actor lives, and free again once it has stopped; the
// new actor is a new incarnation (another uid).
#[tapio::test(start_paused = true)]
async fn s2_name_taken_then_freed_after_stop(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let first = system.spawn(Behaviors::ignore::<u64>(), "dup").unwrap();
    let again = system.spawn(Behaviors::ignore::<u64>(), "dup");
    assert!(
        matches!(&again, Err(SpawnError::NameTaken { name, .. }) if name == "dup"),
        "{again:?}"
    );
    probe.watch(&first);
    system.stop(&first).unwrap();
    probe.expect_terminated(&first, T).await;
    let second = system.spawn(Behaviors::ignore::<u64>(), "dup").unwrap();
    assert_eq!(second.path(), first.path());
    assert_ne!(second.uid(), first.uid());
}

#[message]
enum Nursery {
    StopKid,
    Probe(ActorRef<String>),
}

// S2 + S18: a parent that stops a child and hears its `Terminated` can reuse the
// child's name right there, in the signal handler.
#[tapio::test(start_paused = true)]
async fn s2_child_name_free_when_parent_hears_terminated(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let kid = ctx.spawn(Behaviors::ignore::<u64>(), "kid").unwrap();
                ctx.watch(&kid);
                let report = report.clone();
                Behaviors::receive(move |ctx, message: Nursery| {
                    match message {
                        Nursery::StopKid => {
                            let kid = ctx.child("kid").unwrap();
                            ctx.stop(kid).unwrap();
                        }
                        Nursery::Probe(to) => to.tell(format!("{}", ctx.children().len())),
                    }
                    Behaviors::same()
                })
                .on_signal(move |ctx, signal| {
                    if let Signal::Terminated(_) = signal {
                        let outcome = ctx.spawn(Behaviors::ignore::<u64>(), "kid");
                        report.tell(match outcome {
                            Ok(_) => "respawned".to_owned(),
                            Err(error) => format!("refused: {error}"),
                        });
                    }
                    Behaviors::same()
                })
            }),
            "nursery",
        )
        .unwrap();
    parent.tell(Nursery::StopKid);
    assert_eq!(probe.expect_message(T).await, "respawned");
    parent.tell(Nursery::Probe(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "1");
}

// S2: every rule of a valid name, and the documented length limit at its edge.
#[tapio::test]
async fn s2_invalid_names_are_refused_with_their_reason(system: ActorSystem) {
    let long_ok = "a".repeat(tapio::ActorPath::MAX_NAME_LEN);
    let too_long = "a".repeat(tapio::ActorPath::MAX_NAME_LEN + 1);
    type ReasonCheck = fn(&InvalidNameReason) -> bool;
    let cases: Vec<(&str, ReasonCheck)> = vec![
        ("", |r| matches!(r, InvalidNameReason::Empty)),
        (".", |r| matches!(r, InvalidNameReason::DotSegment)),
        ("..", |r| matches!(r, InvalidNameReason::DotSegment)),
        ("a/b", |r| matches!(r, InvalidNameReason::Delimiter('/'))),
        ("a#b", |r| matches!(r, InvalidNameReason::Delimiter('#'))),
        ("a?b", |r| matches!(r, InvalidNameReason::Delimiter('?'))),
        ("a b", |r| matches!(r, InvalidNameReason::Whitespace(' '))),
        ("a\tb", |r| {
            matches!(
                r,
                InvalidNameReason::Whitespace('\t') | InvalidNameReason::Control('\t')
            )
        }),
        ("a\u{7}b", |r| {
            matches!(r, InvalidNameReason::Control('\u{7}'))
        }),
        ("a\u{a0}b", |r| {
            matches!(
                r,
                InvalidNameReason::Whitespace(_) | InvalidNameReason::Character(_)
            )
        }),
        ("$x", |r| matches!(r, InvalidNameReason::Reserved)),
        (
            &too_long,
            |r| matches!(r, InvalidNameReason::TooLong { len } if *len == tapio::ActorPath::MAX_NAME_LEN + 1),
        ),
    ];
    for (name, reason_ok) in cases {
        match system.spawn(Behaviors::ignore::<u64>(), name) {
            Err(SpawnError::InvalidName(invalid)) => {
                assert!(reason_ok(&invalid.reason), "{name:?}: {invalid}");
                assert_eq!(invalid.name, name);
            }
            other => panic!("{name:?} should be refused, got {other:?}"),
        }
    }
    // Dots inside a name, `$` after the first byte, and the limit itself are fine.
    for name in ["a.b", "...", "x$", long_ok.as_str()] {
        system
            .spawn(Behaviors::ignore::<u64>(), name)
            .unwrap_or_else(|e| panic!("{name:?} should be a valid name: {e}"));
    }
}

// S2: `spawn_anonymous` picks names that are unique and reserved (a user cannot give
// one), also among children of different parents.
#[tapio::test]
async fn s2_anonymous_names_are_unique_and_reserved(system: ActorSystem) {
    let mut names = std::collections::HashSet::new();
    for _ in 0..64 {
        let actor = system.spawn_anonymous(Behaviors::ignore::<u64>()).unwrap();
        let name = actor.path().name().to_owned();
        assert!(name.starts_with('$'), "{name}");
        assert!(names.insert(name.clone()), "{name} picked twice");
        let reuse = system.spawn(Behaviors::ignore::<u64>(), &name);
        assert!(
            matches!(reuse, Err(SpawnError::InvalidName(_))),
            "{reuse:?}"
        );
    }
}

// S3 + S31: a tell to an actor that has stopped returns normally, and the message is
// a dead letter with its value, its recipient and the reason.
#[tapio::test(start_paused = true)]
async fn s3_tell_after_stop_is_a_dead_letter_with_its_value(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let target = system.spawn(Behaviors::ignore::<u64>(), "gone").unwrap();
    probe.watch(&target);
    system.stop(&target).unwrap();
    probe.expect_terminated(&target, T).await;
    target.tell(42_u64);
    expect_dead_letter(
        &mut letters,
        target.path(),
        DeadLetterReason::RecipientStopped,
        42_u64,
    )
    .await;
}

// S5: many senders at once, on several worker threads: each sender's messages arrive
// in the order it sent them.
#[tapio::test(worker_threads = 4)]
async fn s5_order_per_sender_with_concurrent_senders(system: ActorSystem) {
    const SENDERS: u64 = 6;
    const EACH: u64 = 2_000;
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let sink = system
        .spawn(
            Behaviors::setup(move |_| {
                let report = report.clone();
                let last = Mutex::new(BTreeMap::<u64, u64>::new());
                let total = AtomicUsize::new(0);
                Behaviors::receive_message(move |(sender, seq): (u64, u64)| {
                    let mut last = last.lock().unwrap();
                    let before = last.insert(sender, seq);
                    if before.is_some_and(|b| b + 1 != seq) || (before.is_none() && seq != 0) {
                        report.tell(format!("sender {sender}: {seq} after {before:?}"));
                    }
                    if total.fetch_add(1, Ordering::Relaxed) + 1 == (SENDERS * EACH) as usize {
                        report.tell("all".to_owned());
                    }
                })
            }),
            "sink",
        )
        .unwrap();
    for sender in 0..SENDERS {
        let sink = sink.clone();
        system
            .spawn(
                Behaviors::setup(move |_| {
                    let sink = sink.clone();
                    Behaviors::receive_message(move |go: bool| {
                        if go {
                            for seq in 0..EACH {
                                sink.tell((sender, seq));
                            }
                        }
                    })
                }),
                &format!("sender-{sender}"),
            )
            .unwrap()
            .tell(true);
    }
    assert_eq!(probe.expect_message(Duration::from_secs(20)).await, "all");
}

#[message]
enum Lamp {
    Flip,
    Odd(u64),
    Report(ActorRef<String>),
}

fn lamp(on: bool) -> Behavior<Lamp> {
    Behaviors::receive_message(move |message: Lamp| match message {
        Lamp::Flip => lamp(!on),
        Lamp::Odd(n) if n % 2 == 1 => Behaviors::unhandled(),
        Lamp::Odd(_) => Behaviors::same(),
        Lamp::Report(to) => {
            to.tell(format!("on={on}"));
            Behaviors::same()
        }
    })
    .into()
}

// S6: a switch holds for the next message; `unhandled` keeps the current behavior
// (it is not a switch back) and makes the message an unhandled dead letter.
#[tapio::test(start_paused = true)]
async fn s6_unhandled_keeps_the_switched_behavior(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let lamp = system.spawn(lamp(false), "lamp").unwrap();
    lamp.tell(Lamp::Flip);
    lamp.tell(Lamp::Odd(3));
    lamp.tell(Lamp::Report(probe.actor_ref().clone()));
    letter_with(&mut letters, lamp.path(), DeadLetterReason::Unhandled).await;
    assert_eq!(probe.expect_message(T).await, "on=true");
    lamp.tell(Lamp::Odd(4));
    lamp.tell(Lamp::Report(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "on=true");
    assert!(letters.try_recv().is_none());
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

#[message]
#[derive(Clone)]
enum Timed {
    Arm,
    Tick,
    Fail,
    Ping(ActorRef<&'static str>),
}

// S14 + S25: a restart cancels the timers of the incarnation that failed, including
// one whose tick is already queued behind the failure.
#[tapio::test(start_paused = true)]
async fn s14_restart_cancels_timers_and_queued_ticks(system: ActorSystem) {
    let mut probe = TestProbe::<&'static str>::new(&system);
    let report = probe.actor_ref().clone();
    let gate = Arc::new(Semaphore::new(0));
    let in_gate = gate.clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let timers = ctx.timers();
                let report = report.clone();
                let gate = in_gate.clone();
                Behaviors::receive_message_async(async move |message: Timed| {
                    match message {
                        Timed::Arm => {
                            timers.start_single_timer("once", Timed::Tick, Duration::from_secs(1));
                            timers
                                .start_fixed_rate("rate", Timed::Tick, Duration::from_millis(300))
                                .unwrap();
                            report.tell("armed");
                        }
                        Timed::Tick => report.tell("tick"),
                        Timed::Fail => {
                            // Wait until the ticks are queued behind this message.
                            gate.acquire().await.unwrap().forget();
                            return Err(Boom);
                        }
                        Timed::Ping(to) => to.tell("pong"),
                    }
                    Ok(Behaviors::same())
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "timed",
        )
        .unwrap();
    actor.tell(Timed::Arm);
    assert_eq!(probe.expect_message(T).await, "armed");
    actor.tell(Timed::Fail);
    // Both timers fire while the failing handler waits: their ticks queue.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    gate.add_permits(1);
    actor.tell(Timed::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "pong");
    probe.expect_no_message(Duration::from_secs(5)).await;
}

#[message]
#[derive(Debug)]
enum Held {
    Item(u64),
    Fail,
    Open,
}

// S14 + S26: a restart empties the stash: what it held becomes dead letters
// (`StashDiscarded`), and the next incarnation never sees it.
#[tapio::test(start_paused = true)]
async fn s14_restart_empties_the_stash_into_dead_letters(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(10, move |stash| {
        let report = report.clone();
        Behaviors::receive_message(move |message: Held| match message {
            Held::Item(n) => stash
                .stash(Held::Item(n))
                .map(|()| Behaviors::same())
                .map_err(tapio::BoxError::from),
            Held::Fail => Err(Boom.into()),
            Held::Open => {
                let report = report.clone();
                Ok(
                    stash.unstash_all(Behaviors::receive_message(move |m: Held| {
                        if let Held::Item(n) = m {
                            report.tell(n);
                        }
                    })),
                )
            }
        })
    })
    .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(behavior).on_failure::<Boom>(SupervisorStrategy::restart()),
            "stasher",
        )
        .unwrap();
    for n in 1..=3 {
        actor.tell(Held::Item(n));
    }
    actor.tell(Held::Fail);
    let mut discarded = Vec::new();
    for _ in 0..3 {
        let letter =
            letter_with(&mut letters, actor.path(), DeadLetterReason::StashDiscarded).await;
        match letter.take_message::<Held>() {
            Some(Held::Item(n)) => discarded.push(n),
            other => panic!("expected a stashed item, got {other:?}"),
        }
    }
    assert_eq!(discarded, [1, 2, 3]);
    actor.tell(Held::Item(9));
    actor.tell(Held::Open);
    assert_eq!(probe.expect_message(T).await, 9);
    probe.expect_no_message(Duration::from_millis(50)).await;
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

// ---------------------------------------------------------------------------------
// Watching and shutdown
// ---------------------------------------------------------------------------------

#[message]
enum Watcher {
    Watch(ActorRef<u64>),
    WatchTwice(ActorRef<u64>),
    Unwatch(ActorRef<u64>),
    Ping(ActorRef<String>),
}

fn watcher(report: ActorRef<String>) -> Behavior<Watcher> {
    Behaviors::receive(move |ctx, message: Watcher| {
        match message {
            Watcher::Watch(target) => ctx.watch(&target),
            Watcher::WatchTwice(target) => {
                ctx.watch(&target);
                ctx.watch(&target);
            }
            Watcher::Unwatch(target) => ctx.unwatch(&target),
            Watcher::Ping(to) => to.tell("pong".to_owned()),
        }
        Behaviors::same()
    })
    .on_signal(move |_, signal| {
        if let Signal::Terminated(end) = signal {
            report.tell(format!("terminated {}", end.actor().path().name()));
        }
        Behaviors::same()
    })
    .into()
}

// S18: watching an actor that stopped before the watch delivers `Terminated` once;
// watching twice is watching once.
#[tapio::test(start_paused = true)]
async fn s18_watch_after_stop_delivers_once(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let target = system
        .spawn(Behaviors::ignore::<u64>(), "short-lived")
        .unwrap();
    ends.watch(&target);
    system.stop(&target).unwrap();
    ends.expect_terminated(&target, T).await;
    let late = system
        .spawn(watcher(probe.actor_ref().clone()), "late-watcher")
        .unwrap();
    late.tell(Watcher::WatchTwice(target.clone()));
    assert_eq!(probe.expect_message(T).await, "terminated short-lived");
    late.tell(Watcher::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "pong");
    probe.expect_no_message(Duration::from_millis(100)).await;
}

// S18: after `unwatch`, no `Terminated` comes, and the watcher (which would fail
// with a death pact on an unhandled one) lives on.
#[tapio::test(start_paused = true)]
async fn s18_unwatch_means_no_terminated(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let target = system.spawn(Behaviors::ignore::<u64>(), "watched").unwrap();
    let w = system
        .spawn(watcher(probe.actor_ref().clone()), "watcher")
        .unwrap();
    ends.watch(&target);
    ends.watch(&w);
    w.tell(Watcher::Watch(target.clone()));
    w.tell(Watcher::Unwatch(target.clone()));
    w.tell(Watcher::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "pong");
    system.stop(&target).unwrap();
    ends.expect_terminated(&target, T).await;
    probe.expect_no_message(Duration::from_millis(100)).await;
    w.tell(Watcher::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "pong");
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

#[message]
#[derive(Clone)]
enum Busy {
    Work,
}

struct Guard(Log, String);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.lock().unwrap().push(format!("dropped {}", self.1));
    }
}

/// A node of a binary tree `depth` deep: `Work` goes down to the leaves, which then
/// await for an hour (a drop guard logs the interruption); every node logs its
/// `PostStop`.
fn busy_node(name: String, depth: u32, log: Log, busy: ActorRef<String>) -> Behavior<Busy> {
    Behaviors::setup(move |ctx| {
        let mut children: Vec<ActorRef<Busy>> = Vec::new();
        if depth > 0 {
            for i in 0..2 {
                let child = format!("{name}.{i}");
                children.push(
                    ctx.spawn(
                        busy_node(child.clone(), depth - 1, log.clone(), busy.clone()),
                        &child,
                    )
                    .unwrap(),
                );
            }
        }
        let (me, stop_log, work_log, busy) = (name.clone(), log.clone(), log.clone(), busy.clone());
        let leaf_name = name.clone();
        Behaviors::receive_message_async(async move |_: Busy| {
            for child in &children {
                child.tell(Busy::Work);
            }
            if children.is_empty() {
                let _guard = Guard(work_log.clone(), leaf_name.clone());
                busy.tell(leaf_name.clone());
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
        })
        .on_signal(move |_, signal| {
            if *signal == Signal::PostStop {
                stop_log.lock().unwrap().push(format!("stop {me}"));
            }
        })
    })
}

/// Each `stop X` in `seen` comes after every `stop X.…` of its descendants.
fn assert_bottom_up(seen: &[String], names: &[&str]) {
    for name in names {
        let at = seen
            .iter()
            .position(|e| *e == format!("stop {name}"))
            .unwrap_or_else(|| panic!("{name} saw PostStop: {seen:?}"));
        for later in &seen[at + 1..] {
            if let Some(other) = later.strip_prefix("stop ") {
                assert!(
                    !other.starts_with(&format!("{name}.")),
                    "{other} stopped after its ancestor {name}: {seen:?}"
                );
            }
        }
    }
}

// S19: `terminate()` stops the tree bottom-up, interrupting async handlers where they
// await (their drop guards run, before their `PostStop`) well before the deadline,
// and each actor sees `PostStop` after all of its children.
#[tapio::test(start_paused = true, shutdown_timeout_ms = 2000)]
async fn s19_terminate_bottom_up_with_busy_async_leaves(system: ActorSystem) {
    let order = log();
    let mut busy = TestProbe::<String>::new(&system);
    let root = system
        .spawn(
            busy_node("r".into(), 2, order.clone(), busy.actor_ref().clone()),
            "r",
        )
        .unwrap();
    root.tell(Busy::Work);
    let mut working = busy.receive_messages(4, T).await;
    working.sort();
    assert_eq!(working, ["r.0.0", "r.0.1", "r.1.0", "r.1.1"]);
    let started = Instant::now();
    system.terminate().await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let seen = entries(&order);
    assert_bottom_up(
        &seen,
        &["r", "r.0", "r.1", "r.0.0", "r.0.1", "r.1.0", "r.1.1"],
    );
    for leaf in ["r.0.0", "r.0.1", "r.1.0", "r.1.1"] {
        let dropped = seen.iter().position(|e| *e == format!("dropped {leaf}"));
        let stopped = seen.iter().position(|e| *e == format!("stop {leaf}"));
        assert!(
            dropped.is_some() && dropped < stopped,
            "{leaf}: its handler is dropped before its PostStop: {seen:?}"
        );
    }
}

struct Slow {
    name: &'static str,
    log: Log,
}

#[actor]
impl Slow {
    fn poke(&mut self, _: u64) {}

    #[signal]
    async fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            self.log
                .lock()
                .unwrap()
                .push(format!("begin {}", self.name));
            tokio::time::sleep(Duration::from_millis(400)).await;
            self.log.lock().unwrap().push(format!("end {}", self.name));
        }
    }
}

fn slow_chain(names: &'static [&'static str], log: Log) -> Behavior<SlowMsg> {
    Behaviors::setup(move |ctx| {
        if let [_, rest @ ..] = names
            && let Some(child) = rest.first()
        {
            ctx.spawn(slow_chain(rest, log.clone()), child).unwrap();
        }
        Slow {
            name: names[0],
            log: log.clone(),
        }
    })
}

// S19: the whole tree races one deadline, not one per level: three levels whose
// `PostStop` each awaits 400 ms do not fit in a 1 s deadline; the top one is cut
// short, and `terminate` returns at the deadline.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn s19_one_deadline_for_the_whole_tree() {
    let system = ActorSystem::builder("one-deadline")
        .shutdown_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let order = log();
    system
        .spawn(slow_chain(&["a", "b", "c"], order.clone()), "a")
        .unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    let started = Instant::now();
    timeout(Duration::from_secs(10), system.terminate())
        .await
        .expect("terminate ends");
    let took = started.elapsed();
    let seen = entries(&order);
    assert_eq!(
        seen,
        ["begin c", "end c", "begin b", "end b", "begin a"],
        "took {took:?}"
    );
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(1200),
        "{took:?}"
    );
}

// S20: a real SIGTERM, delivered to this process, terminates the system that wired
// the signals.
#[tokio::test(flavor = "current_thread")]
async fn s20_sigterm_terminates_the_system() {
    let system = ActorSystem::new("signalled").unwrap();
    let stops = log();
    let seen = stops.clone();
    system
        .spawn(post_stop_logger(seen.clone()), "service")
        .unwrap();
    let signals = system.shutdown_on_signals().unwrap();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let signal = timeout(T, signals.wait())
        .await
        .expect("the signal is seen");
    assert_eq!(signal, tapio::ShutdownSignal::Terminate);
    assert!(timeout(T, system.when_terminated()).await.unwrap().is_ok());
    assert_eq!(entries(&stops), ["post-stop"]);
}

// ---------------------------------------------------------------------------------
// Timers
// ---------------------------------------------------------------------------------

#[message]
#[derive(Clone)]
struct Beat;

/// An actor with a 100 ms repeating timer whose first tick stalls it for a second;
/// it reports the virtual time of each tick (`u64::MAX` if a tick ever re-entered a
/// running handler).
fn stalling(fixed_rate: bool, report: ActorRef<u64>) -> Behavior<Beat> {
    Behaviors::setup(move |ctx| {
        let timers = ctx.timers();
        let every = Duration::from_millis(100);
        if fixed_rate {
            timers.start_fixed_rate("beat", Beat, every).unwrap();
        } else {
            timers.start_fixed_delay("beat", Beat, every).unwrap();
        }
        let start = Instant::now();
        let count = Arc::new(AtomicUsize::new(0));
        let inside = Arc::new(AtomicBool::new(false));
        let report = report.clone();
        Behaviors::receive_message_async(async move |_: Beat| {
            if inside.swap(true, Ordering::SeqCst) {
                report.tell(u64::MAX);
            }
            let k = count.fetch_add(1, Ordering::SeqCst) + 1;
            report.tell(u64::try_from(start.elapsed().as_millis()).unwrap());
            if k == 1 {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            inside.store(false, Ordering::SeqCst);
        })
    })
}

// S24 + S25: under a one-second stall, a fixed-rate timer sends the missed ticks one
// after another, a fixed-delay one does not build a backlog; neither tick re-enters
// the running handler.
#[tapio::test(start_paused = true)]
async fn s25_fixed_delay_vs_fixed_rate_under_a_stall(system: ActorSystem) {
    let mut rate = TestProbe::<u64>::new(&system);
    let mut delay = TestProbe::<u64>::new(&system);
    system
        .spawn(stalling(true, rate.actor_ref().clone()), "rate")
        .unwrap();
    system
        .spawn(stalling(false, delay.actor_ref().clone()), "delay")
        .unwrap();
    let rate_ticks = rate.receive_messages(15, Duration::from_secs(10)).await;
    let delay_ticks = delay.receive_messages(15, Duration::from_secs(10)).await;
    assert!(!rate_ticks.contains(&u64::MAX) && !delay_ticks.contains(&u64::MAX));
    let burst = |ticks: &[u64]| ticks.iter().filter(|t| (1100..1150).contains(*t)).count();
    assert!(
        burst(&rate_ticks) >= 8,
        "fixed rate catches up: {rate_ticks:?}"
    );
    assert!(
        burst(&delay_ticks) <= 2,
        "fixed delay has no backlog: {delay_ticks:?}"
    );
    // After the stall, fixed-delay ticks are spaced by the delay again.
    let after: Vec<u64> = delay_ticks.iter().copied().filter(|t| *t >= 1150).collect();
    assert!(after.len() >= 5, "{delay_ticks:?}");
    assert!(
        after.windows(2).all(|w| w[1] - w[0] >= 100),
        "{delay_ticks:?}"
    );
}

#[message]
#[derive(Clone)]
enum Keyed {
    Fire(&'static str),
    Active(ActorRef<String>),
}

// S25: starting a key again replaces its timer (also a repeating one by a single),
// and cancel by key means no tick.
#[tapio::test(start_paused = true)]
async fn s25_keys_replace_and_cancel(system: ActorSystem) {
    let mut probe = TestProbe::<&'static str>::new(&system);
    let mut state = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_single_timer("k", Keyed::Fire("first"), Duration::from_secs(1));
                timers.start_single_timer("k", Keyed::Fire("second"), Duration::from_secs(2));
                timers
                    .start_fixed_rate("r", Keyed::Fire("rate"), Duration::from_millis(100))
                    .unwrap();
                timers.start_single_timer("r", Keyed::Fire("single-r"), Duration::from_millis(300));
                timers.start_single_timer(
                    "c",
                    Keyed::Fire("cancelled"),
                    Duration::from_millis(500),
                );
                timers.cancel("c");
                let report = report.clone();
                let timers = timers.clone();
                Behaviors::receive_message(move |message: Keyed| match message {
                    Keyed::Fire(what) => report.tell(what),
                    Keyed::Active(to) => to.tell(format!(
                        "k={} r={} c={}",
                        timers.is_active("k"),
                        timers.is_active("r"),
                        timers.is_active("c")
                    )),
                })
            }),
            "keyed",
        )
        .unwrap();
    actor.tell(Keyed::Active(state.actor_ref().clone()));
    assert_eq!(state.expect_message(T).await, "k=true r=true c=false");
    assert_eq!(
        probe.expect_message(Duration::from_millis(400)).await,
        "single-r"
    );
    probe.expect_no_message(Duration::from_millis(1400)).await;
    assert_eq!(
        probe.expect_message(Duration::from_millis(500)).await,
        "second"
    );
    probe.expect_no_message(Duration::from_secs(5)).await;
    actor.tell(Keyed::Active(state.actor_ref().clone()));
    assert_eq!(state.expect_message(T).await, "k=false r=false c=false");
}

// S25: a stopped actor's timers are cancelled: no tick becomes a dead letter.
#[tapio::test(start_paused = true)]
async fn s25_stop_cancels_timers(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(
            Behaviors::with_timers(|timers| {
                timers
                    .start_fixed_rate("beat", Beat, Duration::from_millis(10))
                    .unwrap();
                timers.start_single_timer("late", Beat, Duration::from_millis(500));
                Behaviors::receive_message(|_: Beat| ())
            }),
            "beating",
        )
        .unwrap();
    probe.watch(&actor);
    tokio::time::sleep(Duration::from_millis(55)).await;
    system.stop(&actor).unwrap();
    probe.expect_terminated(&actor, T).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    while let Some(letter) = letters.try_recv() {
        assert_ne!(
            letter.recipient(),
            actor.path(),
            "a tick after the stop: {}",
            letter.reason()
        );
    }
}

// ---------------------------------------------------------------------------------
// Stash
// ---------------------------------------------------------------------------------

fn bounded_stasher(capacity: usize, report: ActorRef<u64>) -> Behavior<Held> {
    Behaviors::with_stash(capacity, move |stash| {
        let report = report.clone();
        Behaviors::receive_message(
            move |message: Held| -> Result<Behavior<Held>, tapio::BoxError> {
                match message {
                    Held::Item(n) => {
                        stash.stash(Held::Item(n))?;
                        Ok(Behaviors::same())
                    }
                    Held::Fail => Err(Boom.into()),
                    Held::Open => {
                        let report = report.clone();
                        Ok(
                            stash.unstash_all(Behaviors::receive_message(move |m: Held| {
                                if let Held::Item(n) = m {
                                    report.tell(n);
                                }
                            })),
                        )
                    }
                }
            },
        )
    })
    .unwrap()
}

// S26: overflowing the stash is the stashing actor's failure, under its supervision:
// with a restart clause for `StashOverflow` the overflowing message is a `StashFull`
// dead letter, the held ones `StashDiscarded`, and the actor goes on; without one it
// stops.
#[tapio::test(start_paused = true)]
async fn s26_stash_overflow_under_supervision(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let supervised = system
        .spawn(
            Behaviors::supervise(bounded_stasher(2, probe.actor_ref().clone()))
                .on_failure::<StashOverflow>(SupervisorStrategy::restart()),
            "supervised",
        )
        .unwrap();
    let plain = system
        .spawn(bounded_stasher(2, probe.actor_ref().clone()), "plain")
        .unwrap();
    probe.watch(&supervised);
    probe.watch(&plain);
    for n in 1..=3 {
        supervised.tell(Held::Item(n));
    }
    let mut got = Vec::new();
    for _ in 0..3 {
        let letter = dead_letter_for(&mut letters, supervised.path()).await;
        let n = match letter.take_message::<Held>() {
            Some(Held::Item(n)) => n,
            other => panic!("{other:?}"),
        };
        got.push((n, letter.reason().clone()));
    }
    got.sort_by_key(|(n, _)| *n);
    assert_eq!(
        got,
        [
            (1, DeadLetterReason::StashDiscarded),
            (2, DeadLetterReason::StashDiscarded),
            (3, DeadLetterReason::StashFull),
        ]
    );
    supervised.tell(Held::Item(7));
    supervised.tell(Held::Open);
    assert_eq!(probe.expect_message(T).await, 7);
    for n in 1..=3 {
        plain.tell(Held::Item(n));
    }
    probe.expect_terminated(&plain, T).await;
    probe.expect_no_termination(Duration::from_millis(50)).await;
}

#[message]
enum Replay {
    Item(u64),
    Open,
}

fn gatekeeper(report: ActorRef<u64>, stop_on: Option<u64>) -> Behavior<Replay> {
    Behaviors::with_stash(100, move |stash| {
        let report = report.clone();
        Behaviors::receive(move |ctx, message: Replay| match message {
            Replay::Item(n) => stash.stash(Replay::Item(n)).map(|()| Behaviors::same()),
            Replay::Open => {
                ctx.self_ref().tell(Replay::Item(100));
                let report = report.clone();
                Ok(stash.unstash_all(Behaviors::receive(move |ctx, m: Replay| {
                    if let Replay::Item(n) = m {
                        report.tell(n);
                        if Some(n) == stop_on {
                            ctx.system().stop(ctx.self_ref()).unwrap();
                        }
                    }
                })))
            }
        })
    })
    .unwrap()
}

// S27: `unstash_all` replays the held messages first, in arrival order, ahead of
// what arrived while they were held and of what the unstashing handler itself sent.
#[tapio::test(start_paused = true)]
async fn s27_replay_goes_ahead_of_what_arrived_meanwhile(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(gatekeeper(probe.actor_ref().clone(), None), "gate")
        .unwrap();
    for n in 1..=3 {
        actor.tell(Replay::Item(n));
    }
    actor.tell(Replay::Open);
    actor.tell(Replay::Item(4));
    actor.tell(Replay::Item(5));
    assert_eq!(probe.receive_messages(6, T).await, [1, 2, 3, 4, 5, 100]);
}

// S27: a stop that arrives during the replay is honoured before the rest of it: what
// was not replayed becomes `RecipientStopped` dead letters.
#[tapio::test(start_paused = true)]
async fn s27_stop_during_replay_cuts_it_short(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(gatekeeper(probe.actor_ref().clone(), Some(1)), "gate")
        .unwrap();
    probe.watch(&actor);
    for n in 1..=20 {
        actor.tell(Replay::Item(n));
    }
    actor.tell(Replay::Open);
    assert_eq!(probe.expect_message(T).await, 1);
    probe.expect_terminated(&actor, T).await;
    probe.expect_no_message(Duration::from_millis(50)).await;
    let mut lost = Vec::new();
    while lost.len() < 20 {
        let letter = letter_with(
            &mut letters,
            actor.path(),
            DeadLetterReason::RecipientStopped,
        )
        .await;
        match letter.take_message::<Replay>() {
            Some(Replay::Item(n)) => lost.push(n),
            Some(Replay::Open) => panic!("Open was handled"),
            None => panic!("a letter without its message: {}", letter.message_type()),
        }
    }
    lost.sort_unstable();
    assert_eq!(lost, (2..=20).chain([100]).collect::<Vec<_>>());
}

// ---------------------------------------------------------------------------------
// Adapters
// ---------------------------------------------------------------------------------

#[message]
enum Owner {
    Num(u64),
    TryWatch(ActorRef<String>, ActorRef<String>),
}

// S28: an adapter's translation runs in its owner, in order with the owner's other
// messages; a failing translation is the owner's failure (here: restart); the
// adapter handed out before the restart keeps working; it cannot be asked or
// watched; and it stops with its owner.
#[tapio::test(start_paused = true)]
async fn s28_adapter_failure_is_the_owner_failure(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let mut notes = TestProbe::<String>::new(&system);
    let (adapters_tx, mut adapters) = tokio::sync::mpsc::unbounded_channel::<ActorRef<String>>();
    let setups = Arc::new(AtomicUsize::new(0));
    let counted = setups.clone();
    let report = probe.actor_ref().clone();
    let owner = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                counted.fetch_add(1, Ordering::SeqCst);
                let adapter: ActorRef<String> =
                    ctx.try_message_adapter(|text: String| text.parse::<u64>().map(Owner::Num));
                let _ = adapters_tx.send(adapter);
                let report = report.clone();
                Behaviors::receive(move |ctx, message: Owner| match message {
                    Owner::Num(n) => report.tell(n),
                    Owner::TryWatch(adapter, to) => {
                        to.tell(format!(
                            "watch refused: {}",
                            ctx.try_watch(&adapter).is_err()
                        ));
                    }
                })
            }))
            .on_failure::<std::num::ParseIntError>(SupervisorStrategy::restart()),
            "owner",
        )
        .unwrap();
    let first = timeout(T, adapters.recv()).await.unwrap().unwrap();
    owner.tell(Owner::Num(1));
    first.tell("2".to_owned());
    owner.tell(Owner::Num(3));
    first.tell("4".to_owned());
    assert_eq!(probe.receive_messages(4, T).await, [1, 2, 3, 4]);
    first.tell("not a number".to_owned());
    let second = timeout(T, adapters.recv()).await.unwrap().unwrap();
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    first.tell("5".to_owned());
    second.tell("6".to_owned());
    assert_eq!(probe.receive_messages(2, T).await, [5, 6]);
    owner.tell(Owner::TryWatch(second.clone(), notes.actor_ref().clone()));
    assert_eq!(notes.expect_message(T).await, "watch refused: true");
    let asked = second
        .ask_with(|_: ActorRef<u64>| "7".to_owned())
        .timeout(T)
        .await;
    assert!(matches!(asked, Err(AskError::Adapter { .. })), "{asked:?}");
    probe.watch(&owner);
    system.stop(&owner).unwrap();
    probe.expect_terminated(&owner, T).await;
    second.tell("8".to_owned());
    expect_dead_letter::<String>(
        &mut letters,
        second.path(),
        DeadLetterReason::RecipientStopped,
        String::from("8"),
    )
    .await;
}

// ---------------------------------------------------------------------------------
// Mailboxes
// ---------------------------------------------------------------------------------

// S29 + S31: a full drop-oldest mailbox pushes out its oldest message, which is a
// `PushedOut` dead letter with its value; the rest is handled in order.
#[tapio::test(start_paused = true)]
async fn s29_drop_oldest_pushes_out_into_dead_letters(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let (mut probe, gate, sink) = gated_setup(&system, "sink", (3, OverflowStrategy::DropOldest));
    sink.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, 0);
    for n in 2..=7 {
        sink.tell(n);
    }
    let mut pushed = Vec::new();
    for _ in 0..3 {
        let letter = letter_with(&mut letters, sink.path(), DeadLetterReason::PushedOut).await;
        pushed.push(letter.take_message::<u64>().unwrap());
    }
    assert_eq!(pushed, [2, 3, 4]);
    gate.add_permits(1);
    assert_eq!(probe.receive_messages(4, T).await, [1, 5, 6, 7]);
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

// S30: `offer` resolves at once while there is room, waits while the mailbox is
// full, resolves `true` once the actor drains it; `false` for an actor that stops
// while it waits, and at once for one that had stopped.
#[tapio::test(start_paused = true)]
async fn s30_offer_waits_for_room_and_says_if_accepted(system: ActorSystem) {
    let (mut probe, gate, sink) = gated_setup(&system, "sink", (1, OverflowStrategy::DropNew));
    assert!(timeout(T, sink.offer(1_u64)).await.unwrap());
    assert_eq!(probe.expect_message(T).await, 0);
    assert!(timeout(T, sink.offer(2_u64)).await.unwrap());
    let mut third = sink.offer(3_u64);
    assert!(
        timeout(Duration::from_millis(200), &mut third)
            .await
            .is_err(),
        "the mailbox is full: the offer waits"
    );
    gate.add_permits(1);
    assert!(timeout(T, third).await.unwrap());
    assert_eq!(probe.receive_messages(3, T).await, [1, 2, 3]);

    // An offer that waits while its actor stops.
    let stuck = spawn_gated(
        &system,
        &probe,
        &gate,
        21,
        "stuck",
        (1, OverflowStrategy::DropNew),
    );
    probe.watch(&stuck);
    stuck.tell(21_u64);
    assert_eq!(probe.expect_message(T).await, 0);
    stuck.tell(22_u64);
    let mut waiting = stuck.offer(23_u64);
    assert!(
        timeout(Duration::from_millis(100), &mut waiting)
            .await
            .is_err()
    );
    system.stop(&stuck).unwrap();
    assert!(!timeout(T, waiting).await.unwrap(), "its actor stopped");
    probe.expect_terminated(&stuck, T).await;
    assert!(
        !timeout(Duration::from_millis(10), stuck.offer(24_u64))
            .await
            .unwrap()
    );
}

// ---------------------------------------------------------------------------------
// Routers
// ---------------------------------------------------------------------------------

#[message]
enum Job {
    Work(u64, ActorRef<(String, u64)>),
    Quit,
    Crash,
}

fn routee() -> Behavior<Job> {
    Behaviors::receive(|ctx, job: Job| match job {
        Job::Work(n, to) => {
            to.tell((ctx.path().name().to_owned(), n));
            Behaviors::same()
        }
        Job::Quit => Behaviors::stopped(),
        Job::Crash => panic!("routee crash"),
    })
    .into()
}

/// Send `Work(n)` for each `n` in `ns` and return who did each, by `n`.
async fn route(
    router: &ActorRef<Job>,
    probe: &mut TestProbe<(String, u64)>,
    ns: std::ops::RangeInclusive<u64>,
) -> Vec<String> {
    let count = ns.clone().count();
    for n in ns {
        router.tell(Job::Work(n, probe.actor_ref().clone()));
    }
    let mut done = probe.receive_messages(count, T).await;
    done.sort_by_key(|(_, n)| *n);
    done.into_iter().map(|(who, _)| who).collect()
}

// S32: strict round-robin carries on from where it was when a routee before the
// rotation's position leaves.
#[tapio::test(start_paused = true)]
async fn s32_round_robin_after_an_earlier_routee_stops(system: ActorSystem) {
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let pool = Routers::pool(3, routee).unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "pool").unwrap();
    assert_eq!(
        route(&router, &mut probe, 1..=3).await,
        ["routee-1", "routee-2", "routee-3"]
    );
    router.tell(Job::Quit); // to routee-1; next in turn is routee-2
    eventually(|| handle.routees().len() == 2).await;
    assert_eq!(
        route(&router, &mut probe, 4..=7).await,
        ["routee-2", "routee-3", "routee-2", "routee-3"]
    );
}

// S32: the same when the routee that leaves comes after the rotation's position; and
// when the last routee stops, the router stops.
#[tapio::test(start_paused = true)]
async fn s32_round_robin_after_a_later_routee_stops_then_router_ends(system: ActorSystem) {
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let pool = Routers::pool(3, routee).unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "pool").unwrap();
    probe.watch(&router);
    assert_eq!(route(&router, &mut probe, 1..=1).await, ["routee-1"]);
    router.tell(Job::Quit); // to routee-2; next in turn is routee-3
    eventually(|| handle.routees().len() == 2).await;
    assert_eq!(
        route(&router, &mut probe, 2..=5).await,
        ["routee-3", "routee-1", "routee-3", "routee-1"]
    );
    router.tell(Job::Quit);
    router.tell(Job::Quit);
    probe.expect_terminated(&router, T).await;
}

// S32: a routee's supervision is its own: a routee that restarts keeps its place in
// the rotation, and the router does not notice.
#[tapio::test(start_paused = true)]
async fn s32_restarting_routee_keeps_its_place(system: ActorSystem) {
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let pool = Routers::pool(2, || {
        Behaviors::supervise(routee()).on_failure::<Panicked>(SupervisorStrategy::restart())
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "pool").unwrap();
    probe.watch(&router);
    assert_eq!(route(&router, &mut probe, 1..=1).await, ["routee-1"]);
    router.tell(Job::Crash); // routee-2 restarts
    assert_eq!(
        route(&router, &mut probe, 2..=5).await,
        ["routee-1", "routee-2", "routee-1", "routee-2"]
    );
    assert_eq!(handle.routees().len(), 2);
    probe.expect_no_termination(Duration::from_millis(50)).await;
}

// ---------------------------------------------------------------------------------
// run_blocking
// ---------------------------------------------------------------------------------

#[message]
enum Blocky {
    Block,
    Ping(ActorRef<&'static str>),
}

// S33: on a current-thread runtime, an actor awaiting a blocking call does not hold
// up the others: a neighbour answers while the call still blocks.
#[tapio::test]
async fn s33_run_blocking_keeps_others_running(system: ActorSystem) {
    let mut probe = TestProbe::<&'static str>::new(&system);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let report = probe.actor_ref().clone();
    let blocker = system
        .spawn(
            Behaviors::receive_async(
                async move |ctx, message: Blocky| -> Result<(), tapio::Failure> {
                    match message {
                        Blocky::Block => {
                            let waiting = released.lock().unwrap().take().unwrap();
                            report.tell("blocking");
                            ctx.run_blocking(move || waiting.recv_timeout(Duration::from_secs(10)))
                                .await?
                                .unwrap();
                            report.tell("unblocked");
                        }
                        Blocky::Ping(to) => to.tell("blocker pong"),
                    }
                    Ok(())
                },
            ),
            "blocker",
        )
        .unwrap();
    let neighbour = system
        .spawn(
            Behaviors::receive_message(|to: ActorRef<&'static str>| to.tell("pong")),
            "neighbour",
        )
        .unwrap();
    blocker.tell(Blocky::Block);
    assert_eq!(probe.expect_message(T).await, "blocking");
    blocker.tell(Blocky::Ping(probe.actor_ref().clone()));
    neighbour.tell(probe.actor_ref().clone());
    assert_eq!(probe.expect_message(T).await, "pong");
    release.send(()).unwrap();
    assert_eq!(probe.expect_message(T).await, "unblocked");
    assert_eq!(probe.expect_message(T).await, "blocker pong");
}

// ---------------------------------------------------------------------------------
// State machines
// ---------------------------------------------------------------------------------

#[message]
pub struct Coin;
#[message]
pub struct Push;
#[message]
pub struct Jam;
#[message(reply = bool)]
pub struct IsOpen;
#[message(reply = u64)]
pub struct Passed;

#[derive(Clone)]
pub struct Gate {
    passed: u64,
}

#[actor(
    messages(Coin, Push, Jam, IsOpen, Passed),
    states(Locked => Unlocked, Unlocked => Locked)
)]
impl Gate {}

#[derive(Clone)]
pub struct Locked;

#[state(Gate)]
impl Locked {
    fn coin(self, _: Coin) -> Next<Self> {
        Next::to(Unlocked)
    }

    fn is_open(&mut self, _: IsOpen) -> bool {
        false
    }
}

#[derive(Clone)]
pub struct Unlocked;

#[state(Gate)]
impl Unlocked {
    fn push(self, gate: &mut Gate, _: Push) -> Next<Self> {
        gate.passed += 1;
        Next::to(Locked)
    }

    fn is_open(&mut self, _: IsOpen) -> bool {
        true
    }

    fn passed(&mut self, gate: &mut Gate, _: Passed) -> u64 {
        gate.passed
    }

    fn jam(&mut self, _: Jam) {
        panic!("jammed");
    }
}

// S34: a message the current state does not handle is refused by that state: a dead
// letter naming the state, an ask that fails at once; and a restart begins again in
// the initial state.
#[tapio::test(start_paused = true)]
async fn s34_state_refuses_and_restart_starts_over(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let gate = system
        .spawn(
            Behaviors::supervise(Machine::new(Gate { passed: 0 }, Locked))
                .on_failure::<Panicked>(SupervisorStrategy::restart()),
            "gate",
        )
        .unwrap();
    gate.tell(Push);
    letter_with(
        &mut letters,
        gate.path(),
        DeadLetterReason::NotHandledInState("Locked"),
    )
    .await;
    let started = Instant::now();
    let refused = gate.ask(Passed).timeout(T).await;
    assert!(
        matches!(
            refused,
            Err(AskError::NotHandled {
                state: "Locked",
                ..
            })
        ),
        "{refused:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "refused at once"
    );
    gate.tell(Coin);
    assert!(gate.ask(IsOpen).timeout(T).await.unwrap());
    gate.tell(Push);
    gate.tell(Coin);
    assert_eq!(gate.ask(Passed).timeout(T).await.unwrap(), 1);
    gate.tell(Jam);
    assert!(
        !gate.ask(IsOpen).timeout(T).await.unwrap(),
        "back to Locked"
    );
    gate.tell(Coin);
    assert_eq!(gate.ask(Passed).timeout(T).await.unwrap(), 0, "fresh data");
}

// ---------------------------------------------------------------------------------
// More combinations
// ---------------------------------------------------------------------------------

#[message]
enum Late {
    Watch(ActorRef<u64>),
    WaitThenUnwatch(ActorRef<u64>),
    Ping(ActorRef<String>),
}

// S18: `unwatch` also stops a `Terminated` that is already on its way: the target
// stopped while the watcher was busy in an async handler, which then unwatches.
#[tapio::test(start_paused = true)]
async fn s18_unwatch_drops_a_terminated_already_on_its_way(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let in_gate = gate.clone();
    let report = probe.actor_ref().clone();
    let signal_report = probe.actor_ref().clone();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let w = system
        .spawn(
            Behaviors::receive_async(async move |ctx, message: Late| match message {
                Late::Watch(t) => ctx.watch(&t),
                Late::WaitThenUnwatch(t) => {
                    report.tell("waiting".to_owned());
                    in_gate.acquire().await.unwrap().forget();
                    ctx.unwatch(&t);
                }
                Late::Ping(to) => to.tell("pong".to_owned()),
            })
            .on_signal(move |_, signal| {
                if let Signal::Terminated(_) = signal {
                    signal_report.tell("terminated".to_owned());
                }
                Behaviors::same()
            }),
            "watcher",
        )
        .unwrap();
    ends.watch(&target);
    w.tell(Late::Watch(target.clone()));
    w.tell(Late::WaitThenUnwatch(target.clone()));
    assert_eq!(probe.expect_message(T).await, "waiting");
    system.stop(&target).unwrap();
    ends.expect_terminated(&target, T).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    gate.add_permits(1);
    w.tell(Late::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "pong");
    probe.expect_no_message(Duration::from_millis(100)).await;
}

#[message]
enum Phase {
    Item(u64),
    Open1,
    Open2,
}

// S27: messages stashed again while a replay runs, then replayed by a second
// `unstash_all`, keep their arrival order, still ahead of what came after.
#[tapio::test(start_paused = true)]
async fn s27_restash_during_replay_keeps_arrival_order(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(100, move |stash| {
        let report = report.clone();
        Behaviors::receive_message(
            move |message: Phase| -> Result<Behavior<Phase>, StashOverflow> {
                match message {
                    Phase::Item(n) => {
                        stash.stash(Phase::Item(n))?;
                        Ok(Behaviors::same())
                    }
                    Phase::Open1 => {
                        let (stash2, report2) = (stash.clone(), report.clone());
                        Ok(stash.unstash_all(Behaviors::receive_message(
                            move |message: Phase| -> Result<Behavior<Phase>, StashOverflow> {
                                match message {
                                    Phase::Item(n) if n % 2 == 0 => {
                                        stash2.stash(Phase::Item(n))?;
                                    }
                                    Phase::Item(n) => report2.tell(n),
                                    Phase::Open2 => {
                                        let report3 = report2.clone();
                                        return Ok(stash2.unstash_all(Behaviors::receive_message(
                                            move |m: Phase| {
                                                if let Phase::Item(n) = m {
                                                    report3.tell(n);
                                                }
                                            },
                                        )));
                                    }
                                    Phase::Open1 => {}
                                }
                                Ok(Behaviors::same())
                            },
                        )))
                    }
                    Phase::Open2 => Ok(Behaviors::same()),
                }
            },
        )
    })
    .unwrap();
    let actor = system.spawn(behavior, "phases").unwrap();
    for n in 1..=6 {
        actor.tell(Phase::Item(n));
    }
    actor.tell(Phase::Open1);
    actor.tell(Phase::Item(7));
    actor.tell(Phase::Item(8));
    actor.tell(Phase::Open2);
    actor.tell(Phase::Item(9));
    assert_eq!(
        probe.receive_messages(9, T).await,
        [1, 3, 5, 7, 2, 4, 6, 8, 9]
    );
}

// S30: waiting offers are served in the order they began to wait, and one dropped
// while it waits gives up its place without blocking the line; `offer_within` that
// runs out is a dead letter.
#[tapio::test(start_paused = true)]
async fn s30_offers_wait_in_line_and_a_dropped_one_leaves_it(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let (mut probe, gate, sink) = gated_setup(&system, "sink", (1, OverflowStrategy::DropNew));
    sink.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, 0);
    sink.tell(2_u64);
    assert!(!sink.offer_within(9_u64, Duration::from_millis(100)).await);
    expect_dead_letter(
        &mut letters,
        sink.path(),
        DeadLetterReason::OfferTimedOut,
        9_u64,
    )
    .await;
    let mut o3 = sink.offer(3_u64);
    let mut o4 = sink.offer(4_u64);
    let mut o5 = sink.offer(5_u64);
    for offer in [&mut o3, &mut o4, &mut o5] {
        assert!(timeout(Duration::from_millis(10), offer).await.is_err());
    }
    drop(o4);
    gate.add_permits(1);
    // Awaited one at a time (see outside_core_failing.rs for the two polled together).
    assert!(timeout(T, o3).await.unwrap());
    assert!(timeout(T, o5).await.unwrap());
    assert_eq!(probe.receive_messages(4, T).await, [1, 2, 3, 5]);
}

#[message]
enum GatedJob {
    Work(u64, ActorRef<(String, u64)>),
}

// S32 + S29: a routee whose bounded mailbox is full gets the message dead-lettered;
// the rotation goes on, strictly.
#[tapio::test(start_paused = true)]
async fn s32_full_routee_gets_a_dead_letter_and_rotation_goes_on(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let in_gate = gate.clone();
    let pool = Routers::pool(2, move || {
        let gate = in_gate.clone();
        Behaviors::receive_async(async move |ctx, GatedJob::Work(n, to)| {
            if n == 1 {
                to.tell(("started".to_owned(), 0));
                gate.acquire().await.unwrap().forget();
            }
            to.tell((ctx.path().name().to_owned(), n));
        })
    })
    .unwrap()
    .routee_mailbox(MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap());
    let router = system.spawn(pool, "pool").unwrap();
    let me = probe.actor_ref().clone();
    router.tell(GatedJob::Work(1, me.clone()));
    assert_eq!(probe.expect_message(T).await, ("started".to_owned(), 0));
    for n in 2..=6 {
        router.tell(GatedJob::Work(n, me.clone()));
    }
    // The router hands on 2..=6 in one go: each routee holds one queued message,
    // so 4, 5 and 6 find their routee's mailbox full, and stay theirs.
    let mut refused = Vec::new();
    while refused.len() < 3 {
        let letter = timeout(T, letters.recv()).await.unwrap().unwrap();
        if !letter.recipient().name().starts_with("routee-") {
            continue;
        }
        assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull);
        let Some(GatedJob::Work(n, _)) = letter.take_message::<GatedJob>() else {
            panic!("a letter without its job");
        };
        refused.push((letter.recipient().name().to_owned(), n));
    }
    refused.sort_by_key(|(_, n)| *n);
    let refused: Vec<(&str, u64)> = refused.iter().map(|(w, n)| (w.as_str(), *n)).collect();
    assert_eq!(refused, [("routee-2", 4), ("routee-1", 5), ("routee-2", 6)]);
    gate.add_permits(1);
    let mut done = probe.receive_messages(3, T).await;
    done.sort_by_key(|(_, n)| *n);
    let who: Vec<(&str, u64)> = done.iter().map(|(w, n)| (w.as_str(), *n)).collect();
    assert_eq!(who, [("routee-1", 1), ("routee-2", 2), ("routee-1", 3)]);
    probe.expect_no_message(Duration::from_millis(50)).await;
}

// S33 + S9: a panic inside a blocking call is the actor's failure, decided by its
// supervision (here: restart, so the state is fresh).
#[tapio::test]
async fn s33_panic_in_blocking_call_is_the_actor_failure(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let setups = Arc::new(AtomicUsize::new(0));
    let counted = setups.clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                let report = report.clone();
                let sum = Arc::new(AtomicUsize::new(0));
                Behaviors::receive_async(async move |ctx, n: u64| -> Result<(), tapio::Failure> {
                    let doubled = ctx
                        .run_blocking(move || {
                            assert!(n != 0, "zero in the pool");
                            n * 2
                        })
                        .await?;
                    let total =
                        sum.fetch_add(doubled as usize, Ordering::SeqCst) + doubled as usize;
                    report.tell(total as u64);
                    Ok(())
                })
            }))
            .on_failure::<Panicked>(SupervisorStrategy::restart()),
            "blocking",
        )
        .unwrap();
    actor.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, 2);
    actor.tell(0_u64);
    actor.tell(2_u64);
    assert_eq!(
        probe.expect_message(T).await,
        4,
        "a fresh sum after the restart"
    );
    assert_eq!(setups.load(Ordering::SeqCst), 2);
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
pub struct Unlock;
#[message]
pub struct Lock;
#[message]
pub struct Enter(pub u64, pub ActorRef<u64>);

#[derive(Clone)]
pub struct Door;

#[actor(messages(Unlock, Lock, Enter), states(Closed => Opened, Opened => Closed))]
impl Door {}

#[derive(Clone)]
pub struct Closed;

#[state(Door, unhandled = stash)]
impl Closed {
    fn unlock(self, _: Unlock) -> Next<Self> {
        Next::to(Opened)
    }
}

#[derive(Clone)]
pub struct Opened;

#[state(Door)]
impl Opened {
    fn enter(&mut self, Enter(n, to): Enter) {
        to.tell(n);
    }

    fn lock(self, _: Lock) -> Next<Self> {
        Next::to(Closed)
    }
}

// S34 + S27: a state that stashes what it does not handle replays it, in order, at
// the next switch, ahead of what came after; a state that does not stash refuses.
#[tapio::test(start_paused = true)]
async fn s34_stashing_state_replays_at_the_switch(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let me = probe.actor_ref().clone();
    let door = system.spawn(Machine::new(Door, Closed), "door").unwrap();
    door.tell(Enter(1, me.clone()));
    door.tell(Enter(2, me.clone()));
    door.tell(Unlock);
    door.tell(Enter(3, me.clone()));
    assert_eq!(probe.receive_messages(3, T).await, [1, 2, 3]);
    door.tell(Unlock); // `Opened` does not handle it
    letter_with(
        &mut letters,
        door.path(),
        DeadLetterReason::NotHandledInState("Opened"),
    )
    .await;
    door.tell(Lock);
    door.tell(Enter(4, me.clone()));
    probe.expect_no_message(Duration::from_millis(50)).await;
    door.tell(Unlock);
    assert_eq!(probe.expect_message(T).await, 4);
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

// S26 + S11: a resume on `StashOverflow` keeps what the stash holds (only the
// message that did not fit is a dead letter), and a later `unstash_all` replays it.
#[tapio::test(start_paused = true)]
async fn s26_resume_after_overflow_keeps_the_stash(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(bounded_stasher(2, probe.actor_ref().clone()))
                .on_failure::<StashOverflow>(SupervisorStrategy::resume()),
            "resumed",
        )
        .unwrap();
    for n in 1..=4 {
        actor.tell(Held::Item(n));
    }
    let mut full = Vec::new();
    for _ in 0..2 {
        let letter = letter_with(&mut letters, actor.path(), DeadLetterReason::StashFull).await;
        match letter.take_message::<Held>() {
            Some(Held::Item(n)) => full.push(n),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(full, [3, 4]);
    actor.tell(Held::Open);
    actor.tell(Held::Item(5));
    assert_eq!(probe.receive_messages(3, T).await, [1, 2, 5]);
}

// S32 (group): a group router over actors spawned elsewhere drops a routee that
// stops, rotates over the rest, and stops once the last one has.
#[tapio::test(start_paused = true)]
async fn s32_group_router_loses_routees_then_stops(system: ActorSystem) {
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let routees: Vec<ActorRef<Job>> = (1..=3)
        .map(|i| system.spawn(routee(), &format!("member-{i}")).unwrap())
        .collect();
    let router = system
        .spawn(Routers::group(routees.clone()).unwrap(), "group")
        .unwrap();
    probe.watch(&router);
    assert_eq!(
        route(&router, &mut probe, 1..=3).await,
        ["member-1", "member-2", "member-3"]
    );
    let mut ends = TestProbe::<u64>::new(&system);
    ends.watch(&routees[1]);
    system.stop(&routees[1]).unwrap();
    ends.expect_terminated(&routees[1], T).await;
    // With the clock paused, time moves only once every task is idle: the router
    // has heard of it by then.
    tokio::time::sleep(Duration::from_millis(10)).await;
    let who = route(&router, &mut probe, 4..=7).await;
    assert!(!who.contains(&"member-2".to_owned()), "{who:?}");
    assert_eq!(who, ["member-1", "member-3", "member-1", "member-3"]);
    probe.expect_no_termination(Duration::from_millis(10)).await;
    system.stop(&routees[0]).unwrap();
    system.stop(&routees[2]).unwrap();
    probe.expect_terminated(&router, T).await;
}

/// Poll a future once with a waker that does nothing, as `join!` or `select!` may
/// poll one at any moment.
fn poll_once<F: std::future::Future + Unpin>(future: &mut F) -> std::task::Poll<F::Output> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    std::pin::Pin::new(future).poll(&mut cx)
}

// S30: waiting offers are served in the order they began to wait. Two offers wait
// on a full mailbox, `first` before `second`; when room comes, `first` is woken, but
// `second` is polled before it: it must not take the room.
#[tapio::test(start_paused = true)]
async fn s30_a_later_offer_does_not_overtake_an_earlier_one(system: ActorSystem) {
    let (mut probe, gate, sink) = gated_setup(&system, "sink", (1, OverflowStrategy::DropNew));
    sink.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, 0);
    sink.tell(2_u64); // the mailbox is full
    let mut first = sink.offer(3_u64);
    let mut second = sink.offer(4_u64);
    assert!(poll_once(&mut first).is_pending());
    assert!(poll_once(&mut second).is_pending());
    gate.add_permits(1);
    assert_eq!(probe.receive_messages(2, T).await, [1, 2]); // room for one now
    assert!(
        poll_once(&mut second).is_pending(),
        "the later offer waits behind the earlier one"
    );
    // A brand-new offer waits behind both, even while there is room.
    let mut third = sink.offer(5_u64);
    assert!(poll_once(&mut third).is_pending());
    assert!(timeout(T, first).await.unwrap());
    assert!(timeout(T, second).await.unwrap());
    assert!(timeout(T, third).await.unwrap());
    assert_eq!(
        probe.receive_messages(3, T).await,
        [3, 4, 5],
        "the offers are served in the order they began to wait"
    );
}
