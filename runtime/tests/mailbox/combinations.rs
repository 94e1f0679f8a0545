//! Offers racing a stop are each accounted for once (S30, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::combinations::*;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::{DeadLetter, DeadLetterReason, OverflowStrategy};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::timeout;

// S30 + S31 + S19 (two workers): four producers offer to a bounded actor while it is
// stopped midway. Every message is accounted for exactly once: handled, or a
// `RecipientStopped` dead letter; and every offer that said `false` is among the
// dead letters.
#[tapio::test(worker_threads = 2)]
async fn s30_s31_offers_racing_a_stop_are_each_accounted_once(system: ActorSystem) {
    const EACH: u64 = 300;
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(10_000)
        .unwrap();
    let (handled_tx, mut handled_rx) = mpsc::unbounded_channel::<u64>();
    // 201 messages are handled; the handler of the 201st then waits until the stop.
    let gate = Arc::new(Semaphore::new(200));
    let in_gate = gate.clone();
    let actor = system
        .spawn_with(
            Behaviors::receive_message_async(async move |n: u64| {
                let _ = handled_tx.send(n);
                in_gate.acquire().await.unwrap().forget();
            }),
            "consumer",
            bounded(4, OverflowStrategy::DropNew),
        )
        .unwrap();
    let producers: Vec<_> = (0..4_u64)
        .map(|p| {
            let actor = actor.clone();
            tokio::spawn(async move {
                let mut refused = Vec::new();
                for i in 0..EACH {
                    let n = p * EACH + i;
                    if !actor.offer(n).await {
                        refused.push(n);
                    }
                }
                refused
            })
        })
        .collect();
    let mut handled = BTreeSet::new();
    while handled.len() < 201 {
        let n = timeout(T, handled_rx.recv()).await.unwrap().unwrap();
        assert!(handled.insert(n), "{n} handled twice");
    }
    system.stop(&actor).unwrap();
    let mut refused = BTreeSet::new();
    for producer in producers {
        for n in timeout(T, producer).await.unwrap().unwrap() {
            refused.insert(n);
        }
    }
    let mut dead = BTreeSet::new();
    let total = (4 * EACH) as usize;
    let counted = timeout(T, async {
        while handled.len() + dead.len() < total {
            tokio::select! {
                Some(n) = handled_rx.recv() => assert!(handled.insert(n), "{n} handled twice"),
                Some(letter) = letters.recv() => {
                    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped, "{letter}");
                    let n = letter.take_message::<u64>().expect("its number");
                    assert!(dead.insert(n), "{n} dead-lettered twice");
                }
            }
        }
    })
    .await;
    assert!(
        counted.is_ok(),
        "{} handled, {} dead of {total}: the rest went missing",
        handled.len(),
        dead.len()
    );
    assert!(handled.is_disjoint(&dead));
    assert!(
        refused.is_subset(&dead),
        "a refused offer without its letter"
    );
    assert!(
        !refused.is_empty(),
        "the stop came before the producers were done"
    );
    assert!(
        letters_within(&mut letters, Duration::from_millis(50))
            .await
            .is_empty()
    );
    drop(gate);
}
