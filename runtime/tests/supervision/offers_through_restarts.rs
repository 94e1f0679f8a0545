//! Offers ride through restarts while a fail mailbox takes overflowing tells (S14, S29,
//! S30).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use crate::support::stops_and_restarts::*;
use outside::{T, ms};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::{DeadLetter, MailboxConfig, OverflowStrategy};
use tokio::time::{Instant, timeout};

/// Ids of the dead letters of messages of type `M` received so far, by `id`.
fn drain_letters<M: 'static>(
    dead: &mut tapio::Subscription<DeadLetter>,
    id: impl Fn(M) -> Option<u64>,
    into: &mut Vec<u64>,
) {
    while let Some(letter) = dead.try_recv() {
        if let Some(n) = letter.take_message::<M>().and_then(&id) {
            into.push(n);
        }
    }
}

/// S29, S30, S14, S5, S31: offers into a fail-on-overflow mailbox never fail it, while
/// tells from another task overflow it into restarts: every offer is accepted and
/// handled in order, every tell handled or lettered `MailboxFull`, once (20 runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s29_s30_s14_offers_ride_through_restarts_a_fail_mailbox_takes_from_overflowing_tells() {
    for run in 0..RUNS {
        let system = ActorSystem::new("fail-race").unwrap();
        let mut dead = every_letter(&system);
        let handled = Arc::new(Mutex::new(Vec::<u64>::new()));
        let seen = handled.clone();
        let actor = system
            .spawn_with(
                Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
                    seen.lock().unwrap().push(n)
                }))
                .on_failure::<tapio::MailboxOverflow>(
                    SupervisorStrategy::restart()
                        .with_limit(u32::MAX, Duration::from_secs(1))
                        .unwrap(),
                ),
                "overflowing",
                MailboxConfig::bounded(4, OverflowStrategy::Fail).unwrap(),
            )
            .unwrap();
        let teller = {
            let actor = actor.clone();
            tokio::spawn(async move {
                for i in 0..300_u64 {
                    actor.tell(i);
                    if i.is_multiple_of(16) {
                        tokio::task::yield_now().await;
                    }
                }
            })
        };
        let offerer = {
            let actor = actor.clone();
            tokio::spawn(async move {
                let mut refused = 0;
                for i in 0..300_u64 {
                    if !actor.offer(10_000 + i).await {
                        refused += 1;
                    }
                }
                refused
            })
        };
        timeout(T, teller).await.unwrap().unwrap();
        assert_eq!(
            timeout(T, offerer).await.unwrap().unwrap(),
            0,
            "run {run}: an offer refused"
        );
        let mut lettered = Vec::new();
        let deadline = Instant::now() + T;
        loop {
            drain_letters::<u64>(&mut dead, Some, &mut lettered);
            if handled.lock().unwrap().len() + lettered.len() >= 600 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "run {run}: {} handled, {} lettered of 600",
                handled.lock().unwrap().len(),
                lettered.len()
            );
            tokio::time::sleep(ms(2)).await;
        }
        let got = handled.lock().unwrap().clone();
        assert!(
            lettered.iter().all(|n| *n < 10_000),
            "run {run}: an offer lettered: {lettered:?}"
        );
        let offers: Vec<u64> = got.iter().copied().filter(|n| *n >= 10_000).collect();
        assert_eq!(
            offers,
            (10_000..10_300).collect::<Vec<_>>(),
            "run {run}: offers in order"
        );
        let tells: Vec<u64> = got.iter().copied().filter(|n| *n < 10_000).collect();
        assert!(
            tells.windows(2).all(|w| w[0] < w[1]),
            "run {run}: tells in order"
        );
        let mut all_tells: Vec<u64> = tells.iter().chain(&lettered).copied().collect();
        all_tells.sort();
        assert_eq!(
            all_tells,
            (0..300).collect::<Vec<_>>(),
            "run {run}: each tell once"
        );
        timeout(T, system.terminate()).await.unwrap();
    }
}
