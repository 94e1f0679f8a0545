//! Mailbox: a fail-on-overflow mailbox under concurrent producers accounts for every message (S29, S31).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::nothing_within;
use crate::support::with_other_features::*;
use std::collections::BTreeSet;
use std::time::Duration;
use tapio::prelude::*;
use tapio::{DeadLetter, DeadLetterReason, MailboxConfig, MailboxOverflow, OverflowStrategy};
use tokio::sync::mpsc;

// S29 + S31 + S11: four producers on two worker threads overflow a bounded mailbox
// whose strategy is `Fail`, under a restart clause for `MailboxOverflow`: a restart
// keeps what is queued, and every note is either handled or one `MailboxFull` dead
// letter, never both, never twice, never neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s29_s31_fail_overflow_under_concurrent_producers_accounts_for_every_note() {
    const PRODUCERS: u64 = 4;
    const EACH: u64 = 500;
    let system = ActorSystem::new("overflow").unwrap();
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(8192)
        .unwrap();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let consumer = system
        .spawn_with(
            Behaviors::supervise(Behaviors::receive_message_async(
                async move |Note(n): Note| {
                    let _ = seen_tx.send(n);
                    tokio::task::yield_now().await;
                },
            ))
            .on_failure::<MailboxOverflow>(
                SupervisorStrategy::restart()
                    .with_limit(100_000, Duration::from_secs(60))
                    .unwrap(),
            ),
            "consumer",
            MailboxConfig::bounded(8, OverflowStrategy::Fail).unwrap(),
        )
        .unwrap();
    let mut producers = Vec::new();
    for producer in 0..PRODUCERS {
        let consumer = consumer.clone();
        producers.push(tokio::spawn(async move {
            for i in 0..EACH {
                consumer.tell(Note(producer * 10_000 + i));
            }
        }));
    }
    for producer in producers {
        tokio::time::timeout(BOUND, producer)
            .await
            .unwrap()
            .unwrap();
    }
    let total = usize::try_from(PRODUCERS * EACH).unwrap();
    let mut handled = BTreeSet::new();
    let mut refused = BTreeSet::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut other = Vec::new();
    while handled.len() + refused.len() < total {
        tokio::select! {
            Some(n) = seen.recv() => assert!(handled.insert(n), "{n} handled twice"),
            Some(letter) = letters.recv() => {
                if letter.recipient() == consumer.path() && letter.reason() == &DeadLetterReason::MailboxFull {
                    let Note(n) = letter.take_message::<Note>().expect("the refused note");
                    assert!(refused.insert(n), "{n} refused twice");
                } else {
                    other.push(letter.to_string());
                }
            }
            () = tokio::time::sleep_until(deadline) => panic!(
                "{} handled + {} refused of {total}; other letters: {other:?}",
                handled.len(), refused.len()
            ),
        }
    }
    assert!(
        handled.is_disjoint(&refused),
        "{:?}",
        handled.intersection(&refused).collect::<Vec<_>>()
    );
    nothing_within(&mut seen, ms(100)).await;
    assert!(letters_until_quiet(&mut letters, ms(100)).await.is_empty());
    assert_eq!(letters.lost(), 0);
    assert!(other.is_empty(), "{other:?}");
    assert!(
        !refused.is_empty(),
        "the producers never overflowed the bound"
    );
    system.terminate().await;
}
