//! The core promises at their edges: guardians, names taken, freed, refused and
//! anonymous, per-sender order with concurrent senders, and `unhandled` keeping a
//! switched behavior (S1, S2, S5, S6).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_cases::*;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason, InvalidNameReason, SpawnError};

// ---------------------------------------------------------------------------------
// Core
// ---------------------------------------------------------------------------------

// S1: top-level actors live under `/user`, their children below them, and the
// runtime's own actors (a probe) under `/system`.
#[tapio::test]
async fn s1_user_and_system_guardians(system: ActorSystem) {
    let mut probe = TestProbe::<Vec<String>>::new(&system);
    let to = probe.actor_ref().clone();
    let top = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let kid = ctx.spawn(Behaviors::ignore::<u64>(), "kid").unwrap();
                to.tell(
                    kid.path()
                        .elements()
                        .iter()
                        .map(|s| (*s).to_owned())
                        .collect::<Vec<_>>(),
                );
                Behaviors::ignore::<u64>()
            }),
            "alpha",
        )
        .unwrap();
    assert_eq!(top.path().elements(), ["user", "alpha"]);
    assert_eq!(probe.expect_message(T).await, ["user", "alpha", "kid"]);
    assert_eq!(probe.actor_ref().path().elements()[0], "system");
}

// S2: a name is taken while its actor lives, and free again once it has stopped; the
// new actor is a new incarnation (another uid).
#[tapio::test(start_paused = true)]
async fn s2_name_taken_then_freed_after_stop(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let first = system.spawn(Behaviors::ignore::<u64>(), "dup").unwrap();
    let again = system.spawn(Behaviors::ignore::<u64>(), "dup");
    assert!(
        matches!(&again, Err(SpawnError::NameTaken { name, .. }) if name == "dup"),
        "{again:?}"
    );
    probe.watch(&first);
    system.stop(&first).unwrap();
    probe.expect_terminated(&first, T).await;
    let second = system.spawn(Behaviors::ignore::<u64>(), "dup").unwrap();
    assert_eq!(second.path(), first.path());
    assert_ne!(second.uid(), first.uid());
}

// S2: every rule of a valid name, and the documented length limit at its edge.
#[tapio::test]
async fn s2_invalid_names_are_refused_with_their_reason(system: ActorSystem) {
    let long_ok = "a".repeat(tapio::ActorPath::MAX_NAME_LEN);
    let too_long = "a".repeat(tapio::ActorPath::MAX_NAME_LEN + 1);
    type ReasonCheck = fn(&InvalidNameReason) -> bool;
    let cases: Vec<(&str, ReasonCheck)> = vec![
        ("", |r| matches!(r, InvalidNameReason::Empty)),
        (".", |r| matches!(r, InvalidNameReason::DotSegment)),
        ("..", |r| matches!(r, InvalidNameReason::DotSegment)),
        ("a/b", |r| matches!(r, InvalidNameReason::Delimiter('/'))),
        ("a#b", |r| matches!(r, InvalidNameReason::Delimiter('#'))),
        ("a?b", |r| matches!(r, InvalidNameReason::Delimiter('?'))),
        ("a b", |r| matches!(r, InvalidNameReason::Whitespace(' '))),
        ("a\tb", |r| {
            matches!(
                r,
                InvalidNameReason::Whitespace('\t') | InvalidNameReason::Control('\t')
            )
        }),
        ("a\u{7}b", |r| {
            matches!(r, InvalidNameReason::Control('\u{7}'))
        }),
        ("a\u{a0}b", |r| {
            matches!(
                r,
                InvalidNameReason::Whitespace(_) | InvalidNameReason::Character(_)
            )
        }),
        ("$x", |r| matches!(r, InvalidNameReason::Reserved)),
        (
            &too_long,
            |r| matches!(r, InvalidNameReason::TooLong { len } if *len == tapio::ActorPath::MAX_NAME_LEN + 1),
        ),
    ];
    for (name, reason_ok) in cases {
        match system.spawn(Behaviors::ignore::<u64>(), name) {
            Err(SpawnError::InvalidName(invalid)) => {
                assert!(reason_ok(&invalid.reason), "{name:?}: {invalid}");
                assert_eq!(invalid.name, name);
            }
            other => panic!("{name:?} should be refused, got {other:?}"),
        }
    }
    // Dots inside a name, `$` after the first byte, and the limit itself are fine.
    for name in ["a.b", "...", "x$", long_ok.as_str()] {
        system
            .spawn(Behaviors::ignore::<u64>(), name)
            .unwrap_or_else(|e| panic!("{name:?} should be a valid name: {e}"));
    }
}

// S2: `spawn_anonymous` picks names that are unique and reserved (a user cannot give
// one), also among children of different parents.
#[tapio::test]
async fn s2_anonymous_names_are_unique_and_reserved(system: ActorSystem) {
    let mut names = std::collections::HashSet::new();
    for _ in 0..64 {
        let actor = system.spawn_anonymous(Behaviors::ignore::<u64>()).unwrap();
        let name = actor.path().name().to_owned();
        assert!(name.starts_with('$'), "{name}");
        assert!(names.insert(name.clone()), "{name} picked twice");
        let reuse = system.spawn(Behaviors::ignore::<u64>(), &name);
        assert!(
            matches!(reuse, Err(SpawnError::InvalidName(_))),
            "{reuse:?}"
        );
    }
}

// S5: many senders at once, on several worker threads: each sender's messages arrive
// in the order it sent them.
#[tapio::test(worker_threads = 4)]
async fn s5_order_per_sender_with_concurrent_senders(system: ActorSystem) {
    const SENDERS: u64 = 6;
    const EACH: u64 = 2_000;
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let sink = system
        .spawn(
            Behaviors::setup(move |_| {
                let report = report.clone();
                let last = Mutex::new(BTreeMap::<u64, u64>::new());
                let total = AtomicUsize::new(0);
                Behaviors::receive_message(move |(sender, seq): (u64, u64)| {
                    let mut last = last.lock().unwrap();
                    let before = last.insert(sender, seq);
                    if before.is_some_and(|b| b + 1 != seq) || (before.is_none() && seq != 0) {
                        report.tell(format!("sender {sender}: {seq} after {before:?}"));
                    }
                    if total.fetch_add(1, Ordering::Relaxed) + 1 == (SENDERS * EACH) as usize {
                        report.tell("all".to_owned());
                    }
                })
            }),
            "sink",
        )
        .unwrap();
    for sender in 0..SENDERS {
        let sink = sink.clone();
        system
            .spawn(
                Behaviors::setup(move |_| {
                    let sink = sink.clone();
                    Behaviors::receive_message(move |go: bool| {
                        if go {
                            for seq in 0..EACH {
                                sink.tell((sender, seq));
                            }
                        }
                    })
                }),
                &format!("sender-{sender}"),
            )
            .unwrap()
            .tell(true);
    }
    assert_eq!(probe.expect_message(Duration::from_secs(20)).await, "all");
}

#[message]
enum Lamp {
    Flip,
    Odd(u64),
    Report(ActorRef<String>),
}

fn lamp(on: bool) -> Behavior<Lamp> {
    Behaviors::receive_message(move |message: Lamp| match message {
        Lamp::Flip => lamp(!on),
        Lamp::Odd(n) if n % 2 == 1 => Behaviors::unhandled(),
        Lamp::Odd(_) => Behaviors::same(),
        Lamp::Report(to) => {
            to.tell(format!("on={on}"));
            Behaviors::same()
        }
    })
    .into()
}

// S6: a switch holds for the next message; `unhandled` keeps the current behavior
// (it is not a switch back) and makes the message an unhandled dead letter.
#[tapio::test(start_paused = true)]
async fn s6_unhandled_keeps_the_switched_behavior(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let lamp = system.spawn(lamp(false), "lamp").unwrap();
    lamp.tell(Lamp::Flip);
    lamp.tell(Lamp::Odd(3));
    lamp.tell(Lamp::Report(probe.actor_ref().clone()));
    letter_with(&mut letters, lamp.path(), DeadLetterReason::Unhandled).await;
    assert_eq!(probe.expect_message(T).await, "on=true");
    lamp.tell(Lamp::Odd(4));
    lamp.tell(Lamp::Report(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "on=true");
    assert!(letters.try_recv().is_none());
}
