//! Timer keys and lifecycles: cancel then start, a key reused with another message and
//! mode, restarts of timers started inside `supervise`, timelines behind a slow actor,
//! and a single timer due after its actor stopped (S14, S25, S31, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::lifecycle_corners::*;
use crate::support::outside;
use outside::{Boom, T, ms};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, TestProbe};
use tapio::{DeadLetter, TimerMode, TimerScheduler};
use tokio::time::{Instant, sleep};

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
