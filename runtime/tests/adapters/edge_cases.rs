//! An adapter's failed translation is its owner's failure (S28).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_cases::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, DeadLetter, DeadLetterReason};
use tokio::time::timeout;

// ---------------------------------------------------------------------------------
// Adapters
// ---------------------------------------------------------------------------------

#[message]
enum Owner {
    Num(u64),
}

// S28: an adapter's translation runs in its owner, in order with the owner's other
// messages; a failing translation is the owner's failure (here: restart); the
// adapter handed out before the restart keeps working; it cannot be asked; and it
// stops with its owner.
#[tapio::test(start_paused = true)]
async fn s28_adapter_failure_is_the_owner_failure(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let (adapters_tx, mut adapters) = tokio::sync::mpsc::unbounded_channel::<ActorRef<String>>();
    let setups = Arc::new(AtomicUsize::new(0));
    let counted = setups.clone();
    let report = probe.actor_ref().clone();
    let owner = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                counted.fetch_add(1, Ordering::SeqCst);
                let adapter: ActorRef<String> =
                    ctx.try_message_adapter(|text: String| text.parse::<u64>().map(Owner::Num));
                let _ = adapters_tx.send(adapter);
                let report = report.clone();
                Behaviors::receive(move |_, message: Owner| match message {
                    Owner::Num(n) => report.tell(n),
                })
            }))
            .on_failure::<std::num::ParseIntError>(SupervisorStrategy::restart()),
            "owner",
        )
        .unwrap();
    let first = timeout(T, adapters.recv()).await.unwrap().unwrap();
    owner.tell(Owner::Num(1));
    first.tell("2".to_owned());
    owner.tell(Owner::Num(3));
    first.tell("4".to_owned());
    assert_eq!(probe.receive_messages(4, T).await, [1, 2, 3, 4]);
    first.tell("not a number".to_owned());
    let second = timeout(T, adapters.recv()).await.unwrap().unwrap();
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    first.tell("5".to_owned());
    second.tell("6".to_owned());
    assert_eq!(probe.receive_messages(2, T).await, [5, 6]);
    let asked = second
        .ask_with(|_: ActorRef<u64>| "7".to_owned())
        .timeout(T)
        .await;
    assert!(matches!(asked, Err(AskError::Adapter { .. })), "{asked:?}");
    probe.watch(&owner);
    system.stop(&owner).unwrap();
    probe.expect_terminated(&owner, T).await;
    second.tell("8".to_owned());
    expect_dead_letter::<String>(
        &mut letters,
        second.path(),
        DeadLetterReason::RecipientStopped,
        String::from("8"),
    )
    .await;
}
