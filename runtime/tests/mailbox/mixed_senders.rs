//! Mailboxes past the happy path: scopes dropped while panicking or returning, senders
//! mixing tells and offers on bounded and drop-oldest mailboxes, and tells racing a
//! stop (S1, S3, S4, S5, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use crate::support::past_happy_paths::*;
use outside::{T, describe, letters, letters_for, ms, next, no_letter_for};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetterReason, MailboxConfig, OverflowStrategy};
use tokio::sync::mpsc;
use tokio::time::timeout;

/// S1: the owner of a `scope` system is its block. Dropped mid-block (a `select!`
/// that took another branch), the system terminates on its own, its actor seeing
/// `PostStop`; a block that panics has terminated the system by the time the panic
/// reaches the caller; a block that returns has its actors stopped before the value
/// comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s1_a_scope_dropped_panicking_or_returning_ends_its_system_first() {
    // Dropped.
    let (sys_tx, mut sys_rx) = mpsc::unbounded_channel::<ActorSystem>();
    let (log_tx, mut log_rx) = mpsc::unbounded_channel::<String>();
    let log = log_tx.clone();
    let body_tx = sys_tx.clone();
    let scoped = ActorSystem::scope("scope-dropped", move |system| async move {
        let sink = system
            .spawn(
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                    if *signal == Signal::PostStop {
                        let _ = log.send("dropped: worker stopped".to_string());
                    }
                }),
                "worker",
            )
            .unwrap();
        sink.tell(1_u64);
        body_tx.send(system.clone()).unwrap();
        std::future::pending::<()>().await;
    });
    let system = tokio::select! {
        _ = scoped => panic!("the body never ends"),
        system = sys_rx.recv() => system.unwrap(),
    };
    // The scope future is dropped here, at the end of the select.
    timeout(T, system.when_terminated())
        .await
        .expect("a dropped scope terminates its system")
        .unwrap();
    assert_eq!(next(&mut log_rx).await, "dropped: worker stopped");
    assert_eq!(system.live_actors(), 0);

    // Panicking.
    let log = log_tx.clone();
    let body_tx = sys_tx.clone();
    let joined = tokio::spawn(ActorSystem::scope(
        "scope-panics",
        move |system| async move {
            system
                .spawn(
                    Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                        if *signal == Signal::PostStop {
                            let _ = log.send("panics: worker stopped".to_string());
                        }
                    }),
                    "worker",
                )
                .unwrap();
            body_tx.send(system.clone()).unwrap();
            tokio::task::yield_now().await;
            panic!("the block fails");
        },
    ));
    let outcome = timeout(T, joined).await.expect("the task ends");
    assert!(outcome.unwrap_err().is_panic());
    let system = next(&mut sys_rx).await;
    assert!(system.is_terminating());
    assert_eq!(
        system.live_actors(),
        0,
        "terminated before the panic went on"
    );
    assert_eq!(
        log_rx.try_recv().ok().as_deref(),
        Some("panics: worker stopped")
    );

    // Returning.
    let log = log_tx.clone();
    let value = timeout(
        T,
        ActorSystem::scope("scope-returns", move |system| async move {
            system
                .spawn(
                    Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                        if *signal == Signal::PostStop {
                            let _ = log.send("returns: worker stopped".to_string());
                        }
                    }),
                    "worker",
                )
                .unwrap();
            (system, 7_u64)
        }),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(value.1, 7);
    assert_eq!(value.0.live_actors(), 0);
    assert_eq!(
        log_rx.try_recv().ok().as_deref(),
        Some("returns: worker stopped"),
        "the actor had stopped before the value came back"
    );
}

/// A [`Collector`] on `system` named `"collector"` with a bounded mailbox of 8 that
/// overflows by `overflow`, and its count of overlapping handlers.
fn bounded_collector(
    system: &ActorSystem,
    overflow: OverflowStrategy,
) -> (ActorRef<CollectorMsg>, Arc<AtomicU64>) {
    let (value, overlaps) = collector();
    let actor = system
        .spawn_with(
            value,
            "collector",
            MailboxConfig::bounded(8, overflow).unwrap(),
        )
        .unwrap();
    (actor, overlaps)
}

/// Four tasks, senders 1 to 4, each sending 400 items to `actor`: every third by
/// `tell`, the rest by `offer`, each of which must be accepted. Each task returns
/// the sequence numbers it offered.
fn mix_tells_and_offers(actor: &ActorRef<CollectorMsg>) -> Vec<tokio::task::JoinHandle<Vec<u64>>> {
    let mut tasks = Vec::new();
    for sender in 1..=4_u64 {
        let actor = actor.clone();
        tasks.push(tokio::spawn(async move {
            let mut offered = Vec::new();
            for seq in 0..400 {
                if seq % 3 == 0 {
                    actor.tell(Item { sender, seq });
                } else {
                    assert!(actor.offer(Item { sender, seq }).await, "offer {seq}");
                    offered.push(seq);
                }
            }
            offered
        }));
    }
    tasks
}

/// What `actor` has handled, asked for by a `ReportTo` it must accept within `T`.
async fn offered_report(system: &ActorSystem, actor: &ActorRef<CollectorMsg>) -> Vec<u64> {
    let mut probe = TestProbe::<Vec<u64>>::new(system);
    assert!(
        timeout(
            T,
            actor.offer(ReportTo {
                reply_to: probe.actor_ref().clone()
            })
        )
        .await
        .unwrap()
    );
    probe.expect_message(T).await
}

/// Asserts that `seqs`, what was handled from `sender`, rise strictly.
fn assert_in_order(sender: u64, seqs: &[u64]) {
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "sender {sender} out of order: {seqs:?}"
    );
}

/// S5, S4, S29, S30: four tasks on a multi-thread runtime each send 400 items to one
/// actor with a bounded drop-new mailbox of 8, every third by `tell` (which may be
/// dropped), the rest by `offer` (which waits and must be accepted). What arrives
/// from each sender is in the order sent, every offered item arrives, what was
/// dropped is lettered, and no two handlers overlap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_s4_senders_mixing_tells_and_offers_on_a_bounded_mailbox_keep_their_order() {
    let system = ActorSystem::new("mixed-senders").unwrap();
    let mut sub = letters(&system);
    let (actor, overlaps) = bounded_collector(&system, OverflowStrategy::DropNew);
    let tasks = mix_tells_and_offers(&actor);
    let mut offered = BTreeMap::new();
    for (i, task) in tasks.into_iter().enumerate() {
        offered.insert(i as u64 + 1, timeout(T, task).await.unwrap().unwrap());
    }
    let seen = offered_report(&system, &actor).await;
    let map = per_sender(&seen);
    for (sender, seqs) in &map {
        assert_in_order(*sender, seqs);
        let got: HashSet<u64> = seqs.iter().copied().collect();
        for seq in &offered[sender] {
            assert!(got.contains(seq), "offered {sender}/{seq} is missing");
        }
    }
    let dropped = 1_600 - seen.len();
    let lost = letters_for(&mut sub, actor.path(), dropped).await;
    for letter in &lost {
        assert!(
            matches!(letter.reason(), DeadLetterReason::MailboxFull),
            "{}",
            describe(letter)
        );
    }
    no_letter_for(&mut sub, actor.path(), ms(50)).await;
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

/// S5, S29, S30: the mixed senders again, on a bounded drop-oldest mailbox: what is
/// handled from each sender is still in the order sent, and everything missing was
/// pushed out, each as a `PushedOut` letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_senders_mixing_tells_and_offers_on_a_drop_oldest_mailbox_keep_their_order() {
    let system = ActorSystem::new("mixed-drop-oldest").unwrap();
    let mut sub = letters(&system);
    let (actor, overlaps) = bounded_collector(&system, OverflowStrategy::DropOldest);
    let tasks = mix_tells_and_offers(&actor);
    for task in tasks {
        timeout(T, task).await.unwrap().unwrap();
    }
    let seen = offered_report(&system, &actor).await;
    for (sender, seqs) in per_sender(&seen) {
        assert_in_order(sender, &seqs);
    }
    let missing = 1_600 - seen.len();
    let lost = letters_for(&mut sub, actor.path(), missing).await;
    let seen: HashSet<u64> = seen.into_iter().collect();
    for letter in &lost {
        assert!(
            matches!(letter.reason(), DeadLetterReason::PushedOut),
            "{}",
            describe(letter)
        );
        let item = letter
            .take_message::<Item>()
            .unwrap_or_else(|| panic!("a letter without its item: {}", describe(letter)));
        assert!(!seen.contains(&(item.sender * 1_000_000 + item.seq)));
    }
    no_letter_for(&mut sub, actor.path(), ms(50)).await;
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

/// S3, S31, S30: four tasks tell and offer to an actor on a bounded mailbox while it
/// is stopped under them, twenty times: no tell fails, every message is either
/// handled or a dead letter, exactly once, and nothing more is lettered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_s31_tells_racing_a_stop_are_each_handled_or_lettered_exactly_once() {
    let system = ActorSystem::new("racing-stop").unwrap();
    let mut sub = letters(&system);
    for round in 0..20_u64 {
        let handled = Arc::new(AtomicU64::new(0));
        let counter = handled.clone();
        let actor = system
            .spawn_with(
                Behaviors::receive_message(move |_: Item| {
                    counter.fetch_add(1, SeqCst);
                }),
                &format!("target-{round}"),
                MailboxConfig::bounded(64, OverflowStrategy::DropNew).unwrap(),
            )
            .unwrap();
        let mut tasks = Vec::new();
        for sender in 0..4_u64 {
            let actor = actor.clone();
            tasks.push(tokio::spawn(async move {
                for seq in 0..500 {
                    if seq % 2 == 0 {
                        actor.tell(Item { sender, seq });
                    } else {
                        let _ = actor.offer(Item { sender, seq }).await;
                    }
                    if seq % 64 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            }));
        }
        let mut watcher = TestProbe::<String>::new(&system);
        watcher.watch(&actor);
        tokio::task::yield_now().await;
        system.stop(&actor).unwrap();
        for task in tasks {
            timeout(T, task).await.unwrap().unwrap();
        }
        watcher.expect_terminated(&actor, T).await;
        let handled = handled.load(SeqCst) as usize;
        let lost = letters_for(&mut sub, actor.path(), 2_000 - handled).await;
        let mut keys = HashSet::new();
        for letter in &lost {
            let item = letter
                .take_message::<Item>()
                .unwrap_or_else(|| panic!("round {round}: {}", describe(letter)));
            assert!(
                keys.insert((item.sender, item.seq)),
                "round {round}: lettered twice: {}",
                describe(letter)
            );
        }
        no_letter_for(&mut sub, actor.path(), ms(20)).await;
    }
    system.terminate().await;
}
