//! Mailboxes as the docs describe them: drop-oldest dead-letters the oldest message.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;
use std::sync::Arc;
use tapio::prelude::*;
use tapio::{DeadLetter, DeadLetterReason, MailboxConfig, OverflowStrategy};
use tokio::sync::{Notify, mpsc};

// README.md, Mailboxes: "`DropNew` or `DropOldest` decides what goes, as a dead
// letter" (DropOldest: the oldest goes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_oldest_dead_letters_the_oldest_message() {
    let system = ActorSystem::new("oldest").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let gate = Arc::new(Notify::new());
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let actor = system
        .spawn_with(
            blocker(started_tx, gate.clone()),
            "oldest",
            MailboxConfig::bounded(2, OverflowStrategy::DropOldest).unwrap(),
        )
        .unwrap();
    actor.tell(Job::Block);
    recv(&mut started).await;
    actor.tell(Job::Fill(1));
    actor.tell(Job::Fill(2));
    actor.tell(Job::Fill(3));
    let letter = letter_within(&mut letters, WAIT).await;
    assert_eq!(letter.reason(), &DeadLetterReason::PushedOut);
    assert!(matches!(letter.take_message::<Job>(), Some(Job::Fill(1))));
    gate.notify_one();
    within("terminate", system.terminate()).await;
}
