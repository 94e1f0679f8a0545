//! The stash as the guides show it: an overflow restarts and discards the stash, and a
//! signal outranks the replayed backlog (S26, S27).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::guide_claims::*;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason, StashOverflow};
use tokio::sync::mpsc;

// ---------------------------------------------------------------------------------
// Stash (S26, S27)
// ---------------------------------------------------------------------------------

/// Holds numbers until 0, then replays them into `ready`.
fn holding(capacity: usize, ready: Behavior<u64>) -> Behavior<u64> {
    Behaviors::with_stash(capacity, move |stash| {
        let ready = ready.clone();
        Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, StashOverflow> {
            if n == 0 {
                return Ok(stash.unstash_all(ready.clone()));
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap()
}

// S26, S14: overflow fails the stashing actor under its supervision: restarted, its
// stash is emptied and what it held becomes dead letters (`StashDiscarded`), beside
// the one that did not fit (`StashFull`); the new incarnation works.
#[tapio::test(start_paused = true)]
async fn s26_overflow_restarts_and_discards_the_stash(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let to = probe.actor_ref().clone();
    let supervised: Behavior<u64> = Behaviors::supervise(holding(
        2,
        Behaviors::receive_message(move |n: u64| to.tell(n)).into(),
    ))
    .on_failure::<StashOverflow>(SupervisorStrategy::restart())
    .into();
    let holder = system.spawn(supervised, "holder").unwrap();
    for n in 1..=3 {
        holder.tell(n as u64);
    }
    let mut seen = Vec::new();
    for _ in 0..3 {
        let l = letter_within(&mut letters, WAIT).await;
        seen.push((l.take_message::<u64>(), l.reason().clone()));
    }
    seen.sort_by_key(|(n, _)| *n);
    assert_eq!(
        seen,
        [
            (Some(1), DeadLetterReason::StashDiscarded),
            (Some(2), DeadLetterReason::StashDiscarded),
            (Some(3), DeadLetterReason::StashFull),
        ]
    );
    holder.tell(4_u64);
    holder.tell(0_u64);
    holder.tell(5_u64);
    assert_eq!(probe.receive_messages(2, WAIT).await, [4, 5]);
}

#[message]
#[derive(Debug, PartialEq)]
pub enum Step {
    Item(u64),
    Ready,
}

// S27: a watched actor's end, a signal, outranks the replayed backlog: it reaches the
// actor between two replayed messages, not after the whole replay.
#[tapio::test(start_paused = true)]
async fn s27_a_signal_outranks_the_replayed_backlog(system: ActorSystem) {
    let (log, mut lines) = mpsc::unbounded_channel::<String>();
    let watcher = Behaviors::setup(move |ctx: &mut ActorContext<Step>| {
        let child: ActorRef<u64> = ctx.spawn(Behaviors::ignore(), "child").unwrap();
        ctx.watch(&child);
        let log = log.clone();
        Behaviors::with_stash(8, move |stash| {
            let log = log.clone();
            let child = child.clone();
            Behaviors::receive_message(move |step: Step| match step {
                Step::Ready => {
                    let signal_log = log.clone();
                    let log = log.clone();
                    let child = child.clone();
                    let replay = Behaviors::receive_async(async move |ctx, step: Step| {
                        if step == Step::Item(1) {
                            let _ = ctx.stop(&child);
                        }
                        // Time for the child to stop while this handler still runs.
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        let _ = log.send(format!("{step:?}"));
                    });
                    let replay = replay.on_signal(move |_, signal| {
                        if let Signal::Terminated(_) = signal {
                            let _ = signal_log.send("Terminated".into());
                        }
                        Behaviors::same()
                    });
                    Ok(stash.unstash_all(replay))
                }
                item => stash.stash(item).map(|()| Behaviors::same()),
            })
        })
        .unwrap()
    });
    let watcher = system.spawn(watcher, "watcher").unwrap();
    for n in 1..=3 {
        watcher.tell(Step::Item(n));
    }
    watcher.tell(Step::Ready);
    let mut got = Vec::new();
    for _ in 0..4 {
        got.push(
            tokio::time::timeout(WAIT, lines.recv())
                .await
                .unwrap()
                .unwrap(),
        );
    }
    assert_eq!(got, ["Item(1)", "Terminated", "Item(2)", "Item(3)"]);
}
