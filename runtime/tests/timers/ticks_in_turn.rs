//! Timers past the happy path: ticks during awaiting handlers, cancels and restarts of
//! a key, ticks on full mailboxes, fixed delay behind a stall, failing and unhandled
//! ticks, records on a multi-thread runtime, and switching to behaviors that start
//! timers (S6, S7, S8, S24, S25, S29).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::common::global_capture;
use crate::support::outside;
use outside::{Boom, T, describe, expect_lines, letters, letters_for, ms, next, no_letter_for};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetterReason, MailboxConfig, OverflowStrategy};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

/// Takes messages from `probe` until `line` comes, within `T`.
async fn skip_to(probe: &mut TestProbe<String>, line: &str) {
    let deadline = Instant::now() + T;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match probe.receive_message(left).await {
            Some(got) if got == line => return,
            Some(_) => {}
            None => panic!("{line:?} did not come within {T:?}"),
        }
    }
}

// =================================================================================
// 6. Timers (S24)
// =================================================================================

#[message]
#[derive(Clone)]
pub enum Clocked {
    Hold(u64),
    Line(&'static str),
    Tick,
    Cancel(&'static str),
    Restart,
    Tock,
}

/// An actor whose `Hold(ms)` awaits that long under the paused clock, and which
/// counts handlers that found another one running.
fn clocked(to: ActorRef<String>, overlaps: Arc<AtomicU64>) -> Behavior<Clocked> {
    Behaviors::with_timers(move |timers| {
        timers
            .start_fixed_rate("rate", Clocked::Tick, Duration::from_secs(1))
            .unwrap();
        let to = to.clone();
        let overlaps = overlaps.clone();
        let inside = Arc::new(AtomicU64::new(0));
        let started = Instant::now();
        Behaviors::receive_async(async move |ctx: &mut ActorContext<Clocked>, m: Clocked| {
            if inside.fetch_add(1, SeqCst) != 0 {
                overlaps.fetch_add(1, SeqCst);
            }
            match m {
                Clocked::Hold(n) => {
                    to.tell("hold start".to_string());
                    tokio::time::sleep(ms(n)).await;
                    to.tell("hold end".to_string());
                }
                Clocked::Line(line) => to.tell(line.to_string()),
                Clocked::Tick => {
                    let at = started.elapsed().as_millis() / 100 * 100;
                    to.tell(format!("tick at {at}ms"));
                }
                Clocked::Cancel(key) => ctx.timers().cancel(key),
                Clocked::Restart => ctx
                    .timers()
                    .start_single_timer("rate", Clocked::Tock, ms(500)),
                Clocked::Tock => to.tell("tock".to_string()),
            }
            inside.fetch_sub(1, SeqCst);
        })
    })
}

/// A [`clocked`] actor on `system` named `name`, telling `probe` and counting
/// overlaps in `overlaps`.
fn spawn_clocked(
    system: &ActorSystem,
    probe: &TestProbe<String>,
    overlaps: &Arc<AtomicU64>,
    name: &str,
    mailbox: MailboxConfig,
) -> ActorRef<Clocked> {
    system
        .spawn_with(
            clocked(probe.actor_ref().clone(), overlaps.clone()),
            name,
            mailbox,
        )
        .unwrap()
}

/// A system named `name`, a probe on it, and a [`clocked`] actor named `"clock"`
/// with `mailbox` that tells the probe, with its count of overlapping handlers.
fn clock_system(
    name: &str,
    mailbox: MailboxConfig,
) -> (
    ActorSystem,
    TestProbe<String>,
    ActorRef<Clocked>,
    Arc<AtomicU64>,
) {
    let system = ActorSystem::new(name).unwrap();
    let probe = TestProbe::<String>::new(&system);
    let overlaps = Arc::new(AtomicU64::new(0));
    let actor = spawn_clocked(&system, &probe, &overlaps, "clock", mailbox);
    (system, probe, actor, overlaps)
}

/// S24, S25: ticks of a 1 s fixed-rate timer fall due while a handler awaits for
/// 3.5 s: none enters it; they queue behind the tells sent before they were due and
/// ahead of one sent between the first and the second; afterwards the rate goes on.
#[tokio::test(start_paused = true)]
async fn s24_ticks_due_during_an_awaiting_handler_queue_behind_earlier_tells() {
    let (system, mut probe, actor, overlaps) =
        clock_system("queued-ticks", MailboxConfig::unbounded());
    actor.tell(Clocked::Hold(3_500));
    actor.tell(Clocked::Line("A"));
    actor.tell(Clocked::Line("B"));
    assert_eq!(probe.expect_message(T).await, "hold start");
    tokio::time::sleep(ms(1_500)).await;
    actor.tell(Clocked::Line("C"));
    let lines = probe.receive_messages(7, T).await;
    assert_eq!(
        lines,
        [
            "hold end",
            "A",
            "B",
            "tick at 3500ms",
            "C",
            "tick at 3500ms",
            "tick at 3500ms"
        ]
    );
    assert_eq!(probe.expect_message(T).await, "tick at 4000ms");
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

/// S24, S25: a `Cancel` told before the ticks fell due is handled before them, and
/// the two ticks that queued behind it while the actor awaited never arrive; a key started again with another message drops the tick its old
/// timer had queued, and only the new message comes.
#[tokio::test(start_paused = true)]
async fn s24_s25_a_cancel_or_restart_of_a_key_drops_the_ticks_it_had_queued() {
    let (system, mut probe, actor, overlaps) =
        clock_system("dropped-ticks", MailboxConfig::unbounded());
    actor.tell(Clocked::Hold(2_500));
    actor.tell(Clocked::Cancel("rate"));
    actor.tell(Clocked::Line("after"));
    expect_lines(&mut probe, &["hold start", "hold end", "after"]).await;
    probe.expect_no_message(Duration::from_secs(5)).await;

    let actor = spawn_clocked(
        &system,
        &probe,
        &overlaps,
        "clock-2",
        MailboxConfig::unbounded(),
    );
    actor.tell(Clocked::Hold(1_500));
    actor.tell(Clocked::Restart);
    actor.tell(Clocked::Line("after"));
    expect_lines(&mut probe, &["hold start", "hold end", "after", "tock"]).await;
    probe.expect_no_message(Duration::from_secs(5)).await;
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

/// S24, S29, S31: on a bounded drop-new mailbox already full, a tick that falls due
/// is not refused (the `MailboxConfig` docs: timer ticks are never refused by the
/// bound) but takes room while queued: a tell sent after it is refused as
/// `MailboxFull`, and the tick is handled in its place in line, after the tells
/// queued before it.
#[tokio::test(start_paused = true)]
async fn s24_s29_a_tick_due_on_a_full_bounded_mailbox_queues_and_takes_room() {
    let (system, mut probe, actor, overlaps) = clock_system(
        "full-ticks",
        MailboxConfig::bounded(2, OverflowStrategy::DropNew).unwrap(),
    );
    let mut sub = letters(&system);
    actor.tell(Clocked::Hold(1_500));
    assert_eq!(probe.expect_message(T).await, "hold start");
    actor.tell(Clocked::Line("A"));
    actor.tell(Clocked::Line("B"));
    tokio::time::sleep(ms(1_200)).await;
    actor.tell(Clocked::Line("C"));
    let lost = letters_for(&mut sub, actor.path(), 1).await;
    assert!(
        matches!(lost[0].reason(), DeadLetterReason::MailboxFull),
        "{}",
        describe(&lost[0])
    );
    assert!(matches!(
        lost[0].take_message::<Clocked>(),
        Some(Clocked::Line("C"))
    ));
    expect_lines(
        &mut probe,
        &["hold end", "A", "B", "tick at 1500ms", "tick at 2000ms"],
    )
    .await;
    no_letter_for(&mut sub, actor.path(), ms(10)).await;
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

// =================================================================================
// 7. More edges: fixed-delay ticks, failing ticks, failing setups and signals,
//    escalations into an awaiting parent and racing to the guardian (S7, S9, S11,
//    S15, S17, S24, S25, S6)
// =================================================================================

#[message]
#[derive(Clone)]
pub enum Delayed {
    Hold(u64),
    Tick,
}

/// S24, S25: a fixed-delay timer of 1 s meets a handler that awaits 3.5 s: one tick
/// waits in the mailbox, the next is sent the moment that one is taken (so both are
/// handled at 3.5 s), and the one after comes a full delay later, at 4.5 s.
#[tokio::test(start_paused = true)]
async fn s24_s25_a_fixed_delay_timer_behind_a_stall_sends_the_next_tick_when_one_is_taken() {
    let system = ActorSystem::new("fixed-delay").unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers
                    .start_fixed_delay("delay", Delayed::Tick, Duration::from_secs(1))
                    .unwrap();
                let to = to.clone();
                let started = Instant::now();
                Behaviors::receive_async(async move |_ctx: &mut ActorContext<Delayed>, m| match m {
                    Delayed::Hold(n) => tokio::time::sleep(ms(n)).await,
                    Delayed::Tick => {
                        let at = started.elapsed().as_millis() / 100 * 100;
                        to.tell(format!("tick at {at}ms"));
                    }
                })
            }),
            "delayed",
        )
        .unwrap();
    actor.tell(Delayed::Hold(3_500));
    // Paused time: the bound is for the clock tokio advances, not for real time.
    let lines = probe.receive_messages(4, Duration::from_secs(30)).await;
    assert_eq!(
        lines,
        [
            "tick at 3500ms",
            "tick at 3500ms",
            "tick at 4500ms",
            "tick at 5500ms"
        ]
    );
    system.terminate().await;
}

/// S24, S25, S9, S11, S6: a fixed-delay timer goes on when its tick's handler fails
/// (under `resume`) or leaves the tick `unhandled` (a dead letter): the next tick is
/// sent all the same. The same for a fixed-rate timer.
#[tokio::test(start_paused = true)]
async fn s24_s25_ticks_that_fail_or_go_unhandled_do_not_stop_their_timer() {
    for fixed_rate in [false, true] {
        let system = ActorSystem::new("failing-ticks").unwrap();
        let mut sub = letters(&system);
        let mut probe = TestProbe::<String>::new(&system);
        let to = probe.actor_ref().clone();
        let behavior = Behaviors::with_timers(move |timers| {
            if fixed_rate {
                timers
                    .start_fixed_rate("t", Delayed::Tick, ms(100))
                    .unwrap();
            } else {
                timers
                    .start_fixed_delay("t", Delayed::Tick, ms(100))
                    .unwrap();
            }
            let to = to.clone();
            let count = AtomicU64::new(0);
            Behaviors::receive_message(move |_m: Delayed| -> Result<Behavior<Delayed>, Boom> {
                let n = count.fetch_add(1, SeqCst) + 1;
                match n % 3 {
                    1 => Err(Boom),
                    2 => Ok(Behaviors::unhandled()),
                    _ => {
                        to.tell(format!("tick {n}"));
                        Ok(Behaviors::same())
                    }
                }
            })
        });
        let actor = system
            .spawn(
                Behaviors::supervise(behavior).on_failure::<Boom>(SupervisorStrategy::resume()),
                "ticking",
            )
            .unwrap();
        expect_lines(&mut probe, &["tick 3", "tick 6", "tick 9", "tick 12"]).await;
        let unhandled = letters_for(&mut sub, actor.path(), 4).await;
        for letter in &unhandled {
            assert!(
                matches!(letter.reason(), DeadLetterReason::Unhandled),
                "fixed_rate={fixed_rate}: {}",
                describe(letter)
            );
        }
        system.terminate().await;
    }
}

#[message]
#[derive(Clone)]
pub enum Voice {
    Say(u64),
    Tick,
    Fail,
}

/// S8 on a multi-thread runtime with a global subscriber: an actor spawned in a
/// handler (not a setup) logs after many awaits (its future free to move between
/// worker threads), in timer ticks, in a blocking call, in a setup run again by a
/// restart, in `PreRestart`, and in the `PostStop` that `terminate` brings: each
/// record carries its path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s8_records_on_a_multi_thread_runtime_carry_the_path_across_awaits_and_restarts() {
    let captured = global_capture();
    let system = ActorSystem::new("s8-global").unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (stopped_tx, mut stopped_rx) = mpsc::unbounded_channel::<()>();
    let runs = Arc::new(AtomicU64::new(0));
    let voice = Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<Voice>| {
        let run = runs.fetch_add(1, SeqCst) + 1;
        tracing::info!("s8g-mark setup {run}");
        ctx.timers()
            .start_fixed_rate("tick", Voice::Tick, ms(2))
            .unwrap();
        let to = to.clone();
        let on_signal = stopped_tx.clone();
        let ticks = Arc::new(AtomicU64::new(0));
        Behaviors::receive_async(async move |ctx: &mut ActorContext<Voice>, m: Voice| {
            match m {
                Voice::Say(n) => {
                    for _ in 0..20 {
                        tokio::task::yield_now().await;
                    }
                    tracing::info!("s8g-mark after awaits {n}");
                    ctx.run_blocking(move || tracing::info!("s8g-mark blocking {n}"))
                        .await
                        .unwrap();
                    tokio::time::sleep(ms(1)).await;
                    tracing::info!("s8g-mark after blocking {n}");
                    to.tell(format!("said {n}"));
                }
                Voice::Tick => {
                    let t = ticks.fetch_add(1, SeqCst) + 1;
                    if t <= 3 {
                        tracing::info!("s8g-mark tick {run}.{t}");
                        to.tell(format!("tick {run}.{t}"));
                    }
                }
                Voice::Fail => return Err(Boom),
            }
            Ok(())
        })
        .on_signal(move |_ctx, signal| match signal {
            Signal::PreRestart => tracing::info!("s8g-mark pre-restart"),
            Signal::PostStop => {
                tracing::info!("s8g-mark post-stop");
                let _ = on_signal.send(());
            }
            _ => {}
        })
    }))
    .on_failure::<Boom>(SupervisorStrategy::restart());
    let (voice_tx, mut voice_rx) = mpsc::unbounded_channel::<ActorRef<Voice>>();
    let room = system
        .spawn(
            Behaviors::receive(move |ctx: &mut ActorContext<u64>, _: u64| {
                let _ = voice_tx.send(ctx.spawn(voice.clone(), "voice").unwrap());
            }),
            "room",
        )
        .unwrap();
    room.tell(0_u64);
    let voice = next(&mut voice_rx).await;
    for n in 0..4 {
        voice.tell(Voice::Say(n));
    }
    let mut said = Vec::new();
    let mut ticks = Vec::new();
    while said.len() < 4 || ticks.len() < 3 {
        let line = probe.expect_message(T).await;
        if line.starts_with("said") {
            said.push(line);
        } else {
            ticks.push(line);
        }
    }
    assert_eq!(said, ["said 0", "said 1", "said 2", "said 3"]);
    assert_eq!(ticks, ["tick 1.1", "tick 1.2", "tick 1.3"]);
    voice.tell(Voice::Fail);
    skip_to(&mut probe, "tick 2.3").await;
    timeout(T, system.terminate()).await.unwrap();
    // The probe stops with its system: the end of `PostStop` comes by a channel.
    next(&mut stopped_rx).await;
    let text = captured.text();
    let mut marks = vec![
        "setup 1".to_string(),
        "setup 2".to_string(),
        "pre-restart".to_string(),
        "post-stop".to_string(),
    ];
    for n in 0..4 {
        marks.push(format!("after awaits {n}"));
        marks.push(format!("blocking {n}"));
        marks.push(format!("after blocking {n}"));
    }
    for t in 1..=3 {
        marks.push(format!("tick 1.{t}"));
        marks.push(format!("tick 2.{t}"));
    }
    for mark in marks {
        let said = format!("s8g-mark {mark}");
        let lines: Vec<&str> = text.lines().filter(|l| l.ends_with(&said)).collect();
        assert!(!lines.is_empty(), "no record {said:?}");
        for line in lines {
            assert!(
                line.contains("path=/user/room/voice"),
                "{said:?} untagged: {line}"
            );
        }
    }
}

/// S24, S25: a fixed-delay timer whose own tick handler cancels its key and starts
/// it again, slower: from then on exactly one tick a second (not the old rate, not
/// two timers); one that only cancels gets no tick ever again.
#[tokio::test(start_paused = true)]
async fn s24_s25_a_fixed_delay_key_restarted_or_cancelled_from_its_own_tick() {
    for restart in [true, false] {
        let system = ActorSystem::new("self-replacing").unwrap();
        let mut probe = TestProbe::<String>::new(&system);
        let to = probe.actor_ref().clone();
        system
            .spawn(
                Behaviors::with_timers(move |timers| {
                    timers
                        .start_fixed_delay("t", Delayed::Tick, ms(100))
                        .unwrap();
                    let to = to.clone();
                    let started = Instant::now();
                    let count = AtomicU64::new(0);
                    Behaviors::receive(move |ctx: &mut ActorContext<Delayed>, _m: Delayed| {
                        let n = count.fetch_add(1, SeqCst) + 1;
                        let at = started.elapsed().as_millis() / 10 * 10;
                        to.tell(format!("tick {n} at {at}ms"));
                        if n == 3 {
                            ctx.timers().cancel("t");
                            if restart {
                                ctx.timers()
                                    .start_fixed_delay("t", Delayed::Tick, Duration::from_secs(1))
                                    .unwrap();
                            }
                        }
                    })
                }),
                "ticker",
            )
            .unwrap();
        let first = probe.receive_messages(3, Duration::from_secs(30)).await;
        assert_eq!(
            first,
            ["tick 1 at 100ms", "tick 2 at 200ms", "tick 3 at 300ms"]
        );
        if restart {
            let more = probe.receive_messages(3, Duration::from_secs(30)).await;
            assert_eq!(
                more,
                ["tick 4 at 1300ms", "tick 5 at 2300ms", "tick 6 at 3300ms"]
            );
        } else {
            probe.expect_no_message(Duration::from_secs(10)).await;
        }
        system.terminate().await;
    }
}

/// S6, S7, S10: a handler that switches to a deferred behavior: a `setup` runs when
/// switched to (once, before the next message); switching to a `supervise` brings its
/// clauses along (a `Boom` then resumed, though the actor had no clause before); and
/// switching to `with_timers` starts its timers.
#[tapio::test(start_paused = true)]
async fn s6_s7_switching_to_a_setup_a_supervise_or_with_timers_takes_effect(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();

    fn third(to: ActorRef<String>) -> Behavior<u64> {
        Behaviors::with_timers(move |timers| {
            timers.start_single_timer("wake", 77_u64, ms(500));
            let to = to.clone();
            Behaviors::receive_message(move |n: u64| to.tell(format!("third {n}")))
        })
    }

    fn second(to: ActorRef<String>) -> Behavior<u64> {
        Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                return Err(Boom);
            }
            to.tell(format!("second {n}"));
            if n == 3 {
                return Ok(third(to.clone()));
            }
            Ok(Behaviors::same())
        }))
        .on_failure::<Boom>(SupervisorStrategy::resume())
        .into()
    }

    let first = Behaviors::receive_message(move |n: u64| {
        to.tell(format!("first {n}"));
        let to = to.clone();
        Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
            to.tell("setup ran".to_string());
            second(to.clone())
        })
    });
    let actor = system.spawn(first, "shifting").unwrap();
    probe.watch(&actor);
    for n in [1_u64, 2, 0, 3, 4] {
        actor.tell(n);
    }
    expect_lines(
        &mut probe,
        &[
            "first 1",
            "setup ran",
            "second 2",
            "second 3",
            "third 4",
            "third 77",
        ],
    )
    .await;
    probe.expect_no_termination(ms(20)).await;
}
