//! Stashes behind bounded mailboxes: a replay is never refused or pushed out by the
//! bound, a fail overflow discards the stash, and asks held in a discarded stash or
//! refused by a full mailbox fail at once (S14, S21, S23, S26, S27, S29).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::combinations::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{
    AskError, DeadLetter, DeadLetterReason, MailboxOverflow, OverflowStrategy, StashOverflow,
};
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout};

/// Stashes every number until `Open`, then replays them into `gated_items`.
fn stash_then_report(
    capacity: usize,
    report: ActorRef<u64>,
    gate: Arc<Semaphore>,
    block_on: u64,
) -> Behavior<Item> {
    Behaviors::with_stash(capacity, move |stash| {
        let (report, gate) = (report.clone(), gate.clone());
        Behaviors::receive_message(move |item: Item| -> Result<Behavior<Item>, StashOverflow> {
            match item {
                Item::N(n) => {
                    stash.stash(Item::N(n))?;
                    Ok(Behaviors::same())
                }
                Item::Open => {
                    Ok(stash.unstash_all(gated_items(report.clone(), gate.clone(), block_on)))
                }
            }
        })
    })
    .unwrap()
}

/// Eight numbers stashed through a mailbox of two (fed by `offer`), then replayed; the
/// first replayed one blocks while `newer` is told. Returns what was handled after the
/// replay and the dead letters for the actor, as `(n, reason)`.
async fn replay_against_the_bound(
    system: &ActorSystem,
    overflow: OverflowStrategy,
    newer: std::ops::RangeInclusive<u64>,
) -> (Vec<u64>, Vec<(u64, DeadLetterReason)>) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(system);
    let gate = Arc::new(Semaphore::new(0));
    let actor = system
        .spawn_with(
            stash_then_report(16, probe.actor_ref().clone(), gate.clone(), 1),
            "replayer",
            bounded(2, overflow),
        )
        .unwrap();
    for n in 1..=8 {
        assert!(
            timeout(T, actor.offer(Item::N(n))).await.unwrap(),
            "offer {n}"
        );
    }
    assert!(timeout(T, actor.offer(Item::Open)).await.unwrap());
    assert_eq!(
        probe.expect_message(T).await,
        0,
        "the replay started, and blocks"
    );
    for n in newer.clone() {
        actor.tell(Item::N(n));
    }
    gate.add_permits(1);
    assert_eq!(
        probe.receive_messages(8, T).await,
        [1, 2, 3, 4, 5, 6, 7, 8],
        "the whole replay, in arrival order, first"
    );
    let after = drain(&mut probe, Duration::from_millis(100)).await;
    let mut dead = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(50)).await {
        assert_eq!(letter.recipient(), actor.path(), "{letter}");
        let Some(Item::N(n)) = letter.take_message::<Item>() else {
            panic!("a letter without its number: {letter}");
        };
        dead.push((n, letter.reason().clone()));
    }
    // Every newer message was handled or dead-lettered, exactly once.
    let mut all: Vec<u64> = after
        .iter()
        .copied()
        .chain(dead.iter().map(|(n, _)| *n))
        .collect();
    all.sort_unstable();
    assert_eq!(
        all,
        newer.collect::<Vec<_>>(),
        "handled {after:?}, dead {dead:?}"
    );
    (after, dead)
}

// S27 + S29 + S30: a stash may hold more than the mailbox's bound; `unstash_all`
// replays all of it, none refused by the bound (DropNew), ahead of newer traffic;
// newer traffic still meets the bound, and what it refuses is a dead letter.
#[tapio::test(start_paused = true)]
async fn s27_s29_a_replay_is_never_refused_by_a_drop_new_bound(system: ActorSystem) {
    let (after, dead) = replay_against_the_bound(&system, OverflowStrategy::DropNew, 9..=11).await;
    assert!(after.windows(2).all(|w| w[0] < w[1]), "in order: {after:?}");
    assert!(
        !dead.is_empty(),
        "a bound of 2 cannot take three newer messages"
    );
    for (n, reason) in &dead {
        assert_eq!(reason, &DeadLetterReason::MailboxFull, "{n}");
    }
}

// S27 + S29: with drop-oldest, newer traffic told during a replay pushes out only
// newer traffic: the replayed messages are all handled, in order, first.
#[tapio::test(start_paused = true)]
async fn s27_s29_drop_oldest_never_pushes_out_a_replayed_message(system: ActorSystem) {
    let (after, dead) =
        replay_against_the_bound(&system, OverflowStrategy::DropOldest, 9..=12).await;
    assert!(after.windows(2).all(|w| w[0] < w[1]), "in order: {after:?}");
    assert!(
        after.contains(&12),
        "the newest survives drop-oldest: {after:?}"
    );
    for (n, reason) in &dead {
        assert_eq!(reason, &DeadLetterReason::PushedOut, "{n}");
    }
}

// S26 + S29 + S14: `Fail` overflow on an actor whose stash holds messages: the
// refused message is `MailboxFull`, the restart turns the stash into `StashDiscarded`
// letters and keeps the queued messages for the next incarnation. Each message is
// handled or dead-lettered exactly once.
#[tapio::test(start_paused = true)]
async fn s26_s29_fail_overflow_discards_the_stash_and_keeps_the_queue(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let setups = Arc::new(AtomicUsize::new(0));
    let actor = system
        .spawn_with(
            Behaviors::supervise(loader(
                probe.actor_ref().clone(),
                gate.clone(),
                setups.clone(),
            ))
            .on_failure::<MailboxOverflow>(SupervisorStrategy::restart()),
            "loader",
            bounded(2, OverflowStrategy::Fail),
        )
        .unwrap();
    for n in 1..=3 {
        assert!(timeout(T, actor.offer(Load::N(n))).await.unwrap());
    }
    assert!(timeout(T, actor.offer(Load::Block)).await.unwrap());
    assert_eq!(probe.expect_message(T).await, 0);
    actor.tell(Load::N(4));
    actor.tell(Load::N(5));
    actor.tell(Load::N(6)); // full: refused, and the actor fails
    let refused = letter_within(&mut letters, T).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::MailboxFull,
        "{refused}"
    );
    assert_eq!(load_number(&refused), 6);
    gate.add_permits(1);
    eventually(|| setups.load(Ordering::SeqCst) == 2).await;
    // Room comes once the new incarnation has stashed 4 and 5 again.
    assert!(timeout(T, actor.offer(Load::Open)).await.unwrap());
    assert_eq!(probe.receive_messages(2, T).await, [4, 5]);
    let mut discarded = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(100)).await {
        assert_eq!(letter.recipient(), actor.path(), "{letter}");
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::StashDiscarded,
            "{letter}"
        );
        discarded.push(load_number(&letter));
    }
    discarded.sort_unstable();
    assert_eq!(discarded, [1, 2, 3], "the old stash, each once");
    assert_eq!(setups.load(Ordering::SeqCst), 2);
}

// ---------------------------------------------------------------------------------
// Asks into stashes, blocking calls and full mailboxes (S21-S23, S26, S29, S33)
// ---------------------------------------------------------------------------------

#[message]
enum Desk {
    Get(ActorRef<u64>),
    Crash,
    Open,
}

/// Stashes every `Get` until `Open`, then answers them `7`; `Crash` fails with `Boom`.
fn desk() -> Behavior<Desk> {
    Behaviors::with_stash(8, |stash| {
        Behaviors::receive_message(move |desk: Desk| -> Result<Behavior<Desk>, BoomOrFull> {
            match desk {
                Desk::Get(to) => {
                    stash.stash(Desk::Get(to))?;
                    Ok(Behaviors::same())
                }
                Desk::Crash => Err(BoomOrFull::Boom(Boom)),
                Desk::Open => Ok(stash.unstash_all(Behaviors::receive_message(|desk: Desk| {
                    if let Desk::Get(to) = desk {
                        to.tell(7);
                    }
                }))),
            }
        })
    })
    .unwrap()
}

#[derive(Debug, thiserror::Error)]
enum BoomOrFull {
    #[error(transparent)]
    Boom(#[from] Boom),
    #[error(transparent)]
    Full(#[from] StashOverflow),
}

// S23 + S26 + S14: an ask whose request sits in a stash when a restart discards the
// stash gets no answer: it fails at once (the request was dropped), not at its
// deadline. The next incarnation's stash answers asks as usual.
#[tapio::test(start_paused = true)]
async fn s23_s14_an_ask_held_in_a_discarded_stash_fails_at_once(system: ActorSystem) {
    let actor = system
        .spawn(
            Behaviors::supervise(desk()).on_failure::<BoomOrFull>(SupervisorStrategy::restart()),
            "desk",
        )
        .unwrap();
    let held = actor.ask_with(Desk::Get).timeout(Duration::from_secs(10));
    actor.tell(Desk::Crash);
    let started = Instant::now();
    let outcome = held.await;
    assert_fails_at_once(&outcome, started, |e| {
        matches!(e, AskError::Unanswered { .. })
    });
    let asked = actor.ask_with(Desk::Get).timeout(T);
    actor.tell(Desk::Open);
    assert_eq!(asked.await.unwrap(), 7);
}

// Failed before `AskError::MailboxFull`: the ask failed at once, but as
// `TargetTerminated`.
// S21 + S29 + S31: an ask whose request a full drop-new mailbox refuses gets no
// answer and fails at once, not at its deadline, and not as `TargetTerminated`: the
// target is alive (`MailboxFull`: its mailbox refused the request); with a
// dead-letter subscriber, the refused request is one `MailboxFull` letter.
#[tapio::test(start_paused = true)]
async fn s21_s29_an_ask_refused_by_a_full_mailbox_fails_at_once(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (report, in_gate) = (probe.actor_ref().clone(), gate.clone());
    let actor = system
        .spawn_with(
            Behaviors::receive_message_async(async move |desk: Desk| {
                if let Desk::Crash = desk {
                    report.tell(0);
                    in_gate.acquire().await.unwrap().forget();
                }
                if let Desk::Get(to) = desk {
                    to.tell(7);
                }
            }),
            "full",
            bounded(1, OverflowStrategy::DropNew),
        )
        .unwrap();
    actor.tell(Desk::Crash); // blocks (here `Crash` only blocks)
    assert_eq!(probe.expect_message(T).await, 0);
    actor.tell(Desk::Open); // the mailbox is full
    let started = Instant::now();
    let outcome = actor
        .ask_with(Desk::Get)
        .timeout(Duration::from_secs(10))
        .await;
    assert_fails_at_once(&outcome, started, |e| {
        matches!(e, AskError::MailboxFull { .. })
    });

    // With a subscriber: the refused request is one letter naming the actor, and the
    // ask still fails at once, for the same reason.
    let mut letters = system.events().subscribe::<DeadLetter>();
    let started = Instant::now();
    let outcome = actor
        .ask_with(Desk::Get)
        .timeout(Duration::from_secs(10))
        .await;
    assert_fails_at_once(&outcome, started, |e| {
        matches!(e, AskError::MailboxFull { .. })
    });
    let letter = letter_within(&mut letters, T).await;
    assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull);
    assert_eq!(letter.recipient(), actor.path());
    assert!(matches!(letter.take_message::<Desk>(), Some(Desk::Get(_))));
    let more = letters_within(&mut letters, Duration::from_millis(50)).await;
    assert!(more.is_empty(), "one letter: {more:?}");
    gate.add_permits(1);
}
