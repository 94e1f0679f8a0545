//! Mailbox: a stop letters what the stash, the queue and the waiting offers hold, each once (S31, S30).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::combinations::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason, OverflowStrategy};
use tokio::sync::Semaphore;
use tokio::time::timeout;

/// Stop an actor that holds messages in three places (its stash, its full bounded
/// mailbox, and offers waiting for room) while its handler awaits: every one of them
/// is a `RecipientStopped` dead letter, exactly once, and the offers resolve `false`.
async fn stop_with_everything_held(system: &ActorSystem) {
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(1_000)
        .unwrap();
    let mut probe = TestProbe::<u64>::new(system);
    let gate = Arc::new(Semaphore::new(0));
    let setups = Arc::new(AtomicUsize::new(0));
    let actor = system
        .spawn_with(
            loader(probe.actor_ref().clone(), gate.clone(), setups),
            "holder",
            bounded(2, OverflowStrategy::DropNew),
        )
        .unwrap();
    probe.watch(&actor);
    for n in 1..=3 {
        assert!(timeout(T, actor.offer(Load::N(n))).await.unwrap());
    }
    assert!(timeout(T, actor.offer(Load::Block)).await.unwrap());
    assert_eq!(probe.expect_message(T).await, 0);
    actor.tell(Load::N(4));
    actor.tell(Load::N(5));
    let mut o6 = actor.offer(Load::N(6));
    let mut o7 = actor.offer(Load::N(7));
    assert!(poll_once(&mut o6).is_pending(), "the mailbox is full");
    assert!(poll_once(&mut o7).is_pending());
    system.stop(&actor).unwrap();
    assert!(!timeout(T, o6).await.unwrap(), "its actor stopped");
    assert!(!timeout(T, o7).await.unwrap(), "its actor stopped");
    probe.expect_terminated(&actor, T).await;
    let mut seen = BTreeMap::<u64, usize>::new();
    while seen.keys().filter(|n| **n < 100).count() < 7 {
        let letter = letter_within(&mut letters, T).await;
        assert_eq!(letter.recipient(), actor.path(), "{letter}");
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::RecipientStopped,
            "{letter}"
        );
        *seen.entry(load_number(&letter)).or_default() += 1;
    }
    for letter in letters_within(&mut letters, Duration::from_millis(100)).await {
        *seen.entry(load_number(&letter)).or_default() += 1;
    }
    let numbers: BTreeMap<u64, usize> = seen
        .iter()
        .filter(|(n, _)| **n < 100)
        .map(|(n, c)| (*n, *c))
        .collect();
    assert_eq!(
        numbers,
        (1..=7).map(|n| (n, 1)).collect::<BTreeMap<_, _>>(),
        "stashed 1-3, queued 4-5, offered 6-7: one letter each ({seen:?})"
    );
    assert!(
        seen.get(&100).copied().unwrap_or(0) <= 1,
        "the message in hand: {seen:?}"
    );
    gate.add_permits(1);
}

// S31 + S30 + S26 + S19 (current thread): see `stop_with_everything_held`.
#[tapio::test(start_paused = true)]
async fn s31_stop_dead_letters_stash_queue_and_offers_once_each(system: ActorSystem) {
    stop_with_everything_held(&system).await;
}

// S31 + S30 + S26 + S19 (two workers): the same, with real time.
#[tapio::test(worker_threads = 2)]
async fn s31_stop_dead_letters_stash_queue_and_offers_once_each_on_two_workers(
    system: ActorSystem,
) {
    stop_with_everything_held(&system).await;
}
