//! Watches racing stops on a multi-thread runtime, each case run in a bounded loop: one
//! message at a time with terminations, and watch and unwatch racing a stop (S4, S18).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::races::*;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use tapio::Terminated;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::task::yield_now;
use tokio::time::sleep;

#[message]
enum Busy {
    Item(u64),
    Watch(ActorRef<u64>),
}

// S4 + S18 + crate docs ("while one awaits, its actor takes no other message, but
// still reads its system lane"; "A watch, or a watched actor's `Terminated`, waits
// until the handler is done"): an actor whose `async` handler yields twice in the
// middle, flooded by four producers, watching 40 actors that another task stops
// meanwhile. No handler or signal handler ever overlaps another; every item is
// handled once; each watched actor's `Terminated` comes exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s4_s18_one_message_at_a_time_with_async_handlers_and_terminations() {
    let what = "one at a time";
    in_systems(what, 15, "one-at-a-time", |_, system| async move {
        let handled = shared();
        let inside = Arc::new(AtomicBool::new(false));
        let overlaps = Arc::new(AtomicU64::new(0));
        let ended = log();
        let (h, ins, ov) = (handled.clone(), inside.clone(), overlaps.clone());
        let (ins2, ov2, e2) = (inside.clone(), overlaps.clone(), ended.clone());
        let busy: ActorRef<Busy> = system
            .spawn(
                Behaviors::receive_async(async move |ctx, m: Busy| {
                    if ins.swap(true, SeqCst) {
                        ov.fetch_add(1, SeqCst);
                    }
                    match m {
                        Busy::Item(v) => h.lock().unwrap().push(v),
                        Busy::Watch(target) => ctx.watch(&target),
                    }
                    yield_now().await;
                    yield_now().await;
                    ins.store(false, SeqCst);
                })
                .on_signal(move |_, signal| {
                    if ins2.load(SeqCst) {
                        ov2.fetch_add(1, SeqCst);
                    }
                    if let Signal::Terminated(t) = signal {
                        e2.lock().unwrap().push(t.actor().path().to_string());
                    }
                }),
                "busy",
            )
            .unwrap();
        let targets: Vec<ActorRef<u64>> = (0..40)
            .map(|j| {
                system
                    .spawn(Behaviors::ignore::<u64>(), &format!("w{j}"))
                    .unwrap()
            })
            .collect();
        let stopper = {
            let (system, targets, busy) = (system.clone(), targets.clone(), busy.clone());
            tokio::spawn(async move {
                for (j, t) in targets.iter().enumerate() {
                    busy.tell(Busy::Watch(t.clone()));
                    turns(j % 4).await;
                    system.stop(t).unwrap();
                }
            })
        };
        let b = busy.clone();
        produce(4, 250, move |v| b.tell(Busy::Item(v))).await;
        stopper.await.unwrap();
        wait_for("every item handled", || len(&handled) >= 1000).await?;
        wait_for("every Terminated", || ended.lock().unwrap().len() >= 40).await?;
        sleep(ms(30)).await; // a window for a duplicate to show
        let got = snapshot(&handled);
        account(&all(4, 250), &got, &[])?;
        fifo(&got)?;
        let ended = ended.lock().unwrap().clone();
        let distinct: HashSet<&String> = ended.iter().collect();
        if ended.len() != 40 || distinct.len() != 40 {
            return Err(format!(
                "{} Terminated for 40 watched actors ({} distinct)",
                ended.len(),
                distinct.len()
            ));
        }
        no_overlaps(&overlaps, "")
    })
    .await;
}

// =================================================================================
// 3. Watch and terminate races
// =================================================================================

// S18: ten watchers each watch a target in their setup while another task stops the
// targets (half from outside, half by telling them a message that makes them stop
// themselves), so the watch races the stop. Each watcher hears `Terminated` exactly
// once ("even if it stopped before the watch").
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s18_a_watch_racing_a_stop_hears_terminated_exactly_once() {
    in_systems("watch vs stop", 150, "watch-race", |i, system| async move {
        let heard = log();
        let targets: Vec<ActorRef<u64>> = (0..10)
            .map(|j| {
                system
                    .spawn(
                        Behaviors::receive_message(|_: u64| Behaviors::stopped()),
                        &format!("t{j}"),
                    )
                    .unwrap()
            })
            .collect();
        let stopper = {
            let (system, targets) = (system.clone(), targets.clone());
            tokio::spawn(async move {
                for (j, t) in targets.iter().enumerate() {
                    turns((i + j) % 3).await;
                    if j % 2 == 0 {
                        system.stop(t).unwrap();
                    } else {
                        t.tell(0_u64);
                    }
                }
            })
        };
        for (j, t) in targets.iter().enumerate() {
            let named = |ended: &Terminated| ended.actor().path().name().to_string();
            let watcher = terminated_recorder(t.clone(), heard.clone(), named);
            system.spawn(watcher, &format!("w{j}")).unwrap();
        }
        stopper.await.unwrap();
        wait_for("ten Terminated", || heard.lock().unwrap().len() >= 10).await?;
        sleep(ms(20)).await; // a window for a duplicate to show
        let mut got = heard.lock().unwrap().clone();
        got.sort();
        let want: Vec<String> = {
            let mut w: Vec<String> = (0..10).map(|j| format!("t{j}")).collect();
            w.sort();
            w
        };
        if got != want {
            return Err(format!("Terminated heard: {got:?}"));
        }
        Ok(())
    })
    .await;
}

#[message]
enum Wu {
    Unwatch,
    Ping(ActorRef<u64>),
}

// S18 + `unwatch` docs ("no `Terminated` for it arrives after this call, even one
// already on its way"): a watcher unwatches its target while another task stops the
// target. Either `Terminated` came before the unwatch, or it never comes; never
// after, never twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s18_unwatch_racing_a_stop_never_hears_terminated_afterwards() {
    let what = "unwatch vs stop";
    in_systems(what, 150, "unwatch-race", |i, system| async move {
        let mut logs = Vec::new();
        let mut pairs = Vec::new();
        for j in 0..8 {
            let target: ActorRef<u64> = system
                .spawn(Behaviors::ignore::<u64>(), &format!("t{j}"))
                .unwrap();
            let log: Arc<Mutex<Vec<&'static str>>> = Arc::new(Mutex::new(Vec::new()));
            let (t, l) = (target.clone(), log.clone());
            let watcher: ActorRef<Wu> = system
                .spawn(
                    Behaviors::setup(move |ctx| {
                        ctx.watch(&t);
                        let (t, l, l2) = (t.clone(), l.clone(), l.clone());
                        Behaviors::receive(move |ctx, m: Wu| match m {
                            Wu::Unwatch => {
                                ctx.unwatch(&t);
                                l.lock().unwrap().push("unwatched");
                            }
                            Wu::Ping(to) => to.tell(1),
                        })
                        .on_signal(move |_, signal| {
                            if let Signal::Terminated(_) = signal {
                                l2.lock().unwrap().push("terminated");
                            }
                        })
                    }),
                    &format!("w{j}"),
                )
                .unwrap();
            logs.push(log);
            pairs.push((target, watcher));
        }
        let mut probe = TestProbe::<u64>::new(&system);
        let mut ends = Vec::new();
        for (j, (target, watcher)) in pairs.iter().enumerate() {
            let end = TestProbe::<u64>::new(&system);
            end.watch(target);
            ends.push(end);
            if (i + j) % 2 == 0 {
                watcher.tell(Wu::Unwatch);
                system.stop(target).unwrap();
            } else {
                system.stop(target).unwrap();
                watcher.tell(Wu::Unwatch);
            }
        }
        for ((target, watcher), end) in pairs.iter().zip(&mut ends) {
            end.expect_terminated(target, T).await;
            watcher.tell(Wu::Ping(probe.actor_ref().clone()));
            probe.expect_message(T).await;
        }
        sleep(ms(20)).await; // a window for a late Terminated to show
        for (j, log) in logs.iter().enumerate() {
            let log = log.lock().unwrap().clone();
            let fine = log == ["unwatched"] || log == ["terminated", "unwatched"];
            if !fine {
                return Err(format!("watcher w{j} saw {log:?}"));
            }
        }
        Ok(())
    })
    .await;
}
