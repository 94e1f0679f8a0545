//! Adapters behind a bounded mailbox: drop-oldest and drop-new account for adapted and
//! direct messages alike, under contention too, and an offer waits behind adapted
//! messages over the bound (S28, S29, S30).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::combinations::*;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason, OverflowStrategy};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::timeout;

/// What a dead letter of an owner's traffic held, as `d{n}` / `a{n}`.
fn own_key(letter: &DeadLetter) -> String {
    if let Some(Foreign(n)) = letter.take_message::<Foreign>() {
        return format!("a{n}");
    }
    match letter.take_message::<Own>() {
        Some(Own::Direct(n)) => format!("d{n}"),
        Some(Own::Adapted(n)) => format!("a{n}"),
        Some(Own::Block) => "blocked".to_owned(),
        None => panic!(
            "a letter whose message is neither `Foreign` nor `Own`: {letter} ({})",
            letter.message_type()
        ),
    }
}

// S28 + S29 + S31: adapted messages queue in a drop-oldest mailbox beside direct ones;
// whatever the bound pushes out (adapted or direct) is a `PushedOut` dead letter that
// still holds its message, and everything else is handled, in order. Nothing is lost.
#[tapio::test(start_paused = true)]
async fn s28_s29_drop_oldest_accounts_for_adapted_and_direct_messages(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (owner, adapter) = spawn_adapter_owner(
        &system,
        &probe,
        &gate,
        "owner",
        bounded(2, OverflowStrategy::DropOldest),
    )
    .await;
    owner.tell(Own::Block);
    assert_eq!(probe.expect_message(T).await, "blocked");
    adapter.tell(Foreign(1));
    adapter.tell(Foreign(2));
    owner.tell(Own::Direct(3));
    owner.tell(Own::Direct(4));
    adapter.tell(Foreign(5));
    gate.add_permits(1);
    let handled = drain(&mut probe, Duration::from_millis(100)).await;
    let mut dead = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(50)).await {
        assert_eq!(letter.reason(), &DeadLetterReason::PushedOut, "{letter}");
        dead.push(own_key(&letter));
    }
    let sent = ["a1", "a2", "d3", "d4", "a5"];
    let mut all: Vec<&str> = handled
        .iter()
        .chain(dead.iter())
        .map(String::as_str)
        .collect();
    all.sort_unstable();
    let mut expected = sent.to_vec();
    expected.sort_unstable();
    assert_eq!(all, expected, "handled {handled:?}, dead {dead:?}");
    let order: Vec<usize> = handled
        .iter()
        .map(|h| sent.iter().position(|s| *s == h.as_str()).unwrap())
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "in order: {handled:?}"
    );
    assert!(
        handled.contains(&"a5".to_owned()),
        "the newest survives: {handled:?}"
    );
}

// S28 + S30: adapted messages are taken whatever the bound, and take room while
// queued: an `offer` waits behind them, and is accepted once they drain.
#[tapio::test(start_paused = true)]
async fn s28_s30_an_offer_waits_behind_adapted_messages_over_the_bound(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (owner, adapter) = spawn_adapter_owner(
        &system,
        &probe,
        &gate,
        "owner",
        bounded(2, OverflowStrategy::DropNew),
    )
    .await;
    owner.tell(Own::Block);
    assert_eq!(probe.expect_message(T).await, "blocked");
    for n in 1..=4 {
        adapter.tell(Foreign(n)); // beyond the bound of 2: never refused
    }
    let mut offer = owner.offer(Own::Direct(5));
    assert!(
        poll_once(&mut offer).is_pending(),
        "the mailbox is over its bound"
    );
    assert!(
        timeout(Duration::from_millis(100), &mut offer)
            .await
            .is_err(),
        "the offer waits"
    );
    gate.add_permits(1);
    assert!(timeout(T, offer).await.unwrap());
    assert_eq!(
        probe.receive_messages(5, T).await,
        ["a1", "a2", "a3", "a4", "d5"]
    );
    assert!(
        letters_within(&mut letters, Duration::from_millis(50))
            .await
            .is_empty(),
        "nothing refused"
    );
}

/// Two producers tell directly, two through the adapter, 500 messages each, to an
/// owner with a bounded mailbox of 8 and `overflow`, blocked until all are sent.
/// Returns what was handled (in order) and what was dead-lettered, by key.
async fn adapted_and_direct_producers(
    system: &ActorSystem,
    overflow: OverflowStrategy,
) -> (Vec<u64>, BTreeSet<u64>, BTreeSet<String>) {
    const EACH: u64 = 500;
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(10_000)
        .unwrap();
    let gate = Arc::new(Semaphore::new(0));
    let (started_tx, mut started) = mpsc::unbounded_channel::<()>();
    let (handled_tx, mut handled_rx) = mpsc::unbounded_channel::<u64>();
    let (adapters_tx, mut adapters) = mpsc::unbounded_channel::<ActorRef<Foreign>>();
    let in_gate = gate.clone();
    let owner = system
        .spawn_with(
            Behaviors::setup(move |ctx| {
                let adapter: ActorRef<Foreign> = ctx.message_adapter(|Foreign(n)| Own::Adapted(n));
                let _ = adapters_tx.send(adapter);
                let (gate, started, handled) =
                    (in_gate.clone(), started_tx.clone(), handled_tx.clone());
                Behaviors::receive_message_async(async move |own: Own| match own {
                    Own::Block => {
                        let _ = started.send(());
                        gate.acquire().await.unwrap().forget();
                    }
                    Own::Direct(n) | Own::Adapted(n) => {
                        let _ = handled.send(n);
                    }
                })
            }),
            "owner",
            bounded(8, overflow),
        )
        .unwrap();
    let adapter = timeout(T, adapters.recv()).await.unwrap().unwrap();
    owner.tell(Own::Block);
    timeout(T, started.recv()).await.unwrap().unwrap();
    let producers: Vec<_> = (0..4_u64)
        .map(|p| {
            let (owner, adapter) = (owner.clone(), adapter.clone());
            tokio::spawn(async move {
                for i in 0..EACH {
                    let n = p * EACH + i;
                    if p < 2 {
                        owner.tell(Own::Direct(n));
                    } else {
                        adapter.tell(Foreign(n));
                    }
                }
            })
        })
        .collect();
    for producer in producers {
        producer.await.unwrap();
    }
    gate.add_permits(1);
    let mut handled = Vec::new();
    let mut dead = BTreeSet::new();
    let mut reasons = BTreeSet::new();
    let total = (4 * EACH) as usize;
    let counted = timeout(Duration::from_secs(20), async {
        while handled.len() + dead.len() < total {
            tokio::select! {
                Some(n) = handled_rx.recv() => handled.push(n),
                Some(letter) = letters.recv() => {
                    let n = match letter.take_message::<Own>() {
                        Some(Own::Direct(n) | Own::Adapted(n)) => n,
                        _ => match letter.take_message::<Foreign>() {
                            Some(Foreign(n)) => n,
                            None => panic!("a letter without its number: {letter}"),
                        },
                    };
                    reasons.insert(format!("{:?}", letter.reason()));
                    assert!(dead.insert(n), "{n} dead-lettered twice");
                }
            }
        }
    })
    .await;
    assert!(
        counted.is_ok(),
        "only {} handled and {} dead of {total}: the rest went missing",
        handled.len(),
        dead.len()
    );
    assert_eq!(letters.lost(), 0);
    let unique: BTreeSet<u64> = handled.iter().copied().collect();
    assert_eq!(unique.len(), handled.len(), "something was handled twice");
    assert!(unique.is_disjoint(&dead), "handled and dead-lettered");
    // Per producer, what was handled came in the order it was sent (S5).
    for p in 0..4 {
        let mine: Vec<u64> = handled.iter().copied().filter(|n| n / EACH == p).collect();
        assert!(
            mine.windows(2).all(|w| w[0] < w[1]),
            "producer {p} out of order"
        );
    }
    (handled, dead, reasons)
}

// S28 + S29 + S31 (two workers): drop-new under four producers, two of them through
// an adapter: every adapted message is handled (never refused by the bound), each
// refused direct message is a dead letter, and all 2,000 are accounted for once.
#[tapio::test(worker_threads = 2)]
async fn s28_s29_drop_new_never_refuses_adapted_messages_under_contention(system: ActorSystem) {
    let (handled, dead, reasons) =
        adapted_and_direct_producers(&system, OverflowStrategy::DropNew).await;
    let adapted = handled.iter().filter(|n| **n >= 1_000).count();
    assert_eq!(adapted, 1_000, "every adapted message handled");
    assert!(
        dead.iter().all(|n| *n < 1_000),
        "only direct messages refused"
    );
    assert!(reasons.iter().all(|r| r == "MailboxFull"), "{reasons:?}");
}

// S28 + S29 + S31 (two workers): drop-oldest under the same four producers: every
// message pushed out is a `PushedOut` dead letter with its value, and all 2,000 are
// accounted for exactly once.
#[tapio::test(worker_threads = 2)]
async fn s28_s29_drop_oldest_accounts_for_everything_under_contention(system: ActorSystem) {
    let (handled, dead, reasons) =
        adapted_and_direct_producers(&system, OverflowStrategy::DropOldest).await;
    assert_eq!(handled.len() + dead.len(), 2_000);
    assert!(reasons.iter().all(|r| r == "PushedOut"), "{reasons:?}");
}
