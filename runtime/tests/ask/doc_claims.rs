//! Asks as the docs describe them: an ask to a full bounded mailbox fails at once with
//! `MailboxFull`.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::{AskError, MailboxConfig, OverflowStrategy};
use tokio::sync::{Notify, mpsc};

// ---------------------------------------------------------------- ask, mailboxes

// README.md, Ask: "a fast failure when ... its full bounded mailbox refuses the
// request (`AskError::MailboxFull`)".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_to_a_full_bounded_mailbox_fails_at_once_with_mailbox_full() {
    let system = ActorSystem::new("full").unwrap();
    let gate = Arc::new(Notify::new());
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let actor = system
        .spawn_with(
            blocker(started_tx, gate.clone()),
            "full",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    actor.tell(Job::Block);
    recv(&mut started).await;
    actor.tell(Job::Fill(1));
    let answer = tokio::time::timeout(
        SECOND,
        actor.ask_with(Job::Ask).timeout(Duration::from_secs(30)),
    )
    .await
    .expect("refused at once, not after the ask's deadline");
    assert!(
        matches!(answer, Err(AskError::MailboxFull { .. })),
        "{answer:?}"
    );
    gate.notify_one();
    within("terminate", system.terminate()).await;
}
