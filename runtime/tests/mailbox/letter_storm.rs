//! A storm of dead letters seen by large, small and dropped subscriptions at once (S31,
//! S49).
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

// =================================================================================
// 6. Dead letters (S49, S31)
// =================================================================================

/// S49, S31: a storm of dead letters from four tasks, seen by an unbounded-enough
/// subscription, a small one and one dropped mid-storm. The big one sees every
/// letter; the small one sees its capacity, then a loss of exactly the rest, then
/// the letters after the storm; dropping one changes nothing for the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s49_s31_a_storm_seen_by_big_small_and_dropped_subscriptions() {
    let system = ActorSystem::new("storm-letters").unwrap();
    let mut big = letters(&system);
    let mut small = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(8)
        .unwrap();
    let dropped = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(16)
        .unwrap();
    assert_eq!(system.events().subscriber_count::<DeadLetter>(), 3);
    let gone = system.spawn(Behaviors::ignore::<u64>(), "gone").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&gone);
    system.stop(&gone).unwrap();
    probe.expect_terminated(&gone, T).await;
    let mut tasks = Vec::new();
    for p in 0..4_u64 {
        let gone = gone.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..250 {
                gone.tell(p * 1000 + i);
            }
        }));
    }
    drop(dropped);
    for task in tasks {
        timeout(T, task).await.unwrap().unwrap();
    }
    assert_eq!(system.events().subscriber_count::<DeadLetter>(), 2);
    let got = letters_for(&mut big, gone.path(), 1000).await;
    let mut values: Vec<u64> = got
        .iter()
        .map(|l| l.take_message::<u64>().unwrap())
        .collect();
    values.sort_unstable();
    values.dedup();
    assert_eq!(values.len(), 1000);
    // The small subscription: 8 letters, then the loss of 992.
    let mut events = Vec::new();
    for _ in 0..9 {
        match timeout(T, small.recv_with_loss()).await.unwrap().unwrap() {
            tapio::events::Received::Event(_) => events.push("event".to_string()),
            tapio::events::Received::Lost(n) => events.push(format!("lost {n}")),
        }
    }
    let mut expected = vec!["event".to_string(); 8];
    expected.push("lost 992".to_string());
    assert_eq!(events, expected);
    assert_eq!(small.lost(), 992);
    // After the storm it hears the next letter.
    gone.tell(7_u64);
    let letter = timeout(T, small.recv()).await.unwrap().unwrap();
    assert_eq!(letter.take_message::<u64>(), Some(7));
    timeout(T, system.terminate()).await.unwrap();
}
