//! Subscriptions churning during a storm of dead letters disturb no other subscriber
//! (S31, S49).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{T, letters, letters_for};
use tapio::DeadLetter;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::time::timeout;

/// S49, S31: subscribers made and dropped in a loop while four tasks publish dead
/// letters: no deadlock, the steady subscriber counts every letter, and the count
/// of subscribers ends where it began.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s49_s31_subscriptions_churning_during_a_storm_disturb_no_one() {
    let system = ActorSystem::new("churn").unwrap();
    let mut steady = letters(&system);
    let gone = system.spawn(Behaviors::ignore::<u64>(), "gone").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&gone);
    system.stop(&gone).unwrap();
    probe.expect_terminated(&gone, T).await;
    let events = system.events().clone();
    let churn = tokio::spawn(async move {
        for i in 0..500_usize {
            let mut sub = events
                .subscribe_with_capacity::<DeadLetter>(1 + i % 4)
                .unwrap();
            let _ = sub.try_recv();
            if i % 3 == 0 {
                tokio::task::yield_now().await;
            }
        }
    });
    let mut tasks = Vec::new();
    for p in 0..4_u64 {
        let gone = gone.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..500 {
                gone.tell(p * 1000 + i);
                if i % 50 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    for task in tasks {
        timeout(T, task).await.unwrap().unwrap();
    }
    timeout(T, churn).await.unwrap().unwrap();
    let got = letters_for(&mut steady, gone.path(), 2000).await;
    assert_eq!(got.len(), 2000);
    assert_eq!(steady.lost(), 0);
    assert_eq!(system.events().subscriber_count::<DeadLetter>(), 1);
    timeout(T, system.terminate()).await.unwrap();
}
