//! The stash at its edges: a restart empties it into dead letters, overflow under
//! supervision and resume, and a replay that goes ahead, is cut short by a stop, or
//! stashes again (S14, S26, S27).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_cases::*;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason, StashOverflow};

#[message]
#[derive(Debug)]
enum Held {
    Item(u64),
    Fail,
    Open,
}

// S14 + S26: a restart empties the stash: what it held becomes dead letters
// (`StashDiscarded`), and the next incarnation never sees it.
#[tapio::test(start_paused = true)]
async fn s14_restart_empties_the_stash_into_dead_letters(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(10, move |stash| {
        let report = report.clone();
        Behaviors::receive_message(move |message: Held| match message {
            Held::Item(n) => stash
                .stash(Held::Item(n))
                .map(|()| Behaviors::same())
                .map_err(tapio::BoxError::from),
            Held::Fail => Err(Boom.into()),
            Held::Open => {
                let report = report.clone();
                Ok(
                    stash.unstash_all(Behaviors::receive_message(move |m: Held| {
                        if let Held::Item(n) = m {
                            report.tell(n);
                        }
                    })),
                )
            }
        })
    })
    .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(behavior).on_failure::<Boom>(SupervisorStrategy::restart()),
            "stasher",
        )
        .unwrap();
    for n in 1..=3 {
        actor.tell(Held::Item(n));
    }
    actor.tell(Held::Fail);
    let mut discarded = Vec::new();
    for _ in 0..3 {
        let letter =
            letter_with(&mut letters, actor.path(), DeadLetterReason::StashDiscarded).await;
        match letter.take_message::<Held>() {
            Some(Held::Item(n)) => discarded.push(n),
            other => panic!("expected a stashed item, got {other:?}"),
        }
    }
    assert_eq!(discarded, [1, 2, 3]);
    actor.tell(Held::Item(9));
    actor.tell(Held::Open);
    assert_eq!(probe.expect_message(T).await, 9);
    probe.expect_no_message(Duration::from_millis(50)).await;
}

// ---------------------------------------------------------------------------------
// Stash
// ---------------------------------------------------------------------------------

fn bounded_stasher(capacity: usize, report: ActorRef<u64>) -> Behavior<Held> {
    Behaviors::with_stash(capacity, move |stash| {
        let report = report.clone();
        Behaviors::receive_message(
            move |message: Held| -> Result<Behavior<Held>, tapio::BoxError> {
                match message {
                    Held::Item(n) => {
                        stash.stash(Held::Item(n))?;
                        Ok(Behaviors::same())
                    }
                    Held::Fail => Err(Boom.into()),
                    Held::Open => {
                        let report = report.clone();
                        Ok(
                            stash.unstash_all(Behaviors::receive_message(move |m: Held| {
                                if let Held::Item(n) = m {
                                    report.tell(n);
                                }
                            })),
                        )
                    }
                }
            },
        )
    })
    .unwrap()
}

// S26: overflowing the stash is the stashing actor's failure, under its supervision:
// with a restart clause for `StashOverflow` the overflowing message is a `StashFull`
// dead letter, the held ones `StashDiscarded`, and the actor goes on; without one it
// stops.
#[tapio::test(start_paused = true)]
async fn s26_stash_overflow_under_supervision(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let supervised = system
        .spawn(
            Behaviors::supervise(bounded_stasher(2, probe.actor_ref().clone()))
                .on_failure::<StashOverflow>(SupervisorStrategy::restart()),
            "supervised",
        )
        .unwrap();
    let plain = system
        .spawn(bounded_stasher(2, probe.actor_ref().clone()), "plain")
        .unwrap();
    probe.watch(&supervised);
    probe.watch(&plain);
    for n in 1..=3 {
        supervised.tell(Held::Item(n));
    }
    let mut got = Vec::new();
    for _ in 0..3 {
        let letter = dead_letter_for(&mut letters, supervised.path()).await;
        let n = match letter.take_message::<Held>() {
            Some(Held::Item(n)) => n,
            other => panic!("{other:?}"),
        };
        got.push((n, letter.reason().clone()));
    }
    got.sort_by_key(|(n, _)| *n);
    assert_eq!(
        got,
        [
            (1, DeadLetterReason::StashDiscarded),
            (2, DeadLetterReason::StashDiscarded),
            (3, DeadLetterReason::StashFull),
        ]
    );
    supervised.tell(Held::Item(7));
    supervised.tell(Held::Open);
    assert_eq!(probe.expect_message(T).await, 7);
    for n in 1..=3 {
        plain.tell(Held::Item(n));
    }
    probe.expect_terminated(&plain, T).await;
    probe.expect_no_termination(Duration::from_millis(50)).await;
}

#[message]
enum Replay {
    Item(u64),
    Open,
}

fn gatekeeper(report: ActorRef<u64>, stop_on: Option<u64>) -> Behavior<Replay> {
    Behaviors::with_stash(100, move |stash| {
        let report = report.clone();
        Behaviors::receive(move |ctx, message: Replay| match message {
            Replay::Item(n) => stash.stash(Replay::Item(n)).map(|()| Behaviors::same()),
            Replay::Open => {
                ctx.self_ref().tell(Replay::Item(100));
                let report = report.clone();
                Ok(stash.unstash_all(Behaviors::receive(move |ctx, m: Replay| {
                    if let Replay::Item(n) = m {
                        report.tell(n);
                        if Some(n) == stop_on {
                            ctx.system().stop(ctx.self_ref()).unwrap();
                        }
                    }
                })))
            }
        })
    })
    .unwrap()
}

// S27: `unstash_all` replays the held messages first, in arrival order, ahead of
// what arrived while they were held and of what the unstashing handler itself sent.
#[tapio::test(start_paused = true)]
async fn s27_replay_goes_ahead_of_what_arrived_meanwhile(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(gatekeeper(probe.actor_ref().clone(), None), "gate")
        .unwrap();
    for n in 1..=3 {
        actor.tell(Replay::Item(n));
    }
    actor.tell(Replay::Open);
    actor.tell(Replay::Item(4));
    actor.tell(Replay::Item(5));
    assert_eq!(probe.receive_messages(6, T).await, [1, 2, 3, 4, 5, 100]);
}

// S27: a stop that arrives during the replay is honoured before the rest of it: what
// was not replayed becomes `RecipientStopped` dead letters.
#[tapio::test(start_paused = true)]
async fn s27_stop_during_replay_cuts_it_short(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(gatekeeper(probe.actor_ref().clone(), Some(1)), "gate")
        .unwrap();
    probe.watch(&actor);
    for n in 1..=20 {
        actor.tell(Replay::Item(n));
    }
    actor.tell(Replay::Open);
    assert_eq!(probe.expect_message(T).await, 1);
    probe.expect_terminated(&actor, T).await;
    probe.expect_no_message(Duration::from_millis(50)).await;
    let mut lost = Vec::new();
    while lost.len() < 20 {
        let letter = letter_with(
            &mut letters,
            actor.path(),
            DeadLetterReason::RecipientStopped,
        )
        .await;
        match letter.take_message::<Replay>() {
            Some(Replay::Item(n)) => lost.push(n),
            Some(Replay::Open) => panic!("Open was handled"),
            None => panic!("a letter without its message: {}", letter.message_type()),
        }
    }
    lost.sort_unstable();
    assert_eq!(lost, (2..=20).chain([100]).collect::<Vec<_>>());
}

#[message]
enum Phase {
    Item(u64),
    Open1,
    Open2,
}

// S27: messages stashed again while a replay runs, then replayed by a second
// `unstash_all`, keep their arrival order, still ahead of what came after.
#[tapio::test(start_paused = true)]
async fn s27_restash_during_replay_keeps_arrival_order(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(100, move |stash| {
        let report = report.clone();
        Behaviors::receive_message(
            move |message: Phase| -> Result<Behavior<Phase>, StashOverflow> {
                match message {
                    Phase::Item(n) => {
                        stash.stash(Phase::Item(n))?;
                        Ok(Behaviors::same())
                    }
                    Phase::Open1 => {
                        let (stash2, report2) = (stash.clone(), report.clone());
                        Ok(stash.unstash_all(Behaviors::receive_message(
                            move |message: Phase| -> Result<Behavior<Phase>, StashOverflow> {
                                match message {
                                    Phase::Item(n) if n % 2 == 0 => {
                                        stash2.stash(Phase::Item(n))?;
                                    }
                                    Phase::Item(n) => report2.tell(n),
                                    Phase::Open2 => {
                                        let report3 = report2.clone();
                                        return Ok(stash2.unstash_all(Behaviors::receive_message(
                                            move |m: Phase| {
                                                if let Phase::Item(n) = m {
                                                    report3.tell(n);
                                                }
                                            },
                                        )));
                                    }
                                    Phase::Open1 => {}
                                }
                                Ok(Behaviors::same())
                            },
                        )))
                    }
                    Phase::Open2 => Ok(Behaviors::same()),
                }
            },
        )
    })
    .unwrap();
    let actor = system.spawn(behavior, "phases").unwrap();
    for n in 1..=6 {
        actor.tell(Phase::Item(n));
    }
    actor.tell(Phase::Open1);
    actor.tell(Phase::Item(7));
    actor.tell(Phase::Item(8));
    actor.tell(Phase::Open2);
    actor.tell(Phase::Item(9));
    assert_eq!(
        probe.receive_messages(9, T).await,
        [1, 3, 5, 7, 2, 4, 6, 8, 9]
    );
}

// S26 + S11: a resume on `StashOverflow` keeps what the stash holds (only the
// message that did not fit is a dead letter), and a later `unstash_all` replays it.
#[tapio::test(start_paused = true)]
async fn s26_resume_after_overflow_keeps_the_stash(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(bounded_stasher(2, probe.actor_ref().clone()))
                .on_failure::<StashOverflow>(SupervisorStrategy::resume()),
            "resumed",
        )
        .unwrap();
    for n in 1..=4 {
        actor.tell(Held::Item(n));
    }
    let mut full = Vec::new();
    for _ in 0..2 {
        let letter = letter_with(&mut letters, actor.path(), DeadLetterReason::StashFull).await;
        match letter.take_message::<Held>() {
            Some(Held::Item(n)) => full.push(n),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(full, [3, 4]);
    actor.tell(Held::Open);
    actor.tell(Held::Item(5));
    assert_eq!(probe.receive_messages(3, T).await, [1, 2, 5]);
}
