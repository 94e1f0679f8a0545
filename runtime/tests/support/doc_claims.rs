//! Helpers for the modules that check the claims of the README and the guides: a
//! workspace file read as text, short bounds on waits, a `Get` request answered
//! `Seven`, and a blocking job actor held by a gate.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub use super::outside::letter_within;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::remote::{RemoteError, RemoteSettings, TlsSettings};
use tapio::testkit::{TestProbe, two_nodes};
use tapio::{
    AskError, Backoff, BoxError, DeadLetter, DeadLetterReason, IntoBehavior, MailboxConfig,
    OverflowStrategy, Subscription, SystemError,
};
use tokio::sync::{Notify, mpsc, oneshot};

pub const SECOND: Duration = Duration::from_secs(1);

pub const WAIT: Duration = Duration::from_secs(3);

pub fn workspace_file(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub async fn within<T>(what: &str, future: impl std::future::IntoFuture<Output = T>) -> T {
    tokio::time::timeout(WAIT, future)
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {WAIT:?}"))
}

pub async fn recv<T>(rx: &mut mpsc::UnboundedReceiver<T>) -> T {
    within("a report", rx.recv())
        .await
        .expect("the sender is alive")
}

#[message(reply = u64)]
pub struct Get;

#[derive(Clone)]
pub struct Seven;

#[actor]
impl Seven {
    fn get(&mut self, _: Get) -> u64 {
        7
    }
}

#[message]
pub enum Job {
    Block,
    Fill(u64),
    Ask(ActorRef<u64>),
}

/// An actor with a bounded mailbox that reports when it is stuck in `Block`.
pub fn blocker(started: mpsc::UnboundedSender<()>, gate: Arc<Notify>) -> Behavior<Job> {
    Behaviors::receive_message_async(async move |job: Job| match job {
        Job::Block => {
            let _ = started.send(());
            gate.notified().await;
        }
        Job::Fill(_) => {}
        Job::Ask(reply_to) => reply_to.tell(1),
    })
    .into_behavior()
}
