//! The stash in unusual orders: the kit and a live actor agree on a stashing script, a
//! replay into a fail mailbox, a failed child's name respawned at once, and an
//! escalated overflow (S2, S16, S18, S26, S27, S29, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_orders::*;
use crate::support::outside;
use outside::{Boom, T, describe, expect_lines, letters, letters_for, ms, next};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetterReason, MailboxConfig, OverflowStrategy};
use tokio::sync::mpsc;

// =================================================================================
// 8. The testkit against the live runtime (S48, S27, S25, S6)
// =================================================================================

#[message]
pub enum Cmd {
    Add(u64),
    Hold,
    Release,
    Report(ActorRef<String>),
    Odd,
}

fn tally_open(sum: Arc<AtomicU64>, stash: tapio::StashBuffer<Cmd>) -> Behavior<Cmd> {
    Behaviors::receive_message(move |cmd: Cmd| match cmd {
        Cmd::Add(n) => {
            sum.fetch_add(n, SeqCst);
            Behaviors::same()
        }
        Cmd::Hold => tally_holding(sum.clone(), stash.clone()),
        Cmd::Release => Behaviors::same(),
        Cmd::Report(to) => {
            to.tell(format!("sum {}", sum.load(SeqCst)));
            Behaviors::same()
        }
        Cmd::Odd => Behaviors::unhandled(),
    })
    .into()
}

fn tally_holding(sum: Arc<AtomicU64>, stash: tapio::StashBuffer<Cmd>) -> Behavior<Cmd> {
    Behaviors::receive_message(move |cmd: Cmd| match cmd {
        Cmd::Release => Ok(stash.unstash_all(tally_open(sum.clone(), stash.clone()))),
        Cmd::Odd => Ok(Behaviors::unhandled()),
        other => stash.stash(other).map(|()| Behaviors::same()),
    })
    .into()
}

fn tally() -> Behavior<Cmd> {
    Behaviors::with_stash(16, |stash| tally_open(Arc::new(AtomicU64::new(0)), stash)).unwrap()
}

/// S48, S27, S6: one script through `BehaviorTestKit` and through a live actor:
/// the same reports in the same order, `unhandled` as `Outcome::Unhandled` in the
/// kit and as an `Unhandled` letter live, in both states, and a stash replayed
/// ahead of what came after the release.
#[tapio::test(start_paused = true)]
async fn s48_s27_s6_the_kit_and_a_live_actor_agree_on_a_stashing_script(system: ActorSystem) {
    let mut inbox = tapio::testkit::TestInbox::<String>::new();
    let mut probe = TestProbe::<String>::new(&system);
    let mut dead = letters(&system);
    let script = |to: &ActorRef<String>| {
        vec![
            Cmd::Add(1),
            Cmd::Report(to.clone()),
            Cmd::Hold,
            Cmd::Add(2),
            Cmd::Report(to.clone()),
            Cmd::Odd,
            Cmd::Add(3),
            Cmd::Release,
            Cmd::Add(4),
            Cmd::Report(to.clone()),
            Cmd::Odd,
        ]
    };
    let mut kit = tapio::testkit::BehaviorTestKit::new(tally());
    let mut outcomes = Vec::new();
    for cmd in script(inbox.actor_ref()) {
        outcomes.push(kit.run(cmd).unwrap());
    }
    use tapio::testkit::Outcome::{Same, Switched, Unhandled};
    assert_eq!(
        outcomes,
        [
            Same, Same, Switched, Same, Same, Unhandled, Same, Switched, Same, Same, Unhandled
        ]
    );
    let from_kit = inbox.messages();

    let live = system.spawn(tally(), "tally").unwrap();
    for cmd in script(probe.actor_ref()) {
        live.tell(cmd);
    }
    let from_live = probe.receive_messages(from_kit.len(), T).await;
    assert_eq!(from_kit, ["sum 1", "sum 3", "sum 10"]);
    assert_eq!(from_live, from_kit);
    probe.expect_no_message(ms(50)).await;
    let odd = letters_for(&mut dead, live.path(), 2).await;
    for letter in &odd {
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::Unhandled,
            "{}",
            describe(letter)
        );
        // The handler took the value and answered `unhandled`: only the type is left.
        assert!(
            letter.message_type().contains("Cmd"),
            "{}",
            describe(letter)
        );
    }
}

/// S27, S29: a replay is never refused by the bound, also a fail-on-overflow one:
/// four stashed messages replayed into a mailbox of two are all handled, in order,
/// without an overflow.
#[tapio::test(start_paused = true)]
async fn s27_s29_a_replay_into_a_fail_mailbox_is_not_an_overflow(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let setups = Arc::new(AtomicU64::new(0));
    let actor = system
        .spawn_with(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<Gated>| {
                let run = setups.fetch_add(1, SeqCst) + 1;
                to.tell(format!("setup {run}"));
                let to = to.clone();
                Behaviors::with_stash(8, move |stash| {
                    let to = to.clone();
                    Behaviors::receive_message(move |m: Gated| match m {
                        Gated::Release => {
                            let to = to.clone();
                            Ok(
                                stash.unstash_all(Behaviors::receive_message(move |m: Gated| {
                                    if let Gated::N(n) = m {
                                        to.tell(format!("got {n}"));
                                    }
                                })),
                            )
                        }
                        other => {
                            to.tell("held".to_string());
                            stash.stash(other).map(|()| Behaviors::same())
                        }
                    })
                })
                .unwrap()
            }))
            .on_failure::<tapio::MailboxOverflow>(SupervisorStrategy::restart()),
            "replayed",
            MailboxConfig::bounded(2, OverflowStrategy::Fail).unwrap(),
        )
        .unwrap();
    expect_lines(&mut probe, &["setup 1"]).await;
    for n in 1..=4 {
        actor.tell(Gated::N(n));
        expect_lines(&mut probe, &["held"]).await;
    }
    actor.tell(Gated::Release);
    actor.tell(Gated::N(5));
    expect_lines(&mut probe, &["got 1", "got 2", "got 3", "got 4", "got 5"]).await;
    probe.expect_no_message(ms(100)).await;
}

// =================================================================================
// 12. Names, watches and stashes at an escalation; events at the end (S2, S16,
//     S18, S26, S31, S49)
// =================================================================================

/// S2, S16, S18: `ChildFailed` says the child "has stopped", so its name is free in
/// that very handler: the parent respawns it there. The parent, which watched the
/// old child, also hears its `Terminated` exactly once, and the new child works.
#[tapio::test(start_paused = true)]
async fn s2_s16_s18_a_child_failed_handler_respawns_the_name_at_once(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    fn kid(to: ActorRef<String>) -> Behavior<u64> {
        Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                return Err(Boom);
            }
            to.tell(format!("kid got {n}"));
            Ok(())
        }))
        .on_any_failure(SupervisorStrategy::escalate())
        .into()
    }
    let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let _parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let first = ctx.spawn(kid(to.clone()), "kid").unwrap();
                ctx.watch(&first);
                let _ = kid_tx.send(first);
                let to = to.clone();
                let kid_tx = kid_tx.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |ctx, signal| {
                    match signal {
                        Signal::ChildFailed(failed) => {
                            let name = failed.child().path().name().to_string();
                            match ctx.spawn(kid(to.clone()), &name) {
                                Ok(again) => {
                                    to.tell(format!("respawned {name}"));
                                    let _ = kid_tx.send(again);
                                }
                                Err(e) => to.tell(format!("respawn refused: {e}")),
                            }
                        }
                        Signal::Terminated(t) => {
                            to.tell(format!("terminated {}", t.actor().uid() != 0));
                        }
                        _ => {}
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume()),
            "parent",
        )
        .unwrap();
    let first = next(&mut kid_rx).await;
    first.tell(0_u64);
    let mut lines = probe.receive_messages(2, T).await;
    lines.sort();
    assert_eq!(lines, ["respawned kid", "terminated true"]);
    probe.expect_no_message(ms(100)).await;
    let again = next(&mut kid_rx).await;
    assert_ne!(again.uid(), first.uid());
    again.tell(4_u64);
    expect_lines(&mut probe, &["kid got 4"]).await;
}

/// S26, S16, S31: a stash overflow escalated to the parent: the parent's
/// `ChildFailed` carries `StashOverflow`, the overflowing message is a `StashFull`
/// letter, and each message the stash held is lettered as the child stops: every
/// message told is accounted for once.
#[tapio::test(start_paused = true)]
async fn s26_s16_s31_a_stash_overflow_escalated_letters_the_stash_and_the_overflow(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let _parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let kid = ctx
                    .spawn(
                        Behaviors::supervise(
                            Behaviors::with_stash(3, |stash| {
                                Behaviors::receive_message(move |n: u64| {
                                    stash.stash(n).map(|()| Behaviors::same())
                                })
                            })
                            .unwrap(),
                        )
                        .on_any_failure(SupervisorStrategy::escalate()),
                        "hoarder",
                    )
                    .unwrap();
                let _ = kid_tx.send(kid);
                let to = to.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                    if let Signal::ChildFailed(failed) = signal {
                        to.tell(format!(
                            "child failed: stash overflow {}",
                            failed.failure().is::<tapio::StashOverflow>()
                        ));
                    }
                    Behaviors::same()
                })
            }))
            .on_failure::<tapio::StashOverflow>(SupervisorStrategy::resume()),
            "parent",
        )
        .unwrap();
    let kid = next(&mut kid_rx).await;
    for n in 1..=6 {
        kid.tell(n as u64);
    }
    expect_lines(&mut probe, &["child failed: stash overflow true"]).await;
    let got = letters_for(&mut dead, kid.path(), 6).await;
    let mut by_value: Vec<(u64, DeadLetterReason)> = got
        .iter()
        .map(|l| (l.take_message::<u64>().unwrap(), l.reason().clone()))
        .collect();
    by_value.sort_by_key(|(n, _)| *n);
    let values: Vec<u64> = by_value.iter().map(|(n, _)| *n).collect();
    assert_eq!(values, [1, 2, 3, 4, 5, 6], "{by_value:?}");
    assert_eq!(by_value[3].1, DeadLetterReason::StashFull, "{by_value:?}");
    for (n, reason) in &by_value[..3] {
        assert_ne!(reason, &DeadLetterReason::StashFull, "{n}: {by_value:?}");
    }
    assert_eq!(by_value[4].1, DeadLetterReason::RecipientStopped);
    assert_eq!(by_value[5].1, DeadLetterReason::RecipientStopped);
}
