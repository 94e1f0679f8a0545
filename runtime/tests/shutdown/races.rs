//! Terminate racing producers, spawning loops, offers and awaiting handlers on a
//! multi-thread runtime, each case run in a bounded loop (S19, S30, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::races::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::{DeadLetterReason, SpawnError};
use tokio::task::yield_now;
use tokio::time::{Instant, timeout};

// S19 + S31: producers tell three actors while the system terminates (started from
// another task once some messages were handled). `terminate` returns with
// `live_actors() == 0`; every message is handled or a `RecipientStopped` dead letter,
// exactly once, including tells made after the system has terminated.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_s31_producers_racing_terminate_handle_or_letter_each_message_once() {
    let what = "terminate under producers";
    in_systems(what, 60, "term-race", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let targets: Vec<ActorRef<u64>> = (0..3)
            .map(|j| system.spawn(recorder(&handled), &format!("t{j}")).unwrap())
            .collect();
        let k = (i * 53) % 600;
        let terminator = {
            let (system, handled) = (system.clone(), handled.clone());
            tokio::spawn(async move {
                let ok = wait_for("k handled", || len(&handled) >= k).await;
                terminate_within(&system, "terminate hung").await?;
                ok
            })
        };
        let ts = targets.clone();
        produce(3, 300, move |v| ts[(seq_of(v) % 3) as usize].tell(v)).await;
        terminator.await.unwrap()?;
        no_live_actors(&system, " after terminate returned")?;
        for (j, t) in targets.iter().enumerate() {
            t.tell(enc(9, j as u64));
        }
        let mut expected = all(3, 300);
        expected.extend((0..3).map(|j| enc(9, j)));
        let (_, found) = accounted(&mut letters, &handled, &expected, u64_under("/user/t")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)
    })
    .await;
}

// S19 + S1 + S2: four actors spawn a child (which spawns a grandchild in its setup)
// on every message and tell themselves the next one, in an endless loop, while an
// outside task spawns top-level actors in a loop too; then the system terminates.
// `terminate` returns in time with `live_actors() == 0` ("zero once the system has
// terminated"); every actor whose spawn succeeded saw `PostStop` (no handler was
// running at the deadline); a top-level spawn after termination has begun fails with
// `SystemTerminated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_terminate_while_actors_spawn_children_in_a_loop() {
    let what = "terminate vs spawning";
    in_systems(what, 20, "spawn-loop", |i, system| async move {
        let spawned = Arc::new(AtomicU64::new(0));
        let stopped = Arc::new(AtomicU64::new(0));
        for j in 0..4 {
            let st = stopped.clone();
            let spawner: ActorRef<u64> = system
                .spawn(
                    spawn_loop(spawned.clone(), stopped.clone()).on_signal(move |_, signal| {
                        if *signal == Signal::PostStop {
                            st.fetch_add(1, SeqCst);
                        }
                    }),
                    &format!("spawner{j}"),
                )
                .unwrap();
            spawned.fetch_add(1, SeqCst);
            spawner.tell(0_u64);
        }
        let outside = {
            let (system, sp, st) = (system.clone(), spawned.clone(), stopped.clone());
            tokio::spawn(async move {
                loop {
                    match system.spawn_anonymous(counted_leaf(sp.clone(), st.clone(), true)) {
                        Ok(_) => {
                            sp.fetch_add(1, SeqCst);
                        }
                        Err(SpawnError::SystemTerminated { .. }) => return Ok(()),
                        Err(other) => return Err(format!("outside spawn: {other:?}")),
                    }
                    yield_now().await;
                }
            })
        };
        let target = 200 + (i as u64 % 4) * 100;
        wait_for("actors spawned", || spawned.load(SeqCst) >= target).await?;
        terminate_within(&system, "terminate did not finish in 10 s").await?;
        no_live_actors(&system, " after terminate returned")?;
        timeout(T, outside)
            .await
            .map_err(|_| "the outside spawner never saw SystemTerminated".to_string())?
            .unwrap()?;
        let (sp, st) = (spawned.load(SeqCst), stopped.load(SeqCst));
        if sp != st {
            return Err(format!("{sp} actors spawned, {st} saw PostStop"));
        }
        match system.spawn(Behaviors::ignore::<u64>(), "late") {
            Err(SpawnError::SystemTerminated { .. }) => {}
            other => return Err(format!("a spawn after termination: {other:?}")),
        }
        Ok(())
    })
    .await;
}

// S30 + S19 + S31: eight producers `offer` into a slow sink of capacity 1 while the
// system terminates: every offer resolves within 3 s; a `true` is handled or a
// letter, a `false` is a letter; exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_s30_s31_offers_racing_terminate_resolve_and_account_every_message() {
    let what = "offers vs terminate";
    in_systems(what, 20, "offer-term", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let sink = slow_sink(&system, &handled, 1);
        let (mut tasks, refused, hung) = offerers(&sink, 8, 60, Duration::from_secs(3));
        let k = (i * 23) % 300;
        wait_for("k handled", || len(&handled) >= k).await?;
        terminate_within(&system, "terminate hung").await?;
        join_all(&mut tasks).await;
        none_hung(&hung, "still waiting 3 s after they began")?;
        let expected = all(8, 60);
        let (_, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/sink")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        if !refused_are_letters(&refused, &found).is_empty() {
            return Err("a refused offer is not a dead letter".into());
        }
        Ok(())
    })
    .await;
}

// S19 + crate docs ("Cancel safety of handlers": a stop or termination "drops the
// handler's future at its current `.await` ... Then the actor stops (and sees
// `PostStop`)"): two trees of 40 actors, every one of them inside an `async` handler
// that never finishes, when the system terminates (deadline 5 s). `terminate` returns
// well before the deadline (under 2.5 s), every actor sees `PostStop` once, children
// before parents, and `live_actors()` is 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_terminate_drops_awaiting_handlers_and_keeps_post_stop_order() {
    in_systems("stuck trees", 10, "stuck-tree", |i, system| async move {
        let log = log();
        let roots = two_roots(&system, || stuck_node(3, 3, log.clone()));
        for (n, root) in roots.iter().enumerate() {
            root.tell(n as u64);
            root.tell(n as u64 + 10);
        }
        turns((i % 4) * 20).await;
        let started = Instant::now();
        terminate_within(&system, "terminate did not finish in 10 s").await?;
        let took = started.elapsed();
        no_live_actors(&system, "")?;
        eighty_post_stops(&log, &format!(" (terminate took {took:?})"))?;
        if took > Duration::from_millis(2500) {
            return Err(format!(
                "terminate took {took:?} with only awaiting handlers to drop"
            ));
        }
        Ok(())
    })
    .await;
}
