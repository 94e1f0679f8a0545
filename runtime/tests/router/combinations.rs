//! Routers with other features: bounded routees under broadcast, shrinking with queued
//! work, asks through a router, blocking routees, groups of adapters, failing bounded
//! routees, the behavior kit and probes as routees, and a router's own bound (S23,
//! S28-S33, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::combinations::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, TestProbe};
use tapio::{
    AskError, DeadLetter, DeadLetterReason, MailboxConfig, MailboxOverflow, OverflowStrategy,
};
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout};

// ---------------------------------------------------------------------------------
// Routers in combination (S21, S23, S29, S32, S33, S34)
// ---------------------------------------------------------------------------------

#[message]
#[derive(Clone)]
enum Cast {
    N(u64, ActorRef<(String, u64)>),
}

// S32 + S29 + S31: a broadcast pool whose routees have a bound of one: the routee
// that is busy refuses the copies that do not fit (each one dead letter naming that
// routee); the others get every copy.
#[tapio::test(start_paused = true)]
async fn s32_s29_broadcast_into_bounded_routees_counts_each_copy(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let in_gate = gate.clone();
    let pool = Routers::pool(3, move || {
        let gate = in_gate.clone();
        Behaviors::receive_async(async move |ctx, Cast::N(n, to)| {
            let me = ctx.path().name().to_owned();
            if me == "routee-2" && n == 1 {
                to.tell(("blocked".to_owned(), 0));
                gate.acquire().await.unwrap().forget();
            }
            to.tell((me, n));
        })
    })
    .unwrap()
    .broadcast()
    .routee_mailbox(bounded(1, OverflowStrategy::DropNew));
    let handle = pool.handle();
    let router = system.spawn(pool, "casts").unwrap();
    let me = probe.actor_ref().clone();
    let mut seen: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for n in 1..=4 {
        router.tell(Cast::N(n, me.clone()));
        // Paced: the two free routees report each copy before the next is sent.
        let expected = if n == 1 { 3 } else { 2 };
        for (who, m) in probe.receive_messages(expected, T).await {
            seen.entry(who).or_default().push(m);
        }
    }
    let routee2 = handle.routees()[1].clone();
    let mut refused = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(50)).await {
        assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull, "{letter}");
        assert_eq!(letter.recipient(), routee2.path(), "{letter}");
        let Some(Cast::N(n, _)) = letter.take_message::<Cast>() else {
            panic!("{letter}");
        };
        refused.push(n);
    }
    assert_eq!(refused, [3, 4], "routee-2 holds 2 and refuses 3 and 4");
    gate.add_permits(1);
    for (who, m) in probe.receive_messages(2, T).await {
        seen.entry(who).or_default().push(m);
    }
    assert_eq!(seen["routee-1"], [1, 2, 3, 4]);
    assert_eq!(seen["routee-3"], [1, 2, 3, 4]);
    assert_eq!(seen["routee-2"], [1, 2]);
    assert_eq!(seen["blocked"], [0]);
    probe.expect_no_message(Duration::from_millis(50)).await;
}

// S32 + S31: shrinking a pool whose routees have work queued: each message the
// removed routees had queued is one `RecipientStopped` letter naming its routee; the
// routee that stays does all that comes after.
#[tapio::test(start_paused = true)]
async fn s32_s31_shrinking_dead_letters_queued_work_once(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let in_gate = gate.clone();
    let pool = Routers::pool(3, move || {
        let gate = in_gate.clone();
        Behaviors::receive_async(async move |ctx, Cast::N(n, to)| {
            if n <= 3 {
                to.tell(("started".to_owned(), n));
                gate.acquire().await.unwrap().forget();
            }
            to.tell((ctx.path().name().to_owned(), n));
        })
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "shrinking").unwrap();
    let me = probe.actor_ref().clone();
    for n in 1..=9 {
        router.tell(Cast::N(n, me.clone()));
    }
    assert_eq!(
        probe.receive_messages(3, T).await.len(),
        3,
        "each routee blocks"
    );
    let routees = handle.routees();
    assert_eq!(routees.len(), 3);
    ends.watch(&routees[1]);
    ends.watch(&routees[2]);
    handle.resize(1).unwrap();
    ends.expect_terminated(&routees[1], T).await;
    ends.expect_terminated(&routees[2], T).await;
    router.tell(Cast::N(10, me.clone()));
    router.tell(Cast::N(11, me.clone()));
    gate.add_permits(10);
    let done = probe.receive_messages(5, T).await;
    assert_eq!(
        done,
        [1, 4, 7, 10, 11].map(|n| ("routee-1".to_owned(), n)),
        "the one left does the rest"
    );
    let mut dead: Vec<(String, u64)> = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(100)).await {
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::RecipientStopped,
            "{letter}"
        );
        let Some(Cast::N(n, _)) = letter.take_message::<Cast>() else {
            panic!("{letter}");
        };
        dead.push((letter.recipient().name().to_owned(), n));
    }
    dead.sort();
    assert_eq!(
        dead,
        [
            ("routee-2".to_owned(), 5),
            ("routee-2".to_owned(), 8),
            ("routee-3".to_owned(), 6),
            ("routee-3".to_owned(), 9)
        ],
        "queued work of the removed routees, once each"
    );
    probe.expect_no_message(Duration::from_millis(50)).await;
}

#[message]
enum Quest {
    Ask(u64, ActorRef<u64>),
}

// S32 + S21 + S23: asks through a router are answered by the routee that gets them;
// when that routee fails (stops) with one request in hand and another queued, both
// asks fail at once, not at their deadline; the pool goes on with the other routee.
#[tapio::test(start_paused = true)]
async fn s32_s23_asks_through_a_router_fail_fast_when_their_routee_stops(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (report, in_gate) = (probe.actor_ref().clone(), gate.clone());
    let pool = Routers::pool(2, move || {
        let (gate, report) = (in_gate.clone(), report.clone());
        Behaviors::receive_message_async(async move |Quest::Ask(n, to)| -> Result<(), Boom> {
            if n == 1 {
                report.tell(0);
                gate.acquire().await.unwrap().forget();
                return Err(Boom);
            }
            to.tell(n * 10);
            Ok(())
        })
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "askers").unwrap();
    let deadline = Duration::from_secs(10);
    let a1 = router.ask_with(|to| Quest::Ask(1, to)).timeout(deadline); // routee-1, held
    let a2 = router.ask_with(|to| Quest::Ask(2, to)).timeout(deadline); // routee-2
    let a3 = router.ask_with(|to| Quest::Ask(3, to)).timeout(deadline); // routee-1, queued
    assert_eq!(a2.await.unwrap(), 20);
    assert_eq!(probe.expect_message(T).await, 0);
    let started = Instant::now();
    gate.add_permits(1); // routee-1 fails and stops
    let r1 = a1.await;
    let r3 = a3.await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "the asks waited {:?}: {r1:?} {r3:?}",
        started.elapsed()
    );
    for result in [&r1, &r3] {
        assert!(
            matches!(
                result,
                Err(AskError::TargetTerminated { .. } | AskError::Unanswered { .. })
            ),
            "{result:?}"
        );
    }
    eventually(|| handle.routees().len() == 1).await;
    let a4 = router.ask_with(|to| Quest::Ask(4, to)).timeout(deadline);
    assert_eq!(timeout(T, a4).await.unwrap().unwrap(), 40);
    drop(gate);
}

#[message]
enum Chore {
    Block(ActorRef<String>),
    Ping(u64, ActorRef<String>),
}

/// A pool of two whose routees run `Block` as a blocking call (on a std channel) and
/// answer `Ping` with their name: a blocked routee does not hold up its sibling, and
/// stopping the router while one routee is inside its blocking call is prompt; the
/// ping that waited behind the call is one dead letter.
async fn blocking_routee(system: &ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(system);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let pool = Routers::pool(2, move || {
        let released = released.clone();
        Behaviors::receive_async(
            async move |ctx, chore: Chore| -> Result<(), tapio::Failure> {
                match chore {
                    Chore::Block(to) => {
                        let waiting = released.lock().unwrap().take();
                        if let Some(waiting) = waiting {
                            to.tell("blocking".to_owned());
                            let _ = ctx
                                .run_blocking(move || waiting.recv_timeout(Duration::from_secs(10)))
                                .await?;
                            to.tell("unblocked".to_owned());
                        }
                    }
                    Chore::Ping(n, to) => to.tell(format!("{} {n}", ctx.path().name())),
                }
                Ok(())
            },
        )
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "blockers").unwrap();
    probe.watch(&router);
    let me = probe.actor_ref().clone();
    router.tell(Chore::Block(me.clone())); // routee-1
    assert_eq!(probe.expect_message(T).await, "blocking");
    router.tell(Chore::Ping(1, me.clone())); // routee-2
    assert_eq!(probe.expect_message(T).await, "routee-2 1");
    router.tell(Chore::Ping(2, me.clone())); // routee-1: waits behind the call
    router.tell(Chore::Ping(3, me.clone())); // routee-2
    assert_eq!(probe.expect_message(T).await, "routee-2 3");
    let routee1 = handle.routees()[0].clone();
    let started = std::time::Instant::now();
    system.stop(&router).unwrap();
    probe.expect_terminated(&router, T).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the stop waited for the blocking call: {:?}",
        started.elapsed()
    );
    let _ = release.send(());
    let letter = loop {
        let letter = letter_within(&mut letters, T).await;
        if letter.recipient() == routee1.path() {
            break letter;
        }
    };
    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
    assert!(matches!(
        letter.take_message::<Chore>(),
        Some(Chore::Ping(2, _))
    ));
    let more: Vec<_> = letters_within(&mut letters, Duration::from_millis(100))
        .await
        .into_iter()
        .filter(|l| l.recipient() == routee1.path())
        .collect();
    assert!(more.is_empty(), "one letter: {more:?}");
    probe.expect_no_message(Duration::from_millis(10)).await;
}

// S32 + S33 + S19 (current thread).
#[tapio::test]
async fn s32_s33_a_blocking_routee_holds_up_neither_siblings_nor_a_stop(system: ActorSystem) {
    blocking_routee(&system).await;
}

// S32 + S33 + S19 (two workers).
#[tapio::test(worker_threads = 2)]
async fn s32_s33_a_blocking_routee_holds_up_neither_siblings_nor_a_stop_on_two_workers(
    system: ActorSystem,
) {
    blocking_routee(&system).await;
}

// Failed before the router watched an adapter's owner: a dead owner's adapter stayed
// in the rotation and the router never stopped.
// S32 + S28 + S18: a group router over message adapters. An adapter stops with its
// owner; the router watches its routees, so an adapter whose owner stopped leaves the
// group, and when the last one has, the router stops.
#[tapio::test(start_paused = true)]
async fn s32_s28_a_group_of_adapters_follows_their_owners(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(1_000));
    let (owner1, adapter1) = spawn_adapter_owner(
        &system,
        &probe,
        &gate,
        "owner-1",
        MailboxConfig::unbounded(),
    )
    .await;
    let (owner2, adapter2) = spawn_adapter_owner(
        &system,
        &probe,
        &gate,
        "owner-2",
        MailboxConfig::unbounded(),
    )
    .await;
    let router = system
        .spawn(Routers::group([adapter1, adapter2]).unwrap(), "adapters")
        .unwrap();
    ends.watch(&router);
    for n in 1..=2 {
        router.tell(Foreign(n));
    }
    let mut got = probe.receive_messages(2, T).await;
    got.sort();
    assert_eq!(got, ["a1", "a2"]);
    ends.watch(&owner1);
    system.stop(&owner1).unwrap();
    ends.expect_terminated(&owner1, T).await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    for n in 3..=4 {
        router.tell(Foreign(n));
    }
    let got = drain(&mut probe, Duration::from_millis(100)).await;
    assert_eq!(
        got,
        ["a3", "a4"],
        "the adapter of the stopped owner left the group"
    );
    ends.watch(&owner2);
    system.stop(&owner2).unwrap();
    ends.expect_terminated(&owner2, T).await;
    ends.expect_terminated(&router, T).await;
}

#[message]
enum Paced {
    Job(u64, ActorRef<(String, u64)>),
}

// S32 + S29 + S14: a pool whose routees have a `Fail` bound of one and restart on
// `MailboxOverflow`: an overflow restarts that routee in place, the refused job is
// one `MailboxFull` letter, the job it had queued survives the restart, and the
// rotation goes on strictly over both.
#[tapio::test(start_paused = true)]
async fn s32_s29_a_failing_bounded_routee_restarts_in_place(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let setups = Arc::new(AtomicUsize::new(0));
    let (in_gate, counted) = (gate.clone(), setups.clone());
    let pool = Routers::pool(2, move || {
        let (in_gate, counted) = (in_gate.clone(), counted.clone());
        Behaviors::supervise(Behaviors::setup(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            let gate = in_gate.clone();
            Behaviors::receive_async(async move |ctx, Paced::Job(n, to)| {
                if n == 1 {
                    to.tell(("blocked".to_owned(), 1));
                    gate.acquire().await.unwrap().forget();
                }
                to.tell((ctx.path().name().to_owned(), n));
            })
        }))
        .on_failure::<MailboxOverflow>(SupervisorStrategy::restart())
    })
    .unwrap()
    .routee_mailbox(bounded(1, OverflowStrategy::Fail));
    let router = system.spawn(pool, "paced").unwrap();
    ends.watch(&router);
    let me = probe.actor_ref().clone();
    router.tell(Paced::Job(1, me.clone())); // routee-1 blocks
    assert_eq!(probe.expect_message(T).await, ("blocked".to_owned(), 1));
    router.tell(Paced::Job(2, me.clone())); // routee-2
    assert_eq!(probe.expect_message(T).await, ("routee-2".to_owned(), 2));
    router.tell(Paced::Job(3, me.clone())); // routee-1: queued, its mailbox is full
    router.tell(Paced::Job(4, me.clone())); // routee-2
    assert_eq!(probe.expect_message(T).await, ("routee-2".to_owned(), 4));
    router.tell(Paced::Job(5, me.clone())); // routee-1: refused, and it fails
    let refused = letter_within(&mut letters, T).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::MailboxFull,
        "{refused}"
    );
    assert_eq!(refused.recipient().name(), "routee-1");
    assert!(matches!(
        refused.take_message::<Paced>(),
        Some(Paced::Job(5, _))
    ));
    gate.add_permits(10);
    eventually(|| setups.load(Ordering::SeqCst) == 3).await;
    let mut rest = drain(&mut probe, Duration::from_millis(100)).await;
    rest.retain(|(who, n)| !(who == "routee-1" && *n == 1)); // the interrupted one, if it finished
    assert_eq!(
        rest,
        [("routee-1".to_owned(), 3)],
        "the queued job survived the restart"
    );
    router.tell(Paced::Job(6, me.clone())); // routee-2
    router.tell(Paced::Job(7, me.clone())); // routee-1
    let mut next = probe.receive_messages(2, T).await;
    next.sort_by_key(|(_, n)| *n);
    assert_eq!(
        next,
        [("routee-2".to_owned(), 6), ("routee-1".to_owned(), 7)],
        "the rotation goes on"
    );
    ends.expect_no_termination(Duration::from_millis(10)).await;
    assert!(
        letters_within(&mut letters, Duration::from_millis(10))
            .await
            .is_empty()
    );
}

// ---------------------------------------------------------------------------------
// The testkit on combinations (S48)
// ---------------------------------------------------------------------------------

// S48 + S32: the behavior test kit runs a pool router: it records the routees it
// spawns and watches, and what the router hands on waits in each routee's own kit,
// in strict rotation.
#[test]
fn s48_s32_the_behavior_kit_runs_a_pool_router() {
    let mut kit = BehaviorTestKit::new(Routers::pool(2, Behaviors::ignore::<u64>).unwrap());
    let effects = kit.effects();
    for name in ["routee-1", "routee-2"] {
        assert!(
            effects.contains(&Effect::Spawned { name: name.into() }),
            "{name} in {effects:?}"
        );
    }
    let watched = effects
        .iter()
        .filter(|e| matches!(e, Effect::Watched { .. }))
        .count();
    assert_eq!(watched, 2, "{effects:?}");
    for n in 1..=5_u64 {
        kit.run(n).unwrap();
    }
    let mut r1 = kit.child_kit::<u64>("routee-1").unwrap().unwrap();
    let mut r2 = kit.child_kit::<u64>("routee-2").unwrap().unwrap();
    assert_eq!(r1.take_queued(), [1, 3, 5]);
    assert_eq!(r2.take_queued(), [2, 4]);
}

// S48 + S32: probes as the routees of a consistent-hashing group: every key lands on
// one probe, each probe gets its messages in the order sent, and none is lost.
#[tapio::test(start_paused = true)]
async fn s48_s32_probes_as_group_routees(system: ActorSystem) {
    let mut p1 = TestProbe::<u64>::new(&system);
    let mut p2 = TestProbe::<u64>::new(&system);
    let router = system
        .spawn(
            Routers::group([p1.actor_ref().clone(), p2.actor_ref().clone()])
                .unwrap()
                .consistent_hash(|n: &u64| n % 3),
            "probes",
        )
        .unwrap();
    for n in 0..30_u64 {
        router.tell(n);
    }
    let mut by_key: BTreeMap<u64, BTreeSet<u8>> = BTreeMap::new();
    let got1 = drain(&mut p1, Duration::from_millis(50)).await;
    let got2 = drain(&mut p2, Duration::from_millis(50)).await;
    assert_eq!(got1.len() + got2.len(), 30);
    for n in &got1 {
        by_key.entry(n % 3).or_default().insert(1);
    }
    for n in &got2 {
        by_key.entry(n % 3).or_default().insert(2);
    }
    assert!(
        by_key.values().all(|probes| probes.len() == 1),
        "each key on one probe: {by_key:?}"
    );
    assert!(got1.windows(2).all(|w| w[0] < w[1]) && got2.windows(2).all(|w| w[0] < w[1]));
}

// ---------------------------------------------------------------------------------
// More combinations: a router's own bound, asks in a machine's stash, offers racing
// a stop (S23, S29-S32, S34)
// ---------------------------------------------------------------------------------

// S32 + S29 + S30 + S31: a router's own mailbox, bounded: tells that find it full
// are dead letters naming the router (not a routee), `offer` waits for room in it
// instead, and what gets in is routed in strict rotation, carrying on from where it
// was.
#[tapio::test(start_paused = true)]
async fn s32_s30_a_routers_own_bound_refuses_tells_and_paces_offers(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let pool = Routers::pool(2, || {
        Behaviors::receive(|ctx, Paced::Job(n, to)| to.tell((ctx.path().name().to_owned(), n)))
    })
    .unwrap();
    let router = system
        .spawn_with(
            pool,
            "bounded-router",
            bounded(2, OverflowStrategy::DropNew),
        )
        .unwrap();
    let me = probe.actor_ref().clone();
    // One turn of the scheduler: the router has started and is idle.
    tokio::time::sleep(Duration::from_millis(1)).await;
    // Told in one go, without yielding: the router cannot run in between.
    for n in 1..=5 {
        router.tell(Paced::Job(n, me.clone()));
    }
    let mut refused = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(50)).await {
        assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull, "{letter}");
        assert_eq!(letter.recipient(), router.path(), "{letter}");
        let Some(Paced::Job(n, _)) = letter.take_message::<Paced>() else {
            panic!("{letter}");
        };
        refused.push(n);
    }
    assert_eq!(refused, [3, 4, 5]);
    for n in 6..=11 {
        assert!(
            timeout(T, router.offer(Paced::Job(n, me.clone())))
                .await
                .unwrap()
        );
    }
    let mut done = probe.receive_messages(8, T).await;
    done.sort_by_key(|(_, n)| *n);
    let who: Vec<(&str, u64)> = done.iter().map(|(w, n)| (w.as_str(), *n)).collect();
    assert_eq!(
        who,
        [
            ("routee-1", 1),
            ("routee-2", 2),
            ("routee-1", 6),
            ("routee-2", 7),
            ("routee-1", 8),
            ("routee-2", 9),
            ("routee-1", 10),
            ("routee-2", 11)
        ]
    );
    assert!(
        letters_within(&mut letters, Duration::from_millis(10))
            .await
            .is_empty()
    );
}
