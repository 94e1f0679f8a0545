//! A fifteenth outside-in sweep, of the LOCAL runtime's later features in
//! combination with supervision, stopping and the testkit, written from the promises
//! (S1..S49 in SEMANTICS.md), README.md, docs/testing.md and the rustdoc of the public
//! API only. Its sections:
//!
//! 1. Bounded mailboxes (S21, S29, S30, S28): an offer through an adapter of a full
//!    owner, and of a stopped one; an ask into a full fail-on-overflow mailbox; a
//!    zero `offer_within`; an ask into a router's own full mailbox; offers waiting
//!    behind a replay larger than the bound.
//! 2. Routers (S32, S11, S18, S23, S26, S28): a group given a ref twice; a group
//!    routee that restarts; stash overflows inside routees; asks through a group of
//!    adapters; a resize that replaces a routee that stopped, and one before the
//!    start; a stashed ask in a routee when the router is stopped.
//! 3. Stash (S23, S24, S27, S31, S33): a stashed tick replayed after its timer was
//!    cancelled; messages stashed before and queued during a blocking load; a clone
//!    of a stash kept outside the actor past its stop (it kept the held messages,
//!    and took new ones, until dropped: fixed with this sweep).
//! 4. Adapters (S28, S11, S14, S33): a failing translation under restart; adapted
//!    messages told during a blocking call.
//! 5. `run_blocking` (S33, S11, S15, S23): two calls joined in one handler; an ask
//!    whose call panics under restart and under stop; a stop during a call.
//! 6. Timers (S25, S32): one timer seen through two scheduler clones; a key
//!    replaced by another mode on its exact timeline; a shrunk pool's timers.
//! 7. State machines (S34, S11, S23): a lost state under resume, then restart or
//!    stop, with the asks that meet it.
//! 8. The testkit (S48, S25, S32, S33, S34): the kit runs a group router, awaits a
//!    blocking call, records a state's entry timer; a probe sees a pool end.
//!    And routers with stop, supervision and bounds (S15, S16, S21, S25, S29, S32):
//!    a routee that shrinks its own pool; a stopped pool's routees see `PostStop`
//!    first; an ask routed to a full routee; a pool restarted by an escalation ends
//!    its old routees' timers.
//! 9. Races on two workers, 20 runs each (S5, S11, S14, S15, S21, S23, S29-S33):
//!    offers through an adapter racing its owner's stop; offers into a
//!    fail-on-overflow mailbox restarting under tells; a stop racing a blocking
//!    call's end; a group of bounded routees fed by four tasks; asks through a pool
//!    of routees restarting under them.
//!
//! Every wait is bounded; timing is asserted only under tokio's paused clock.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/outside.rs"]
mod outside;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, LeakReport, Outcome, TestInbox, TestProbe};
use tapio::{
    AskError, DeadLetter, DeadLetterReason, Failure, MailboxConfig, OverflowStrategy, StashBuffer,
    StashOverflow, StateLost, TimerMode,
};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::{Instant, timeout};

use outside::{
    Boom, Log, T, describe, entries, expect_lines, letters, letters_for, ms, new_log, next, push,
};

// =================================================================================
// helpers
// =================================================================================

/// Tells `target` to `Hold` and waits for its "holding".
async fn hold(target: &ActorRef<Held>, probe: &mut TestProbe<String>) {
    target.tell(Held::Hold);
    assert_eq!(probe.expect_message(T).await, "holding");
}

/// The number in the name of a pool's routee (`routee-{n}`).
fn routee_number<M: Message>(ctx: &ActorContext<M>) -> u64 {
    ctx.path()
        .name()
        .trim_start_matches("routee-")
        .parse()
        .unwrap()
}

/// Tells `router` jobs 1 to 3 (each made a message by `wrap`), answered to `probe`.
fn tell_jobs_one_to_three<M: Message>(
    router: &ActorRef<M>,
    probe: &TestProbe<u64>,
    wrap: impl Fn(Job) -> M,
) {
    for n in 1..=3 {
        router.tell(wrap(Job {
            n,
            reply_to: probe.actor_ref().clone(),
        }));
    }
}

/// A probe of strings on `system` and a clone of its ref, for a behavior to move.
fn probe_and_ref(system: &ActorSystem) -> (TestProbe<String>, ActorRef<String>) {
    let probe = TestProbe::<String>::new(system);
    let to = probe.actor_ref().clone();
    (probe, to)
}

/// Every dead letter on `system`, with room for all of a run's (65,536).
fn every_letter(system: &ActorSystem) -> tapio::Subscription<DeadLetter> {
    system
        .events()
        .subscribe_with_capacity::<DeadLetter>(65_536)
        .unwrap()
}

/// The protocol of a holder: `Hold` keeps it inside an `async` handler until the
/// test adds a permit to its gate; `N` reports `n {n}`; `Ask` answers `n * 10`.
#[message]
pub enum Held {
    Hold,
    N(u64),
    Ask(u64, ActorRef<u64>),
}

/// A foreign protocol that reaches a holder through an adapter.
#[message]
pub enum Foreign {
    Value(u64),
    Lookup(u64, ActorRef<u64>),
}

/// A holder that reports on `to`: "holding" when it takes `Hold`, "n {n}" for `N`.
/// Its gate is shared with the test. Its adapter goes out on `adapter_tx`.
fn holder(
    to: ActorRef<String>,
    gate: Arc<Semaphore>,
    adapter_tx: mpsc::UnboundedSender<ActorRef<Foreign>>,
) -> Behavior<Held> {
    Behaviors::setup(move |ctx: &mut ActorContext<Held>| {
        let adapter = ctx.message_adapter(|foreign: Foreign| match foreign {
            Foreign::Value(n) => Held::N(n),
            Foreign::Lookup(n, reply_to) => Held::Ask(n, reply_to),
        });
        let _ = adapter_tx.send(adapter);
        let (to, gate) = (to.clone(), gate.clone());
        Behaviors::receive_async(async move |_ctx, held: Held| match held {
            Held::Hold => {
                to.tell("holding".to_owned());
                if let Ok(permit) = gate.acquire().await {
                    permit.forget();
                }
            }
            Held::N(n) => to.tell(format!("n {n}")),
            Held::Ask(n, reply_to) => reply_to.tell(n * 10),
        })
    })
}

/// Whether an ask error is anything but a timeout.
fn not_a_timeout(error: &AskError) -> bool {
    !matches!(error, AskError::Timeout { .. })
}

/// Poll `check` until it holds, for at most `T` (sleeping a millisecond between
/// looks, which costs nothing on a paused clock).
async fn until(mut check: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + T;
    while !check() {
        assert!(Instant::now() < deadline, "not within {T:?}: {what}");
        tokio::time::sleep(ms(1)).await;
    }
}

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

/// A worker that reports `{name} {n}` on its reply ref.
#[message]
pub struct Job {
    pub n: u64,
    pub reply_to: ActorRef<u64>,
}

/// S21, S29, S32: a router's own bound applies to asks too: an ask into a pool
/// router whose bounded drop-new mailbox is full fails at once with `MailboxFull`
/// naming the router, while what the router had taken is answered.
#[tapio::test(start_paused = true)]
async fn s21_s29_s32_an_ask_into_a_routers_full_mailbox_fails_at_once_naming_the_router(
    system: ActorSystem,
) {
    let pool = Routers::pool(2, || {
        Behaviors::receive_message(|job: Job| job.reply_to.tell(job.n * 2))
    })
    .unwrap();
    let router = system
        .spawn_with(
            pool,
            "bounded-router",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    // Nothing runs between these two lines on this one thread: the router has not
    // read its mailbox, whose one place the first request takes.
    let first = router.ask_with(|reply_to| Job { n: 1, reply_to });
    let second = router.ask_with(|reply_to| Job { n: 2, reply_to });
    let second = second.timeout(Duration::from_secs(60)).await;
    assert!(
        matches!(&second, Err(AskError::MailboxFull { target }) if target == router.path()),
        "{second:?}"
    );
    assert_eq!(first.timeout(T).await, Ok(2));
    assert_eq!(
        router
            .ask_with(|reply_to| Job { n: 3, reply_to })
            .timeout(T)
            .await,
        Ok(6)
    );
}

/// S27, S29, S30: offers waiting on a full mailbox wait behind a replay larger than
/// the bound: the replay (never refused by the bound) comes first, in arrival order,
/// then what was queued, then the offers in the order they began to wait; nothing is
/// pushed out or lettered.
#[tapio::test(start_paused = true)]
async fn s27_s29_s30_offers_wait_behind_a_replay_larger_than_the_bound(system: ActorSystem) {
    let mut dead = letters(&system);
    let (mut probe, to) = probe_and_ref(&system);
    let gate = Arc::new(Semaphore::new(0));
    let held = gate.clone();
    let actor = system
        .spawn_with(
            Behaviors::with_stash(16, move |stash: StashBuffer<u64>| {
                let (to, held) = (to.clone(), held.clone());
                Behaviors::receive_async(
                    async move |_ctx, n: u64| -> Result<Behavior<u64>, StashOverflow> {
                        if n == 0 {
                            // Opens: wait for the test, then replay what was stashed.
                            to.tell("opening".to_owned());
                            if let Ok(permit) = held.acquire().await {
                                permit.forget();
                            }
                            let to = to.clone();
                            return Ok(stash.unstash_all(Behaviors::receive_message(
                                move |n: u64| to.tell(format!("n {n}")),
                            )));
                        }
                        stash.stash(n)?;
                        Ok(Behaviors::same())
                    },
                )
            })
            .unwrap(),
            "replayer",
            MailboxConfig::bounded(2, OverflowStrategy::DropOldest).unwrap(),
        )
        .unwrap();
    for n in 1..=5 {
        assert!(timeout(T, actor.offer(n)).await.unwrap());
    }
    actor.tell(0_u64);
    assert_eq!(probe.expect_message(T).await, "opening");
    actor.tell(6_u64);
    actor.tell(7_u64);
    let offers: Vec<_> = (8..=10_u64)
        .map(|n| {
            let actor = actor.clone();
            tokio::spawn(async move { actor.offer(n).await })
        })
        .collect();
    // Let the three offers begin to wait, in order.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    gate.add_permits(1);
    let want: Vec<String> = (1..=10).map(|n| format!("n {n}")).collect();
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    expect_lines(&mut probe, &want).await;
    for offer in offers {
        assert!(timeout(T, offer).await.unwrap().unwrap());
    }
    outside::no_letter_for(&mut dead, actor.path(), ms(100)).await;
}

// =================================================================================
// 2. Routers (S32, S11, S18, S23, S26, S28)
// =================================================================================

/// A routee that reports `{label} {n}` and stops on 0.
fn labelled(label: &'static str, to: ActorRef<String>) -> Behavior<u64> {
    Behaviors::receive_message(move |n: u64| {
        if n == 0 {
            return Behaviors::stopped();
        }
        to.tell(format!("{label} {n}"));
        Behaviors::same()
    })
    .into()
}

/// S32, S18: a ref given twice to a group counts once: strict rotation goes a, b, a,
/// b; and once both stop the router stops (a ref counted twice would keep it alive).
#[tapio::test(start_paused = true)]
async fn s32_s18_a_group_given_a_ref_twice_rotates_over_it_once_and_stops_with_the_last(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let a = system
        .spawn(labelled("a", probe.actor_ref().clone()), "a")
        .unwrap();
    let b = system
        .spawn(labelled("b", probe.actor_ref().clone()), "b")
        .unwrap();
    let router = system
        .spawn(
            Routers::group([a.clone(), b.clone(), a.clone()]).unwrap(),
            "twice",
        )
        .unwrap();
    for n in 1..=4_u64 {
        router.tell(n);
    }
    let mut got = probe.receive_messages(4, T).await;
    got.sort();
    assert_eq!(got, ["a 1", "a 3", "b 2", "b 4"]);
    probe.watch(&router);
    a.tell(0_u64);
    b.tell(0_u64);
    probe.expect_terminated(&router, T).await;
}

/// S32, S11, S14, S18: a group routee that restarts keeps its place in the rotation:
/// a restart is not an end, so the group neither drops it nor stops.
#[tapio::test(start_paused = true)]
async fn s32_s11_a_group_routee_that_restarts_keeps_its_place(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let setups = Arc::new(AtomicU64::new(0));
    let counted = setups.clone();
    let a = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
                counted.fetch_add(1, SeqCst);
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| {
                    if n == 13 {
                        return Err(Boom);
                    }
                    to.tell(format!("a {n}"));
                    Ok(())
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "a",
        )
        .unwrap();
    let b = system
        .spawn(labelled("b", probe.actor_ref().clone()), "b")
        .unwrap();
    let router = system
        .spawn(Routers::group([a.clone(), b.clone()]).unwrap(), "group")
        .unwrap();
    probe.watch(&router);
    probe.watch(&a);
    for n in [13, 2, 3, 4, 5, 6] {
        router.tell(n);
    }
    let mut got = probe.receive_messages(5, T).await;
    got.sort();
    assert_eq!(got, ["a 3", "a 5", "b 2", "b 4", "b 6"]);
    assert_eq!(setups.load(SeqCst), 2);
    probe.expect_no_termination(ms(200)).await;
}

/// S32, S26, S14, S31: routees that stash, overflow and restart do so in place: each
/// letters the overflowing message (`StashFull`) and then what its stash held
/// (`StashDiscarded`), in that order, naming itself; the pool keeps its routees and
/// its rotation, and the restarted stashes fill and replay again.
#[tapio::test(start_paused = true)]
async fn s32_s26_stash_overflows_restart_routees_in_place_and_letter_their_stashes(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let (mut probe, to) = probe_and_ref(&system);
    let pool = Routers::pool(2, move || {
        let to = to.clone();
        Behaviors::supervise(
            Behaviors::with_stash(2, move |stash: StashBuffer<u64>| {
                let to = to.clone();
                Behaviors::receive(move |ctx, n: u64| {
                    if n == 0 {
                        let name = ctx.path().name().to_owned();
                        let to = to.clone();
                        return Ok(stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                            to.tell(format!("{name} {n}"))
                        })));
                    }
                    stash.stash(n).map(|()| Behaviors::same())
                })
            })
            .unwrap(),
        )
        .on_failure::<StashOverflow>(SupervisorStrategy::restart())
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "stashers").unwrap();
    until(
        || handle.routees().len() == 2,
        "the router starts its routees",
    )
    .await;
    for n in 1..=6_u64 {
        router.tell(n);
    }
    let routees = handle.routees();
    assert_eq!(routees.len(), 2);
    for (routee, odd) in routees.iter().zip([true, false]) {
        let got: Vec<(u64, DeadLetterReason)> = letters_for(&mut dead, routee.path(), 3)
            .await
            .iter()
            .map(|l| (l.take_message::<u64>().unwrap(), l.reason().clone()))
            .collect();
        let (x, y, z) = if odd { (5, 1, 3) } else { (6, 2, 4) };
        assert_eq!(
            got,
            [
                (x, DeadLetterReason::StashFull),
                (y, DeadLetterReason::StashDiscarded),
                (z, DeadLetterReason::StashDiscarded)
            ]
        );
    }
    assert_eq!(handle.routees(), routees, "the same routees, in place");
    for n in [7, 8, 0, 0] {
        router.tell(n);
    }
    let mut got = probe.receive_messages(2, T).await;
    got.sort();
    assert_eq!(got, ["routee-1 7", "routee-2 8"]);
}

/// A holder's adapter, built in setup, and the id it answers with.
fn answering_owner(
    id: u64,
    adapter_tx: mpsc::UnboundedSender<ActorRef<Foreign>>,
) -> Behavior<Held> {
    Behaviors::setup(move |ctx: &mut ActorContext<Held>| {
        let adapter = ctx.message_adapter(|foreign: Foreign| match foreign {
            Foreign::Value(n) => Held::N(n),
            Foreign::Lookup(n, reply_to) => Held::Ask(n, reply_to),
        });
        let _ = adapter_tx.send(adapter);
        Behaviors::receive_message(move |held: Held| {
            if let Held::Ask(n, reply_to) = held {
                reply_to.tell(n * 10 + id);
            }
        })
    })
}

/// S32, S28, S21: `ask_with` through a group of adapters is answered by their
/// owners in strict rotation (the reply ref travels inside the translated message);
/// when both owners stop, their adapters leave and the group stops.
#[tapio::test(start_paused = true)]
async fn s32_s28_asks_through_a_group_of_adapters_are_answered_by_their_owners(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel();
    let one = system
        .spawn(answering_owner(1, adapter_tx.clone()), "one")
        .unwrap();
    let two = system.spawn(answering_owner(2, adapter_tx), "two").unwrap();
    let adapters = [next(&mut adapter_rx).await, next(&mut adapter_rx).await];
    let router = system
        .spawn(Routers::group(adapters).unwrap(), "adapters")
        .unwrap();
    let mut answers = Vec::new();
    for n in 1..=4 {
        answers.push(
            router
                .ask_with(|reply_to| Foreign::Lookup(n, reply_to))
                .timeout(T)
                .await
                .unwrap(),
        );
    }
    // Which owner's adapter came first depends on which setup ran first.
    let ids: Vec<u64> = answers.iter().map(|a| a % 10).collect();
    assert!(ids == [1, 2, 1, 2] || ids == [2, 1, 2, 1], "{answers:?}");
    assert_eq!(
        answers.iter().map(|a| a / 10).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    probe.watch(&router);
    system.stop(&one).unwrap();
    system.stop(&two).unwrap();
    probe.expect_terminated(&router, T).await;
}

/// S32, S18: a routee that stopped on its own leaves the pool, and a resize to the
/// size the pool was built with replaces it, at the end of the rotation.
#[tapio::test(start_paused = true)]
async fn s32_a_resize_replaces_a_routee_that_stopped_on_its_own(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let pool = Routers::pool(3, || {
        Behaviors::receive(|ctx, job: Job| {
            if job.n == 0 {
                return Behaviors::stopped();
            }
            let id = routee_number(ctx);
            job.reply_to.tell(id);
            Behaviors::same()
        })
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "resized").unwrap();
    until(
        || handle.routees().len() == 3,
        "the router starts its routees",
    )
    .await;
    let first = handle.routees()[0].clone();
    probe.watch(&first);
    router.tell(Job {
        n: 0,
        reply_to: probe.actor_ref().clone(),
    });
    probe.expect_terminated(&first, T).await;
    until(
        || handle.routees().len() == 2,
        "the pool drops the stopped routee",
    )
    .await;
    handle.resize(3).unwrap();
    tell_jobs_one_to_three(&router, &probe, |job| job);
    let mut ids = probe.receive_messages(3, T).await;
    ids.sort();
    assert_eq!(ids, [2, 3, 4]);
    let names: Vec<String> = handle
        .routees()
        .iter()
        .map(|r| r.path().name().to_owned())
        .collect();
    assert_eq!(names, ["routee-2", "routee-3", "routee-4"]);
}

/// S32: before its router starts, a pool's handle has no router and a resize sets
/// the size the router starts with.
#[tapio::test(start_paused = true)]
async fn s32_a_resize_before_the_router_starts_sets_its_starting_size(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let pool = Routers::pool(1, || {
        Behaviors::receive(|ctx, job: Job| {
            let id = routee_number(ctx);
            job.reply_to.tell(id);
        })
    })
    .unwrap();
    let handle = pool.handle();
    assert!(handle.router().is_none());
    handle.resize(3).unwrap();
    let router = system.spawn(pool, "presized").unwrap();
    tell_jobs_one_to_three(&router, &probe, |job| job);
    let mut ids = probe.receive_messages(3, T).await;
    ids.sort();
    assert_eq!(ids, [1, 2, 3]);
    assert_eq!(handle.router().as_ref(), Some(&router));
    assert_eq!(handle.routees().len(), 3);
}

/// A request a stashing routee holds until `Open`.
#[message]
pub enum Desk {
    Ask(u64, ActorRef<u64>),
    Open,
}

/// S23, S32, S27, S31: a request a routee holds in its stash fails at once when the
/// router is stopped (the routee stops with it), and is lettered naming the routee.
#[tapio::test(start_paused = true)]
async fn s23_s32_s27_an_ask_stashed_in_a_routee_fails_at_once_when_the_router_stops(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let (mut probe, to) = probe_and_ref(&system);
    let pool = Routers::pool(1, move || {
        let to = to.clone();
        Behaviors::with_stash(4, move |stash: StashBuffer<Desk>| {
            let to = to.clone();
            Behaviors::receive_message(move |desk: Desk| {
                to.tell("stashed".to_owned());
                stash.stash(desk).map(|()| Behaviors::same())
            })
        })
        .unwrap()
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "desks").unwrap();
    let asked = router
        .ask_with(|reply_to| Desk::Ask(7, reply_to))
        .timeout(Duration::from_secs(60));
    let asked = tokio::spawn(async move { asked.await });
    assert_eq!(probe.expect_message(T).await, "stashed");
    let routee = handle.routees()[0].clone();
    let started = Instant::now();
    system.stop(&router).unwrap();
    let asked = timeout(T, asked).await.unwrap().unwrap();
    assert!(
        matches!(&asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    let letter = letters_for(&mut dead, routee.path(), 1).await.remove(0);
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::RecipientStopped,
        "{}",
        describe(&letter)
    );
}

// =================================================================================
// 3. Stash (S24, S27, S33)
// =================================================================================

#[message]
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    Tick,
    Open,
}

/// S24, S25, S27: a tick taken by a handler and stashed is an ordinary message: a
/// cancel of its timer afterwards (which drops ticks still queued) does not drop it
/// from the stash, so the replay delivers each stashed tick, and no tick comes after
/// the cancel.
#[tapio::test(start_paused = true)]
async fn s24_s27_a_stashed_tick_is_replayed_after_its_timer_was_cancelled(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_fixed_rate("beat", Gate::Tick, ms(10)).unwrap();
                let to = to.clone();
                Behaviors::with_stash(8, move |stash: StashBuffer<Gate>| {
                    let (to, timers) = (to.clone(), timers.clone());
                    Behaviors::receive_message(move |gate: Gate| match gate {
                        Gate::Tick => {
                            stash.stash(Gate::Tick)?;
                            to.tell(format!("stashed {}", stash.len()));
                            Ok(Behaviors::same())
                        }
                        Gate::Open => {
                            timers.cancel("beat");
                            to.tell(format!("open {}", stash.len()));
                            let to = to.clone();
                            Ok::<_, StashOverflow>(stash.unstash_all(Behaviors::receive_message(
                                move |gate: Gate| to.tell(format!("replayed {gate:?}")),
                            )))
                        }
                    })
                })
                .unwrap()
            }),
            "ticks",
        )
        .unwrap();
    assert_eq!(probe.expect_message(T).await, "stashed 1");
    actor.tell(Gate::Open);
    let open = probe
        .expect_message_where(T, |m: &String| m.starts_with("open"))
        .await;
    let held: usize = open.trim_start_matches("open ").parse().unwrap();
    assert!(held >= 1);
    for _ in 0..held {
        assert_eq!(probe.expect_message(T).await, "replayed Tick");
    }
    probe.expect_no_message(ms(200)).await;
}

/// S27, S33, S5: messages stashed before a blocking load and those queued while the
/// call ran come in arrival order: the replay first, then what waited meanwhile.
#[tapio::test]
async fn s27_s33_messages_stashed_before_and_queued_during_a_blocking_load_keep_arrival_order(
    system: ActorSystem,
) {
    let (mut probe, to) = probe_and_ref(&system);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let actor = system
        .spawn(
            Behaviors::with_stash(8, move |stash: StashBuffer<u64>| {
                let (to, released) = (to.clone(), released.clone());
                Behaviors::receive_async(async move |ctx, n: u64| -> Result<_, Failure> {
                    if n != 0 {
                        stash.stash(n).map_err(Failure::new)?;
                        return Ok(Behaviors::same());
                    }
                    to.tell("loading".to_owned());
                    let waiting = released.lock().unwrap().take();
                    let loaded = ctx
                        .run_blocking(move || {
                            waiting.map(|w| w.recv_timeout(Duration::from_secs(10)).is_ok())
                        })
                        .await?;
                    to.tell(format!("loaded {loaded:?}"));
                    let to = to.clone();
                    Ok(stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                        to.tell(format!("n {n}"))
                    })))
                })
            })
            .unwrap(),
            "loader",
        )
        .unwrap();
    actor.tell(1_u64);
    actor.tell(2_u64);
    actor.tell(0_u64);
    assert_eq!(probe.expect_message(T).await, "loading");
    actor.tell(3_u64);
    actor.tell(4_u64);
    release.send(()).unwrap();
    expect_lines(
        &mut probe,
        &["loaded Some(true)", "n 1", "n 2", "n 3", "n 4"],
    )
    .await;
}

/// S27, S31, S23: a clone of a stash buffer kept outside the actor does not keep
/// what the stash held past the actor's stop: at the stop, a stashed ask fails at
/// once and its request is lettered `RecipientStopped`; a message stashed into the
/// clone afterwards is lettered at once, never held where nothing will replay it.
/// (Before the fix, both letters waited for the last clone to be dropped, and the
/// message stashed after the stop sat in the clone; 1 of 1 runs failed.)
#[tapio::test(start_paused = true)]
async fn s27_s31_s23_a_stash_clone_kept_outside_holds_nothing_past_the_actors_stop(
    system: ActorSystem,
) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let (stash_tx, mut stash_rx) = mpsc::unbounded_channel::<StashBuffer<Desk>>();
    let actor = system
        .spawn(
            Behaviors::with_stash(4, move |stash: StashBuffer<Desk>| {
                let _ = stash_tx.send(stash.clone());
                Behaviors::receive_message(move |desk: Desk| {
                    stash.stash(desk).map(|()| Behaviors::same())
                })
            })
            .unwrap(),
            "orphan",
        )
        .unwrap();
    let kept = next(&mut stash_rx).await;
    let asked = actor
        .ask_with(|reply_to| Desk::Ask(1, reply_to))
        .timeout(Duration::from_secs(60));
    let asked = tokio::spawn(async move { asked.await });
    until(|| kept.len() == 1, "the actor stashes the request").await;
    probe.watch(&actor);
    let started = Instant::now();
    system.stop(&actor).unwrap();
    probe.expect_terminated(&actor, T).await;
    let asked = timeout(T, asked).await.unwrap().unwrap();
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let first = letters_for(&mut dead, actor.path(), 1).await.remove(0);
    assert_eq!(
        first.reason(),
        &DeadLetterReason::RecipientStopped,
        "{}",
        describe(&first)
    );
    assert!(matches!(
        first.take_message::<Desk>(),
        Some(Desk::Ask(1, _))
    ));
    assert!(kept.is_empty());
    assert_eq!(kept.stash(Desk::Open), Ok(()));
    assert!(kept.is_empty(), "nothing is held for an actor that stopped");
    let second = letters_for(&mut dead, actor.path(), 1).await.remove(0);
    assert_eq!(
        second.reason(),
        &DeadLetterReason::RecipientStopped,
        "{}",
        describe(&second)
    );
    assert!(matches!(second.take_message::<Desk>(), Some(Desk::Open)));
    drop(kept);
    outside::no_letter_for(&mut dead, actor.path(), ms(100)).await;
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

// =================================================================================
// 5. run_blocking (S33, S11, S15, S23)
// =================================================================================

/// S33: two blocking calls started in one handler run side by side on the pool
/// (each waits for the other's word): the `Blocking` futures can be joined.
#[tapio::test]
async fn s33_two_blocking_calls_joined_in_one_handler_run_side_by_side(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |ctx, _: u64| -> Result<(), Failure> {
                let (to_b, from_a) = std::sync::mpsc::channel::<()>();
                let (to_a, from_b) = std::sync::mpsc::channel::<()>();
                let a = ctx.run_blocking(move || {
                    let _ = to_b.send(());
                    from_b.recv_timeout(Duration::from_secs(5)).is_ok()
                });
                let b = ctx.run_blocking(move || {
                    let _ = to_a.send(());
                    from_a.recv_timeout(Duration::from_secs(5)).is_ok()
                });
                let (a, b) = tokio::join!(a, b);
                to.tell(format!("{} {}", a?, b?));
                Ok(())
            }),
            "pair",
        )
        .unwrap();
    actor.tell(1_u64);
    assert_eq!(
        probe.expect_message(Duration::from_secs(10)).await,
        "true true"
    );
}

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Crunch(pub u64);

#[derive(Clone, Default)]
pub struct Cruncher;

#[actor]
impl Cruncher {
    async fn crunch(&mut self, ctx: &mut Ctx<Self>, Crunch(n): Crunch) -> Result<u64, Failure> {
        let doubled = ctx
            .run_blocking(move || {
                assert!(n != 0, "zero in the pool");
                n * 2
            })
            .await?;
        Ok(doubled)
    }
}

/// S33, S23, S11: a request whose blocking call panics is settled at once by what
/// supervision does with the `Panicked` failure: under restart the ask is
/// `Unanswered` and the next ask is answered; under stop it is `TargetTerminated`.
#[tapio::test]
async fn s33_s23_s11_an_ask_whose_blocking_call_panics_ends_at_once_by_the_decision(
    system: ActorSystem,
) {
    let restarting = system
        .spawn(
            Behaviors::supervise(Cruncher).on_failure::<Panicked>(SupervisorStrategy::restart()),
            "restarting",
        )
        .unwrap();
    let stopping = system.spawn(Cruncher, "stopping").unwrap();
    assert_eq!(restarting.ask(Crunch(2)).timeout(T).await, Ok(4));
    let started = Instant::now();
    let asked = restarting
        .ask(Crunch(0))
        .timeout(Duration::from_secs(60))
        .await;
    assert!(
        matches!(asked, Err(AskError::Unanswered { .. })),
        "{asked:?}"
    );
    assert_eq!(restarting.ask(Crunch(3)).timeout(T).await, Ok(6));
    let asked = stopping
        .ask(Crunch(0))
        .timeout(Duration::from_secs(60))
        .await;
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// S33, S15, S19: a stop while the actor awaits a blocking call drops the handler
/// where it awaits: `PostStop` comes while the call still runs, the call runs to
/// its end on the pool, and the rest of the handler never runs.
#[tapio::test]
async fn s33_s15_a_stop_during_a_blocking_call_sees_post_stop_before_the_call_ends(
    system: ActorSystem,
) {
    let (mut probe, to) = probe_and_ref(&system);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let (ended_tx, mut ended_rx) = mpsc::unbounded_channel::<&'static str>();
    let on_signal = to.clone();
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |ctx, _: u64| -> Result<(), Failure> {
                to.tell("calling".to_owned());
                let waiting = released.lock().unwrap().take();
                let ended = ended_tx.clone();
                ctx.run_blocking(move || {
                    if let Some(w) = waiting {
                        let _ = w.recv_timeout(Duration::from_secs(10));
                    }
                    let _ = ended.send("call ended");
                })
                .await?;
                to.tell("after the call".to_owned());
                Ok(())
            })
            .on_signal(move |_ctx, signal| {
                if matches!(signal, Signal::PostStop) {
                    on_signal.tell("post-stop".to_owned());
                }
            }),
            "blocked",
        )
        .unwrap();
    actor.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, "calling");
    system.stop(&actor).unwrap();
    assert_eq!(probe.expect_message(T).await, "post-stop");
    assert!(ended_rx.try_recv().is_err(), "the call is still running");
    release.send(()).unwrap();
    assert_eq!(next(&mut ended_rx).await, "call ended");
    probe.expect_no_message(ms(100)).await;
}

// =================================================================================
// 6. Timers (S25, S32)
// =================================================================================

#[message]
#[derive(Debug, Clone, PartialEq)]
pub enum Beat {
    Beat(&'static str),
    StopBeat,
    StartOther,
    CancelOther,
}

/// S25: every clone of an actor's scheduler reaches the same timers: a key started
/// through `with_timers`' scheduler is seen and cancelled through `ctx.timers()`, and
/// one started through `ctx.timers()` is cancelled through the other; a cancelled
/// key's queued ticks never arrive.
#[tapio::test(start_paused = true)]
async fn s25_one_timer_seen_through_two_scheduler_clones(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers
                    .start_fixed_rate("a", Beat::Beat("a"), ms(10))
                    .unwrap();
                let to = to.clone();
                Behaviors::receive(move |ctx, beat: Beat| match beat {
                    Beat::Beat(which) => to.tell(which.to_owned()),
                    Beat::StopBeat => {
                        let seen = ctx.timers().is_active("a");
                        ctx.timers().cancel("a");
                        to.tell(format!("a {seen} {}", timers.is_active("a")));
                    }
                    Beat::StartOther => {
                        ctx.timers()
                            .start_fixed_rate("b", Beat::Beat("b"), ms(10))
                            .unwrap();
                        to.tell(format!("b {}", timers.is_active("b")));
                    }
                    Beat::CancelOther => {
                        timers.cancel("b");
                        to.tell(format!("b {}", ctx.timers().is_active("b")));
                    }
                })
            }),
            "clones",
        )
        .unwrap();
    assert_eq!(probe.expect_message(T).await, "a");
    actor.tell(Beat::StopBeat);
    probe
        .expect_message_where(T, |m: &String| m.starts_with("a "))
        .await;
    actor.tell(Beat::StartOther);
    assert_eq!(
        probe
            .expect_message_where(T, |m: &String| m.starts_with("b "))
            .await,
        "b true"
    );
    assert_eq!(probe.expect_message(T).await, "b");
    actor.tell(Beat::CancelOther);
    assert_eq!(
        probe
            .expect_message_where(T, |m: &String| m.starts_with("b "))
            .await,
        "b false"
    );
    probe.expect_no_message(ms(200)).await;
}

/// S25, S24: a key replaced by another mode keeps to its exact timeline under the
/// paused clock: fixed-delay ticks at 100 and 200 ms, replaced at 250 ms by a
/// fixed-rate timer of 40 ms, which ticks at 290, 330 and 370 ms; the old timer
/// never ticks again.
#[tapio::test(start_paused = true)]
async fn s25_a_key_replaced_by_another_mode_keeps_its_exact_timeline(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let _actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                let start = Instant::now();
                timers
                    .start_fixed_delay("k", Beat::Beat("delay"), ms(100))
                    .unwrap();
                timers.start_single_timer("switch", Beat::StartOther, ms(250));
                let to = to.clone();
                Behaviors::receive_message(move |beat: Beat| {
                    let at = start.elapsed().as_millis();
                    match beat {
                        Beat::Beat(what) => to.tell(format!("{what} {at}")),
                        Beat::StartOther => {
                            timers
                                .start_fixed_rate("k", Beat::Beat("rate"), ms(40))
                                .unwrap();
                            to.tell(format!("switch {at}"));
                        }
                        _ => {}
                    }
                })
            }),
            "timeline",
        )
        .unwrap();
    expect_lines(
        &mut probe,
        &[
            "delay 100",
            "delay 200",
            "switch 250",
            "rate 290",
            "rate 330",
            "rate 370",
        ],
    )
    .await;
}

/// S25, S32, S48: shrinking a pool stops the routees it removes, and their timers
/// with them: no tick of a removed routee after its `PostStop`, and the leak check
/// of `#[tapio::test]` finds no timer left.
#[tapio::test(start_paused = true)]
async fn s25_s32_shrinking_a_pool_ends_the_timers_of_the_routees_it_removes(system: ActorSystem) {
    let log = new_log();
    let mut probe = TestProbe::<String>::new(&system);
    let for_pool = log.clone();
    let pool = Routers::pool(3, move || {
        let log = for_pool.clone();
        Behaviors::with_timers(move |timers| {
            timers.start_fixed_rate("beat", 0_u64, ms(10)).unwrap();
            let (log, on_signal) = (log.clone(), log.clone());
            Behaviors::receive(move |ctx, _: u64| push(&log, format!("tick {}", ctx.path().name())))
                .on_signal(move |ctx, signal| {
                    if matches!(signal, Signal::PostStop) {
                        push(&on_signal, format!("stop {}", ctx.path().name()));
                    }
                })
        })
    })
    .unwrap();
    let handle = pool.handle();
    let _router = system.spawn(pool, "beaters").unwrap();
    until(
        || handle.routees().len() == 3,
        "the router starts its routees",
    )
    .await;
    let routees = handle.routees();
    let mut removed = [
        TestProbe::<String>::new(&system),
        TestProbe::<String>::new(&system),
    ];
    for (probe, routee) in removed.iter().zip(&routees[1..]) {
        probe.watch(routee);
    }
    probe.watch(&routees[0]);
    tokio::time::sleep(ms(35)).await;
    handle.resize(1).unwrap();
    for (probe, routee) in removed.iter_mut().zip(&routees[1..]) {
        probe.expect_terminated(routee, T).await;
    }
    let at_stop = entries(&log).len();
    tokio::time::sleep(ms(200)).await;
    let log = entries(&log);
    for name in ["routee-2", "routee-3"] {
        let stop = log
            .iter()
            .position(|e| *e == format!("stop {name}"))
            .unwrap_or_else(|| panic!("no PostStop for {name}: {log:?}"));
        assert!(
            !log[stop..].contains(&format!("tick {name}")),
            "a tick of {name} after its stop: {log:?}"
        );
        assert!(log[..stop].contains(&format!("tick {name}")), "{log:?}");
    }
    assert!(log.len() > at_stop, "routee-1 still ticks");
    assert!(
        log[at_stop..].iter().all(|e| e == "tick routee-1"),
        "{log:?}"
    );
    probe.expect_no_termination(ms(10)).await;
}

// =================================================================================
// 7. State machines (S34, S11, S23)
// =================================================================================

#[message]
#[derive(Debug, Clone)]
pub struct Go(pub bool);

#[message(reply = &'static str)]
#[derive(Debug, Clone)]
pub struct Where;

#[derive(Clone)]
pub struct Lamp {
    entries: Log,
}

#[actor(messages(Go, Where), states(Dark => Lit, Lit => Dark))]
impl Lamp {}

#[derive(Clone)]
pub struct Dark;

#[state(Lamp)]
impl Dark {
    #[on_entry]
    fn entered(&mut self, lamp: &mut Lamp) {
        push(&lamp.entries, "enter Dark");
    }

    fn go(self, Go(panic): Go) -> Next<Self> {
        assert!(
            !panic,
            "a switching handler panics while it holds the state"
        );
        Next::to(Lit)
    }

    fn where_(&mut self, _: Where) -> &'static str {
        "dark"
    }
}

#[derive(Clone)]
pub struct Lit;

#[state(Lamp)]
impl Lit {
    #[on_entry]
    fn entered(&mut self, lamp: &mut Lamp) {
        push(&lamp.entries, "enter Lit");
    }

    fn go(self, _: Go) -> Next<Self> {
        Next::to(Dark)
    }

    fn where_(&mut self, _: Where) -> &'static str {
        "lit"
    }
}

/// S34, S11, S23: a switching handler that panics under resume loses the state:
/// the next message (an ask) is refused at once, not left to its deadline, and the
/// machine fails with `StateLost`; a restart clause for that brings it back in its
/// initial state, whose entry hook runs again.
#[tapio::test(start_paused = true)]
async fn s34_s11_a_lost_state_refuses_the_next_ask_at_once_and_a_restart_brings_it_back(
    system: ActorSystem,
) {
    let log = new_log();
    let lamp = system
        .spawn(
            Behaviors::supervise(Machine::new(
                Lamp {
                    entries: log.clone(),
                },
                Dark,
            ))
            .on_failure::<Panicked>(SupervisorStrategy::resume())
            .on_failure::<StateLost>(SupervisorStrategy::restart()),
            "lamp",
        )
        .unwrap();
    assert_eq!(lamp.ask(Where).timeout(T).await, Ok("dark"));
    lamp.tell(Go(false));
    assert_eq!(lamp.ask(Where).timeout(T).await, Ok("lit"));
    lamp.tell(Go(false));
    lamp.tell(Go(true)); // panics in Dark, holding the state: resumed, vacant
    let started = Instant::now();
    let asked = lamp.ask(Where).timeout(Duration::from_secs(60)).await;
    assert!(matches!(&asked, Err(e) if not_a_timeout(e)), "{asked:?}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(lamp.ask(Where).timeout(T).await, Ok("dark"));
    assert_eq!(
        entries(&log),
        ["enter Dark", "enter Lit", "enter Dark", "enter Dark"]
    );
}

/// S34, S9, S18, S23: with no clause for `StateLost`, the lost state's next message
/// stops the machine (the default decision): the ask that met it fails at once and
/// a watcher hears `Terminated`.
#[tapio::test(start_paused = true)]
async fn s34_s23_a_lost_state_without_a_clause_stops_the_machine_and_its_ask_fails_at_once(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let lamp = system
        .spawn(
            Behaviors::supervise(Machine::new(Lamp { entries: new_log() }, Dark))
                .on_failure::<Panicked>(SupervisorStrategy::resume()),
            "lamp",
        )
        .unwrap();
    probe.watch(&lamp);
    lamp.tell(Go(true));
    let asked = lamp.ask(Where).timeout(Duration::from_secs(60)).await;
    assert!(matches!(&asked, Err(e) if not_a_timeout(e)), "{asked:?}");
    probe.expect_terminated(&lamp, T).await;
}

// =================================================================================
// 8. The testkit (S48, S25, S32, S33, S34)
// =================================================================================

/// S48, S32: the behavior kit runs a group router over inboxes: it records a watch of
/// each routee, answers `Same`, and hands the messages on in strict rotation.
#[test]
fn s48_s32_the_kit_runs_a_group_router_over_inboxes() {
    let mut a = TestInbox::<u64>::named("a").unwrap();
    let mut b = TestInbox::<u64>::named("b").unwrap();
    let group = Routers::group([a.actor_ref().clone(), b.actor_ref().clone()]).unwrap();
    let mut kit = BehaviorTestKit::new(group);
    let watched: Vec<String> = kit
        .effects()
        .iter()
        .filter_map(|e| match e {
            Effect::Watched { actor } => Some(actor.path().to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(watched, ["/user/a", "/user/b"]);
    for n in 1..=5_u64 {
        assert_eq!(kit.run(n), Ok(Outcome::Same));
    }
    assert_eq!(a.messages(), [1, 3, 5]);
    assert_eq!(b.messages(), [2, 4]);
}

/// S48, S33: `run_async` inside a runtime awaits a handler through its blocking call,
/// and what the handler sends after it is in the inbox.
#[tokio::test]
async fn s48_s33_run_async_awaits_a_blocking_call_inside_a_runtime() {
    let mut out = TestInbox::<u64>::new();
    let to = out.actor_ref().clone();
    let mut kit = BehaviorTestKit::new(Behaviors::receive_async(
        async move |ctx, n: u64| -> Result<(), Failure> {
            let doubled = ctx.run_blocking(move || n * 2).await?;
            to.tell(doubled);
            Ok(())
        },
    ));
    assert_eq!(
        timeout(T, kit.run_async(21_u64)).await.unwrap(),
        Ok(Outcome::Same)
    );
    assert_eq!(out.messages(), [42]);
}

#[message]
#[derive(Debug, Clone)]
pub struct Arm;

#[message]
#[derive(Debug, Clone)]
pub struct Expire;

#[derive(Clone)]
pub struct Fuse;

#[actor(messages(Arm, Expire), states(Idle => Armed, Armed => Idle))]
impl Fuse {}

#[derive(Clone)]
pub struct Idle;

#[state(Fuse)]
impl Idle {
    fn arm(self, _: Arm) -> Next<Self> {
        Next::to(Armed)
    }
}

#[derive(Clone)]
pub struct Armed;

#[state(Fuse)]
impl Armed {
    #[on_entry]
    fn entered(&mut self, _fuse: &mut Fuse, ctx: &mut Ctx<Fuse>) {
        ctx.timers()
            .start_single_timer("expire", Expire, Duration::from_secs(30));
    }

    fn expire(self, _: Expire) -> Next<Self> {
        Next::to(Idle)
    }
}

/// S48, S34, S25: the kit records the timer a state's entry hook starts, at each
/// switch into the state, and runs no timer: the test delivers the tick itself, and
/// the machine leaves the state without starting another.
#[test]
fn s48_s34_s25_the_kit_records_a_timer_started_by_a_states_entry_hook() {
    let mut kit = BehaviorTestKit::new(Machine::new(Fuse, Idle));
    assert!(kit.effects().is_empty(), "{:?}", kit.effects());
    kit.run(Arm).unwrap();
    kit.expect_effect(Effect::TimerStarted {
        key: "expire".into(),
        mode: TimerMode::Single,
        delay: Duration::from_secs(30),
    });
    kit.run(Expire).unwrap();
    let started = |effects: Vec<Effect>| {
        let n = effects
            .iter()
            .filter(|e| matches!(e, Effect::TimerStarted { .. }))
            .count();
        (n, effects)
    };
    let (n, effects) = started(kit.effects());
    assert_eq!(n, 0, "no timer at the switch out: {effects:?}");
    kit.run(Arm).unwrap();
    let (n, effects) = started(kit.effects());
    assert_eq!(n, 1, "again at the next entry: {effects:?}");
    assert!(kit.is_alive());
}

/// S48, S32, S31: a probe sees a broadcast pool end when its routees all stop on
/// one broadcast, and a tell to the router after that is a dead letter naming it.
#[tapio::test(start_paused = true)]
async fn s48_s32_a_probe_sees_a_pool_end_with_its_last_routee(system: ActorSystem) {
    let mut dead = letters(&system);
    let (mut probe, to) = probe_and_ref(&system);
    let pool = Routers::pool(3, move || labelled("routee", to.clone()))
        .unwrap()
        .broadcast();
    let router = system.spawn(pool, "quitters").unwrap();
    probe.watch(&router);
    router.tell(1_u64);
    expect_lines(&mut probe, &["routee 1", "routee 1", "routee 1"]).await;
    router.tell(0_u64);
    probe.expect_terminated(&router, T).await;
    router.tell(2_u64);
    let letter = letters_for(&mut dead, router.path(), 1).await.remove(0);
    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(letter.take_message::<u64>(), Some(2));
    let report = LeakReport::after_terminating(&system).await;
    assert!(report.is_clean(), "{report}");
}

// =================================================================================
// 8b. Routers with stop, supervision and bounds (S15, S19, S21, S23, S25, S29, S32)
// =================================================================================

/// A routee that answers `Job`s with its number and, told 0, shrinks its own pool
/// to one through the handle it was given.
#[message]
pub enum Crew {
    Job(Job),
    Shrink,
}

/// S32: a routee may resize its own pool from a handler (the resize is queued on
/// the router, not waited for): shrinking to one stops the newest routees, the
/// asking one among them, and the rotation goes on over the one left.
#[tapio::test(start_paused = true)]
async fn s32_a_routee_that_shrinks_its_own_pool_stops_with_the_newest(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let handle_slot: Arc<Mutex<Option<tapio::router::PoolHandle<Crew>>>> =
        Arc::new(Mutex::new(None));
    let slot = handle_slot.clone();
    let pool = Routers::pool(3, move || {
        let slot = slot.clone();
        Behaviors::receive(move |ctx, crew: Crew| match crew {
            Crew::Job(job) => {
                let id = routee_number(ctx);
                job.reply_to.tell(id);
            }
            Crew::Shrink => {
                let handle = slot.lock().unwrap().clone();
                if let Some(handle) = handle {
                    handle.resize(1).unwrap();
                }
            }
        })
    })
    .unwrap();
    *handle_slot.lock().unwrap() = Some(pool.handle());
    let handle = pool.handle();
    let router = system.spawn(pool, "crew").unwrap();
    until(
        || handle.routees().len() == 3,
        "the router starts its routees",
    )
    .await;
    let routees = handle.routees();
    let mut third = TestProbe::<String>::new(&system);
    third.watch(&routees[2]);
    routees[2].tell(Crew::Shrink);
    third.expect_terminated(&routees[2], T).await;
    until(|| handle.routees().len() == 1, "the pool shrinks to one").await;
    tell_jobs_one_to_three(&router, &probe, Crew::Job);
    assert_eq!(probe.receive_messages(3, T).await, [1, 1, 1]);
}

/// S15, S19, S32: stopping a pool router stops its routees first: each routee's
/// `PostStop` has run by the time a watcher hears the router's `Terminated`.
#[tapio::test(start_paused = true)]
async fn s15_s32_a_stopped_pool_router_ends_after_every_routee_saw_post_stop(system: ActorSystem) {
    let log = new_log();
    let mut probe = TestProbe::<String>::new(&system);
    let for_pool = log.clone();
    let pool = Routers::pool(3, move || {
        let log = for_pool.clone();
        Behaviors::receive_message(|_: u64| ()).on_signal(move |ctx, signal| {
            if matches!(signal, Signal::PostStop) {
                push(&log, format!("stop {}", ctx.path().name()));
            }
        })
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "stopped-pool").unwrap();
    until(
        || handle.routees().len() == 3,
        "the router starts its routees",
    )
    .await;
    probe.watch(&router);
    system.stop(&router).unwrap();
    probe.expect_terminated(&router, T).await;
    let mut stops = entries(&log);
    stops.sort();
    assert_eq!(stops, ["stop routee-1", "stop routee-2", "stop routee-3"]);
}

/// S21, S23, S29, S32: an ask through a router to a routee whose bounded drop-new
/// mailbox is full: the routee cannot take the request, which is lettered naming
/// it, and the ask (nobody keeping the letter) fails at once, not at its deadline.
#[tapio::test(start_paused = true)]
async fn s21_s29_s32_an_ask_routed_to_a_full_routee_fails_at_once(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (to, held) = (probe.actor_ref().clone(), gate.clone());
    let pool = Routers::pool(1, move || {
        let (adapter_tx, _) = mpsc::unbounded_channel();
        holder(to.clone(), held.clone(), adapter_tx)
    })
    .unwrap()
    .routee_mailbox(MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap());
    let router = system.spawn(pool, "full-routee").unwrap();
    hold(&router, &mut probe).await;
    router.tell(Held::N(1)); // the routee's one place
    let started = Instant::now();
    let asked = router
        .ask_with(|reply_to| Held::Ask(2, reply_to))
        .timeout(Duration::from_secs(60))
        .await;
    assert!(matches!(&asked, Err(e) if not_a_timeout(e)), "{asked:?}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    gate.add_permits(1);
    assert_eq!(probe.expect_message(T).await, "n 1");
    assert_eq!(
        router
            .ask_with(|reply_to| Held::Ask(3, reply_to))
            .timeout(T)
            .await,
        Ok(30)
    );
}

/// S25, S32, S14, S16, S48: a supervised pool router restarted by a routee's
/// escalation brings fresh routees whose timers start again, while the old routees'
/// timers end with them: once the old routees are heard to end, only the new ones
/// tick, and the leak check finds no timer left.
#[tapio::test(start_paused = true)]
async fn s25_s32_s16_a_restarted_pool_ends_its_old_routees_timers(system: ActorSystem) {
    let log = new_log();
    let for_pool = log.clone();
    let generation = Arc::new(AtomicU64::new(0));
    let counted = generation.clone();
    let pool = Routers::pool(2, move || {
        let (log, generation) = (for_pool.clone(), counted.clone());
        Behaviors::supervise(Behaviors::with_timers(move |timers| {
            timers.start_fixed_rate("beat", 0_u64, ms(10)).unwrap();
            let born = generation.load(SeqCst);
            let log = log.clone();
            Behaviors::receive(move |ctx, n: u64| {
                if n == 13 {
                    return Err(Boom);
                }
                push(&log, format!("g{born} {}", ctx.path().name()));
                Ok(())
            })
        }))
        .on_failure::<Boom>(SupervisorStrategy::escalate())
    })
    .unwrap();
    let handle = pool.handle();
    let router = system
        .spawn(
            Behaviors::supervise(pool).on_failure::<Boom>(SupervisorStrategy::restart()),
            "restarting-pool",
        )
        .unwrap();
    until(
        || handle.routees().len() == 2,
        "the router starts its routees",
    )
    .await;
    let old = handle.routees();
    let mut watchers = [
        TestProbe::<String>::new(&system),
        TestProbe::<String>::new(&system),
    ];
    for (watcher, routee) in watchers.iter().zip(&old) {
        watcher.watch(routee);
    }
    tokio::time::sleep(ms(25)).await;
    generation.store(1, SeqCst);
    router.tell(13_u64);
    for (watcher, routee) in watchers.iter_mut().zip(&old) {
        watcher.expect_terminated(routee, T).await;
    }
    let at_end = entries(&log).len();
    tokio::time::sleep(ms(100)).await;
    let log = entries(&log);
    assert!(
        log[..at_end].iter().any(|e| e.starts_with("g0 ")),
        "{log:?}"
    );
    let after = &log[at_end..];
    assert!(!after.is_empty(), "the new routees tick");
    assert!(
        after.iter().all(|e| e.starts_with("g1 ")),
        "an old routee ticked: {log:?}"
    );
    until(|| handle.routees().len() == 2, "a full pool again").await;
    assert!(handle.routees().iter().all(|r| !old.contains(r)));
}

// =================================================================================
// 9. Races on two workers (S5, S14, S15, S29, S30, S31, S32, S33)
// =================================================================================

const RUNS: usize = 20;

/// Ids of the dead letters of messages of type `M` received so far, by `id`.
fn drain_letters<M: 'static>(
    dead: &mut tapio::Subscription<DeadLetter>,
    id: impl Fn(M) -> Option<u64>,
    into: &mut Vec<u64>,
) {
    while let Some(letter) = dead.try_recv() {
        if let Some(n) = letter.take_message::<M>().and_then(&id) {
            into.push(n);
        }
    }
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

/// S29, S30, S14, S5, S31: offers into a fail-on-overflow mailbox never fail it, while
/// tells from another task overflow it into restarts: every offer is accepted and
/// handled in order, every tell handled or lettered `MailboxFull`, once (20 runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s29_s30_s14_offers_ride_through_restarts_a_fail_mailbox_takes_from_overflowing_tells() {
    for run in 0..RUNS {
        let system = ActorSystem::new("fail-race").unwrap();
        let mut dead = every_letter(&system);
        let handled = Arc::new(Mutex::new(Vec::<u64>::new()));
        let seen = handled.clone();
        let actor = system
            .spawn_with(
                Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
                    seen.lock().unwrap().push(n)
                }))
                .on_failure::<tapio::MailboxOverflow>(
                    SupervisorStrategy::restart()
                        .with_limit(u32::MAX, Duration::from_secs(1))
                        .unwrap(),
                ),
                "overflowing",
                MailboxConfig::bounded(4, OverflowStrategy::Fail).unwrap(),
            )
            .unwrap();
        let teller = {
            let actor = actor.clone();
            tokio::spawn(async move {
                for i in 0..300_u64 {
                    actor.tell(i);
                    if i.is_multiple_of(16) {
                        tokio::task::yield_now().await;
                    }
                }
            })
        };
        let offerer = {
            let actor = actor.clone();
            tokio::spawn(async move {
                let mut refused = 0;
                for i in 0..300_u64 {
                    if !actor.offer(10_000 + i).await {
                        refused += 1;
                    }
                }
                refused
            })
        };
        timeout(T, teller).await.unwrap().unwrap();
        assert_eq!(
            timeout(T, offerer).await.unwrap().unwrap(),
            0,
            "run {run}: an offer refused"
        );
        let mut lettered = Vec::new();
        let deadline = Instant::now() + T;
        loop {
            drain_letters::<u64>(&mut dead, Some, &mut lettered);
            if handled.lock().unwrap().len() + lettered.len() >= 600 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "run {run}: {} handled, {} lettered of 600",
                handled.lock().unwrap().len(),
                lettered.len()
            );
            tokio::time::sleep(ms(2)).await;
        }
        let got = handled.lock().unwrap().clone();
        assert!(
            lettered.iter().all(|n| *n < 10_000),
            "run {run}: an offer lettered: {lettered:?}"
        );
        let offers: Vec<u64> = got.iter().copied().filter(|n| *n >= 10_000).collect();
        assert_eq!(
            offers,
            (10_000..10_300).collect::<Vec<_>>(),
            "run {run}: offers in order"
        );
        let tells: Vec<u64> = got.iter().copied().filter(|n| *n < 10_000).collect();
        assert!(
            tells.windows(2).all(|w| w[0] < w[1]),
            "run {run}: tells in order"
        );
        let mut all_tells: Vec<u64> = tells.iter().chain(&lettered).copied().collect();
        all_tells.sort();
        assert_eq!(
            all_tells,
            (0..300).collect::<Vec<_>>(),
            "run {run}: each tell once"
        );
        timeout(T, system.terminate()).await.unwrap();
    }
}

/// S33, S15, S4: a stop racing the end of a blocking call: `PostStop` comes once and
/// is the last thing the actor does; what the handler does after the call happens
/// before it or never (20 runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s33_s15_a_stop_racing_a_blocking_calls_end_leaves_nothing_after_post_stop() {
    for run in 0..RUNS {
        let system = ActorSystem::new("blocking-race").unwrap();
        let log = new_log();
        let (for_handler, for_signal) = (log.clone(), log.clone());
        let actor = system
            .spawn(
                Behaviors::receive_async(async move |ctx, n: u64| -> Result<(), Failure> {
                    let got = ctx.run_blocking(move || n + 1).await?;
                    push(&for_handler, format!("after {got}"));
                    Ok(())
                })
                .on_signal(move |_ctx, signal| {
                    if matches!(signal, Signal::PostStop) {
                        push(&for_signal, "post-stop");
                    }
                }),
                "racing",
            )
            .unwrap();
        let mut probe = TestProbe::<String>::new(&system);
        probe.watch(&actor);
        for n in 0..3 {
            actor.tell(n);
        }
        if run % 2 == 1 {
            tokio::task::yield_now().await;
        }
        system.stop(&actor).unwrap();
        probe.expect_terminated(&actor, T).await;
        let got = entries(&log);
        assert_eq!(
            got.last().map(String::as_str),
            Some("post-stop"),
            "run {run}: {got:?}"
        );
        assert_eq!(
            got.iter().filter(|e| *e == "post-stop").count(),
            1,
            "run {run}: {got:?}"
        );
        let afters: Vec<&String> = got.iter().filter(|e| e.starts_with("after")).collect();
        let want: Vec<String> = (1..=afters.len()).map(|n| format!("after {n}")).collect();
        assert_eq!(
            afters,
            want.iter().collect::<Vec<_>>(),
            "run {run}: in order, a prefix"
        );
        // Nothing more comes once the call has surely ended.
        tokio::time::sleep(ms(20)).await;
        assert_eq!(entries(&log), got, "run {run}: something after PostStop");
        timeout(T, system.terminate()).await.unwrap();
    }
}

/// S32, S29, S31, S5: a group of three bounded drop-new routees fed through the
/// router by four tasks: every message is handled or lettered `MailboxFull` naming a
/// routee, exactly once, and each routee sees each task's messages in order (20 runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s32_s29_a_group_of_bounded_routees_fed_by_four_tasks_accounts_every_message() {
    for run in 0..RUNS {
        let system = ActorSystem::new("group-race").unwrap();
        let mut dead = every_letter(&system);
        let handled = Arc::new(Mutex::new(Vec::<(usize, u64)>::new()));
        let routees: Vec<ActorRef<u64>> = (0..3)
            .map(|r| {
                let seen = handled.clone();
                system
                    .spawn_with(
                        Behaviors::receive_message(move |n: u64| seen.lock().unwrap().push((r, n))),
                        &format!("r{r}"),
                        MailboxConfig::bounded(2, OverflowStrategy::DropNew).unwrap(),
                    )
                    .unwrap()
            })
            .collect();
        let router = system
            .spawn(Routers::group(routees.clone()).unwrap(), "group")
            .unwrap();
        let tasks: Vec<_> = (0..4_u64)
            .map(|t| {
                let router = router.clone();
                tokio::spawn(async move {
                    for i in 0..100 {
                        router.tell(t * 1000 + i);
                        if i.is_multiple_of(8) {
                            tokio::task::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            timeout(T, task).await.unwrap().unwrap();
        }
        let paths: BTreeSet<String> = routees.iter().map(|r| r.path().to_string()).collect();
        let mut lettered = Vec::new();
        let deadline = Instant::now() + T;
        loop {
            while let Some(letter) = dead.try_recv() {
                assert!(
                    paths.contains(&letter.recipient().to_string()),
                    "run {run}: {}",
                    describe(&letter)
                );
                assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull, "run {run}");
                lettered.push(letter.take_message::<u64>().unwrap());
            }
            if handled.lock().unwrap().len() + lettered.len() >= 400 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "run {run}: not all accounted for"
            );
            tokio::time::sleep(ms(2)).await;
        }
        let got = handled.lock().unwrap().clone();
        for r in 0..3 {
            for t in 0..4_u64 {
                let seen: Vec<u64> = got
                    .iter()
                    .filter(|(at, n)| *at == r && n / 1000 == t)
                    .map(|(_, n)| *n)
                    .collect();
                assert!(
                    seen.windows(2).all(|w| w[0] < w[1]),
                    "run {run}: out of order"
                );
            }
        }
        let mut all: Vec<u64> = got.iter().map(|(_, n)| *n).chain(lettered).collect();
        all.sort();
        let want: Vec<u64> = (0..4)
            .flat_map(|t| (0..100).map(move |i| t * 1000 + i))
            .collect();
        assert_eq!(all, want, "run {run}: each message once");
        timeout(T, system.terminate()).await.unwrap();
    }
}

/// S21, S23, S11, S14, S32: asks through a pool whose routees fail and restart
/// under them, from two tasks: an ask whose own handler fails is `Unanswered` at
/// once; every other one, queued across the restart, is answered by the next
/// incarnation; none waits for its deadline (20 runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s21_s23_s32_asks_through_a_pool_of_restarting_routees_are_answered_or_unanswered_at_once()
{
    for run in 0..RUNS {
        let system = ActorSystem::new("pool-asks").unwrap();
        let pool = Routers::pool(2, || {
            Behaviors::supervise(Behaviors::receive_message(|job: Job| {
                if job.n.is_multiple_of(7) {
                    return Err(Boom);
                }
                job.reply_to.tell(job.n * 2);
                Ok(())
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart()
                    .with_limit(u32::MAX, Duration::from_secs(1))
                    .unwrap(),
            )
        })
        .unwrap();
        let router = system.spawn(pool, "askers").unwrap();
        let started = Instant::now();
        let tasks: Vec<_> = (0..2_u64)
            .map(|t| {
                let router = router.clone();
                tokio::spawn(async move {
                    let asks: Vec<_> = (1..=50_u64)
                        .map(|i| {
                            let n = t * 100 + i;
                            let ask = router
                                .ask_with(move |reply_to| Job { n, reply_to })
                                .timeout(Duration::from_secs(60));
                            async move { (n, ask.await) }
                        })
                        .collect();
                    let mut out = Vec::new();
                    for ask in asks {
                        out.push(ask.await);
                    }
                    out
                })
            })
            .collect();
        for task in tasks {
            for (n, asked) in timeout(T, task).await.unwrap().unwrap() {
                if n.is_multiple_of(7) {
                    assert!(
                        matches!(asked, Err(AskError::Unanswered { .. })),
                        "run {run}: ask {n}: {asked:?}"
                    );
                } else {
                    assert_eq!(asked, Ok(n * 2), "run {run}: ask {n}");
                }
            }
        }
        assert!(started.elapsed() < T, "run {run}: {:?}", started.elapsed());
        timeout(T, system.terminate()).await.unwrap();
    }
}
