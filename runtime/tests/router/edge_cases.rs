//! Round robin after earlier and later routees stop, a restarting routee keeping its
//! place, a full routee's dead letter, and a group losing its routees (S32).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_cases::*;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason, MailboxConfig, OverflowStrategy};
use tokio::sync::Semaphore;
use tokio::time::timeout;

// ---------------------------------------------------------------------------------
// Routers
// ---------------------------------------------------------------------------------

#[message]
enum Job {
    Work(u64, ActorRef<(String, u64)>),
    Quit,
    Crash,
}

fn routee() -> Behavior<Job> {
    Behaviors::receive(|ctx, job: Job| match job {
        Job::Work(n, to) => {
            to.tell((ctx.path().name().to_owned(), n));
            Behaviors::same()
        }
        Job::Quit => Behaviors::stopped(),
        Job::Crash => panic!("routee crash"),
    })
    .into()
}

/// Send `Work(n)` for each `n` in `ns` and return who did each, by `n`.
async fn route(
    router: &ActorRef<Job>,
    probe: &mut TestProbe<(String, u64)>,
    ns: std::ops::RangeInclusive<u64>,
) -> Vec<String> {
    let count = ns.clone().count();
    for n in ns {
        router.tell(Job::Work(n, probe.actor_ref().clone()));
    }
    let mut done = probe.receive_messages(count, T).await;
    done.sort_by_key(|(_, n)| *n);
    done.into_iter().map(|(who, _)| who).collect()
}

// S32: strict round-robin carries on from where it was when a routee before the
// rotation's position leaves.
#[tapio::test(start_paused = true)]
async fn s32_round_robin_after_an_earlier_routee_stops(system: ActorSystem) {
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let pool = Routers::pool(3, routee).unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "pool").unwrap();
    assert_eq!(
        route(&router, &mut probe, 1..=3).await,
        ["routee-1", "routee-2", "routee-3"]
    );
    router.tell(Job::Quit); // to routee-1; next in turn is routee-2
    eventually(|| handle.routees().len() == 2).await;
    assert_eq!(
        route(&router, &mut probe, 4..=7).await,
        ["routee-2", "routee-3", "routee-2", "routee-3"]
    );
}

// S32: the same when the routee that leaves comes after the rotation's position; and
// when the last routee stops, the router stops.
#[tapio::test(start_paused = true)]
async fn s32_round_robin_after_a_later_routee_stops_then_router_ends(system: ActorSystem) {
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let pool = Routers::pool(3, routee).unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "pool").unwrap();
    probe.watch(&router);
    assert_eq!(route(&router, &mut probe, 1..=1).await, ["routee-1"]);
    router.tell(Job::Quit); // to routee-2; next in turn is routee-3
    eventually(|| handle.routees().len() == 2).await;
    assert_eq!(
        route(&router, &mut probe, 2..=5).await,
        ["routee-3", "routee-1", "routee-3", "routee-1"]
    );
    router.tell(Job::Quit);
    router.tell(Job::Quit);
    probe.expect_terminated(&router, T).await;
}

// S32: a routee's supervision is its own: a routee that restarts keeps its place in
// the rotation, and the router does not notice.
#[tapio::test(start_paused = true)]
async fn s32_restarting_routee_keeps_its_place(system: ActorSystem) {
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let pool = Routers::pool(2, || {
        Behaviors::supervise(routee()).on_failure::<Panicked>(SupervisorStrategy::restart())
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "pool").unwrap();
    probe.watch(&router);
    assert_eq!(route(&router, &mut probe, 1..=1).await, ["routee-1"]);
    router.tell(Job::Crash); // routee-2 restarts
    assert_eq!(
        route(&router, &mut probe, 2..=5).await,
        ["routee-1", "routee-2", "routee-1", "routee-2"]
    );
    assert_eq!(handle.routees().len(), 2);
    probe.expect_no_termination(Duration::from_millis(50)).await;
}

#[message]
enum GatedJob {
    Work(u64, ActorRef<(String, u64)>),
}

// S32 + S29: a routee whose bounded mailbox is full gets the message dead-lettered;
// the rotation goes on, strictly.
#[tapio::test(start_paused = true)]
async fn s32_full_routee_gets_a_dead_letter_and_rotation_goes_on(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let in_gate = gate.clone();
    let pool = Routers::pool(2, move || {
        let gate = in_gate.clone();
        Behaviors::receive_async(async move |ctx, GatedJob::Work(n, to)| {
            if n == 1 {
                to.tell(("started".to_owned(), 0));
                gate.acquire().await.unwrap().forget();
            }
            to.tell((ctx.path().name().to_owned(), n));
        })
    })
    .unwrap()
    .routee_mailbox(MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap());
    let router = system.spawn(pool, "pool").unwrap();
    let me = probe.actor_ref().clone();
    router.tell(GatedJob::Work(1, me.clone()));
    assert_eq!(probe.expect_message(T).await, ("started".to_owned(), 0));
    for n in 2..=6 {
        router.tell(GatedJob::Work(n, me.clone()));
    }
    // The router hands on 2..=6 in one go: each routee holds one queued message,
    // so 4, 5 and 6 find their routee's mailbox full, and stay theirs.
    let mut refused = Vec::new();
    while refused.len() < 3 {
        let letter = timeout(T, letters.recv()).await.unwrap().unwrap();
        if !letter.recipient().name().starts_with("routee-") {
            continue;
        }
        assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull);
        let Some(GatedJob::Work(n, _)) = letter.take_message::<GatedJob>() else {
            panic!("a letter without its job");
        };
        refused.push((letter.recipient().name().to_owned(), n));
    }
    refused.sort_by_key(|(_, n)| *n);
    let refused: Vec<(&str, u64)> = refused.iter().map(|(w, n)| (w.as_str(), *n)).collect();
    assert_eq!(refused, [("routee-2", 4), ("routee-1", 5), ("routee-2", 6)]);
    gate.add_permits(1);
    let mut done = probe.receive_messages(3, T).await;
    done.sort_by_key(|(_, n)| *n);
    let who: Vec<(&str, u64)> = done.iter().map(|(w, n)| (w.as_str(), *n)).collect();
    assert_eq!(who, [("routee-1", 1), ("routee-2", 2), ("routee-1", 3)]);
    probe.expect_no_message(Duration::from_millis(50)).await;
}

// S32 (group): a group router over actors spawned elsewhere drops a routee that
// stops, rotates over the rest, and stops once the last one has.
#[tapio::test(start_paused = true)]
async fn s32_group_router_loses_routees_then_stops(system: ActorSystem) {
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let routees: Vec<ActorRef<Job>> = (1..=3)
        .map(|i| system.spawn(routee(), &format!("member-{i}")).unwrap())
        .collect();
    let router = system
        .spawn(Routers::group(routees.clone()).unwrap(), "group")
        .unwrap();
    probe.watch(&router);
    assert_eq!(
        route(&router, &mut probe, 1..=3).await,
        ["member-1", "member-2", "member-3"]
    );
    let mut ends = TestProbe::<u64>::new(&system);
    ends.watch(&routees[1]);
    system.stop(&routees[1]).unwrap();
    ends.expect_terminated(&routees[1], T).await;
    // With the clock paused, time moves only once every task is idle: the router
    // has heard of it by then.
    tokio::time::sleep(Duration::from_millis(10)).await;
    let who = route(&router, &mut probe, 4..=7).await;
    assert!(!who.contains(&"member-2".to_owned()), "{who:?}");
    assert_eq!(who, ["member-1", "member-3", "member-1", "member-3"]);
    probe.expect_no_termination(Duration::from_millis(10)).await;
    system.stop(&routees[0]).unwrap();
    system.stop(&routees[2]).unwrap();
    probe.expect_terminated(&router, T).await;
}
