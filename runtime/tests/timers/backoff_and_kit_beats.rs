//! Timers in unusual orders: a fixed-rate timer across a backoff, a timer started in
//! `PreRestart`, the kit's timer effects against live beats, ticks into a full fail
//! mailbox, and `cancel_all` after a storm (S12, S15, S24, S25, S29, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_orders::*;
use crate::support::outside;
use outside::{Boom, T, expect_lines, ms, next};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{MailboxConfig, OverflowStrategy};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

/// S25, S12, S14: a fixed-rate timer started in a `with_timers` inside `supervise`
/// ticks on its schedule, is cancelled by the failure, is silent for the whole
/// backoff, and starts again from the new incarnation's start: exact instants on
/// the paused clock.
#[tapio::test(start_paused = true)]
async fn s25_s12_a_fixed_rate_timer_from_setup_stops_for_the_backoff_and_starts_over(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let zero = Instant::now();
    let _ticker = system
        .spawn(
            Behaviors::supervise(Behaviors::with_timers(move |timers| {
                timers.start_fixed_rate("tick", Tick, ms(100)).unwrap();
                let to = to.clone();
                to.tell(format!("start @{}", zero.elapsed().as_millis()));
                let ticks = AtomicU64::new(0);
                Behaviors::receive_message(move |_: Tick| {
                    let n = ticks.fetch_add(1, SeqCst) + 1;
                    to.tell(format!("tick {n} @{}", zero.elapsed().as_millis()));
                    if n == 3 { Err(Boom) } else { Ok(()) }
                })
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart().with_backoff(fixed_backoff(Duration::from_secs(1))),
            ),
            "ticker",
        )
        .unwrap();
    expect_lines(
        &mut probe,
        &[
            "start @0",
            "tick 1 @100",
            "tick 2 @200",
            "tick 3 @300",
            "start @1300",
            "tick 1 @1400",
            "tick 2 @1500",
        ],
    )
    .await;
}

/// S25, S15, S14: a timer started from the `PreRestart` handler belongs to the
/// incarnation that is being replaced: the restart cancels it, the new
/// incarnation does not see it active, and its tick never comes.
#[tapio::test(start_paused = true)]
async fn s25_s15_a_timer_started_in_pre_restart_is_cancelled_by_that_restart(system: ActorSystem) {
    #[message]
    #[derive(Clone)]
    pub enum Pr {
        Fail,
        Ask,
        Late,
    }
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<Pr>| {
                let to = to.clone();
                let on_signal = to.clone();
                Behaviors::receive(move |ctx, message: Pr| match message {
                    Pr::Fail => Err(Boom),
                    Pr::Ask => {
                        to.tell(format!("active {}", ctx.timers().is_active("late")));
                        Ok(Behaviors::same())
                    }
                    Pr::Late => {
                        to.tell("late tick".to_string());
                        Ok(Behaviors::same())
                    }
                })
                .on_signal(move |ctx, signal| {
                    if *signal == Signal::PreRestart {
                        ctx.timers().start_single_timer("late", Pr::Late, ms(50));
                        ctx.timers()
                            .start_fixed_rate("late-rate", Pr::Late, ms(20))
                            .unwrap();
                        on_signal.tell("pre-restart".to_string());
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "pre",
        )
        .unwrap();
    actor.tell(Pr::Fail);
    actor.tell(Pr::Ask);
    expect_lines(&mut probe, &["pre-restart", "active false"]).await;
    probe.expect_no_message(Duration::from_secs(1)).await;
}

#[message]
#[derive(Clone)]
pub enum Metro {
    Start,
    Beat,
    Stop,
}

fn metronome(to: ActorRef<String>) -> Behavior<Metro> {
    Behaviors::with_timers(move |timers| {
        let to = to.clone();
        let zero = Instant::now();
        Behaviors::receive_message(move |m: Metro| {
            match m {
                Metro::Start => timers
                    .start_fixed_rate("beat", Metro::Beat, ms(100))
                    .unwrap(),
                Metro::Beat => to.tell(format!("beat @{}", zero.elapsed().as_millis())),
                Metro::Stop => timers.cancel("beat"),
            }
            Behaviors::same()
        })
    })
}

/// S48, S25: the kit records the fixed-rate timer a message starts and the cancel
/// another makes; the same behavior live, on the paused clock, beats exactly on
/// the period until the cancel, then never again.
#[tapio::test(start_paused = true)]
async fn s48_s25_the_kits_timer_effects_match_the_live_beats(system: ActorSystem) {
    use tapio::testkit::Effect;
    let inbox = tapio::testkit::TestInbox::<String>::new();
    let mut kit = tapio::testkit::BehaviorTestKit::new(metronome(inbox.actor_ref().clone()));
    kit.run(Metro::Start).unwrap();
    kit.expect_effect(Effect::TimerStarted {
        key: "beat".into(),
        mode: tapio::TimerMode::FixedRate,
        delay: ms(100),
    });
    kit.run(Metro::Stop).unwrap();
    kit.expect_effect(Effect::TimerCancelled { key: "beat".into() });

    let mut probe = TestProbe::<String>::new(&system);
    let live = system
        .spawn(metronome(probe.actor_ref().clone()), "metronome")
        .unwrap();
    live.tell(Metro::Start);
    let beats = probe.receive_messages(5, T).await;
    assert_eq!(
        beats,
        [
            "beat @100",
            "beat @200",
            "beat @300",
            "beat @400",
            "beat @500"
        ]
    );
    live.tell(Metro::Stop);
    probe.expect_no_message(Duration::from_secs(2)).await;
}

/// A behavior counting its setups on `to` ("setup N"), whose `N(1)` parks the
/// handler on `gate`, and which reports what it handles.
fn gated_setup(
    to: ActorRef<String>,
    gate: Arc<tokio::sync::Notify>,
    setups: Arc<AtomicU64>,
    tick_after: Option<Duration>,
) -> Behavior<Gated> {
    Behaviors::setup(move |ctx: &mut ActorContext<Gated>| {
        let run = setups.fetch_add(1, SeqCst) + 1;
        to.tell(format!("setup {run}"));
        if let Some(after) = tick_after {
            ctx.timers().start_single_timer("tick", Gated::Tick, after);
        }
        let to = to.clone();
        let gate = gate.clone();
        Behaviors::receive_message_async(async move |m: Gated| match m {
            Gated::N(n) => {
                if n == 1 {
                    gate.notified().await;
                }
                to.tell(format!("got {n}"));
            }
            Gated::Tick => to.tell("tick".to_string()),
            Gated::Release => {}
        })
    })
}

/// S24, S29: the README says a timer's tick is never refused by a mailbox's bound:
/// a tick due while a fail-on-overflow mailbox is full queues past the bound, and
/// is not an overflow (the actor neither fails nor restarts).
#[tapio::test(start_paused = true)]
async fn s24_s29_a_tick_into_a_full_fail_mailbox_queues_and_fails_nothing(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(tokio::sync::Notify::new());
    let setups = Arc::new(AtomicU64::new(0));
    let actor = system
        .spawn_with(
            Behaviors::supervise(gated_setup(
                probe.actor_ref().clone(),
                gate.clone(),
                setups,
                Some(ms(100)),
            ))
            .on_failure::<tapio::MailboxOverflow>(SupervisorStrategy::restart()),
            "ticked",
            MailboxConfig::bounded(1, OverflowStrategy::Fail).unwrap(),
        )
        .unwrap();
    expect_lines(&mut probe, &["setup 1"]).await;
    actor.tell(Gated::N(1));
    tokio::time::sleep(ms(10)).await;
    actor.tell(Gated::N(2)); // the mailbox is full now
    tokio::time::sleep(ms(200)).await; // the tick comes due
    gate.notify_waiters();
    expect_lines(&mut probe, &["got 1", "got 2", "tick"]).await;
    probe.expect_no_message(ms(100)).await;
}

// =================================================================================
// 13. Races on two workers (S5, S11, S18, S21, S23, S25)
// =================================================================================

#[message]
#[derive(Clone)]
pub enum Timed {
    Fire(u64),
    Marker,
}

/// S25: four tasks start and cancel keys of one actor's scheduler from outside,
/// as fast as they can; then `cancel_all`, then a marker told to the actor. No tick
/// is handled after the marker: `cancel_all` silenced every key and dropped the
/// ticks already queued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s25_cancel_all_after_a_start_and_cancel_storm_from_four_tasks_leaves_no_tick() {
    for round in 0..5 {
        let system = ActorSystem::new(&format!("timer-storm-{round}")).unwrap();
        let (tx, mut rx) = mpsc::unbounded_channel::<tapio::TimerScheduler<Timed>>();
        let (seen_tx, mut seen_rx) = mpsc::unbounded_channel::<Option<u64>>();
        let actor = system
            .spawn(
                Behaviors::with_timers(move |timers| {
                    let _ = tx.send(timers.clone());
                    let seen = seen_tx.clone();
                    Behaviors::receive_message(move |m: Timed| {
                        let _ = seen.send(match m {
                            Timed::Fire(n) => Some(n),
                            Timed::Marker => None,
                        });
                    })
                }),
                "stormed",
            )
            .unwrap();
        let timers = next(&mut rx).await;
        let mut tasks = Vec::new();
        for p in 0..4_u64 {
            let timers = timers.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..300_u64 {
                    let key = format!("k{}", i % 7);
                    match i % 3 {
                        0 => timers.start_single_timer(key, Timed::Fire(p), ms(i % 3)),
                        1 => timers
                            .start_fixed_rate(key, Timed::Fire(p), ms(1 + i % 2))
                            .unwrap(),
                        _ => timers.cancel(key),
                    }
                    if i % 10 == 0 {
                        tokio::time::sleep(ms(1)).await;
                    }
                }
            }));
        }
        for task in tasks {
            timeout(T, task).await.unwrap().unwrap();
        }
        timers.cancel_all();
        actor.tell(Timed::Marker);
        // Read up to the marker, then nothing more may come.
        loop {
            if next(&mut seen_rx).await.is_none() {
                break;
            }
        }
        let quiet = timeout(ms(100), seen_rx.recv()).await;
        assert!(quiet.is_err(), "round {round}: after the marker: {quiet:?}");
        for k in 0..7 {
            assert!(!timers.is_active(format!("k{k}")));
        }
        timeout(T, system.terminate()).await.unwrap();
    }
}
