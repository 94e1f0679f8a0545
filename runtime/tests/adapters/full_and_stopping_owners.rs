//! Adapters and asks against full, stopping and restarting owners: offers through an
//! adapter, asks into a full fail mailbox, a zero `offer_within`, failing translations
//! under restart, and adapted messages during a blocking call (S21, S28, S30, S33).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use crate::support::stops_and_restarts::*;
use outside::{T, describe, expect_lines, letters, letters_for, ms, next};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, DeadLetterReason, Failure, MailboxConfig, OverflowStrategy};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::{Instant, timeout};

// =================================================================================
// 1. Bounded mailboxes (S21, S29, S30, S28)
// =================================================================================

/// S28, S30, S31: what comes through an adapter is never refused by the owner's
/// bound, so an offer through an adapter of a full owner is accepted at once (where a
/// direct offer waits), and arrives in order. Once the owner has stopped, an offer
/// through its adapter resolves `false` and letters the message naming the adapter;
/// an ask of the adapter is `AskError::Adapter`, before and after the stop.
#[tapio::test(start_paused = true)]
async fn s28_s30_an_offer_through_an_adapter_of_a_full_owner_is_taken_at_once_and_refused_after_its_stop(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel();
    let owner = system
        .spawn_with(
            holder(probe.actor_ref().clone(), gate.clone(), adapter_tx),
            "owner",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    let adapter = next(&mut adapter_rx).await;
    hold(&owner, &mut probe).await;
    owner.tell(Held::N(1)); // the mailbox is full now
    // A direct offer waits for room (dropped here, it queues nothing).
    assert!(timeout(ms(100), owner.offer(Held::N(99))).await.is_err());
    // Through the adapter, it is taken at once.
    assert!(
        timeout(ms(100), adapter.offer(Foreign::Value(2)))
            .await
            .unwrap()
    );
    let asked = adapter
        .ask_with(|reply_to| Foreign::Lookup(5, reply_to))
        .timeout(T)
        .await;
    assert!(
        matches!(&asked, Err(AskError::Adapter { target }) if target == adapter.path()),
        "{asked:?}"
    );
    gate.add_permits(1);
    expect_lines(&mut probe, &["n 1", "n 2"]).await;
    probe.expect_no_message(ms(50)).await;

    probe.watch(&owner);
    system.stop(&owner).unwrap();
    probe.expect_terminated(&owner, T).await;
    assert!(!timeout(T, adapter.offer(Foreign::Value(3))).await.unwrap());
    let letter = letters_for(&mut dead, adapter.path(), 1).await.remove(0);
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::RecipientStopped,
        "{}",
        describe(&letter)
    );
    assert!(
        matches!(letter.take_message::<Foreign>(), Some(Foreign::Value(3))),
        "{}",
        describe(&letter)
    );
    let asked = adapter
        .ask_with(|reply_to| Foreign::Lookup(6, reply_to))
        .timeout(T)
        .await;
    assert!(matches!(asked, Err(AskError::Adapter { .. })), "{asked:?}");
}

/// S21, S29, S11: an ask into a full mailbox whose strategy is `Fail` fails at once
/// with `MailboxFull`, its request lettered; the overflow is the target's failure,
/// as for a tell: it restarts under its supervision, and what it had queued is
/// handled by the next incarnation, which answers the next ask.
#[tapio::test(start_paused = true)]
async fn s21_s29_s11_an_ask_into_a_full_fail_mailbox_fails_at_once_and_the_target_fails_as_for_a_tell(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let setups = Arc::new(AtomicU64::new(0));
    let (adapter_tx, _adapter_rx) = mpsc::unbounded_channel();
    let (to, counted, shared_gate) = (probe.actor_ref().clone(), setups.clone(), gate.clone());
    let target = system
        .spawn_with(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<Held>| {
                counted.fetch_add(1, SeqCst);
                holder(to.clone(), shared_gate.clone(), adapter_tx.clone())
            }))
            .on_any_failure(SupervisorStrategy::restart()),
            "fail-box",
            MailboxConfig::bounded(1, OverflowStrategy::Fail).unwrap(),
        )
        .unwrap();
    hold(&target, &mut probe).await;
    target.tell(Held::N(1));
    let started = Instant::now();
    let asked = target
        .ask_with(|reply_to| Held::Ask(4, reply_to))
        .timeout(Duration::from_secs(60))
        .await;
    assert!(
        matches!(&asked, Err(AskError::MailboxFull { target: t }) if t == target.path()),
        "{asked:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1), "at once");
    let letter = letters_for(&mut dead, target.path(), 1).await.remove(0);
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::MailboxFull,
        "{}",
        describe(&letter)
    );
    gate.add_permits(1);
    assert_eq!(probe.expect_message(T).await, "n 1");
    assert_eq!(
        target
            .ask_with(|reply_to| Held::Ask(5, reply_to))
            .timeout(T)
            .await,
        Ok(50)
    );
    assert_eq!(
        setups.load(SeqCst),
        2,
        "the overflow restarted the target once"
    );
}

/// S30, S31: `offer_within` with a zero wait takes room that is there, and, with
/// none, resolves `false` at once and letters its message `OfferTimedOut`; that
/// message is never handled.
#[tapio::test(start_paused = true)]
async fn s30_a_zero_offer_within_takes_the_room_there_is_and_letters_when_there_is_none(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (adapter_tx, _adapter_rx) = mpsc::unbounded_channel();
    let owner = system
        .spawn_with(
            holder(probe.actor_ref().clone(), gate.clone(), adapter_tx),
            "zero",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    hold(&owner, &mut probe).await;
    assert!(owner.offer_within(Held::N(1), Duration::ZERO).await);
    assert!(!owner.offer_within(Held::N(2), Duration::ZERO).await);
    let letter = letters_for(&mut dead, owner.path(), 1).await.remove(0);
    assert_eq!(letter.reason(), &DeadLetterReason::OfferTimedOut);
    assert!(matches!(letter.take_message::<Held>(), Some(Held::N(2))));
    gate.add_permits(1);
    assert_eq!(probe.expect_message(T).await, "n 1");
    probe.expect_no_message(ms(100)).await;
}

// =================================================================================
// 4. Adapters (S28, S11, S14, S33)
// =================================================================================

/// S28, S11, S14, S5: a translation that fails under restart is the owner's failure:
/// only the message it failed on is lost; what was told through the adapter after
/// it, and directly, is handled by the next incarnation in order, through the same
/// adapter ref.
#[tapio::test(start_paused = true)]
async fn s28_s11_a_failing_translation_under_restart_loses_only_its_message(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel::<ActorRef<String>>();
    let setups = Arc::new(AtomicU64::new(0));
    let owner = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let run = setups.fetch_add(1, SeqCst) + 1;
                to.tell(format!("setup {run}"));
                let adapter = ctx.try_message_adapter(|text: String| text.parse::<u64>());
                let _ = adapter_tx.send(adapter);
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| to.tell(format!("n {n}")))
            }))
            .on_failure::<std::num::ParseIntError>(SupervisorStrategy::restart()),
            "parser",
        )
        .unwrap();
    let adapter = next(&mut adapter_rx).await;
    expect_lines(&mut probe, &["setup 1"]).await;
    adapter.tell("1".to_owned());
    adapter.tell("x".to_owned());
    adapter.tell("3".to_owned());
    owner.tell(4_u64);
    adapter.tell("5".to_owned());
    expect_lines(&mut probe, &["n 1", "setup 2", "n 3", "n 4", "n 5"]).await;
}

/// S28, S33, S4, S5: messages told through an adapter and directly while the owner
/// awaits a blocking call wait their turn: handled after the call, in the order told.
#[tapio::test]
async fn s28_s33_adapted_messages_told_during_a_blocking_call_wait_their_turn(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel::<ActorRef<Foreign>>();
    let owner = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<Held>| {
                let adapter = ctx.message_adapter(|foreign: Foreign| match foreign {
                    Foreign::Value(n) => Held::N(n),
                    Foreign::Lookup(n, reply_to) => Held::Ask(n, reply_to),
                });
                let _ = adapter_tx.send(adapter);
                let (to, released) = (to.clone(), released.clone());
                Behaviors::receive_async(async move |ctx, held: Held| -> Result<(), Failure> {
                    match held {
                        Held::Hold => {
                            to.tell("calling".to_owned());
                            let waiting = released.lock().unwrap().take();
                            ctx.run_blocking(move || {
                                waiting.map(|w| w.recv_timeout(Duration::from_secs(10)))
                            })
                            .await?;
                            to.tell("called".to_owned());
                        }
                        Held::N(n) => to.tell(format!("n {n}")),
                        Held::Ask(n, reply_to) => reply_to.tell(n),
                    }
                    Ok(())
                })
            }),
            "caller",
        )
        .unwrap();
    let adapter = next(&mut adapter_rx).await;
    owner.tell(Held::Hold);
    assert_eq!(probe.expect_message(T).await, "calling");
    adapter.tell(Foreign::Value(1));
    owner.tell(Held::N(2));
    adapter.tell(Foreign::Value(3));
    probe.expect_no_message(ms(50)).await;
    release.send(()).unwrap();
    expect_lines(&mut probe, &["called", "n 1", "n 2", "n 3"]).await;
}

/// S28, S30, S31: offers through an adapter racing its owner's stop, from two tasks:
/// every offered message is handled or lettered, exactly once (20 runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s28_s30_s31_offers_through_an_adapter_racing_its_owners_stop_are_each_accounted_once() {
    for run in 0..RUNS {
        let system = ActorSystem::new("adapter-race").unwrap();
        let mut dead = every_letter(&system);
        let handled = Arc::new(Mutex::new(Vec::<u64>::new()));
        let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel::<ActorRef<Foreign>>();
        let seen = handled.clone();
        let owner = system
            .spawn_with(
                Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                    let adapter = ctx.message_adapter(|foreign: Foreign| match foreign {
                        Foreign::Value(n) | Foreign::Lookup(n, _) => n,
                    });
                    let _ = adapter_tx.send(adapter);
                    let seen = seen.clone();
                    Behaviors::receive_message(move |n: u64| seen.lock().unwrap().push(n))
                }),
                "owner",
                MailboxConfig::bounded(2, OverflowStrategy::DropNew).unwrap(),
            )
            .unwrap();
        let adapter = next(&mut adapter_rx).await;
        let producers: Vec<_> = (0..2_u64)
            .map(|p| {
                let adapter = adapter.clone();
                tokio::spawn(async move {
                    let mut refused = Vec::new();
                    for i in 0..100 {
                        if !adapter.offer(Foreign::Value(p * 1000 + i)).await {
                            refused.push(p * 1000 + i);
                        }
                    }
                    refused
                })
            })
            .collect();
        tokio::task::yield_now().await;
        system.stop(&owner).unwrap();
        let mut refused = Vec::new();
        for producer in producers {
            refused.extend(timeout(T, producer).await.unwrap().unwrap());
        }
        let mut lettered = Vec::new();
        let mut kinds = Vec::new();
        let deadline = Instant::now() + T;
        loop {
            while let Some(letter) = dead.try_recv() {
                kinds.push(describe(&letter));
                if let Some(Foreign::Value(n)) = letter.take_message::<Foreign>() {
                    lettered.push(n);
                } else if let Some(n) = letter.take_message::<u64>() {
                    lettered.push(n);
                }
            }
            if handled.lock().unwrap().len() + lettered.len() >= 200 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "run {run}: {} handled, {} lettered of 200; {} refused; missing {:?}; letters {:?}",
                handled.lock().unwrap().len(),
                lettered.len(),
                refused.len(),
                {
                    let mut all: Vec<u64> = handled.lock().unwrap().clone();
                    all.extend(&lettered);
                    (0..100)
                        .chain(1000..1100)
                        .filter(|n| !all.contains(n))
                        .map(|n| (n, refused.contains(&n)))
                        .collect::<Vec<_>>()
                },
                {
                    let mut k = kinds.clone();
                    k.sort();
                    k.dedup();
                    k
                }
            );
            tokio::time::sleep(ms(2)).await;
        }
        let mut all: Vec<u64> = handled.lock().unwrap().clone();
        all.extend(&lettered);
        all.sort();
        let want: Vec<u64> = (0..100).chain(1000..1100).collect();
        assert_eq!(all, want, "run {run}: each message once");
        timeout(T, system.terminate()).await.unwrap();
    }
}
