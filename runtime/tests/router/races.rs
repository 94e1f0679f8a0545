//! Routers on a multi-thread runtime, each case run in a bounded loop: resizes and
//! stops under load lose nothing, and round robin and broadcast keep their order (S5,
//! S32).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::races::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetterReason, Receive};
use tokio::task::yield_now;

/// What each routee of a pool handled, by routee name.
type ByRoutee = Arc<Mutex<HashMap<String, Vec<u64>>>>;

/// A routee that records every number under its own name in `seen`.
fn name_recorder(seen: &ByRoutee) -> Receive<u64> {
    let s = seen.clone();
    Behaviors::receive(move |ctx, n: u64| {
        s.lock()
            .unwrap()
            .entry(ctx.path().name().to_string())
            .or_default()
            .push(n);
    })
}

/// Wait until the routees of `seen` handled `total` numbers; answers what each handled.
async fn all_routed(seen: &ByRoutee, total: usize) -> Result<HashMap<String, Vec<u64>>, String> {
    wait_for(&format!("{total} handled"), || {
        seen.lock().unwrap().values().map(Vec::len).sum::<usize>() >= total
    })
    .await?;
    Ok(seen.lock().unwrap().clone())
}

// =================================================================================
// 4. Routers
// =================================================================================

// S32 + PoolHandle::resize docs ("shrinking takes the most recently added routees out
// of the rotation at once and stops them (what they had queued becomes dead
// letters)"): three producers tell a pool router while another task resizes it up
// and down 12 times. Every message is handled by a routee or is a dead letter,
// exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s32_routees_leaving_on_resize_under_load_lose_nothing() {
    in_systems("pool resize", 30, "pool-resize", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let pool = Routers::pool(4, move || recorder(&h)).unwrap();
        let handle = pool.handle();
        let router: ActorRef<u64> = system.spawn(pool, "pool").unwrap();
        let resizer = tokio::spawn(async move {
            for (k, size) in [1, 5, 2, 6, 1, 3, 1, 4, 2, 5, 1, 3].into_iter().enumerate() {
                handle.resize(size).map_err(|e| format!("resize: {e}"))?;
                turns((k + i) % 5 * 10).await;
            }
            Ok::<(), String>(())
        });
        let r = router.clone();
        produce(3, 500, move |v| r.tell(v)).await;
        resizer.await.unwrap()?;
        let expected = all(3, 500);
        let (_, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/pool")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)
    })
    .await;
}

// S32 + S18 + S31: four routees each stop themselves after their 50th message while
// three producers tell the router 900 messages. "A routee that stops leaves the pool
// (the router watches it); when the last routee stops the router stops". Exactly 200
// are handled, the other 700 are dead letters (to a routee or to the router), each
// exactly once, and a watcher of the router hears `Terminated` once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s32_the_last_routee_stopping_stops_the_router_and_letters_the_rest() {
    in_systems("last routee", 40, "last-routee", |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let pool = Routers::pool(4, move || {
            let h = h.clone();
            let count = AtomicU64::new(0);
            Behaviors::receive_message(move |v: u64| {
                h.lock().unwrap().push(v);
                if count.fetch_add(1, SeqCst) + 1 == 50 {
                    Behaviors::stopped()
                } else {
                    Behaviors::same()
                }
            })
        })
        .unwrap();
        let router: ActorRef<u64> = system.spawn(pool, "pool").unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&router);
        let r = router.clone();
        produce(3, 300, move |v| r.tell(v)).await;
        probe.expect_terminated(&router, T).await;
        let expected = all(3, 300);
        let (_, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/pool")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        if len(&handled) != 200 {
            return Err(format!(
                "{} handled by four routees of 50 each",
                len(&handled)
            ));
        }
        probe.expect_no_termination(ms(50)).await;
        Ok(())
    })
    .await;
}

// S32 + S5: one producer tells a pool of four 4000 numbers on a multi-thread runtime:
// "strict round-robin", each routee in turn "in the order they joined", so
// `routee-k` handles exactly the numbers n with n % 4 == k - 1, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s32_s5_round_robin_is_strict_on_a_multi_thread_runtime() {
    in_systems("round-robin", 3, "round-robin", |_, system| async move {
        let seen = ByRoutee::default();
        let s = seen.clone();
        let pool = Routers::pool(4, move || name_recorder(&s)).unwrap();
        let router: ActorRef<u64> = system.spawn(pool, "pool").unwrap();
        for n in 0..4000_u64 {
            router.tell(n);
            if n % 64 == 63 {
                yield_now().await;
            }
        }
        let seen = all_routed(&seen, 4000).await?;
        for k in 1..=4_u64 {
            let want: Vec<u64> = (0..4000).filter(|n| n % 4 == k - 1).collect();
            let got = seen
                .get(&format!("routee-{k}"))
                .cloned()
                .unwrap_or_default();
            if got != want {
                return Err(format!(
                    "routee-{k} handled {} numbers, first {:?}",
                    got.len(),
                    &got[..got.len().min(8)]
                ));
            }
        }
        Ok(())
    })
    .await;
}

// S32 + S31: a group router over four actors spawned elsewhere, which another task
// stops one by one while three producers tell the router. "A routee that stops
// leaves", the router stops with the last; every message is handled or one
// `RecipientStopped` letter (to a routee or to the router); the router's watcher
// hears `Terminated` once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s32_a_group_whose_routees_are_stopped_under_load_loses_nothing() {
    in_systems("group", 50, "group", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let routees: Vec<ActorRef<u64>> = (0..4)
            .map(|j| system.spawn(recorder(&handled), &format!("g{j}")).unwrap())
            .collect();
        let router: ActorRef<u64> = system
            .spawn(Routers::group(routees.clone()).unwrap(), "group")
            .unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&router);
        let produced = Arc::new(AtomicBool::new(false));
        let stopper = {
            let (system, handled, produced) = (system.clone(), handled.clone(), produced.clone());
            tokio::spawn(async move {
                for (j, r) in routees.iter().enumerate() {
                    let k = (i * 17) % 100 + j * 120;
                    wait_for("k handled", || len(&handled) >= k || produced.load(SeqCst)).await?;
                    turns((i + j) % 5 * 10).await;
                    system.stop(r).unwrap();
                }
                Ok::<(), String>(())
            })
        };
        let r = router.clone();
        produce(3, 300, move |v| r.tell(v)).await;
        produced.store(true, SeqCst);
        stopper.await.unwrap()?;
        probe.expect_terminated(&router, T).await;
        router.tell(enc(9, 0));
        let mut expected = all(3, 300);
        expected.push(enc(9, 0));
        let (_, found) = accounted(&mut letters, &handled, &expected, u64_under("/user/g")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        probe.expect_no_termination(ms(20)).await;
        Ok(())
    })
    .await;
}

// S32 + S5 (README: pools route "in strict round-robin, by broadcast, or by
// consistent hashing"): a broadcast pool of three under four producers: each routee
// handles every message exactly once, each producer's messages in the order sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s32_s5_a_broadcast_pool_gives_every_routee_every_message_in_order() {
    in_systems("broadcast", 10, "broadcast", |_, system| async move {
        let seen = ByRoutee::default();
        let s = seen.clone();
        let pool = Routers::pool(3, move || name_recorder(&s))
            .unwrap()
            .broadcast();
        let router: ActorRef<u64> = system.spawn(pool, "pool").unwrap();
        let r = router.clone();
        produce(4, 250, move |v| r.tell(v)).await;
        let seen = all_routed(&seen, 3000).await?;
        if seen.len() != 3 {
            return Err(format!("{} routees handled messages", seen.len()));
        }
        for (name, got) in &seen {
            account(&all(4, 250), got, &[]).map_err(|e| format!("{name}: {e}"))?;
            fifo(got).map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(())
    })
    .await;
}
