//! Timers under load on a multi-thread runtime, each case run in a bounded loop: old
//! ticks after a restart, cancelled keys, single timers, stalls, and terminate (S14,
//! S19, S24, S25, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::races::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::AskError;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::sync::Notify;
use tokio::task::{JoinSet, yield_now};
use tokio::time::{Instant, sleep, timeout};

// =================================================================================
// 5. Timers
// =================================================================================

#[message]
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tm {
    Tick(u64),
    Item(u64),
    Fail,
    Cancel,
    Stall,
    Marker(ActorRef<u64>),
}

/// `n` actors `a0`, `a1`, ..., each `behavior` of its own tick counter, and the counters.
fn ticking(
    system: &ActorSystem,
    n: usize,
    behavior: impl Fn(Arc<AtomicU64>) -> Behavior<Tm>,
) -> (Vec<ActorRef<Tm>>, Vec<Arc<AtomicU64>>) {
    let counters: Vec<Arc<AtomicU64>> = (0..n).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let actors = counters
        .iter()
        .enumerate()
        .map(|(j, ticks)| {
            system
                .spawn(behavior(ticks.clone()), &format!("a{j}"))
                .unwrap()
        })
        .collect();
    (actors, counters)
}

/// Tell `actors`, in turn, the items `0..total`, yielding after every `every`.
async fn flood(actors: &[ActorRef<Tm>], total: u64, every: u64) {
    for n in 0..total {
        actors[(n % actors.len() as u64) as usize].tell(Tm::Item(n));
        if n % every == every - 1 {
            yield_now().await;
        }
    }
}

// S25 + S14 + S13 + S5: an actor restarted 30 times by a controller while four
// producers flood it, starting a 1 ms fixed-rate timer in each incarnation whose tick
// carries the incarnation number. "Timers belong to the actor cell and are cancelled
// on restart ... what the incarnation that failed scheduled never reaches the one
// replacing it": no incarnation ever sees another's tick; and every item is handled
// once, in each producer's order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s14_s25_a_restarts_old_ticks_never_reach_the_new_incarnation_under_load() {
    let what = "timers across restarts";
    in_systems(what, 8, "timer-restart", |_, system| async move {
        let handled = shared();
        let incarnations = Arc::new(AtomicU64::new(0));
        let stale: Shared = shared();
        let ticks = Arc::new(AtomicU64::new(0));
        let (h, inc, st, tk) = (
            handled.clone(),
            incarnations.clone(),
            stale.clone(),
            ticks.clone(),
        );
        let actor: ActorRef<Tm> = system
            .spawn(
                Behaviors::supervise(Behaviors::setup(move |ctx| {
                    let me = inc.fetch_add(1, SeqCst) + 1;
                    ctx.timers()
                        .start_fixed_rate("tick", Tm::Tick(me), ms(1))
                        .unwrap();
                    let (h, st, tk) = (h.clone(), st.clone(), tk.clone());
                    Behaviors::receive_message(move |m: Tm| -> Result<(), Boom> {
                        match m {
                            Tm::Tick(n) if n == me => {
                                tk.fetch_add(1, SeqCst);
                            }
                            Tm::Tick(n) => st.lock().unwrap().push((n << 32) | me),
                            Tm::Item(v) => h.lock().unwrap().push(v),
                            Tm::Fail => return Err(Boom),
                            _ => {}
                        }
                        Ok(())
                    })
                }))
                .on_failure::<Boom>(
                    SupervisorStrategy::restart()
                        .with_limit(1000, Duration::from_secs(60))
                        .unwrap(),
                ),
                "ticker",
            )
            .unwrap();
        let controller = {
            let actor = actor.clone();
            tokio::spawn(async move {
                for k in 0..30 {
                    actor.tell(Tm::Fail);
                    turns((k % 5) * 10).await;
                    if k % 3 == 0 {
                        sleep(ms(1)).await;
                    }
                }
            })
        };
        let a = actor.clone();
        produce(4, 300, move |v| a.tell(Tm::Item(v))).await;
        controller.await.unwrap();
        wait_for("every item handled", || len(&handled) >= 1200).await?;
        wait_for("31 incarnations", || incarnations.load(SeqCst) >= 31).await?;
        sleep(ms(20)).await; // the last incarnation's ticks keep coming
        let got = snapshot(&handled);
        account(&all(4, 300), &got, &[])?;
        fifo(&got)?;
        let stale = snapshot(&stale);
        if !stale.is_empty() {
            let shown: Vec<String> = stale
                .iter()
                .take(5)
                .map(|v| format!("tick of #{} seen by #{}", v >> 32, v & 0xffff_ffff))
                .collect();
            return Err(format!(
                "{} ticks reached another incarnation: {shown:?} ({} own ticks)",
                stale.len(),
                ticks.load(SeqCst)
            ));
        }
        Ok(())
    })
    .await;
}

// S25 + TimerScheduler::cancel docs ("A tick it already queued is dropped unseen"):
// twenty actors with a 1 ms fixed-rate timer, each flooded by a producer, are told
// `Cancel` once they have seen a few ticks. After the handler that cancels, no tick of
// that key is ever handled.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s25_a_cancelled_key_is_never_seen_again_under_load() {
    let what = "cancel under load";
    in_systems(what, 4, "timer-cancel", |_, system| async move {
        let late = Arc::new(AtomicU64::new(0));
        let (actors, counters) = ticking(&system, 20, |tk| {
            let (cn, lt) = (Arc::new(AtomicBool::new(false)), late.clone());
            Behaviors::with_timers(move |timers| {
                timers.start_fixed_rate("tick", Tm::Tick(0), ms(1)).unwrap();
                let (tk, cn, lt) = (tk.clone(), cn.clone(), lt.clone());
                Behaviors::receive_message(move |m: Tm| match m {
                    Tm::Tick(_) => {
                        if cn.load(SeqCst) {
                            lt.fetch_add(1, SeqCst);
                        } else {
                            tk.fetch_add(1, SeqCst);
                        }
                    }
                    Tm::Cancel => {
                        timers.cancel("tick");
                        cn.store(true, SeqCst);
                    }
                    Tm::Marker(to) => to.tell(1),
                    _ => {}
                })
            })
        });
        let flood = {
            let actors = actors.clone();
            tokio::spawn(async move { flood(&actors, 4000, 32).await })
        };
        for (actor, ticks) in actors.iter().zip(&counters) {
            wait_for("a few ticks", || ticks.load(SeqCst) >= 3).await?;
            actor.tell(Tm::Cancel);
        }
        flood.await.unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        for actor in &actors {
            actor.tell(Tm::Marker(probe.actor_ref().clone()));
            probe.expect_message(T).await;
        }
        sleep(ms(20)).await; // a window for a late tick
        let late = late.load(SeqCst);
        if late != 0 {
            return Err(format!(
                "{late} ticks handled after their key was cancelled"
            ));
        }
        Ok(())
    })
    .await;
}

// S25 + S24: fifty actors start a 1 ms single timer in their setup while a producer
// floods each of them: each sees its tick exactly once, behind the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s24_s25_a_single_timer_fires_exactly_once_under_load() {
    in_systems("single timer", 4, "timer-single", |_, system| async move {
        let (actors, counters) = ticking(&system, 50, |tk| {
            Behaviors::with_timers(move |timers| {
                timers.start_single_timer("once", Tm::Tick(0), ms(1));
                let tk = tk.clone();
                Behaviors::receive_message(move |m: Tm| {
                    if let Tm::Tick(_) = m {
                        tk.fetch_add(1, SeqCst);
                    }
                })
            })
        });
        flood(&actors, 5000, 64).await;
        wait_for("every tick", || {
            counters.iter().all(|c| c.load(SeqCst) >= 1)
        })
        .await?;
        sleep(ms(20)).await; // a window for a second tick
        let counts: Vec<u64> = counters.iter().map(|c| c.load(SeqCst)).collect();
        if counts.iter().any(|c| *c != 1) {
            return Err(format!("tick counts: {counts:?}"));
        }
        Ok(())
    })
    .await;
}

/// An actor with a repeating 5 ms timer (`fixed_rate` or fixed-delay), whose `Stall`
/// handler awaits `release`; counts its ticks and any overlap of its handlers.
fn staller(
    fixed_rate: bool,
    release: Arc<Notify>,
    ticks: Arc<AtomicU64>,
    overlaps: Arc<AtomicU64>,
) -> Behavior<Tm> {
    Behaviors::with_timers(move |timers| {
        if fixed_rate {
            timers.start_fixed_rate("tick", Tm::Tick(0), ms(5)).unwrap();
        } else {
            timers
                .start_fixed_delay("tick", Tm::Tick(0), ms(5))
                .unwrap();
        }
        let inside = Arc::new(AtomicBool::new(false));
        let (release, ticks, overlaps) = (release.clone(), ticks.clone(), overlaps.clone());
        Behaviors::receive_message_async(async move |m: Tm| {
            if inside.swap(true, SeqCst) {
                overlaps.fetch_add(1, SeqCst);
            }
            match m {
                Tm::Tick(_) => {
                    ticks.fetch_add(1, SeqCst);
                    yield_now().await;
                }
                Tm::Stall => release.notified().await,
                Tm::Marker(to) => to.tell(ticks.load(SeqCst)),
                _ => {}
            }
            inside.store(false, SeqCst);
        })
    })
}

// S24 + S25: two actors with a 5 ms timer, one fixed-delay and one fixed-rate, each
// stalled for at least 100 ms in an `async` handler (the ticks cannot re-enter it:
// no handler ever overlaps another). Fixed-delay: "never while that one still waits in
// the mailbox, so an actor that falls behind gets fewer ticks, not a backlog": a
// marker told right after the stall finds at most 3 ticks handled before it (one
// queued during the stall, one sent when that one was taken, and one for slack).
// Fixed-rate: "missed ticks are sent one after another after a stall": 30 ms after
// the stall, it has handled at least half of the ticks due since it started (a
// fixed-delay timer would have handled about 8 of the 26 or more due).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s24_s25_a_stalled_actor_gets_no_backlog_from_fixed_delay_and_a_catch_up_from_fixed_rate() {
    in_systems("stalled timers", 3, "timer-stall", |_, system| async move {
        let overlaps = Arc::new(AtomicU64::new(0));
        let (delay_release, rate_release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let (delay_ticks, rate_ticks) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let started = Instant::now();
        let delayed = system
            .spawn(staller(false, delay_release.clone(), delay_ticks.clone(), overlaps.clone()), "delay")
            .unwrap();
        let rated = system
            .spawn(staller(true, rate_release.clone(), rate_ticks.clone(), overlaps.clone()), "rate")
            .unwrap();
        delayed.tell(Tm::Stall);
        rated.tell(Tm::Stall);
        let stall = Instant::now();
        sleep(ms(100)).await; // the stall itself: measured below, not hoped for
        let stalled_for = stall.elapsed();
        if stalled_for < ms(100) {
            return Err(format!("the stall lasted only {stalled_for:?}"));
        }
        let mut probe = TestProbe::<u64>::new(&system);
        delay_release.notify_one();
        delayed.tell(Tm::Marker(probe.actor_ref().clone()));
        let before_marker = probe.expect_message(T).await;
        if before_marker > 3 {
            return Err(format!("fixed-delay: {before_marker} ticks handled before a marker told right after a {stalled_for:?} stall"));
        }
        rate_release.notify_one();
        rated.tell(Tm::Marker(probe.actor_ref().clone()));
        probe.expect_message(T).await;
        sleep(ms(30)).await;
        rated.tell(Tm::Marker(probe.actor_ref().clone()));
        let handled = probe.expect_message(T).await;
        let due = started.elapsed().as_millis() as u64 / 5;
        if handled * 2 < due {
            return Err(format!("fixed-rate: {handled} ticks handled of {due} due after a {stalled_for:?} stall"));
        }
        no_overlaps(&overlaps, " (a tick re-entered)")
    })
    .await;
}

// S48 + S19 + S25 + S23: a system that tracks leaks, busy with everything at once when
// it terminates: ten actors with 1 ms fixed-rate and fixed-delay timers restarted by
// a controller, four tasks asking a counter in a loop, two actors spawning children
// in a loop, and an actor stuck in an `async` handler. Once every ask has ended,
// `LeakReport::after_terminating` finds nothing left: no actor, task, timer or ask.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_s48_a_busy_system_terminated_under_load_leaves_nothing_behind() {
    let build = |i| {
        ActorSystem::builder(&format!("leaks-{i}"))
            .track_leaks(true)
            .build()
            .unwrap()
    };
    in_built_systems("leaks", 10, build, |i, system| async move {
        let mut tickers = Vec::new();
        for j in 0..10 {
            let ticker: ActorRef<Tm> = system
                .spawn(
                    Behaviors::supervise(Behaviors::with_timers(|timers| {
                        timers.start_fixed_rate("rate", Tm::Tick(0), ms(1)).unwrap();
                        timers
                            .start_fixed_delay("delay", Tm::Tick(1), ms(1))
                            .unwrap();
                        timers.start_single_timer("once", Tm::Tick(2), ms(3));
                        Behaviors::receive_message(|m: Tm| -> Result<(), Boom> {
                            if m == Tm::Fail { Err(Boom) } else { Ok(()) }
                        })
                    }))
                    .on_failure::<Boom>(
                        SupervisorStrategy::restart()
                            .with_limit(10_000, Duration::from_secs(60))
                            .unwrap(),
                    ),
                    &format!("ticker{j}"),
                )
                .unwrap();
            tickers.push(ticker);
        }
        let controller = {
            let tickers = tickers.clone();
            tokio::spawn(async move {
                for k in 0..200 {
                    tickers[k % 10].tell(Tm::Fail);
                    yield_now().await;
                }
            })
        };
        let counter = system.spawn(Ticket::default(), "counter").unwrap();
        let mut askers = JoinSet::new();
        for _ in 0..4 {
            let counter = counter.clone();
            askers.spawn(async move {
                loop {
                    match counter.ask(Take).timeout(Duration::from_secs(5)).await {
                        Ok(_) => {}
                        Err(AskError::TargetTerminated { .. }) => return Ok(()),
                        Err(e) => return Err(format!("an ask: {e:?}")),
                    }
                }
            });
        }
        let spawned = Arc::new(AtomicU64::new(0));
        for j in 0..2 {
            let spawner: ActorRef<u64> = system
                .spawn(
                    spawn_loop(spawned.clone(), Arc::new(AtomicU64::new(0))),
                    &format!("spawner{j}"),
                )
                .unwrap();
            spawner.tell(0_u64);
        }
        let stuck = system.spawn(stuck_node(0, 0, log()), "stuck").unwrap();
        stuck.tell(1_u64);
        wait_for("spawning", || spawned.load(SeqCst) >= 100).await?;
        turns((i % 5) * 10).await;
        let term = system.terminate();
        timeout(T, async {
            while let Some(done) = askers.join_next().await {
                done.unwrap()?;
            }
            Ok::<(), String>(())
        })
        .await
        .map_err(|_| "an ask did not end".to_string())??;
        controller.await.unwrap();
        timeout(T, term)
            .await
            .map_err(|_| "terminate hung".to_string())?;
        let report = timeout(T, tapio::testkit::LeakReport::after_terminating(&system))
            .await
            .map_err(|_| "the leak report hung".to_string())?;
        if !report.is_clean() || !report.counted_everything() {
            return Err(format!("leak report: {report}"));
        }
        Ok(())
    })
    .await;
}
