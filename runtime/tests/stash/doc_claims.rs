//! The stash as the docs describe it: `unstash_all` replays in arrival order ahead of
//! later messages, and a restart dead-letters what the stash held.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;
use tapio::prelude::*;
use tapio::{BoxError, DeadLetter, DeadLetterReason};
use tokio::sync::mpsc;

// ---------------------------------------------------------------- stash

// README.md, Stash: "`stash.unstash_all(next)` switches to `next` and replays the held
// messages at the front of the mailbox, in arrival order, ahead of whatever arrived
// meanwhile".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unstash_all_replays_in_arrival_order_ahead_of_later_messages() {
    let system = ActorSystem::new("stash").unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let behavior = Behaviors::with_stash(16, move |stash| {
        let tx = tx.clone();
        Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                let tx = tx.clone();
                Ok(stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                    let _ = tx.send(n);
                })))
            } else {
                stash.stash(n).map(|()| Behaviors::same())
            }
        })
    })
    .unwrap();
    let actor = system.spawn(behavior, "stash").unwrap();
    for n in [1u64, 2, 3, 0, 4, 5] {
        actor.tell(n);
    }
    let mut got = Vec::new();
    for _ in 0..5 {
        got.push(recv(&mut rx).await);
    }
    assert_eq!(got, [1, 2, 3, 4, 5]);
    within("terminate", system.terminate()).await;
}

// README.md, Stash: "A restart turns what the stash held into dead letters".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_dead_letters_what_the_stash_held() {
    let system = ActorSystem::new("stash-restart").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let behavior = Behaviors::with_stash(16, move |stash| {
        Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, BoxError> {
            if n == 0 {
                Err(std::io::Error::other("restart me"))?;
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(behavior)
                .on_failure::<std::io::Error>(SupervisorStrategy::restart()),
            "stash",
        )
        .unwrap();
    actor.tell(1u64);
    actor.tell(2u64);
    actor.tell(0u64);
    for expected in [1u64, 2] {
        let letter = letter_within(&mut letters, WAIT).await;
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::StashDiscarded,
            "{letter}"
        );
        assert_eq!(letter.take_message::<u64>(), Some(expected));
    }
    within("terminate", system.terminate()).await;
}
