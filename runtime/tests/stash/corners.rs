//! Corners of the stash: its accessors, stashing after `unstash_all`, failures
//! mid-replay under restart and resume, a switch that drops the stash, stashed asks
//! replayed late or into another behavior, and terminate lettering what it held (S11,
//! S14, S19, S21-S23, S26, S27, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::local_corners::*;
use crate::support::outside;
use outside::{Boom, T, describe, expect_lines, letters_for, ms, new_log, no_letter_for};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, BoxError, DeadLetter, DeadLetterReason, StashBuffer, StashOverflow};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

// =================================================================================
// 1. Stash (S26, S27, S14)
// =================================================================================

#[tapio::test(start_paused = true)]
async fn s26_stash_accessors_follow_what_is_held_and_an_overflow_letters_the_message(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(3, move |stash: StashBuffer<u64>| {
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                to.tell(format!(
                    "release len={} empty={}",
                    stash.len(),
                    stash.is_empty()
                ));
                let to = to.clone();
                return stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                    to.tell(format!("got {n}"))
                }));
            }
            let outcome = match stash.stash(n) {
                Ok(()) => "ok",
                Err(StashOverflow { .. }) => "overflow",
            };
            to.tell(format!(
                "{n}: {outcome} len={} full={} cap={}",
                stash.len(),
                stash.is_full(),
                stash.capacity()
            ));
            Behaviors::same()
        })
    })
    .expect("a capacity above 0");
    let actor = system.spawn(behavior, "holder").unwrap();
    for n in [1_u64, 2, 3, 4, 0] {
        actor.tell(n);
    }
    expect_lines(
        &mut probe,
        &[
            "1: ok len=1 full=false cap=3",
            "2: ok len=2 full=false cap=3",
            "3: ok len=3 full=true cap=3",
            "4: overflow len=3 full=true cap=3",
            "release len=3 empty=false",
            "got 1",
            "got 2",
            "got 3",
        ],
    )
    .await;
    let letter = letters_for(&mut letters, actor.path(), 1).await.remove(0);
    assert_eq!(letter.reason(), &DeadLetterReason::StashFull);
    assert_eq!(letter.take_message::<u64>(), Some(4));
    no_letter_for(&mut letters, actor.path(), ms(200)).await;
}

#[tapio::test(start_paused = true)]
async fn s27_a_message_stashed_after_unstash_all_in_the_same_handler_is_replayed_too(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(8, move |stash: StashBuffer<u64>| {
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, StashOverflow> {
            if n == 100 {
                let to = to.clone();
                // The answer is built first; the trigger is stashed after it.
                let next = stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                    to.tell(format!("got {n}"))
                }));
                stash.stash(n)?;
                return Ok(next);
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap();
    let actor = system.spawn(behavior, "late-stasher").unwrap();
    for n in [1_u64, 2, 100, 3] {
        actor.tell(n);
    }
    // Taken when the answer is applied: 100 is held by then, and the replay goes
    // ahead of 3, which was queued while the handler ran.
    expect_lines(&mut probe, &["got 1", "got 2", "got 100", "got 3"]).await;
}

fn gated(stash: StashBuffer<u64>, generation: u64, to: ActorRef<String>) -> Behavior<u64> {
    Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, BoxError> {
        if n == 0 {
            let to = to.clone();
            return Ok(stash.unstash_all(Behaviors::receive_message(
                move |n: u64| -> Result<(), Boom> {
                    if n == 13 {
                        return Err(Boom);
                    }
                    to.tell(format!("g{generation}: {n}"));
                    Ok(())
                },
            )));
        }
        stash.stash(n)?;
        Ok(Behaviors::same())
    })
    .into()
}

#[tapio::test(start_paused = true)]
async fn s14_s27_a_failure_mid_replay_leaves_the_rest_in_the_mailbox_for_the_next_incarnation(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let generations = Arc::new(AtomicU64::new(0));
    let stashing = Behaviors::with_stash(10, move |stash| {
        let generation = generations.fetch_add(1, SeqCst) + 1;
        to.tell(format!("start g{generation}"));
        gated(stash, generation, to.clone())
    })
    .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(stashing).on_failure::<Boom>(SupervisorStrategy::restart()),
            "replayer",
        )
        .unwrap();
    for n in [1_u64, 13, 2, 3, 0] {
        actor.tell(n);
    }
    // 1 is replayed, 13 fails the replaying incarnation; 2 and 3 had left the stash
    // for the front of the mailbox, which a restart keeps: the next incarnation (in
    // its stashing behavior) takes them and holds them.
    expect_lines(&mut probe, &["start g1", "g1: 1", "start g2"]).await;
    probe.expect_no_message(ms(100)).await;
    actor.tell(0_u64);
    expect_lines(&mut probe, &["g2: 2", "g2: 3"]).await;
    no_letter_for(&mut letters, actor.path(), ms(100)).await;
}

#[tapio::test(start_paused = true)]
async fn s27_s31_a_switch_that_keeps_no_handle_on_the_stash_discards_it_in_order(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(8, move |stash: StashBuffer<u64>| {
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, StashOverflow> {
            if n == 0 {
                let to = to.clone();
                // A plain switch: the next behavior keeps no clone of the buffer.
                return Ok(
                    Behaviors::receive_message(move |n: u64| to.tell(format!("after {n}"))).into(),
                );
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap();
    let actor = system.spawn(behavior, "forgetful").unwrap();
    for n in [1_u64, 2, 3, 0, 4] {
        actor.tell(n);
    }
    expect_lines(&mut probe, &["after 4"]).await;
    let got = letters_for(&mut letters, actor.path(), 3).await;
    let values: Vec<Option<u64>> = got.iter().map(|l| l.take_message::<u64>()).collect();
    assert_eq!(values, [Some(1), Some(2), Some(3)]);
    for letter in &got {
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::StashDiscarded,
            "{}",
            describe(letter)
        );
    }
    no_letter_for(&mut letters, actor.path(), ms(100)).await;
}

#[message]
pub enum Desk {
    Query { q: u64, reply_to: ActorRef<u64> },
    Open,
    Shut,
}

fn desk() -> Behavior<Desk> {
    Behaviors::with_stash(8, |stash: StashBuffer<Desk>| {
        Behaviors::receive_message(move |message: Desk| match message {
            Desk::Open => Ok(stash.unstash_all(Behaviors::receive_message(|m: Desk| {
                if let Desk::Query { q, reply_to } = m {
                    reply_to.tell(q * 2);
                }
            }))),
            Desk::Shut => Ok(stash.unstash_all(Behaviors::stopped())),
            held => stash.stash(held).map(|()| Behaviors::same()),
        })
    })
    .unwrap()
}

#[tapio::test]
async fn s27_s23_a_stashed_ask_unstashed_into_stopped_fails_at_once(system: ActorSystem) {
    let actor = system.spawn(desk(), "desk").unwrap();
    let ask = actor
        .ask_with(|reply_to| Desk::Query { q: 21, reply_to })
        .timeout(Duration::from_secs(20));
    let started = Instant::now();
    let waiting = tokio::spawn(async move { ask.await });
    actor.tell(Desk::Shut);
    let answer = timeout(T, waiting)
        .await
        .expect("long before the deadline")
        .unwrap();
    assert!(
        matches!(answer, Err(AskError::TargetTerminated { .. })),
        "{answer:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tapio::test(start_paused = true)]
async fn s11_s27_a_failure_mid_replay_under_resume_drops_only_that_message(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let generations = Arc::new(AtomicU64::new(0));
    let stashing = Behaviors::with_stash(10, move |stash| {
        let generation = generations.fetch_add(1, SeqCst) + 1;
        to.tell(format!("start g{generation}"));
        gated(stash, generation, to.clone())
    })
    .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(stashing).on_failure::<Boom>(SupervisorStrategy::resume()),
            "resumer",
        )
        .unwrap();
    for n in [1_u64, 13, 2, 3, 0, 4] {
        actor.tell(n);
    }
    expect_lines(
        &mut probe,
        &["start g1", "g1: 1", "g1: 2", "g1: 3", "g1: 4"],
    )
    .await;
    probe.expect_no_message(ms(100)).await;
}

#[tapio::test(start_paused = true)]
async fn s22_s27_a_stashed_ask_replayed_after_its_deadline_answers_into_ask_ended(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let actor = system.spawn(desk(), "desk").unwrap();
    let asked = actor
        .ask_with(|reply_to| Desk::Query { q: 21, reply_to })
        .timeout(ms(100))
        .await;
    assert!(matches!(asked, Err(AskError::Timeout { .. })), "{asked:?}");
    actor.tell(Desk::Open);
    let letter = timeout(T, letters.recv())
        .await
        .expect("a letter")
        .expect("open");
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::AskEnded,
        "{}",
        describe(&letter)
    );
    assert_eq!(letter.take_message::<u64>(), Some(42));
}

#[tapio::test]
async fn s27_s21_asks_stashed_with_their_reply_slot_are_answered_by_the_actor_switched_to(
    system: ActorSystem,
) {
    let log = new_log();
    let loader = Behaviors::with_stash(8, move |stash: StashBuffer<AccountMsg>| {
        let log = log.clone();
        Behaviors::receive_message(
            move |message: AccountMsg| -> Result<Behavior<AccountMsg>, StashOverflow> {
                if let AccountMsg::Reset(..) = message {
                    // Loaded: become the struct actor and replay what was asked.
                    let account = Account {
                        balance: 5,
                        log: log.clone(),
                    };
                    return Ok(stash.unstash_all(Behaviors::setup(
                        move |_ctx: &mut Ctx<Account>| account.clone(),
                    )));
                }
                stash.stash(message)?;
                Ok(Behaviors::same())
            },
        )
    })
    .unwrap();
    let account = system.spawn(loader, "loading").unwrap();
    let balance = account.ask(Balance).timeout(T);
    let withdrawn = account.ask(Withdraw(2)).timeout(T);
    let balance = tokio::spawn(async move { balance.await });
    let withdrawn = tokio::spawn(async move { withdrawn.await });
    account.tell(Reset);
    assert_eq!(timeout(T, balance).await.unwrap().unwrap(), Ok(5));
    assert_eq!(timeout(T, withdrawn).await.unwrap().unwrap(), Ok(3));
}

#[tokio::test(start_paused = true)]
async fn s19_s31_terminate_letters_what_a_stash_still_held() {
    let system = ActorSystem::new("held-at-the-end").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let (stashed_tx, mut stashed) = mpsc::unbounded_channel::<usize>();
    let behavior = Behaviors::with_stash(8, move |stash: StashBuffer<u64>| {
        let stashed_tx = stashed_tx.clone();
        Behaviors::receive_message(move |n: u64| -> Result<(), StashOverflow> {
            stash.stash(n)?;
            let _ = stashed_tx.send(stash.len());
            Ok(())
        })
    })
    .unwrap();
    let holder = system.spawn(behavior, "holder").unwrap();
    for n in [1_u64, 2, 3] {
        holder.tell(n);
    }
    for want in 1..=3 {
        assert_eq!(timeout(T, stashed.recv()).await.unwrap(), Some(want));
    }
    system.terminate().await;
    let got = letters_for(&mut letters, holder.path(), 3).await;
    for letter in &got {
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::RecipientStopped,
            "{}",
            describe(letter)
        );
    }
    let values: Vec<_> = got.iter().map(|l| l.take_message::<u64>()).collect();
    assert_eq!(values, [Some(1), Some(2), Some(3)]);
}
