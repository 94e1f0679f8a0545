//! Adapters as the guides show them: translation in order, stopping with the owner, a
//! new adapter replacing the old translation, and the behavior test kit's handling of
//! adapted messages (S28, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::guide_claims::*;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, TestInbox, TestProbe};
use tapio::{AskError, DeadLetter, DeadLetterReason};
use tokio::sync::mpsc;

/// Counts the length of words it gets through an adapter, and numbers told directly.
fn word_counter(
    adapters: std::sync::mpsc::Sender<ActorRef<String>>,
    to: ActorRef<u64>,
) -> Behavior<u64> {
    Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        let words: ActorRef<String> = ctx.message_adapter(|word: String| word.len() as u64);
        let _ = adapters.send(words);
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| to.tell(n))
    })
}

/// A kit running `word_counter`, the inbox it reports to, and its words adapter.
fn word_counter_kit() -> (BehaviorTestKit<u64>, TestInbox<u64>, ActorRef<String>) {
    let (adapters, adapter) = std::sync::mpsc::channel();
    let seen = TestInbox::<u64>::new();
    let kit = BehaviorTestKit::new(word_counter(adapters, seen.actor_ref().clone()));
    let words = adapter.try_recv().unwrap();
    (kit, seen, words)
}

// S48, S28: a message through an adapter waits in the kit's queue and is translated
// by `run_queued`, in order with what was told directly.
#[test]
fn s48_kit_translates_adapted_messages_in_order() {
    let (mut kit, mut seen, words) = word_counter_kit();
    words.tell("abc".to_string());
    kit.self_ref().tell(10_u64);
    words.tell("hello".to_string());
    assert_eq!(kit.run_queued(), Ok(3));
    assert_eq!(seen.messages(), [3, 10, 5]);
}

// ---------------------------------------------------------------------------------
// Message adapters (S28)
// ---------------------------------------------------------------------------------

#[message]
pub struct Query {
    pub reply_to: ActorRef<u64>,
}

// S28: an adapter translates in order with the owner's other messages; it cannot be
// asked (at once, with a reason that says what to do) nor watched; after its owner
// stops, what it is told is a dead letter naming the adapter.
#[tapio::test(start_paused = true)]
async fn s28_adapters_translate_in_order_and_stop_with_their_owner(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let (adapters, mut adapter) = mpsc::unbounded_channel();
    let to = probe.actor_ref().clone();
    let owner = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let words: ActorRef<String> = ctx.message_adapter(|word: String| word.len() as u64);
                let queries: ActorRef<Query> = ctx.message_adapter(|_: Query| 1000_u64);
                let _ = adapters.send((words, queries));
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| {
                    to.tell(n);
                    if n == 0 {
                        Behaviors::stopped()
                    } else {
                        Behaviors::same()
                    }
                })
            }),
            "owner",
        )
        .unwrap();
    let (words, queries) = adapter.recv().await.unwrap();
    words.tell("abc".to_string());
    owner.tell(10_u64);
    words.tell("hello".to_string());
    owner.tell(7_u64);
    assert_eq!(probe.receive_messages(4, WAIT).await, [3, 10, 5, 7]);

    let started = tokio::time::Instant::now();
    let asked = queries
        .ask_with(|reply_to| Query { reply_to })
        .timeout(Duration::from_secs(3600))
        .await;
    assert!(matches!(asked, Err(AskError::Adapter { .. })), "{asked:?}");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(
        asked
            .unwrap_err()
            .to_string()
            .contains("ask the owner instead")
    );

    probe.watch(&owner);
    owner.tell(0_u64);
    assert_eq!(probe.expect_message(WAIT).await, 0);
    probe.expect_terminated(&owner, WAIT).await;
    // Drain the letters of the ask above, if any.
    while letters.try_recv().is_some() {}
    words.tell("late".to_string());
    let late = letter_within(&mut letters, WAIT).await;
    assert_eq!(late.reason(), &DeadLetterReason::RecipientStopped);
    assert!(
        late.recipient().starts_with(owner.path()),
        "the letter names the adapter under its owner: {}",
        late.recipient()
    );
    assert_eq!(late.take_message::<String>().as_deref(), Some("late"));
}

// S28: registering another adapter for the same foreign type replaces the
// translation for every ref of it handed out before; a translation that fails is the
// owner's failure.
#[tapio::test(start_paused = true)]
async fn s28_a_new_adapter_replaces_the_translation_of_old_refs(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let (adapters, mut adapter) = mpsc::unbounded_channel();
    let to = probe.actor_ref().clone();
    let owner = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let old: ActorRef<String> = ctx.message_adapter(|word: String| word.len() as u64);
                let _ = adapters.send(old);
                let to = to.clone();
                Behaviors::receive(move |ctx, n: u64| {
                    if n == 99 {
                        let _: ActorRef<String> = ctx.try_message_adapter(|word: String| {
                            word.parse::<u64>().map(|n| n + 1000)
                        });
                    }
                    to.tell(n);
                })
            }),
            "owner",
        )
        .unwrap();
    probe.watch(&owner);
    let old = adapter.recv().await.unwrap();
    old.tell("four".to_string());
    assert_eq!(probe.expect_message(WAIT).await, 4);
    owner.tell(99_u64);
    assert_eq!(probe.expect_message(WAIT).await, 99);
    old.tell("5".to_string());
    assert_eq!(probe.expect_message(WAIT).await, 1005);
    old.tell("not a number".to_string());
    probe.expect_terminated(&owner, WAIT).await;
    probe.expect_no_message(Duration::from_millis(10)).await;
}

// ---------------------------------------------------------------------------------
// More edges: the kit's replay and adapters, the stream's loss accounting and end
// ---------------------------------------------------------------------------------

// S48, S28: in the kit, an adapter's failing translation is the behavior's failure,
// returned by `run_queued`; what was queued after it still waits, in order.
#[test]
fn s28_kit_adapter_failure_is_the_behaviors_failure() {
    let (adapters, adapter) = std::sync::mpsc::channel();
    let mut seen = TestInbox::<u64>::new();
    let to = seen.actor_ref().clone();
    let mut kit = BehaviorTestKit::new(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        let numbers: ActorRef<String> = ctx.try_message_adapter(|text: String| text.parse::<u64>());
        let _ = adapters.send(numbers);
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| to.tell(n))
    }));
    let numbers = adapter.try_recv().unwrap();
    numbers.tell("1".to_string());
    numbers.tell("x".to_string());
    kit.self_ref().tell(5_u64);
    let failed = kit.run_queued().unwrap_err();
    assert!(failed.is::<std::num::ParseIntError>(), "{failed}");
    assert_eq!(kit.run_queued(), Ok(1));
    assert_eq!(seen.messages(), [1, 5]);
}

// S48, S31: `take_queued` shows the messages waiting for the behavior; one that came
// through an adapter is not translated there, and stays queued, in order, for
// `run_queued`: nothing is silently thrown away.
#[test]
fn s48_take_queued_leaves_adapted_messages_to_run() {
    let (mut kit, mut seen, words) = word_counter_kit();
    words.tell("xy".to_string());
    kit.self_ref().tell(7_u64);
    words.tell("abc".to_string());
    assert_eq!(kit.take_queued(), [7]);
    assert_eq!(kit.run_queued().unwrap(), 2);
    assert_eq!(seen.messages(), [2, 3]);
}
