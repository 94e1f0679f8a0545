//! Timers with restarts and stops: no tick of a failed incarnation reaches the next, a
//! stop drops queued ticks, and terminating busy branches is prompt and clean (S13,
//! S19, S25, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::with_other_features::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tapio::prelude::*;
use tapio::testkit::{LeakReport, TestProbe};
use tapio::{DeadLetter, DeadLetterReason, MailboxConfig, OverflowStrategy};

#[message]
#[derive(Debug, Clone)]
pub enum Pulse {
    Tick(u64),
    Stall,
    Fail,
    Extra(u64),
}

/// A pulse whose incarnation `generation` ticks `Tick(generation)` at a fixed rate;
/// `Stall` sleeps 55 ms, `Fail` fails after reporting 999.
fn pulsing(
    report: ActorRef<u64>,
    generations: Arc<AtomicU64>,
    backoff: Duration,
) -> Behavior<Pulse> {
    Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<Pulse>| {
        let generation = generations.fetch_add(1, Ordering::SeqCst) + 1;
        ctx.timers()
            .start_fixed_rate("tick", Pulse::Tick(generation), ms(10))
            .expect("a non-zero interval");
        let report = report.clone();
        Behaviors::receive_message_async(async move |pulse: Pulse| match pulse {
            Pulse::Tick(generation) => {
                report.tell(generation);
                Ok(Behaviors::same())
            }
            Pulse::Stall => {
                tokio::time::sleep(ms(55)).await;
                Ok(Behaviors::same())
            }
            Pulse::Fail => {
                report.tell(999);
                Err(Boom)
            }
            Pulse::Extra(n) => {
                report.tell(n);
                Ok(Behaviors::same())
            }
        })
    }))
    .on_failure::<Boom>(
        SupervisorStrategy::restart()
            .with_backoff(tapio::Backoff::new(backoff, backoff, 0.0).unwrap()),
    )
    .into()
}

// S25 + S13 + S14: timers are cancelled on restart, and a tick already queued by a
// cancelled timer is dropped unseen: the ticks the first incarnation's fixed-rate
// timer piled up behind a stall never reach the second incarnation (not through the
// backoff, not as dead letters); only the new timer's ticks come.
#[tapio::test(start_paused = true)]
async fn s25_s13_no_tick_of_a_failed_incarnation_reaches_the_next(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let generations = Arc::new(AtomicU64::new(0));
    let pulse = system
        .spawn(
            pulsing(probe.actor_ref().clone(), generations.clone(), ms(200)),
            "pulse",
        )
        .unwrap();
    assert_eq!(probe.expect_message(BOUND).await, 1);
    pulse.tell(Pulse::Stall);
    pulse.tell(Pulse::Fail);
    let mut before = 0;
    loop {
        match probe.expect_message(BOUND).await {
            999 => break,
            1 => before += 1,
            other => panic!("{other} before the failure"),
        }
        assert!(before < 50, "no failure after {before} ticks");
    }
    let after = probe.receive_messages(6, BOUND).await;
    assert_eq!(
        after,
        [2, 2, 2, 2, 2, 2],
        "a tick of the first incarnation came after its failure"
    );
    assert_eq!(generations.load(Ordering::SeqCst), 2);
    let stray = letters_until_quiet(&mut letters, ms(50)).await;
    assert!(
        stray.iter().all(|l| !l.is::<Pulse>()),
        "{:?}",
        stray.iter().map(ToString::to_string).collect::<Vec<_>>()
    );
}

// S25 + S31: a stop cancels the actor's timers, and the ticks a fixed-rate timer had
// queued behind a stall are dropped unseen: the only dead letter is the ordinary
// message that was queued when it stopped.
#[tapio::test(start_paused = true)]
async fn s25_s31_a_stop_drops_queued_ticks_unseen_and_letters_the_rest(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let pulse = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<Pulse>| {
                ctx.timers()
                    .start_fixed_rate("tick", Pulse::Tick(1), ms(5))
                    .expect("a non-zero interval");
                let report = report.clone();
                Behaviors::receive_message_async(async move |pulse: Pulse| match pulse {
                    Pulse::Stall => {
                        tokio::time::sleep(ms(50)).await;
                        Behaviors::stopped()
                    }
                    Pulse::Tick(n) | Pulse::Extra(n) => {
                        report.tell(n);
                        Behaviors::same()
                    }
                    Pulse::Fail => Behaviors::same(),
                })
            }),
            "pulse",
        )
        .unwrap();
    assert_eq!(probe.expect_message(BOUND).await, 1);
    probe.watch(&pulse);
    pulse.tell(Pulse::Stall);
    pulse.tell(Pulse::Extra(7));
    probe.expect_terminated(&pulse, BOUND).await;
    let got = letters_until_quiet(&mut letters, ms(200)).await;
    let described: Vec<String> = got.iter().map(ToString::to_string).collect();
    assert_eq!(got.len(), 1, "{described:?}");
    assert_eq!(
        got[0].reason(),
        &DeadLetterReason::RecipientStopped,
        "{described:?}"
    );
    assert!(
        matches!(got[0].take_message::<Pulse>(), Some(Pulse::Extra(7))),
        "{described:?}"
    );
    while let Some(n) = probe.receive_message(Duration::ZERO).await {
        assert_eq!(n, 1, "handled after the stall");
    }
}

/// A busy chain: each level has a fixed-rate timer of 1 ms, a bounded drop-oldest
/// mailbox of 2, and an `async` handler that takes a millisecond per tick; each logs
/// its `PostStop` as `{branch}{level}`.
fn busy_chain(branch: &'static str, level: u64, log: Arc<Mutex<Vec<String>>>) -> Behavior<Pulse> {
    Behaviors::setup(move |ctx: &mut ActorContext<Pulse>| {
        if level > 0 {
            ctx.spawn_with(
                busy_chain(branch, level - 1, log.clone()),
                &format!("{branch}{}", level - 1),
                MailboxConfig::bounded(2, OverflowStrategy::DropOldest).unwrap(),
            )
            .expect("spawn the next level");
        }
        ctx.timers()
            .start_fixed_rate("busy", Pulse::Tick(level), ms(1))
            .expect("a non-zero interval");
        let name = format!("{branch}{level}");
        let log = log.clone();
        Behaviors::receive_message_async(async |_: Pulse| {
            tokio::time::sleep(ms(1)).await;
        })
        .on_signal(move |_, signal: &Signal| {
            if matches!(signal, Signal::PostStop) {
                log.lock().unwrap().push(name.clone());
            }
        })
    })
}

// S19 + S25 + S29 + S48: terminating a system whose two branches are busy at every
// level (timers firing, bounded mailboxes full, handlers awaiting) is prompt, bottom-up
// in each branch, and leaves nothing behind: no actor, no task, no timer, no ask.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_s25_terminating_busy_branches_is_prompt_bottom_up_and_clean() {
    let system = ActorSystem::builder("busy")
        .track_leaks(true)
        .build()
        .unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    for branch in ["a", "b"] {
        system
            .spawn_with(
                busy_chain(branch, 3, log.clone()),
                &format!("{branch}3"),
                MailboxConfig::bounded(2, OverflowStrategy::DropOldest).unwrap(),
            )
            .unwrap();
    }
    // Let every level run a while.
    let mut probe = TestProbe::<u64>::new(&system);
    probe.expect_no_message(ms(100)).await;
    let started = Instant::now();
    let report = LeakReport::after_terminating(&system).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(report.counted_everything(), "{report}");
    assert!(report.is_clean(), "{report}");
    assert_eq!(system.live_actors(), 0);
    let log = log.lock().unwrap().clone();
    assert_eq!(log.len(), 8, "{log:?}");
    for branch in ["a", "b"] {
        let order: Vec<&String> = log.iter().filter(|l| l.starts_with(branch)).collect();
        assert_eq!(
            order,
            [
                &format!("{branch}0"),
                &format!("{branch}1"),
                &format!("{branch}2"),
                &format!("{branch}3")
            ],
            "{log:?}"
        );
    }
}
