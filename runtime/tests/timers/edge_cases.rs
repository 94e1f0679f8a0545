//! Timers at their edges: a restart cancels timers and queued ticks, fixed delay
//! against fixed rate under a stall, keys that replace and cancel, and a stop (S14,
//! S25).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_cases::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tapio::DeadLetter;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::sync::Semaphore;
use tokio::time::Instant;

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
