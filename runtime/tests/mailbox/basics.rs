//! Mailboxes (S29), `offer` (S30), and what they drop as dead letters (S31): bounded
//! mailboxes with each overflow strategy, under several producers on two workers,
//! with every message accounted for; `offer` waiting for room, cancel-safe, and
//! refused by a stopped actor; and an actor draining a long backlog that still lets
//! its neighbour on the same thread run.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::letter_within;
use std::collections::HashSet;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{
    DeadLetter, DeadLetterReason, InvalidMailbox, MailboxConfig, MailboxOverflow, OverflowStrategy,
};
use tokio::sync::{Semaphore, mpsc};

const WAIT: Duration = Duration::from_secs(10);

/// An actor whose handler reports each message it starts on, then waits for the
/// gate to open: until then its mailbox fills behind the first message.
fn gated(
    gate: Arc<Semaphore>,
    started: mpsc::UnboundedSender<u64>,
    handled: mpsc::UnboundedSender<u64>,
) -> Behavior<u64> {
    Behaviors::receive_message_async(async move |n: u64| {
        let _ = started.send(n);
        let _ = gate.acquire().await;
        let _ = handled.send(n);
    })
    .into()
}

struct Gated {
    gate: Arc<Semaphore>,
    started: mpsc::UnboundedReceiver<u64>,
    handled: mpsc::UnboundedReceiver<u64>,
}

fn spawn_gated(system: &ActorSystem, name: &str, mailbox: MailboxConfig) -> (ActorRef<u64>, Gated) {
    let gate = Arc::new(Semaphore::new(0));
    let (started_tx, started) = mpsc::unbounded_channel();
    let (handled_tx, handled) = mpsc::unbounded_channel();
    let actor = system
        .spawn_with(gated(gate.clone(), started_tx, handled_tx), name, mailbox)
        .unwrap();
    (
        actor,
        Gated {
            gate,
            started,
            handled,
        },
    )
}

impl Gated {
    async fn started(&mut self) -> u64 {
        tokio::time::timeout(WAIT, self.started.recv())
            .await
            .expect("the actor started on a message in time")
            .expect("the actor is alive")
    }

    fn open(&self) {
        self.gate.add_permits(Semaphore::MAX_PERMITS / 2);
    }

    async fn handled(&mut self) -> u64 {
        tokio::time::timeout(WAIT, self.handled.recv())
            .await
            .expect("a message was handled in time")
            .expect("the actor is alive")
    }
}

fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn s29_a_bounded_mailbox_of_no_room_is_refused_with_what_to_do() {
    let error = MailboxConfig::bounded(0, OverflowStrategy::DropNew).unwrap_err();
    assert_eq!(error, InvalidMailbox::ZeroCapacity);
    assert!(error.to_string().contains("MailboxConfig::unbounded()"));
    assert_eq!(MailboxConfig::default(), MailboxConfig::unbounded());
    assert_eq!(MailboxConfig::unbounded().capacity(), None);
    let config = MailboxConfig::bounded(3, OverflowStrategy::DropOldest).unwrap();
    assert_eq!(
        (config.capacity(), config.overflow()),
        (Some(3), OverflowStrategy::DropOldest)
    );
}

// S29: unbounded by default: a backlog far beyond any bound is handled whole, in order.
#[tapio::test]
async fn s29_unbounded_by_default_takes_a_long_backlog_in_order(system: ActorSystem) {
    let (actor, mut gated) = spawn_gated(&system, "unbounded", MailboxConfig::unbounded());
    for n in 0..10_000 {
        actor.tell(n);
    }
    assert_eq!(gated.started().await, 0);
    gated.open();
    for n in 0..10_000 {
        assert_eq!(gated.handled().await, n);
    }
}

/// Four producers on two workers tell 1,000 messages each to a gated actor with a
/// bounded mailbox of 8 and `overflow`; the gate opens when all are sent. Returns
/// what was handled and what was dead-lettered, with the letters' reasons.
async fn four_producers(
    system: &ActorSystem,
    overflow: OverflowStrategy,
) -> (HashSet<u64>, HashSet<u64>, HashSet<DeadLetterReason>) {
    const EACH: u64 = 1_000;
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(10_000)
        .unwrap();
    let mailbox = MailboxConfig::bounded(8, overflow).unwrap();
    let (actor, mut gated) = spawn_gated(system, "bounded", mailbox);
    // The first message holds the actor in its handler.
    actor.tell(u64::MAX);
    assert_eq!(gated.started().await, u64::MAX);
    let producers: Vec<_> = (0..4)
        .map(|p| {
            let actor = actor.clone();
            tokio::spawn(async move {
                for n in 0..EACH {
                    actor.tell(p * EACH + n);
                }
            })
        })
        .collect();
    for producer in producers {
        producer.await.unwrap();
    }
    gated.open();
    let mut handled = HashSet::new();
    let mut dead = HashSet::new();
    let mut reasons = HashSet::new();
    assert_eq!(gated.handled().await, u64::MAX);
    while handled.len() + dead.len() < (4 * EACH) as usize {
        tokio::select! {
            n = gated.handled() => assert!(handled.insert(n), "{n} handled twice"),
            letter = letter_within(&mut letters, WAIT) => {
                let n = letter.take_message::<u64>().expect("the letter holds the message");
                reasons.insert(letter.reason().clone());
                assert!(dead.insert(n), "{n} dead-lettered twice");
            }
        }
    }
    assert!(handled.is_disjoint(&dead));
    // Nothing more comes: every message was one or the other, once.
    assert!(letters.try_recv().is_none());
    (handled, dead, reasons)
}

// S29 + S31: drop-new under several producers: the mailbox keeps what it had, each
// refused message is a dead letter, and every message is accounted for exactly.
#[tapio::test(worker_threads = 2)]
async fn s29_drop_new_with_four_producers_accounts_for_every_message(system: ActorSystem) {
    let (handled, dead, reasons) = four_producers(&system, OverflowStrategy::DropNew).await;
    assert_eq!(handled.len(), 8, "the 8 queued while the gate was shut");
    assert_eq!(dead.len(), 4_000 - 8);
    assert_eq!(reasons, HashSet::from([DeadLetterReason::MailboxFull]));
}

// S29 + S31: drop-oldest under several producers: each newer message pushes the
// oldest out as a dead letter, and what is handled is the newest of each producer.
#[tapio::test(worker_threads = 2)]
async fn s29_drop_oldest_with_four_producers_accounts_for_every_message(system: ActorSystem) {
    let (handled, dead, reasons) = four_producers(&system, OverflowStrategy::DropOldest).await;
    assert_eq!(handled.len(), 8);
    assert_eq!(dead.len(), 4_000 - 8);
    assert_eq!(reasons, HashSet::from([DeadLetterReason::PushedOut]));
    // Whatever survived is among the last 8 each producer sent.
    for n in &handled {
        assert!(
            n % 1_000 >= 1_000 - 8,
            "{n} is older than the last eight of its producer"
        );
    }
}

// S29: with `Fail`, a tell to a full mailbox is a dead letter and the actor fails with
// `MailboxOverflow`, under its supervision: here a restart, which keeps what was
// queued, so the queued messages are still handled afterwards.
#[tapio::test]
async fn s29_fail_fails_the_actor_under_its_supervision_and_keeps_the_queue(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let gate = Arc::new(Semaphore::new(0));
    let (started_tx, started) = mpsc::unbounded_channel();
    let (handled_tx, handled) = mpsc::unbounded_channel();
    let (restarts_tx, mut restarts) = mpsc::unbounded_channel();
    let behavior = {
        let gate = gate.clone();
        Behaviors::supervise(Behaviors::setup(move |_| {
            let _ = restarts_tx.send(());
            gated(gate.clone(), started_tx.clone(), handled_tx.clone())
        }))
        .on_failure::<MailboxOverflow>(SupervisorStrategy::restart())
    };
    let mailbox = MailboxConfig::bounded(2, OverflowStrategy::Fail).unwrap();
    let actor: ActorRef<u64> = system.spawn_with(behavior, "failing", mailbox).unwrap();
    let mut gated = Gated {
        gate,
        started,
        handled,
    };
    restarts.recv().await.unwrap();
    actor.tell(0);
    assert_eq!(gated.started().await, 0);
    actor.tell(1);
    actor.tell(2);
    actor.tell(3); // the mailbox holds 1 and 2: refused, and the actor fails
    actor.tell(4); // refused too, but the failure is told once
    for expected in [3, 4] {
        let letter = letter_within(&mut letters, WAIT).await;
        assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull);
        assert_eq!(letter.take_message::<u64>(), Some(expected));
    }
    gated.open();
    assert_eq!(gated.handled().await, 0);
    // The failure restarted the actor once.
    tokio::time::timeout(WAIT, restarts.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(gated.handled().await, 1);
    assert_eq!(gated.handled().await, 2);
    assert!(restarts.try_recv().is_err());
}

// S29: with `Fail` and no supervision, the overflow stops the actor; what it still
// held becomes dead letters.
#[tapio::test]
async fn s29_fail_without_supervision_stops_the_actor(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let mailbox = MailboxConfig::bounded(1, OverflowStrategy::Fail).unwrap();
    let (actor, mut gated) = spawn_gated(&system, "stops", mailbox);
    probe.watch(&actor);
    actor.tell(0);
    assert_eq!(gated.started().await, 0);
    actor.tell(1);
    actor.tell(2);
    let refused = letter_within(&mut letters, WAIT).await;
    assert_eq!(refused.reason(), &DeadLetterReason::MailboxFull);
    assert_eq!(refused.take_message::<u64>(), Some(2));
    gated.open();
    probe.expect_terminated(&actor, WAIT).await;
    let stranded = letter_within(&mut letters, WAIT).await;
    assert_eq!(stranded.reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(stranded.take_message::<u64>(), Some(1));
}

// S30: `offer` waits while the mailbox is full and resolves once there is room; the
// strategy applies to tells only.
#[tapio::test]
async fn s30_offer_waits_for_room_then_is_accepted(system: ActorSystem) {
    let mailbox = MailboxConfig::bounded(2, OverflowStrategy::DropNew).unwrap();
    let (actor, mut gated) = spawn_gated(&system, "offers", mailbox);
    assert!(actor.offer(0_u64).await);
    assert_eq!(gated.started().await, 0);
    assert!(actor.offer(1_u64).await);
    assert!(actor.offer(2_u64).await);
    let mut third = pin!(actor.offer(3_u64));
    assert!(
        poll_once(third.as_mut()).is_pending(),
        "a full mailbox makes offer wait"
    );
    gated.open();
    assert!(tokio::time::timeout(WAIT, third).await.unwrap());
    for n in 0..4 {
        assert_eq!(gated.handled().await, n);
    }
}

// S30: a producer that offers never has more than `capacity` messages waiting (plus
// the one being handled).
#[tapio::test(worker_threads = 2)]
async fn s30_an_offering_producer_never_has_more_than_capacity_waiting(system: ActorSystem) {
    const CAPACITY: usize = 4;
    let handled = Arc::new(AtomicUsize::new(0));
    let counted = handled.clone();
    let (done_tx, mut done) = mpsc::unbounded_channel();
    let actor = system
        .spawn_with(
            Behaviors::receive_message_async(async move |n: u64| {
                tokio::task::yield_now().await;
                counted.fetch_add(1, Ordering::SeqCst);
                if n == 1_999 {
                    let _ = done_tx.send(());
                }
            }),
            "slow",
            MailboxConfig::bounded(CAPACITY, OverflowStrategy::Fail).unwrap(),
        )
        .unwrap();
    for n in 0..2_000_u64 {
        assert!(actor.offer(n).await);
        let sent = n as usize + 1;
        let waiting = sent - handled.load(Ordering::SeqCst);
        assert!(waiting <= CAPACITY + 1, "{waiting} waiting after offer {n}");
    }
    tokio::time::timeout(WAIT, done.recv())
        .await
        .unwrap()
        .unwrap();
}

// S30: an offer dropped while it waits queues nothing and gives up its place: the
// offer behind it is served.
#[tapio::test]
async fn s30_a_dropped_offer_queues_nothing_and_the_next_is_served(system: ActorSystem) {
    let mailbox = MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap();
    let (actor, mut gated) = spawn_gated(&system, "cancel", mailbox);
    actor.tell(0);
    assert_eq!(gated.started().await, 0);
    actor.tell(1);
    {
        let mut dropped = pin!(actor.offer(2_u64));
        assert!(poll_once(dropped.as_mut()).is_pending());
    }
    let mut kept = pin!(actor.offer(3_u64));
    assert!(poll_once(kept.as_mut()).is_pending());
    gated.open();
    assert!(tokio::time::timeout(WAIT, kept).await.unwrap());
    for expected in [0, 1, 3] {
        assert_eq!(gated.handled().await, expected);
    }
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&actor);
    system.stop(&actor).unwrap();
    probe.expect_terminated(&actor, WAIT).await;
    assert!(
        gated.handled.try_recv().is_err(),
        "the dropped offer's 2 never arrived"
    );
}

// S30 + S31: an offer to a stopped actor resolves at once as not accepted, and the
// message is a dead letter; one waiting when the actor stops is released the same way.
#[tapio::test]
async fn s30_offer_to_a_stopped_actor_is_refused_at_once_with_a_dead_letter(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let mailbox = MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap();
    let (actor, mut gated) = spawn_gated(&system, "stopping", mailbox);
    probe.watch(&actor);
    actor.tell(0);
    assert_eq!(gated.started().await, 0);
    actor.tell(1);
    let waiting = tokio::spawn({
        let actor = actor.clone();
        async move { actor.offer(2_u64).await }
    });
    // Stop interrupts the gated handler; the queued 1 and the waiting 2 are refused.
    system.stop(&actor).unwrap();
    probe.expect_terminated(&actor, WAIT).await;
    assert!(!tokio::time::timeout(WAIT, waiting).await.unwrap().unwrap());
    assert!(!actor.offer(3_u64).await);
    let mut refused = Vec::new();
    for _ in 0..3 {
        let letter = letter_within(&mut letters, WAIT).await;
        assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
        refused.push(letter.take_message::<u64>().unwrap());
    }
    refused.sort_unstable();
    assert_eq!(refused, [1, 2, 3]);
}

// S30: `offer_within` gives up at its deadline; the message is a dead letter saying so.
#[tapio::test(start_paused = true)]
async fn s30_offer_within_gives_up_at_its_deadline(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mailbox = MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap();
    let (actor, mut gated) = spawn_gated(&system, "deadline", mailbox);
    actor.tell(0);
    assert_eq!(gated.started().await, 0);
    actor.tell(1);
    assert!(!actor.offer_within(2_u64, Duration::from_millis(50)).await);
    let letter = letter_within(&mut letters, WAIT).await;
    assert_eq!(letter.reason(), &DeadLetterReason::OfferTimedOut);
    assert_eq!(letter.take_message::<u64>(), Some(2));
    gated.open();
    assert!(actor.offer_within(3_u64, Duration::from_secs(1)).await);
}

// S31: an actor that stops with a long backlog (read by the batch the mailbox hands
// its reader) turns every message it did not handle into a dead letter.
#[tapio::test]
async fn s31_a_backlog_left_by_a_stop_is_dead_lettered_whole(system: ActorSystem) {
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(2_000)
        .unwrap();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let actor = system
        .spawn(
            Behaviors::receive_message(move |n: u64| {
                let _ = seen_tx.send(n);
                if n == 10 {
                    Behaviors::stopped()
                } else {
                    Behaviors::same()
                }
            }),
            "backlog",
        )
        .unwrap();
    for n in 0..1_000 {
        actor.tell(n);
    }
    let mut dead = Vec::new();
    while dead.len() < 989 {
        let letter = letter_within(&mut letters, WAIT).await;
        assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
        dead.push(letter.take_message::<u64>().unwrap());
    }
    assert_eq!(dead, (11..1_000).collect::<Vec<_>>());
    for n in 0..=10 {
        assert_eq!(seen.recv().await, Some(n));
    }
}

// S29: an actor draining a backlog of a million lets a neighbour on the same thread
// run while it drains, not after: the mailbox takes tokio's cooperative budget.
#[tapio::test]
async fn s29_draining_a_long_backlog_lets_a_neighbour_run(system: ActorSystem) {
    const BACKLOG: u64 = 1_000_000;
    let neighbour_ran = Arc::new(AtomicBool::new(false));
    let ran = neighbour_ran.clone();
    let (done_tx, mut done) = mpsc::unbounded_channel();
    let actor = system
        .spawn(
            Behaviors::receive_message(move |n: u64| {
                if n == BACKLOG - 1 {
                    let _ = done_tx.send(ran.load(Ordering::SeqCst));
                }
            }),
            "drainer",
        )
        .unwrap();
    for n in 0..BACKLOG {
        actor.tell(n);
    }
    // Spawned after the backlog is queued: on this one thread it can only run if the
    // drainer yields while it drains.
    let flag = neighbour_ran.clone();
    let neighbour = tokio::spawn(async move { flag.store(true, Ordering::SeqCst) });
    let ran_before_the_end = tokio::time::timeout(Duration::from_secs(60), done.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        ran_before_the_end,
        "the neighbour waited for the whole backlog"
    );
    neighbour.await.unwrap();
}

// S29: the actor's own timer ticks are never refused by the bound: a tick that comes
// while the mailbox is full is queued, and its message handled in its turn.
#[tapio::test(start_paused = true)]
async fn s29_a_timer_tick_is_never_refused_by_a_full_mailbox(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let gate = Arc::new(Semaphore::new(0));
    let (started_tx, started) = mpsc::unbounded_channel();
    let (handled_tx, handled) = mpsc::unbounded_channel();
    let behavior = {
        let gate = gate.clone();
        Behaviors::with_timers(move |timers| {
            timers.start_single_timer("tick", 99_u64, Duration::from_millis(10));
            gated(gate.clone(), started_tx.clone(), handled_tx.clone())
        })
    };
    let mailbox = MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap();
    let actor: ActorRef<u64> = system.spawn_with(behavior, "ticking", mailbox).unwrap();
    let mut gated = Gated {
        gate,
        started,
        handled,
    };
    actor.tell(0);
    assert_eq!(gated.started().await, 0);
    actor.tell(1); // the mailbox is full from here on
    // The clock is paused: it moves to the tick at 10 ms, and only then on to 1 s.
    tokio::time::sleep(Duration::from_secs(1)).await;
    actor.tell(2);
    let refused = letter_within(&mut letters, WAIT).await;
    assert_eq!(refused.reason(), &DeadLetterReason::MailboxFull);
    assert_eq!(refused.take_message::<u64>(), Some(2));
    gated.open();
    for expected in [0, 1, 99] {
        assert_eq!(gated.handled().await, expected);
    }
}
