//! Adapters and restarts on a multi-thread runtime, each case run in a bounded loop:
//! asks during a backoff, adapted and direct tells at a stop, and watchers under
//! restarts (S13, S14, S28).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::races::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason};
use tokio::task::JoinSet;
use tokio::time::timeout;

// =================================================================================
// 6. More races: restarts with backoff, asks on full mailboxes, replay, adapters
// =================================================================================

#[message]
enum Rq {
    Fail,
    Get(ActorRef<u64>),
}

/// Fails on `Fail`, answers `Get` with its incarnation number; restarted after a
/// backoff of `backoff`..2x`backoff` (no jitter).
fn restarting(incarnations: Arc<AtomicU64>, backoff: Duration) -> Behavior<Rq> {
    Behaviors::supervise(Behaviors::setup(move |_| {
        let me = incarnations.fetch_add(1, SeqCst) + 1;
        Behaviors::receive_message(move |m: Rq| -> Result<(), Boom> {
            match m {
                Rq::Fail => Err(Boom),
                Rq::Get(to) => {
                    to.tell(me);
                    Ok(())
                }
            }
        })
    }))
    .on_failure::<Boom>(
        SupervisorStrategy::restart()
            .with_limit(10_000, Duration::from_secs(60))
            .unwrap()
            .with_backoff(Backoff::new(backoff, backoff * 2, 0.0).unwrap()),
    )
    .into()
}

// S13 + S14 + S23: asks made while their target backs off before a restart (20 ms):
// the ask watches its target after a millisecond, but "while an actor is backing off
// it is absent, not dead" and on a restart "watchers hear nothing": every ask is
// answered, by the next incarnation, and none fails with `TargetTerminated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s13_s23_asks_during_a_restart_backoff_are_answered_by_the_next_incarnation() {
    let what = "asks during backoff";
    in_systems(what, 15, "ask-backoff", |_, system| async move {
        let incarnations = Arc::new(AtomicU64::new(0));
        let actor: ActorRef<Rq> = system
            .spawn(restarting(incarnations.clone(), ms(20)), "flaky")
            .unwrap();
        let mut tasks = staggered(&actor, 8, 3, |k, actor| async move {
            if k == 0 {
                actor.tell(Rq::Fail);
            }
            actor
                .ask_with(Rq::Get)
                .timeout(Duration::from_secs(5))
                .await
        });
        let mut bad = Vec::new();
        while let Some(done) = tasks.join_next().await {
            if let Err(e) = done.unwrap() {
                bad.push(format!("{e:?}"));
            }
        }
        none(&bad, "of 8 asks failed", 8)?;
        let n = actor
            .ask_with(Rq::Get)
            .timeout(T)
            .await
            .map_err(|e| format!("{e}"))?;
        if n != 2 {
            return Err(format!("answered by incarnation {n}, expected 2"));
        }
        Ok(())
    })
    .await;
}

/// A dead letter's number, whether it is still a `u64` (an adapter's) or an item.
fn any_item(letter: &DeadLetter) -> Option<u64> {
    if letter.is::<u64>() {
        return letter.take_message::<u64>();
    }
    work_item(letter)
}

// S28 + S5 + S31: four producers each send their even messages through a message
// adapter and their odd ones straight to its owner. The adapter's messages reach the
// owner "in order with its other messages", so each producer's order holds across the
// two routes; then the owner is stopped partway ("it stops with its owner"): every
// message, by either route, is handled or a dead letter, exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s28_s5_s31_adapter_and_direct_tells_keep_order_and_lose_nothing_at_a_stop() {
    in_systems("adapter", 60, "adapter", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ActorRef<u64>>();
        let owner: ActorRef<Work> = system
            .spawn(
                Behaviors::setup(move |ctx| {
                    let adapter: ActorRef<u64> = ctx.message_adapter(Work::Item);
                    let _ = tx.send(adapter);
                    let h = h.clone();
                    Behaviors::receive_message(move |w: Work| {
                        if let Work::Item(v) = w {
                            h.lock().unwrap().push(v);
                        }
                    })
                }),
                "owner",
            )
            .unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&owner);
        let stop_at = if i % 2 == 0 {
            Some((i * 31) % 800)
        } else {
            None
        };
        let adapter = timeout(T, rx.recv())
            .await
            .map_err(|_| "no adapter".to_string())?
            .unwrap();
        let stopper = stop_at.map(|k| stop_when_handled(&system, &owner, &handled, k));
        let (a, o) = (adapter.clone(), owner.clone());
        produce(4, 200, move |v| {
            if seq_of(v).is_multiple_of(2) {
                a.tell(v);
            } else {
                o.tell(Work::Item(v));
            }
        })
        .await;
        if let Some(stopper) = stopper {
            stopper.await.unwrap()?;
            probe.expect_terminated(&owner, T).await;
        }
        let expected = all(4, 200);
        let (got, found) = accounted(&mut letters, &handled, &expected, any_item).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        fifo(&got)
    })
    .await;
}

// S14 + S18: an actor restarted 20 times (no backoff) while four producers tell it,
// watched by a probe and by three actors: "watchers hear nothing" on a restart;
// when it is finally stopped each watcher hears `Terminated` exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s14_s18_watchers_hear_nothing_of_restarts_under_load_and_one_terminated_at_the_end() {
    let what = "watch vs restarts";
    in_systems(what, 20, "watch-restart", |_, system| async move {
        let incarnations = Arc::new(AtomicU64::new(0));
        let actor: ActorRef<Rq> = system
            .spawn(
                restarting(incarnations.clone(), Duration::from_micros(100)),
                "flaky",
            )
            .unwrap();
        let heard = log();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&actor);
        for j in 0..3 {
            let watcher =
                terminated_recorder(actor.clone(), heard.clone(), move |_| format!("w{j}"));
            system.spawn(watcher, &format!("w{j}")).unwrap();
        }
        let (a, mut tasks) = (actor.clone(), JoinSet::new());
        tasks.spawn(async move {
            for k in 0..20 {
                a.tell(Rq::Fail);
                turns(k % 4).await;
            }
        });
        let sink = system.spawn(Behaviors::ignore::<u64>(), "sink").unwrap();
        let a = actor.clone();
        produce(4, 100, move |_| a.tell(Rq::Get(sink.clone()))).await;
        tasks.join_next().await.unwrap().unwrap();
        wait_for("21 incarnations", || incarnations.load(SeqCst) >= 21).await?;
        probe.expect_no_termination(ms(20)).await;
        if !heard.lock().unwrap().is_empty() {
            return Err(format!(
                "Terminated heard during restarts: {:?}",
                heard.lock().unwrap()
            ));
        }
        system.stop(&actor).unwrap();
        probe.expect_terminated(&actor, T).await;
        wait_for("three watchers", || heard.lock().unwrap().len() >= 3).await?;
        probe.expect_no_termination(ms(20)).await;
        let mut got = heard.lock().unwrap().clone();
        got.sort();
        if got != ["w0", "w1", "w2"] {
            return Err(format!("watchers heard {got:?}"));
        }
        Ok(())
    })
    .await;
}
