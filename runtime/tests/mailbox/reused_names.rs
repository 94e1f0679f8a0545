//! A reused name is a new incarnation that the old ref cannot reach, and a probe's
//! bounds for no message and for a zero wait (S2, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::lifecycle_corners::*;
use crate::support::outside;
use outside::{T, ms};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason};
use tokio::time::{Instant, timeout};

// S2 + ActorRef::uid docs: a name freed by a stop is taken by a new incarnation with
// the same path and another uid; the old ref names exactly the old one, so what it is
// told is a `RecipientStopped` letter and never reaches the new actor.
#[tapio::test(start_paused = true)]
async fn s2_a_reused_name_is_a_new_incarnation_the_old_ref_cannot_reach(system: ActorSystem) {
    let mut reports = TestProbe::<String>::new(&system);
    let mut letters = system.events().subscribe::<DeadLetter>();
    let r1 = reports.actor_ref().clone();
    let first = system
        .spawn(
            Behaviors::receive_message(move |n: u64| r1.tell(format!("first {n}"))),
            "dup",
        )
        .unwrap();
    reports.watch(&first);
    system.stop(&first).unwrap();
    reports.expect_terminated(&first, T).await;
    let r2 = reports.actor_ref().clone();
    let second = system
        .spawn(
            Behaviors::receive_message(move |n: u64| r2.tell(format!("second {n}"))),
            "dup",
        )
        .unwrap();
    assert_eq!(first.path(), second.path());
    assert_ne!(first.uid(), second.uid());
    assert_ne!(first, second);
    first.tell(1_u64);
    second.tell(2_u64);
    assert_eq!(reports.expect_message(T).await, "second 2");
    reports.expect_no_message(ms(200)).await;
    let found = letters_for(&mut letters, first.path(), ms(200)).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(found[0].take_message::<u64>(), Some(1));
}

// S48 + TestProbe docs: `receive_message` waits out its whole bound in silence and
// returns `None` without failing; "a bound of zero looks once, without waiting":
// `expect_no_message(ZERO)` passes at once in silence, and `expect_message(ZERO)`
// fails at once on an empty probe.
#[tapio::test(start_paused = true)]
async fn s48_probe_bounds_none_after_the_bound_and_zero_looks_once(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let started = Instant::now();
    assert_eq!(probe.receive_message(ms(250)).await, None);
    let waited = started.elapsed();
    assert!(waited >= ms(250) && waited <= ms(251), "{waited:?}");
    let started = Instant::now();
    probe.expect_no_message(Duration::ZERO).await;
    assert_eq!(started.elapsed(), Duration::ZERO);
    probe.actor_ref().tell(5_u64);
    assert_eq!(probe.expect_message(T).await, 5);
    let started = Instant::now();
    let empty = tokio::spawn(async move { probe.expect_message(Duration::ZERO).await });
    let failed = timeout(T, empty).await.expect("it looked once and ended");
    assert!(
        failed.is_err_and(|e| e.is_panic()),
        "nothing was there to expect"
    );
    assert!(started.elapsed() < ms(1), "{:?}", started.elapsed());
}
