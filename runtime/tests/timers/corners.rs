//! Corners of timers: `is_active`, `cancel_all` dropping queued ticks, timers started
//! in or after `PostStop`, a key started again, and the kit's records (S25, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{T, expect_lines, ms, no_letter_for};
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, LeakReport, TestProbe};
use tapio::{DeadLetter, TimerMode};
use tokio::sync::mpsc;
use tokio::time::timeout;

// =================================================================================
// 3. Timers (S24, S25)
// =================================================================================

#[tapio::test(start_paused = true)]
async fn s25_is_active_follows_start_fire_and_cancel(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_single_timer("once", 0_u64, ms(100));
                to.tell(format!(
                    "armed once={} never={}",
                    timers.is_active("once"),
                    timers.is_active("never")
                ));
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| match n {
                    0 => to.tell(format!("fired once={}", timers.is_active("once"))),
                    1 => {
                        timers.start_fixed_delay("rep", 9_u64, ms(50)).unwrap();
                        to.tell(format!("started rep={}", timers.is_active("rep")));
                    }
                    2 => {
                        timers.cancel("rep");
                        to.tell(format!("cancelled rep={}", timers.is_active("rep")));
                    }
                    3 => to.tell(format!(
                        "later once={} rep={}",
                        timers.is_active("once"),
                        timers.is_active("rep")
                    )),
                    _ => {}
                })
            }),
            "timed",
        )
        .unwrap();
    expect_lines(&mut probe, &["armed once=true never=false"]).await;
    // A single timer that has fired is not running any more.
    expect_lines(&mut probe, &["fired once=false"]).await;
    actor.tell(1_u64);
    actor.tell(2_u64);
    actor.tell(3_u64);
    expect_lines(
        &mut probe,
        &[
            "started rep=true",
            "cancelled rep=false",
            "later once=false rep=false",
        ],
    )
    .await;
}

#[tapio::test(start_paused = true)]
async fn s25_cancel_all_silences_every_key_and_drops_ticks_already_queued(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, n: u64| {
                match n {
                    1 => {
                        let timers = ctx.timers();
                        timers.start_single_timer("a", 10_u64, ms(10));
                        timers.start_single_timer("b", 20_u64, ms(20));
                        timers.start_fixed_rate("c", 30_u64, ms(5)).unwrap();
                        // Busy while every one of them comes due and queues.
                        tokio::time::sleep(ms(100)).await;
                        let timers = ctx.timers();
                        timers.cancel_all();
                        to.tell(format!(
                            "cancelled a={} b={} c={}",
                            timers.is_active("a"),
                            timers.is_active("b"),
                            timers.is_active("c")
                        ));
                    }
                    2 => to.tell("done".to_string()),
                    tick => to.tell(format!("tick {tick}")),
                }
            }),
            "canceller",
        )
        .unwrap();
    actor.tell(1_u64);
    actor.tell(2_u64);
    expect_lines(&mut probe, &["cancelled a=false b=false c=false", "done"]).await;
    probe.expect_no_message(ms(500)).await;
}

#[tokio::test(start_paused = true)]
async fn s25_s48_timers_started_in_post_stop_or_after_the_stop_never_fire_and_leak_nothing() {
    let system = ActorSystem::builder("late-timers")
        .track_leaks(true)
        .build()
        .unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (scheduler_tx, mut schedulers) = mpsc::unbounded_channel::<tapio::TimerScheduler<u64>>();
    let late = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let _ = scheduler_tx.send(ctx.timers());
                let to = to.clone();
                Behaviors::receive_message(|_: u64| Behaviors::stopped()).on_signal(
                    move |ctx, signal| {
                        if *signal == Signal::PostStop {
                            let timers = ctx.timers();
                            timers.start_single_timer("late", 1_u64, ms(10));
                            let refused = timers.start_fixed_rate("later", 2_u64, ms(10)).is_err();
                            to.tell(format!("post-stop refused={refused}"));
                        }
                        Behaviors::same()
                    },
                )
            }),
            "late",
        )
        .unwrap();
    let kept = timeout(T, schedulers.recv()).await.unwrap().unwrap();
    // And one actor whose fixed-rate timer is still running at termination.
    let _ticking = system
        .spawn(
            Behaviors::with_timers(|timers| {
                timers.start_fixed_rate("tick", 0_u64, ms(10)).unwrap();
                Behaviors::ignore::<u64>()
            }),
            "ticking",
        )
        .unwrap();
    probe.watch(&late);
    late.tell(0_u64);
    expect_lines(&mut probe, &["post-stop refused=false"]).await;
    probe.expect_terminated(&late, T).await;
    // A scheduler kept past the stop starts nothing either.
    kept.start_fixed_rate("after", 3_u64, ms(10)).unwrap();
    kept.start_single_timer("after-once", 4_u64, ms(10));
    // A tick sent to the stopped actor would be a dead letter: none comes.
    no_letter_for(&mut letters, late.path(), ms(300)).await;
    let report = LeakReport::after_terminating(&system).await;
    assert_eq!(report.pending_timers, Some(0), "{report}");
    assert!(report.is_clean(), "{report}");
}

#[tapio::test(start_paused = true)]
async fn s25_a_key_started_again_drops_the_tick_its_old_timer_had_queued(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, n: u64| match n {
                0 => {
                    ctx.timers().start_single_timer("k", 1_u64, ms(10));
                    ctx.timers().start_fixed_rate("r", 3_u64, ms(10)).unwrap();
                    // Busy while both come due and queue their ticks.
                    tokio::time::sleep(ms(100)).await;
                    ctx.timers().start_single_timer("k", 2_u64, ms(50));
                    ctx.timers().start_fixed_rate("r", 4_u64, ms(1000)).unwrap();
                    to.tell("replaced".to_string());
                }
                tick => to.tell(format!("tick {tick}")),
            }),
            "replacer",
        )
        .unwrap();
    actor.tell(0_u64);
    expect_lines(&mut probe, &["replaced", "tick 2", "tick 4"]).await;
    probe.expect_no_message(ms(500)).await;
}

#[test]
fn s48_s25_kit_records_each_mode_and_cancel_all_cancels_every_running_key() {
    let mut kit = BehaviorTestKit::new(Behaviors::with_timers(|timers| {
        Behaviors::receive_message(move |n: u64| match n {
            1 => {
                timers.start_single_timer("s", 0_u64, ms(5));
                timers.start_fixed_delay("d", 0_u64, ms(10)).unwrap();
                timers.start_fixed_rate("r", 0_u64, ms(20)).unwrap();
            }
            2 => timers.cancel_all(),
            _ => {}
        })
    }));
    kit.run(1_u64).unwrap();
    assert_eq!(
        kit.effects(),
        [
            Effect::TimerStarted {
                key: "s".into(),
                mode: TimerMode::Single,
                delay: ms(5)
            },
            Effect::TimerStarted {
                key: "d".into(),
                mode: TimerMode::FixedDelay,
                delay: ms(10)
            },
            Effect::TimerStarted {
                key: "r".into(),
                mode: TimerMode::FixedRate,
                delay: ms(20)
            },
        ]
    );
    kit.run(2_u64).unwrap();
    let mut cancelled: Vec<String> = kit
        .effects()
        .into_iter()
        .map(|effect| match effect {
            Effect::TimerCancelled { key } => key.as_str().to_string(),
            other => panic!("not a cancellation: {other:?}"),
        })
        .collect();
    cancelled.sort();
    assert_eq!(cancelled, ["d", "r", "s"]);
    kit.run(2_u64).unwrap();
    assert_eq!(kit.effects(), [], "nothing was running any more");
}
