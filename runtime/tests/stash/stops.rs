//! Stashes and stops: unstashing into `stopped` letters every held message, a stash
//! outside `supervise` outlives the restart inside it, and an overflow that stops
//! accounts for every message (S14, S26, S27, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::with_other_features::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{BoxError, DeadLetter, DeadLetterReason};

/// The `n` of a letter holding `Held::Item(n)`.
fn held_item(letter: &DeadLetter) -> u64 {
    match letter.take_message::<Held>() {
        Some(Held::Item(n)) => n,
        other => panic!("not an item: {other:?} in {letter}"),
    }
}

// =================================================================================
// 2. Stash and state machines
// =================================================================================

// S27 + S31: `unstash_all(Behaviors::stopped())` stops the actor, and the held
// messages become dead letters as it stops (`RecipientStopped`), as does what was
// queued behind: each exactly once, none handled.
#[tapio::test]
async fn s27_s31_unstash_into_stopped_dead_letters_every_held_message(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let stasher = system
        .spawn(
            Behaviors::with_stash(10, move |stash| {
                let report = report.clone();
                Behaviors::receive_message(move |held: Held| match held {
                    Held::Close => Ok(stash.unstash_all(Behaviors::stopped())),
                    Held::Open => Ok(stash.unstash_all(reporting(report.clone()))),
                    other => stash.stash(other).map(|()| Behaviors::same()),
                })
            })
            .unwrap(),
            "stasher",
        )
        .unwrap();
    probe.watch(&stasher);
    for n in 1..=5 {
        stasher.tell(Held::Item(n));
    }
    stasher.tell(Held::Close);
    stasher.tell(Held::Item(6));
    probe.expect_terminated(&stasher, BOUND).await;
    let mut got = Vec::new();
    for _ in 0..6 {
        let letter = letter_where(&mut letters, BOUND, |l| l.recipient() == stasher.path()).await;
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::RecipientStopped,
            "{letter}"
        );
        got.push(held_item(&letter));
    }
    got.sort_unstable();
    assert_eq!(got, [1, 2, 3, 4, 5, 6]);
    assert!(letters_until_quiet(&mut letters, ms(100)).await.is_empty());
    probe.expect_no_message(ms(10)).await;
}

// S14 + S27: a `supervise(..)` *inside* `with_stash` restarts only what is inside; the
// stash outlives that restart (the docs' own words), so what was held before the
// failure is replayed after it, in arrival order, ahead of what came later, and
// nothing is dead-lettered. The clause matches the error inside a `BoxError`.
#[tapio::test]
async fn s14_s27_a_stash_outside_supervise_outlives_the_restart_inside(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let setups = Arc::new(AtomicU64::new(0));
    let counted = setups.clone();
    let stasher = system
        .spawn(
            Behaviors::with_stash(10, move |stash| {
                let (report, counted) = (report.clone(), counted.clone());
                Behaviors::supervise(Behaviors::setup(move |_ctx| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let (stash, report) = (stash.clone(), report.clone());
                    Behaviors::receive_message(
                        move |held: Held| -> Result<Behavior<Held>, BoxError> {
                            match held {
                                Held::Crash => Err(Box::new(Boom)),
                                Held::Open => Ok(stash.unstash_all(reporting(report.clone()))),
                                other => {
                                    stash.stash(other)?;
                                    Ok(Behaviors::same())
                                }
                            }
                        },
                    )
                }))
                .on_failure::<Boom>(SupervisorStrategy::restart())
            })
            .unwrap(),
            "stasher",
        )
        .unwrap();
    for n in 1..=3 {
        stasher.tell(Held::Item(n));
    }
    stasher.tell(Held::Crash);
    stasher.tell(Held::Item(4));
    stasher.tell(Held::Open);
    stasher.tell(Held::Item(5));
    assert_eq!(probe.receive_messages(5, BOUND).await, [1, 2, 3, 4, 5]);
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    let stray = letters_until_quiet(&mut letters, ms(100)).await;
    assert!(
        stray.is_empty(),
        "{:?}",
        stray.iter().map(ToString::to_string).collect::<Vec<_>>()
    );
}

// S26 + S31: a stash overflow under the default decision (stop): the message that did
// not fit is `StashFull`, the held ones and what was queued become `RecipientStopped`
// as the actor stops; each exactly once.
#[tapio::test]
async fn s26_s31_a_stash_overflow_that_stops_accounts_for_every_message(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let stasher = system
        .spawn(
            Behaviors::with_stash(2, move |stash| {
                let report = report.clone();
                Behaviors::receive_message(move |held: Held| match held {
                    Held::Open => Ok(stash.unstash_all(reporting(report.clone()))),
                    other => stash.stash(other).map(|()| Behaviors::same()),
                })
            })
            .unwrap(),
            "small",
        )
        .unwrap();
    probe.watch(&stasher);
    for n in 1..=4 {
        stasher.tell(Held::Item(n));
    }
    probe.expect_terminated(&stasher, BOUND).await;
    let mut got = Vec::new();
    for _ in 0..4 {
        let letter = letter_where(&mut letters, BOUND, |l| l.recipient() == stasher.path()).await;
        got.push((held_item(&letter), letter.reason().clone()));
    }
    got.sort_by_key(|(n, _)| *n);
    assert_eq!(
        got,
        [
            (1, DeadLetterReason::RecipientStopped),
            (2, DeadLetterReason::RecipientStopped),
            (3, DeadLetterReason::StashFull),
            (4, DeadLetterReason::RecipientStopped),
        ]
    );
    assert!(letters_until_quiet(&mut letters, ms(100)).await.is_empty());
}
