//! Supervision under producers on a multi-thread runtime, each case run in a bounded
//! loop: restarts, overflow strategies, `PostStop` order, stops during backoff and
//! terminate (S5, S13, S15, S19, S29, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::races::*;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{
    DeadLetter, DeadLetterReason, MailboxConfig, MailboxOverflow, OverflowStrategy, Subscription,
};
use tokio::sync::Notify;
use tokio::task::yield_now;
use tokio::time::{Instant, timeout};

/// Fails unless the subscription lost nothing.
fn lost_nothing(letters: &Subscription<DeadLetter>) -> Result<(), String> {
    match letters.lost() {
        0 => Ok(()),
        lost => Err(format!("the subscription lost {lost}")),
    }
}

/// A recorder failing on each producer's every `every`th message, restarted after `backoff`.
fn failing_recorder(handled: &Shared, every: u64, backoff: Backoff) -> Behavior<u64> {
    let h = handled.clone();
    Behaviors::supervise(Behaviors::receive_message(
        move |v: u64| -> Result<(), Boom> {
            h.lock().unwrap().push(v);
            if seq_of(v) % every == every - 1 {
                return Err(Boom);
            }
            Ok(())
        },
    ))
    .on_failure::<Boom>(
        SupervisorStrategy::restart()
            .with_limit(10_000, Duration::from_secs(60))
            .unwrap()
            .with_backoff(backoff),
    )
    .into()
}

// =================================================================================
// 1. No silent loss
// =================================================================================

// S13 + S5 + S31: four producers tell an actor that fails on every 50th message of
// each producer and restarts with a (short) backoff. "While an actor is backing off
// it is absent, not dead: `tell` still succeeds, its mailbox keeps filling, and that
// work is handled by the next incarnation. Nothing is lost." Every message is
// handled exactly once (the failing one by the incarnation that failed on it), none
// is a dead letter, and each producer's messages are handled in the order sent (S5).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s5_s13_s31_producers_across_restarts_lose_nothing_and_keep_order() {
    let what = "restarts under producers";
    in_systems(what, 25, "restarts", |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let backoff = Backoff::new(ms(1), ms(4), 0.2).unwrap();
        let actor: ActorRef<u64> = system
            .spawn(failing_recorder(&handled, 50, backoff), "worker")
            .unwrap();
        let a = actor.clone();
        produce(4, 400, move |v| a.tell(v)).await;
        let expected = all(4, 400);
        let (got, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/worker")).await?;
        if !found.is_empty() {
            return Err(format!(
                "{} dead letters for an actor that only restarted",
                found.len()
            ));
        }
        fifo(&got)?;
        lost_nothing(&letters)
    })
    .await;
}

/// `n` times: four producers tell a sink of capacity 8 under `strategy`; what was
/// handled and what the strategy dropped (each with `reason`) add up, exactly once,
/// and what was handled kept each producer's order.
async fn bounded_run(
    what: &str,
    n: usize,
    name: &str,
    strategy: OverflowStrategy,
    reason: DeadLetterReason,
) {
    in_systems(what, n, name, |_, system| {
        let reason = reason.clone();
        async move {
            let (mut letters, handled) = (dead_letters(&system), shared());
            let mailbox = MailboxConfig::bounded(8, strategy).unwrap();
            let behavior: Behavior<u64> = if strategy == OverflowStrategy::Fail {
                Behaviors::supervise(slow_recorder(&handled))
                    .on_failure::<MailboxOverflow>(
                        SupervisorStrategy::restart()
                            .with_limit(100_000, Duration::from_secs(60))
                            .unwrap(),
                    )
                    .into()
            } else {
                slow_recorder(&handled)
            };
            let sink = system.spawn_with(behavior, "sink", mailbox).unwrap();
            let s = sink.clone();
            produce(4, 500, move |v| s.tell(v)).await;
            let expected = all(4, 500);
            let (got, found) =
                accounted(&mut letters, &handled, &expected, u64_under("/user/sink")).await?;
            reasons(&found, &reason)?;
            fifo(&got)?;
            if got.is_empty() {
                return Err("nothing was handled".into());
            }
            lost_nothing(&letters)
        }
    })
    .await;
}

// S29 + S31: drop-new under four producers: "Refuse the new message: it becomes a
// dead letter (MailboxFull); what is queued stays."
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_s31_drop_new_under_producers_accounts_every_message() {
    let (strategy, reason) = (OverflowStrategy::DropNew, DeadLetterReason::MailboxFull);
    bounded_run("drop-new", 10, "drop-new", strategy, reason).await;
}

// S29 + S31: drop-oldest under four producers: the oldest queued message is pushed
// out as a `PushedOut` dead letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_s31_drop_oldest_under_producers_accounts_every_message() {
    let (strategy, reason) = (OverflowStrategy::DropOldest, DeadLetterReason::PushedOut);
    bounded_run("drop-oldest", 10, "drop-oldest", strategy, reason).await;
}

// S29 + S31 + S14: fail under four producers, restarted by supervision: "Refuse the
// new message (MailboxFull), and fail the actor with MailboxOverflow, under its
// supervision: a restart keeps what is queued". So only `MailboxFull` letters, and
// everything else handled.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_s31_fail_with_restart_under_producers_accounts_every_message() {
    let (strategy, reason) = (OverflowStrategy::Fail, DeadLetterReason::MailboxFull);
    bounded_run("fail+restart", 10, "fail-restart", strategy, reason).await;
}

/// A node of a tree `depth` levels deep below it, `fanout` children each; each node
/// forwards every number to all its children, and logs its path at `PostStop`.
fn tree_node(depth: u32, fanout: u32, log: Log) -> Behavior<u64> {
    Behaviors::setup(move |ctx| {
        let children = children(ctx, depth, fanout, &log, tree_node);
        let forward = Behaviors::receive(move |_, n: u64| {
            for c in &children {
                c.tell(n);
            }
        });
        logging_post_stop(forward, &log)
    })
}

// S19 + S15: two trees of 40 actors (depth 3, fan-out 3) under load (every number
// told to a root is forwarded to all 39 below it) when the system terminates. Every
// actor sees `PostStop` exactly once, each after all its children have seen theirs
// ("each actor sees `PostStop` after its children have seen theirs"), and
// `live_actors()` is 0 when `terminate` returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s15_s19_post_stop_is_child_before_parent_under_load() {
    in_systems("post-stop order", 30, "tree", |i, system| async move {
        let log = log();
        let roots = two_roots(&system, || tree_node(3, 3, log.clone()));
        let producers = {
            let roots = roots.clone();
            tokio::spawn(async move {
                for n in 0..400_u64 {
                    roots[(n % 2) as usize].tell(n);
                    if n % 8 == 7 {
                        yield_now().await;
                    }
                }
            })
        };
        turns((i % 4) * 30).await;
        terminate_within(&system, "terminate did not finish").await?;
        producers.await.unwrap();
        no_live_actors(&system, "")?;
        eighty_post_stops(&log, "")
    })
    .await;
}

// S13 + S31 + S18: four producers tell an actor that fails on every 40th message of
// each producer and restarts after a backoff of 2..4 ms, and it is stopped from
// outside partway (often while it backs off). Every message is handled or a
// `RecipientStopped` letter, exactly once; a watcher hears `Terminated` once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s13_s31_a_stop_during_restarts_and_backoff_letters_the_rest_exactly_once() {
    let what = "stop during backoff";
    in_systems(what, 50, "stop-backoff", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let backoff = Backoff::new(ms(2), ms(4), 0.0).unwrap();
        let actor: ActorRef<u64> = system
            .spawn(failing_recorder(&handled, 40, backoff), "worker")
            .unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&actor);
        let k = 40 + (i * 41) % 400;
        let stopper = stop_when_handled(&system, &actor, &handled, k);
        let a = actor.clone();
        produce(4, 200, move |v| a.tell(v)).await;
        stopper.await.unwrap()?;
        probe.expect_terminated(&actor, T).await;
        let expected = all(4, 200);
        let (got, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/worker")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        fifo(&got)?;
        probe.expect_no_termination(ms(20)).await;
        Ok(())
    })
    .await;
}

// S13 + S19 + S31: an actor backing off for 10 s before its restart, with 100
// messages queued, when the system terminates (shutdown deadline 3 s). It runs no
// handler while it backs off, so nothing has to be cancelled at the deadline:
// `terminate` returns well before the deadline (under 2 s), with `live_actors() == 0`,
// and the 100 messages are `RecipientStopped` letters.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s13_s19_terminate_does_not_wait_out_a_restart_backoff() {
    let build = |i| {
        ActorSystem::builder(&format!("term-backoff-{i}"))
            .shutdown_timeout(Duration::from_secs(3))
            .build()
            .unwrap()
    };
    let what = "terminate during backoff";
    in_built_systems(what, 3, build, |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let backing_off = Arc::new(Notify::new());
        let b = backing_off.clone();
        let actor: ActorRef<u64> = system
            .spawn(
                Behaviors::supervise(
                    Behaviors::receive_message(move |v: u64| -> Result<(), Boom> {
                        if v == u64::MAX {
                            return Err(Boom);
                        }
                        h.lock().unwrap().push(v);
                        Ok(())
                    })
                    .on_signal(move |_, signal| {
                        if *signal == Signal::PreRestart {
                            b.notify_one();
                        }
                    }),
                )
                .on_failure::<Boom>(SupervisorStrategy::restart().with_backoff(
                    Backoff::new(Duration::from_secs(10), Duration::from_secs(20), 0.0).unwrap(),
                )),
                "sleeper",
            )
            .unwrap();
        actor.tell(u64::MAX);
        let a = actor.clone();
        produce(4, 25, move |v| a.tell(v)).await;
        // It backs off once its `PreRestart` has run (the backoff begins in that turn).
        timeout(T, backing_off.notified())
            .await
            .map_err(|_| format!("no PreRestart within {T:?}"))?;
        let started = Instant::now();
        terminate_within(&system, "terminate did not return in 10 s").await?;
        let took = started.elapsed();
        no_live_actors(&system, "")?;
        let expected = all(4, 25);
        let (_, found) = accounted(
            &mut letters,
            &handled,
            &expected,
            u64_under("/user/sleeper"),
        )
        .await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        if took > Duration::from_secs(2) {
            return Err(format!(
                "terminate took {took:?} with a backing-off actor (deadline 3 s)"
            ));
        }
        Ok(())
    })
    .await;
}
