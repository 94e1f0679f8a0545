//! Adapters as the docs describe them: asking an adapter is refused at once.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;
use std::time::Duration;
use tapio::AskError;
use tapio::prelude::*;
use tokio::sync::mpsc;

// README.md, Message adapters: "An adapter stops with its owner and cannot be watched
// or asked." (remoting.md: an adapter asked is refused `Adapter`, at once.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_an_adapter_is_refused_at_once() {
    let system = ActorSystem::new("adapter").unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let _owner = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let adapter: ActorRef<SevenMsg> = ctx.message_adapter(|_: SevenMsg| 1u64);
                let _ = tx.send(adapter);
                Behaviors::receive_message(|_: u64| {})
            }),
            "owner",
        )
        .unwrap();
    let adapter = recv(&mut rx).await;
    let answer = tokio::time::timeout(SECOND, adapter.ask(Get).timeout(Duration::from_secs(30)))
        .await
        .expect("refused at once");
    assert!(
        matches!(answer, Err(AskError::Adapter { .. })),
        "{answer:?}"
    );
    within("terminate", system.terminate()).await;
}
