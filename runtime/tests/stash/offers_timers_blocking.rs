//! Stashes with offers, timers and blocking calls: offers waiting behind a large
//! replay, a stashed tick replayed after its timer was cancelled, and arrival order
//! kept around a blocking load (S24, S27, S29, S30, S33).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use crate::support::stops_and_restarts::*;
use outside::{T, expect_lines, letters, ms};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::{Failure, MailboxConfig, OverflowStrategy, StashBuffer, StashOverflow};
use tokio::sync::Semaphore;
use tokio::time::timeout;

/// S27, S29, S30: offers waiting on a full mailbox wait behind a replay larger than
/// the bound: the replay (never refused by the bound) comes first, in arrival order,
/// then what was queued, then the offers in the order they began to wait; nothing is
/// pushed out or lettered.
#[tapio::test(start_paused = true)]
async fn s27_s29_s30_offers_wait_behind_a_replay_larger_than_the_bound(system: ActorSystem) {
    let mut dead = letters(&system);
    let (mut probe, to) = probe_and_ref(&system);
    let gate = Arc::new(Semaphore::new(0));
    let held = gate.clone();
    let actor = system
        .spawn_with(
            Behaviors::with_stash(16, move |stash: StashBuffer<u64>| {
                let (to, held) = (to.clone(), held.clone());
                Behaviors::receive_async(
                    async move |_ctx, n: u64| -> Result<Behavior<u64>, StashOverflow> {
                        if n == 0 {
                            // Opens: wait for the test, then replay what was stashed.
                            to.tell("opening".to_owned());
                            if let Ok(permit) = held.acquire().await {
                                permit.forget();
                            }
                            let to = to.clone();
                            return Ok(stash.unstash_all(Behaviors::receive_message(
                                move |n: u64| to.tell(format!("n {n}")),
                            )));
                        }
                        stash.stash(n)?;
                        Ok(Behaviors::same())
                    },
                )
            })
            .unwrap(),
            "replayer",
            MailboxConfig::bounded(2, OverflowStrategy::DropOldest).unwrap(),
        )
        .unwrap();
    for n in 1..=5 {
        assert!(timeout(T, actor.offer(n)).await.unwrap());
    }
    actor.tell(0_u64);
    assert_eq!(probe.expect_message(T).await, "opening");
    actor.tell(6_u64);
    actor.tell(7_u64);
    let offers: Vec<_> = (8..=10_u64)
        .map(|n| {
            let actor = actor.clone();
            tokio::spawn(async move { actor.offer(n).await })
        })
        .collect();
    // Let the three offers begin to wait, in order.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    gate.add_permits(1);
    let want: Vec<String> = (1..=10).map(|n| format!("n {n}")).collect();
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    expect_lines(&mut probe, &want).await;
    for offer in offers {
        assert!(timeout(T, offer).await.unwrap().unwrap());
    }
    outside::no_letter_for(&mut dead, actor.path(), ms(100)).await;
}

// =================================================================================
// 3. Stash (S24, S27, S33)
// =================================================================================

#[message]
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    Tick,
    Open,
}

/// S24, S25, S27: a tick taken by a handler and stashed is an ordinary message: a
/// cancel of its timer afterwards (which drops ticks still queued) does not drop it
/// from the stash, so the replay delivers each stashed tick, and no tick comes after
/// the cancel.
#[tapio::test(start_paused = true)]
async fn s24_s27_a_stashed_tick_is_replayed_after_its_timer_was_cancelled(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_fixed_rate("beat", Gate::Tick, ms(10)).unwrap();
                let to = to.clone();
                Behaviors::with_stash(8, move |stash: StashBuffer<Gate>| {
                    let (to, timers) = (to.clone(), timers.clone());
                    Behaviors::receive_message(move |gate: Gate| match gate {
                        Gate::Tick => {
                            stash.stash(Gate::Tick)?;
                            to.tell(format!("stashed {}", stash.len()));
                            Ok(Behaviors::same())
                        }
                        Gate::Open => {
                            timers.cancel("beat");
                            to.tell(format!("open {}", stash.len()));
                            let to = to.clone();
                            Ok::<_, StashOverflow>(stash.unstash_all(Behaviors::receive_message(
                                move |gate: Gate| to.tell(format!("replayed {gate:?}")),
                            )))
                        }
                    })
                })
                .unwrap()
            }),
            "ticks",
        )
        .unwrap();
    assert_eq!(probe.expect_message(T).await, "stashed 1");
    actor.tell(Gate::Open);
    let open = probe
        .expect_message_where(T, |m: &String| m.starts_with("open"))
        .await;
    let held: usize = open.trim_start_matches("open ").parse().unwrap();
    assert!(held >= 1);
    for _ in 0..held {
        assert_eq!(probe.expect_message(T).await, "replayed Tick");
    }
    probe.expect_no_message(ms(200)).await;
}

/// S27, S33, S5: messages stashed before a blocking load and those queued while the
/// call ran come in arrival order: the replay first, then what waited meanwhile.
#[tapio::test]
async fn s27_s33_messages_stashed_before_and_queued_during_a_blocking_load_keep_arrival_order(
    system: ActorSystem,
) {
    let (mut probe, to) = probe_and_ref(&system);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let actor = system
        .spawn(
            Behaviors::with_stash(8, move |stash: StashBuffer<u64>| {
                let (to, released) = (to.clone(), released.clone());
                Behaviors::receive_async(async move |ctx, n: u64| -> Result<_, Failure> {
                    if n != 0 {
                        stash.stash(n).map_err(Failure::new)?;
                        return Ok(Behaviors::same());
                    }
                    to.tell("loading".to_owned());
                    let waiting = released.lock().unwrap().take();
                    let loaded = ctx
                        .run_blocking(move || {
                            waiting.map(|w| w.recv_timeout(Duration::from_secs(10)).is_ok())
                        })
                        .await?;
                    to.tell(format!("loaded {loaded:?}"));
                    let to = to.clone();
                    Ok(stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                        to.tell(format!("n {n}"))
                    })))
                })
            })
            .unwrap(),
            "loader",
        )
        .unwrap();
    actor.tell(1_u64);
    actor.tell(2_u64);
    actor.tell(0_u64);
    assert_eq!(probe.expect_message(T).await, "loading");
    actor.tell(3_u64);
    actor.tell(4_u64);
    release.send(()).unwrap();
    expect_lines(
        &mut probe,
        &["loaded Some(true)", "n 1", "n 2", "n 3", "n 4"],
    )
    .await;
}
