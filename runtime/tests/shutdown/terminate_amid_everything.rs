//! Shutdown: terminating amid timers, offers, stashes, asks and backoffs accounts for every message (S19, S31).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_orders::*;
use crate::support::outside;
use outside::{Boom, T, letters, ms, next};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::{AskError, MailboxConfig, OverflowStrategy};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

// =================================================================================
// 7. Termination (S19, S31)
// =================================================================================

#[message]
pub enum Held {
    Put(u64),
    Get(ActorRef<u64>),
}

/// S19, S31, S30, S23, S13, S25: terminate while, under one parent, a ticker runs a
/// fast fixed-rate timer, a gated bounded actor has offers waiting, a stasher holds
/// tells and an ask, and a flaky child backs off with tells queued. `terminate`
/// returns within the bound; every offer and the ask resolve; each message told is
/// handled or lettered; children see `PostStop` before the parent; nothing is left
/// running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_s31_terminate_amid_timers_offers_stash_asks_and_backoff_accounts_for_everything() {
    for round in 0..3 {
        let system = ActorSystem::new(&format!("busy-{round}")).unwrap();
        let mut dead = letters(&system);
        let (stops_tx, mut stops_rx) = mpsc::unbounded_channel::<String>();
        let (refs_tx, mut refs_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
        let (stasher_tx, mut stasher_rx) = mpsc::unbounded_channel::<ActorRef<Held>>();
        let handled: Arc<std::sync::Mutex<Vec<(String, u64)>>> = Arc::default();
        let gate = Arc::new(tokio::sync::Notify::new());

        fn stop_report<P: Message>(
            name: &'static str,
            stops: mpsc::UnboundedSender<String>,
        ) -> impl Fn(&mut ActorContext<P>, &Signal) -> Behavior<P> + Send + Sync + 'static {
            move |_ctx, signal| {
                if *signal == Signal::PostStop {
                    let _ = stops.send(name.to_string());
                }
                Behaviors::same()
            }
        }

        let (h, s, r, g) = (
            handled.clone(),
            stops_tx.clone(),
            refs_tx.clone(),
            gate.clone(),
        );
        let st = stasher_tx.clone();
        let root = system
            .spawn(
                Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                    // The ticker.
                    let hh = h.clone();
                    let _ticker: ActorRef<Tick> = ctx
                        .spawn(
                            Behaviors::with_timers(move |timers| {
                                timers.start_fixed_rate("t", Tick, ms(1)).unwrap();
                                let hh = hh.clone();
                                Behaviors::receive_message(move |_: Tick| {
                                    hh.lock().unwrap().push(("ticker".into(), 0));
                                })
                            }),
                            "ticker",
                        )
                        .unwrap();
                    // The gated, bounded one.
                    let hh = h.clone();
                    let gg = g.clone();
                    let gated: ActorRef<u64> = ctx
                        .spawn_with(
                            Behaviors::receive_message_async(async move |n: u64| {
                                hh.lock().unwrap().push(("gated".into(), n));
                                if n == 1 {
                                    gg.notified().await;
                                }
                            })
                            .on_signal(stop_report("gated", s.clone())),
                            "gated",
                            MailboxConfig::bounded(2, OverflowStrategy::DropNew).unwrap(),
                        )
                        .unwrap();
                    let _ = r.send(gated);
                    // The stasher: holds everything.
                    let stasher: ActorRef<Held> = ctx
                        .spawn(
                            Behaviors::with_stash(100, |stash| {
                                Behaviors::receive_message(move |m: Held| {
                                    stash.stash(m).map(|()| Behaviors::same())
                                })
                            })
                            .unwrap(),
                            "stasher",
                        )
                        .unwrap();
                    let _ = st.send(stasher);
                    // The flaky one, backing off for an hour after its first message.
                    let hh = h.clone();
                    let restarting = h.clone();
                    let stops = stop_report("flaky", s.clone());
                    let flaky: ActorRef<u64> = ctx
                        .spawn(
                            Behaviors::supervise(
                                Behaviors::receive_message(move |n: u64| {
                                    hh.lock().unwrap().push(("flaky".into(), n));
                                    if n == 0 { Err(Boom) } else { Ok(()) }
                                })
                                .on_signal(move |ctx, signal| {
                                    if *signal == Signal::PreRestart {
                                        restarting
                                            .lock()
                                            .unwrap()
                                            .push(("flaky pre-restart".into(), 0));
                                    }
                                    stops(ctx, signal)
                                }),
                            )
                            .on_failure::<Boom>(
                                SupervisorStrategy::restart()
                                    .with_backoff(fixed_backoff(Duration::from_secs(3600))),
                            ),
                            "flaky",
                        )
                        .unwrap();
                    let _ = r.send(flaky);
                    Behaviors::receive_message(|_: u64| ())
                        .on_signal(stop_report("root", s.clone()))
                }),
                "root",
            )
            .unwrap();
        drop(root);
        let gated = next(&mut refs_rx).await;
        let flaky = next(&mut refs_rx).await;
        let stasher = next(&mut stasher_rx).await;

        // The gated actor takes 1 and parks; 2 and 3 fill its mailbox; offers wait.
        gated.tell(1_u64);
        let deadline = Instant::now() + T;
        while !handled.lock().unwrap().contains(&("gated".into(), 1)) {
            assert!(Instant::now() < deadline);
            tokio::task::yield_now().await;
        }
        gated.tell(2_u64);
        gated.tell(3_u64);
        let mut offers = Vec::new();
        for n in 4..8_u64 {
            let g = gated.clone();
            offers.push(tokio::spawn(async move { g.offer(n).await }));
        }
        // The stasher holds tells and an ask.
        for n in 0..5 {
            stasher.tell(Held::Put(n));
        }
        let held_ask = stasher
            .ask_with(Held::Get)
            .timeout(Duration::from_secs(3600));
        let held_ask = tokio::spawn(held_ask.into_future());
        // The flaky one fails, then is told more during its backoff.
        flaky.tell(0_u64);
        for n in 1..6 {
            flaky.tell(n);
        }
        // It backs off once its `PreRestart` has run (the backoff begins in that turn).
        let deadline = Instant::now() + T;
        while !handled
            .lock()
            .unwrap()
            .contains(&("flaky pre-restart".into(), 0))
        {
            assert!(Instant::now() < deadline, "the flaky one never failed on 0");
            tokio::task::yield_now().await;
        }

        timeout(T, system.terminate())
            .await
            .expect("terminate returns within the bound");
        assert_eq!(system.live_actors(), 0, "round {round}");
        let mut accepted = 0;
        for offer in offers {
            if timeout(T, offer).await.unwrap().unwrap() {
                accepted += 1;
            }
        }
        let asked = timeout(T, held_ask).await.unwrap().unwrap();
        assert!(
            matches!(asked, Err(AskError::TargetTerminated { .. })),
            "{asked:?}"
        );

        // Accounting: gated got 1 (in hand, dropped at the stop) and 2..8 go to
        // it or to letters; the refused offers each are a letter too.
        let mut lettered: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        let mut stash_letters = 0;
        let wanted = |lettered: &BTreeMap<String, Vec<u64>>, stash_letters: usize| {
            let gated_n = lettered.get("gated").map_or(0, Vec::len);
            let flaky_n = lettered.get("flaky").map_or(0, Vec::len);
            gated_n == 6 && flaky_n == 5 && stash_letters == 6
        };
        let deadline = Instant::now() + T;
        while !wanted(&lettered, stash_letters) {
            let letter = match tokio::time::timeout_at(deadline, dead.recv()).await {
                Ok(Some(letter)) => letter,
                _ => panic!(
                    "round {round}: accepted {accepted} offers; lettered {lettered:?}, {stash_letters} from the stash; handled {:?}",
                    handled
                        .lock()
                        .unwrap()
                        .iter()
                        .filter(|(w, _)| w != "ticker")
                        .collect::<Vec<_>>()
                ),
            };
            let name = letter.recipient().name().to_string();
            if name == "stasher" {
                stash_letters += 1;
            } else if let Some(n) = letter.take_message::<u64>() {
                lettered.entry(name).or_default().push(n);
            }
        }
        let mut g = lettered["gated"].clone();
        g.sort_unstable();
        assert_eq!(g, [2, 3, 4, 5, 6, 7]);
        let mut f = lettered["flaky"].clone();
        f.sort_unstable();
        assert_eq!(f, [1, 2, 3, 4, 5]);
        assert!(
            !handled
                .lock()
                .unwrap()
                .iter()
                .any(|(w, n)| (w == "gated" && *n > 1) || (w == "flaky" && *n > 0))
        );
        // PostStop: the gated child before root. The flaky one, between
        // incarnations, has none running to see it (its failing incarnation saw
        // `PreRestart`).
        // `terminate` has returned: every PostStop has been sent.
        let mut stops = Vec::new();
        while let Ok(s) = stops_rx.try_recv() {
            stops.push(s);
        }
        assert_eq!(stops, ["gated", "root"]);
        gate.notify_waiters();
    }
}
