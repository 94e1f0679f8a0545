//! Stashes with escalation, timers and adapters: a parent holding stashed messages
//! restarted, one fixed-rate timer after an overflow restart, and stashed ticks and
//! adapted messages replayed in order (S14, S16, S24-S28).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::later_combinations::*;
use crate::support::outside;
use outside::{Boom, describe, expect_lines, letters, letters_for, ms, next};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{BoxError, DeadLetterReason, StashBuffer, StashOverflow};
use tokio::sync::mpsc;
use tokio::time::Instant;

// =================================================================================
// 2. Supervision with stash and timers
// =================================================================================

#[message]
pub enum Front {
    Hold(u64),
    Kick,
    Kids(ActorRef<String>),
}

fn front(to: ActorRef<String>, generations: Arc<AtomicU64>) -> Behavior<Front> {
    Behaviors::with_stash(8, move |stash: StashBuffer<Front>| {
        let to = to.clone();
        let generations = generations.clone();
        Behaviors::setup(move |ctx| -> Result<Behavior<Front>, tapio::SpawnError> {
            let generation = generations.fetch_add(1, SeqCst) + 1;
            let kid = ctx.spawn(
                Behaviors::supervise(Behaviors::receive_message(
                    |_: String| -> Result<(), Boom> { Err(Boom) },
                ))
                .on_failure::<Boom>(SupervisorStrategy::escalate()),
                "kid",
            )?;
            to.tell(format!("setup g{generation}"));
            let stash = stash.clone();
            Ok(Behaviors::receive(
                move |ctx, m: Front| -> Result<Behavior<Front>, StashOverflow> {
                    match m {
                        Front::Hold(n) => stash.stash(Front::Hold(n))?,
                        Front::Kick => kid.tell("fail".to_string()),
                        Front::Kids(reply) => {
                            reply.tell(format!(
                                "kids {} stash {}",
                                ctx.children().len(),
                                stash.len()
                            ));
                        }
                    }
                    Ok(Behaviors::same())
                },
            )
            .into())
        })
    })
    .unwrap()
}

/// S16, S14, S31: a child escalates; its parent, under `restart`, is rebuilt with its
/// setup children, and what its stash held becomes dead letters (`StashDiscarded`)
/// in arrival order; a sibling of the parent is untouched.
#[tapio::test]
async fn s16_s14_an_escalation_restarts_a_parent_that_held_stashed_messages(system: ActorSystem) {
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let generations = Arc::new(AtomicU64::new(0));
    let parent = system
        .spawn(
            Behaviors::supervise(front(probe.actor_ref().clone(), generations.clone()))
                .on_failure::<Boom>(SupervisorStrategy::restart()),
            "front",
        )
        .unwrap();
    let sibling = system
        .spawn(Behaviors::receive_message(|_: u64| ()), "sibling")
        .unwrap();
    probe.watch(&sibling);
    probe.watch(&parent);
    expect_lines(&mut probe, &["setup g1"]).await;
    for n in 1..=3 {
        parent.tell(Front::Hold(n));
    }
    parent.tell(Front::Kick);
    expect_lines(&mut probe, &["setup g2"]).await;
    let got = letters_for(&mut sub, parent.path(), 3).await;
    let held: Vec<u64> = got
        .iter()
        .map(|l| match l.take_message::<Front>() {
            Some(Front::Hold(n)) => n,
            _ => panic!("not a Hold: {}", describe(l)),
        })
        .collect();
    assert_eq!(held, [1, 2, 3]);
    for letter in &got {
        assert_eq!(letter.reason(), &DeadLetterReason::StashDiscarded);
    }
    parent.tell(Front::Kids(probe.actor_ref().clone()));
    expect_lines(&mut probe, &["kids 1 stash 0"]).await;
    probe.expect_no_termination(ms(100)).await;
    assert_eq!(generations.load(SeqCst), 2);
}

/// S14, S25, S26: a stash overflow restarts an actor whose setup starts a fixed-rate
/// timer: the letters say `StashFull` for the overflowing item and `StashDiscarded`
/// for the held ones; afterwards exactly one timer ticks (at its rate, not twice it),
/// and every tick comes from the new incarnation.
#[tapio::test(start_paused = true)]
async fn s14_s25_s26_a_stash_overflow_restart_leaves_exactly_one_fixed_rate_timer(
    system: ActorSystem,
) {
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let generations = Arc::new(AtomicU64::new(0));
    let behavior = Behaviors::with_stash(2, move |stash: StashBuffer<Pulse>| {
        let to = to.clone();
        let generations = generations.clone();
        Behaviors::setup(move |ctx| {
            let g = generations.fetch_add(1, SeqCst) + 1;
            to.tell(format!("start g{g}"));
            ctx.timers()
                .start_fixed_rate("pulse", Pulse::Tick, ms(100))
                .unwrap();
            let stash = stash.clone();
            let to = to.clone();
            Behaviors::receive_message(move |p: Pulse| -> Result<(), BoxError> {
                match p {
                    Pulse::Tick => to.tell(format!("tick g{g}")),
                    Pulse::Item(n) => stash.stash(Pulse::Item(n))?,
                    Pulse::Fail => return Err(Boom.into()),
                }
                Ok(())
            })
        })
    })
    .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(behavior)
                .on_failure::<StashOverflow>(SupervisorStrategy::restart()),
            "pulsar",
        )
        .unwrap();
    expect_lines(&mut probe, &["start g1"]).await;
    for n in 1..=3 {
        actor.tell(Pulse::Item(n));
    }
    expect_lines(&mut probe, &["start g2"]).await;
    let started = Instant::now();
    let mut got = letters_for(&mut sub, actor.path(), 3).await;
    got.sort_by_key(|l| match l.take_message::<Pulse>() {
        Some(Pulse::Item(n)) => n,
        _ => u64::MAX,
    });
    let reasons: Vec<DeadLetterReason> = got.iter().map(|l| l.reason().clone()).collect();
    assert_eq!(
        reasons,
        [
            DeadLetterReason::StashDiscarded,
            DeadLetterReason::StashDiscarded,
            DeadLetterReason::StashFull
        ]
    );
    let mut ticks = Vec::new();
    loop {
        let left = ms(1_050).saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        match probe.receive_message(left).await {
            Some(line) => ticks.push(line),
            None => break,
        }
    }
    assert!(
        ticks.iter().all(|t| t == "tick g2"),
        "only the new incarnation ticks: {ticks:?}"
    );
    assert!(
        (9..=11).contains(&ticks.len()),
        "one timer at 100 ms gives about 10 ticks in a second, got {}",
        ticks.len()
    );
}

#[message]
#[derive(Clone, Debug)]
pub enum Gate {
    Tick,
    Item(u64),
    Open,
}

/// S24, S27: a timer tick is an ordinary message: stashed with the tells around it,
/// it is replayed in arrival order among them.
#[tapio::test(start_paused = true)]
async fn s24_s27_a_stashed_tick_is_replayed_in_arrival_order_among_tells(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(8, move |stash: StashBuffer<Gate>| {
        let to = to.clone();
        Behaviors::setup(move |ctx| {
            ctx.timers().start_single_timer("once", Gate::Tick, ms(50));
            let stash = stash.clone();
            let to = to.clone();
            to.tell("ready".to_string());
            Behaviors::receive_message(move |g: Gate| -> Result<Behavior<Gate>, StashOverflow> {
                match g {
                    Gate::Open => {
                        let to = to.clone();
                        Ok(
                            stash.unstash_all(Behaviors::receive_message(move |g: Gate| {
                                to.tell(format!("{g:?}"));
                            })),
                        )
                    }
                    other => stash.stash(other).map(|()| Behaviors::same()),
                }
            })
        })
    })
    .unwrap();
    let actor = system.spawn(behavior, "gatekeeper").unwrap();
    expect_lines(&mut probe, &["ready"]).await;
    actor.tell(Gate::Item(1));
    tokio::time::sleep(ms(100)).await;
    actor.tell(Gate::Item(2));
    actor.tell(Gate::Open);
    actor.tell(Gate::Item(3));
    expect_lines(&mut probe, &["Item(1)", "Tick", "Item(2)", "Item(3)"]).await;
    probe.expect_no_message(ms(200)).await;
}

#[message]
pub struct Word(pub String);

#[message]
pub enum Inbox {
    Adapted(String),
    Direct(String),
    Open,
}

/// S28, S27: messages through an adapter are stashed like the owner's own, and
/// replayed with them in arrival order ahead of what comes after the switch.
#[tapio::test]
async fn s28_s27_adapted_and_direct_messages_are_stashed_and_replayed_in_order(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel::<ActorRef<Word>>();
    let behavior = Behaviors::with_stash(8, move |stash: StashBuffer<Inbox>| {
        let to = to.clone();
        let adapter_tx = adapter_tx.clone();
        Behaviors::setup(move |ctx| {
            let adapter = ctx.message_adapter(|w: Word| Inbox::Adapted(w.0));
            let _ = adapter_tx.send(adapter);
            let stash = stash.clone();
            let to = to.clone();
            Behaviors::receive_message(move |m: Inbox| -> Result<Behavior<Inbox>, StashOverflow> {
                match m {
                    Inbox::Open => {
                        let to = to.clone();
                        Ok(
                            stash.unstash_all(Behaviors::receive_message(
                                move |m: Inbox| match m {
                                    Inbox::Adapted(s) => to.tell(format!("adapted {s}")),
                                    Inbox::Direct(s) => to.tell(format!("direct {s}")),
                                    Inbox::Open => to.tell("open again".to_string()),
                                },
                            )),
                        )
                    }
                    other => stash.stash(other).map(|()| Behaviors::same()),
                }
            })
        })
    })
    .unwrap();
    let owner = system.spawn(behavior, "owner").unwrap();
    let adapter = next(&mut adapter_rx).await;
    adapter.tell(Word("a".into()));
    owner.tell(Inbox::Direct("b".into()));
    adapter.tell(Word("c".into()));
    owner.tell(Inbox::Open);
    adapter.tell(Word("d".into()));
    owner.tell(Inbox::Direct("e".into()));
    expect_lines(
        &mut probe,
        &[
            "adapted a",
            "direct b",
            "adapted c",
            "adapted d",
            "direct e",
        ],
    )
    .await;
}
