//! Timers: a tick is an ordinary message on the actor's own user lane (S24); single,
//! fixed-delay and fixed-rate timers, keyed, cancelled on restart and on stop (S25).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::ms;
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, LeakReport, TestProbe};
use tapio::{TimerMode, TimerScheduler, ZeroInterval};
use tokio::sync::watch;

const SECOND: Duration = Duration::from_secs(1);

/// What a timed actor handles: commands from the test, and its own ticks.
#[message]
#[derive(Clone)]
pub enum Timed {
    /// Start a single timer under `key`, after `delay`, that sends `Tick(name)`.
    Single(&'static str, Duration, &'static str),
    /// Start a fixed-rate timer.
    Rate(&'static str, Duration),
    /// Start a fixed-delay timer.
    Delay(&'static str, Duration),
    Cancel(&'static str),
    /// Wait for the gate to open (the handler is busy meanwhile), then log.
    Busy(watch::Receiver<bool>, &'static str),
    /// Log the name.
    Note(&'static str),
    /// A tick of a timer.
    Tick(&'static str),
    /// Fail the handler.
    Fail,
}

#[derive(Debug, thiserror::Error)]
#[error("failed on purpose")]
pub struct Failed;

#[derive(Clone)]
struct Clock {
    log: ActorRef<String>,
    timers: TimerScheduler<ClockMsg>,
    /// Which incarnation this is: 1, then 2 after a restart.
    incarnation: u32,
}

#[actor]
impl Clock {
    async fn timed(&mut self, message: Timed) -> Result<(), Failed> {
        match message {
            Timed::Single(key, delay, name) => {
                self.timers
                    .start_single_timer(key, Timed::Tick(name), delay)
            }
            Timed::Rate(key, every) => self
                .timers
                .start_fixed_rate(key, Timed::Tick(key), every)
                .unwrap(),
            Timed::Delay(key, every) => self
                .timers
                .start_fixed_delay(key, Timed::Tick(key), every)
                .unwrap(),
            Timed::Cancel(key) => self.timers.cancel(key),
            Timed::Busy(mut gate, name) => {
                let _ = gate.wait_for(|open| *open).await;
                self.log.tell(name.to_string());
            }
            Timed::Note(name) => self.log.tell(name.to_string()),
            Timed::Tick(name) if self.incarnation == 1 => self.log.tell(format!("tick {name}")),
            Timed::Tick(name) => self
                .log
                .tell(format!("tick {name} in incarnation {}", self.incarnation)),
            Timed::Fail => return Err(Failed),
        }
        Ok(())
    }
}

fn clock(log: ActorRef<String>) -> Behavior<ClockMsg> {
    let incarnations = std::sync::atomic::AtomicU32::new(0);
    Behaviors::supervise(Behaviors::with_timers(move |timers| Clock {
        log: log.clone(),
        timers,
        incarnation: incarnations.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1,
    }))
    .on_failure::<Failed>(SupervisorStrategy::restart())
    .into()
}

// S24: a tick queues behind what is already in the mailbox and never enters a
// handler that is still running.
#[tapio::test(start_paused = true)]
async fn a_tick_queues_like_any_other_message(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let actor = system
        .spawn(clock(log.actor_ref().clone()), "clock")
        .unwrap();
    let (open, gate) = watch::channel(false);
    actor.tell(Timed::Single("t", ms(10), "t"));
    actor.tell(Timed::Note("armed"));
    actor.tell(Timed::Busy(gate, "busy done"));
    actor.tell(Timed::Note("queued before the tick"));
    assert_eq!(log.expect_message(SECOND).await, "armed");
    // The tick comes due while the handler is busy.
    tokio::time::sleep(ms(50)).await; // paused clock: deterministic
    open.send_replace(true);
    let lines = log.receive_messages(3, SECOND).await;
    assert_eq!(lines, ["busy done", "queued before the tick", "tick t"]);
}

// S25: a single timer fires once.
#[tapio::test(start_paused = true)]
async fn a_single_timer_fires_once(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let actor = system
        .spawn(clock(log.actor_ref().clone()), "clock")
        .unwrap();
    let started = tokio::time::Instant::now();
    actor.tell(Timed::Single("once", ms(250), "once"));
    assert_eq!(log.expect_message(SECOND).await, "tick once");
    assert_eq!(started.elapsed(), ms(250));
    log.expect_no_message(Duration::from_secs(10)).await;
}

// S25: starting a key again replaces the timer, and a tick the old one already queued
// is dropped unseen; cancelling by key does the same.
#[tapio::test(start_paused = true)]
async fn a_key_replaces_and_cancels_even_a_queued_tick(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let actor = system
        .spawn(clock(log.actor_ref().clone()), "clock")
        .unwrap();
    let (open, gate) = watch::channel(false);
    actor.tell(Timed::Single("k", ms(10), "old"));
    actor.tell(Timed::Single("gone", ms(10), "cancelled"));
    actor.tell(Timed::Note("armed"));
    actor.tell(Timed::Busy(gate, "busy done"));
    assert_eq!(log.expect_message(SECOND).await, "armed");
    // Both ticks come due (and queue) while the handler is busy: time passes on the
    // paused clock, which runs every timer due before 50 ms, in order.
    tokio::time::sleep(ms(50)).await; // paused clock: deterministic

    // ...and these commands queue behind them.
    actor.tell(Timed::Single("k", ms(100), "new"));
    actor.tell(Timed::Cancel("gone"));
    open.send_replace(true);
    // The queued ticks came before the commands, so they were delivered:
    // replacing and cancelling apply from the moment they are handled.
    let mut lines = Vec::new();
    while let Some(line) = log.receive_message(ms(500)).await {
        lines.push(line);
    }
    assert_eq!(
        lines,
        ["busy done", "tick old", "tick cancelled", "tick new"]
    );
}

/// A clock that replaces its own timer from inside the handler that runs while the
/// old tick is queued: the old tick must not arrive.
#[derive(Clone)]
struct Replacer {
    log: ActorRef<String>,
    timers: TimerScheduler<Timed>,
}

impl tapio::Protocol for Replacer {
    type Msg = Timed;
}

impl Actor for Replacer {
    fn handle<'a>(
        &'a mut self,
        _: &'a mut ActorContext<Timed>,
        message: Timed,
    ) -> tapio::Handled<'a, Timed> {
        tapio::Handled::pending(async move {
            match message {
                Timed::Busy(mut gate, name) => {
                    self.timers
                        .start_single_timer("k", Timed::Tick("old"), ms(10));
                    self.timers
                        .start_single_timer("c", Timed::Tick("cancelled"), ms(10));
                    let _ = gate.wait_for(|open| *open).await;
                    // Both ticks are queued now; replace one key and cancel the other.
                    self.timers
                        .start_single_timer("k", Timed::Tick("new"), ms(100));
                    self.timers.cancel("c");
                    self.log.tell(name.to_string());
                }
                Timed::Tick(name) => self.log.tell(format!("tick {name}")),
                _ => {}
            }
        })
    }
}

#[tapio::test(start_paused = true)]
async fn a_replaced_or_cancelled_timer_loses_its_queued_tick(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let to = log.actor_ref().clone();
    let actor: ActorRef<Timed> = system
        .spawn(
            Behaviors::with_timers(move |timers| Replacer {
                log: to.clone(),
                timers,
            }),
            "replacer",
        )
        .unwrap();
    let (open, gate) = watch::channel(false);
    actor.tell(Timed::Busy(gate, "replaced"));
    tokio::time::sleep(ms(50)).await; // paused clock: both ticks queue meanwhile
    open.send_replace(true);
    assert_eq!(log.expect_message(SECOND).await, "replaced");
    assert_eq!(log.expect_message(SECOND).await, "tick new");
    log.expect_no_message(SECOND).await;
}

/// Count the ticks a stalled actor handles over `window` with a timer of `mode`.
async fn ticks_through_a_stall(system: &ActorSystem, rate: bool) -> usize {
    let mut log = TestProbe::<String>::new(system);
    let actor = system
        .spawn_anonymous(clock(log.actor_ref().clone()))
        .unwrap();
    let (open, gate) = watch::channel(false);
    actor.tell(if rate {
        Timed::Rate("r", ms(10))
    } else {
        Timed::Delay("r", ms(10))
    });
    // The first tick arrives at 10 ms; the actor then stalls for 55 ms.
    assert_eq!(log.expect_message(SECOND).await, "tick r");
    actor.tell(Timed::Busy(gate, "stalled"));
    tokio::time::sleep(ms(55)).await; // paused clock: the stall takes no real time
    open.send_replace(true);
    assert_eq!(log.expect_message(SECOND).await, "stalled");
    // Count what arrives in the next 30 ms.
    let deadline = tokio::time::Instant::now() + ms(30);
    let mut ticks = 0;
    while let Some(line) = log
        .receive_message(deadline - tokio::time::Instant::now())
        .await
    {
        assert_eq!(line, "tick r");
        ticks += 1;
    }
    ticks
}

// S25: fixed-rate sends the ticks missed during a stall one after another; fixed-delay
// sends no tick while the previous one waits in the mailbox, so an actor that fell
// behind gets fewer: the one that waited, the one sent as it was taken, and then one
// every 10 ms.
#[tapio::test(start_paused = true)]
async fn fixed_rate_catches_up_and_fixed_delay_does_not(system: ActorSystem) {
    let rate = ticks_through_a_stall(&system, true).await;
    let delay = ticks_through_a_stall(&system, false).await;
    assert!(
        rate >= 7,
        "fixed rate: {rate} ticks, expected the missed ones too"
    );
    assert!(
        delay <= 5,
        "fixed delay: {delay} ticks, expected no catch-up"
    );
}

/// What a plodder handles: the ticks of its own fixed-delay timer, and stalls.
#[message]
#[derive(Clone)]
pub enum Plod {
    /// A tick: log when it was handled, then take long over it while slow ticks remain.
    Tick,
    /// Be busy for this long.
    Stall(Duration),
}

/// An actor with a 10 ms fixed-delay timer, started in its setup, that logs when each
/// tick is handled (in ms since the timer started) and spends `slow` on each of its
/// first `slow_ticks` ticks.
struct Plodder {
    log: ActorRef<u64>,
    started: tokio::time::Instant,
    slow_ticks: u32,
    slow: Duration,
}

#[actor]
impl Plodder {
    async fn plod(&mut self, message: Plod) {
        match message {
            Plod::Tick => {
                let at = self.started.elapsed().as_millis();
                self.log.tell(u64::try_from(at).unwrap());
                if self.slow_ticks > 0 {
                    self.slow_ticks -= 1;
                    tokio::time::sleep(self.slow).await; // paused clock: deterministic
                }
            }
            Plod::Stall(how_long) => tokio::time::sleep(how_long).await,
        }
    }
}

fn plodder(log: ActorRef<u64>, slow_ticks: u32, slow: Duration) -> Behavior<PlodderMsg> {
    Behaviors::with_timers(move |timers| {
        timers
            .start_fixed_delay("plod", Plod::Tick, ms(10))
            .unwrap();
        Plodder {
            log: log.clone(),
            started: tokio::time::Instant::now(),
            slow_ticks,
            slow,
        }
    })
}

// S25: a fixed-delay tick is sent 10 ms after the previous one was sent, not after
// it was handled: a first tick handled 5 ms late (the actor was busy) does not push
// the ones after it back.
#[tapio::test(start_paused = true)]
async fn s25_fixed_delay_measures_from_one_send_to_the_next(system: ActorSystem) {
    let mut log = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(
            plodder(log.actor_ref().clone(), 0, Duration::ZERO),
            "plodder",
        )
        .unwrap();
    actor.tell(Plod::Stall(ms(15)));
    // Sent at 10, 20, 30 and 40 ms; the first waits in the mailbox until 15 ms.
    assert_eq!(log.receive_messages(4, SECOND).await, [15, 20, 30, 40]);
}

// S25: an actor that falls behind its fixed-delay timer gets fewer ticks, not a
// backlog: a tick is not sent while the previous one still waits in the mailbox, and
// goes out as soon as that one is taken if 10 ms have passed since it was sent.
// While each tick takes 25 ms to handle, one arrives every 25 ms; once the actor
// keeps up again, every 10 ms. Over the first 115 ms: 8 ticks, where a timer that
// kept sending every 10 ms would have queued 11.
#[tapio::test(start_paused = true)]
async fn s25_a_slow_actor_gets_fewer_fixed_delay_ticks_not_a_backlog(system: ActorSystem) {
    let mut log = TestProbe::<u64>::new(&system);
    let _plodder = system
        .spawn(plodder(log.actor_ref().clone(), 3, ms(25)), "plodder")
        .unwrap();
    // Tick 1 is sent at 10 ms and handled until 35; tick 2, sent at 20, waits until
    // then, and tick 3 goes out the moment it is taken (35); likewise tick 4 at 60.
    // Tick 4 is handled quickly, at 85, so tick 5 (sent at 85) follows at once, and
    // from then on ticks come 10 ms apart.
    assert_eq!(
        log.receive_messages(8, SECOND).await,
        [10, 35, 60, 85, 85, 95, 105, 115]
    );
}

// S25: a restart cancels every timer, and a tick the failed incarnation's timer had
// already queued never reaches the new incarnation.
#[tapio::test(start_paused = true)]
async fn a_restart_cancels_timers_and_their_queued_ticks(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let actor = system
        .spawn(clock(log.actor_ref().clone()), "clock")
        .unwrap();
    let (open, gate) = watch::channel(false);
    actor.tell(Timed::Rate("rate", ms(10)));
    assert_eq!(log.expect_message(SECOND).await, "tick rate");
    actor.tell(Timed::Busy(gate, "busy"));
    tokio::time::sleep(ms(30)).await; // paused clock: ticks queue behind the busy handler
    actor.tell(Timed::Fail); // and more keep coming until the failure is handled
    open.send_replace(true);
    assert_eq!(log.expect_message(SECOND).await, "busy");
    // The ticks queued before `Fail` are handled by the failing incarnation; the ones
    // that came after it are dropped, and the new incarnation sees none.
    let mut lines = Vec::new();
    while let Some(line) = log.receive_message(ms(200)).await {
        lines.push(line);
    }
    assert!(
        lines.len() >= 2,
        "the ticks queued before the failure: {lines:?}"
    );
    assert!(lines.iter().all(|l| l == "tick rate"), "{lines:?}");
    actor.tell(Timed::Note("restarted"));
    assert_eq!(log.expect_message(SECOND).await, "restarted");
    log.expect_no_message(SECOND).await;
}

// S25: a stop cancels every timer: nothing is left running after termination.
#[tokio::test(start_paused = true)]
async fn a_stop_cancels_every_timer() {
    let system = ActorSystem::builder("timers")
        .track_leaks(true)
        .build()
        .unwrap();
    let mut log = TestProbe::<String>::new(&system);
    let actor = system
        .spawn(clock(log.actor_ref().clone()), "clock")
        .unwrap();
    actor.tell(Timed::Rate("a", ms(10)));
    actor.tell(Timed::Delay("b", ms(10)));
    actor.tell(Timed::Single("c", Duration::from_secs(3600), "c"));
    assert!(
        log.receive_messages(2, SECOND)
            .await
            .iter()
            .all(|l| l.starts_with("tick"))
    );
    let report = LeakReport::after_terminating(&system).await;
    assert_eq!(report.pending_timers, Some(0), "{report}");
    assert!(report.is_clean(), "{report}");
}

// S25: timers belong to the cell: a scheduler handle kept past its actor's stop
// starts nothing, so nothing is left running for the leak report to find.
#[tokio::test(start_paused = true)]
async fn a_kept_handle_starts_nothing_once_its_actor_has_stopped() {
    let system = ActorSystem::builder("kept_timers")
        .track_leaks(true)
        .build()
        .unwrap();
    let mut handles = TestProbe::<Vec<TimerScheduler<u64>>>::new(&system);
    let to = handles.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::setup(move |ctx| {
                to.tell(vec![ctx.timers()]);
                Behaviors::receive_message(|_: u64| Behaviors::stopped())
            }),
            "short-lived",
        )
        .unwrap();
    let kept = handles.expect_message(SECOND).await.remove(0);
    handles.watch(&actor);
    actor.tell(0_u64);
    handles.expect_terminated(&actor, SECOND).await;
    kept.start_single_timer("late", 1_u64, SECOND);
    kept.start_fixed_rate("late-rate", 2_u64, ms(10)).unwrap();
    assert!(!kept.is_active("late"));
    assert!(!kept.is_active("late-rate"));
    let report = LeakReport::after_terminating(&system).await;
    assert_eq!(report.pending_timers, Some(0), "{report}");
    drop(kept);
}

// Bad input: a repeating timer with a zero interval is refused with a typed error.
#[tapio::test(start_paused = true)]
async fn a_zero_interval_is_refused(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let actor: ActorRef<u64> = system
        .spawn(
            Behaviors::receive(move |ctx, _: u64| {
                let refused = ctx.timers().start_fixed_rate("spin", 1_u64, Duration::ZERO);
                report.tell(
                    refused
                        .err()
                        .map(|e: ZeroInterval| e.to_string())
                        .unwrap_or_default(),
                );
            }),
            "spinner",
        )
        .unwrap();
    actor.tell(1_u64);
    assert_eq!(
        probe.expect_message(SECOND).await,
        "a repeating timer needs a non-zero interval (timer \"spin\"): a zero interval would flood the mailbox; use a single timer to act once"
    );
}

// The behavior test kit records timers started and cancelled, and runs none.
#[test]
fn the_behavior_kit_records_timers() {
    let mut kit = BehaviorTestKit::new(Behaviors::with_timers(|timers| {
        timers.start_fixed_rate("refill", 0_u64, ms(30)).unwrap();
        Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                timers.cancel("refill");
            } else {
                timers.start_single_timer("later", 0_u64, ms(n));
            }
        })
    }));
    kit.run(5_u64).unwrap();
    kit.run(0_u64).unwrap();
    assert_eq!(
        kit.effects(),
        [
            Effect::TimerStarted {
                key: "refill".into(),
                mode: TimerMode::FixedRate,
                delay: ms(30)
            },
            Effect::TimerStarted {
                key: "later".into(),
                mode: TimerMode::Single,
                delay: ms(5)
            },
            Effect::TimerCancelled {
                key: "refill".into()
            },
        ]
    );
}
