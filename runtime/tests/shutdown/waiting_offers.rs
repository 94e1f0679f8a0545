//! Shutdown: terminating a system settles the offers still waiting for room (S19, S30).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::combinations::*;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, OverflowStrategy};
use tokio::sync::Semaphore;
use tokio::time::timeout;

// S19 + S30: offers waiting on a full mailbox when the system terminates resolve
// `false` (they do not hang), and their messages are dead letters.
#[tapio::test(start_paused = true)]
async fn s19_s30_terminate_settles_the_waiting_offers(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let actor = system
        .spawn_with(
            gated_items(probe.actor_ref().clone(), gate.clone(), 1),
            "slow",
            bounded(1, OverflowStrategy::DropNew),
        )
        .unwrap();
    actor.tell(Item::N(1));
    assert_eq!(probe.expect_message(T).await, 0);
    actor.tell(Item::N(2));
    let offers = tokio::spawn({
        let actor = actor.clone();
        async move { tokio::join!(actor.offer(Item::N(3)), actor.offer(Item::N(4))) }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    let ending = system.terminate();
    let (three, four) = timeout(T, offers).await.expect("the offers ended").unwrap();
    assert!(
        !three && !four,
        "refused by a stopped actor: {three} {four}"
    );
    timeout(T, ending).await.expect("termination ends");
    let mut numbers = Vec::new();
    while let Some(letter) = letters.try_recv() {
        if let Some(Item::N(n)) = letter.take_message::<Item>() {
            numbers.push(n);
        }
    }
    numbers.sort_unstable();
    assert_eq!(numbers, [2, 3, 4], "the queued one and both offers");
}
