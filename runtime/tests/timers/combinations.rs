//! Timers behind bounded mailboxes: a waiting tick is kept, an offer waits behind a
//! queued tick, and fixed-rate catch-up is not refused by a bound of one (S25, S29,
//! S30).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::combinations::*;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason, MailboxConfig, OverflowStrategy};
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout};

/// Everything a probe receives from now until `within` has passed (for a stream that
/// may never go quiet, such as a repeating timer's).
async fn receive_for<M: Message>(probe: &mut TestProbe<M>, within: Duration) -> Vec<M> {
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return out;
        }
        match probe.receive_message(left).await {
            Some(message) => out.push(message),
            None => return out,
        }
    }
}

#[message]
#[derive(Clone)]
enum Pulse {
    Tick,
    Block,
    Direct(u64),
}

/// A behavior whose timers `start` sets up, reporting `tick`, `d{n}`, and `blocked`
/// (then waiting for `gate`) on `Block`.
/// A [`pulsing`] actor on `system` named `name`, reporting to `probe`, whose timers
/// `start` sets; and the gate its `Block` waits on, closed.
fn spawn_pulsing(
    system: &ActorSystem,
    probe: &TestProbe<String>,
    name: &str,
    mailbox: MailboxConfig,
    start: impl Fn(&tapio::TimerScheduler<Pulse>) + Send + Sync + 'static,
) -> (ActorRef<Pulse>, Arc<Semaphore>) {
    let gate = Arc::new(Semaphore::new(0));
    let actor = system
        .spawn_with(
            pulsing(probe.actor_ref().clone(), gate.clone(), start),
            name,
            mailbox,
        )
        .unwrap();
    (actor, gate)
}

fn pulsing(
    report: ActorRef<String>,
    gate: Arc<Semaphore>,
    start: impl Fn(&tapio::TimerScheduler<Pulse>) + Send + Sync + 'static,
) -> Behavior<Pulse> {
    Behaviors::with_timers(move |timers| {
        start(&timers);
        let (report, gate) = (report.clone(), gate.clone());
        Behaviors::receive_message_async(async move |pulse: Pulse| match pulse {
            Pulse::Tick => report.tell("tick".to_owned()),
            Pulse::Block => {
                report.tell("blocked".to_owned());
                gate.acquire().await.unwrap().forget();
            }
            Pulse::Direct(n) => report.tell(format!("d{n}")),
        })
    })
}

// S25 + S29 + S31: a fixed-delay timer's tick waits in a full drop-oldest mailbox
// when a newer message comes. A tick is never pushed out (the `MailboxConfig` docs):
// the newer message is taken beyond the bound, the tick is handled first, nothing is
// dead-lettered, and once the actor catches up, ticks come again.
#[tapio::test(start_paused = true)]
async fn s25_s29_a_drop_oldest_mailbox_keeps_a_waiting_tick(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let (actor, gate) = spawn_pulsing(
        &system,
        &probe,
        "beating",
        bounded(1, OverflowStrategy::DropOldest),
        |timers| {
            timers
                .start_fixed_delay("beat", Pulse::Tick, Duration::from_millis(10))
                .unwrap();
        },
    );
    assert_eq!(probe.expect_message(T).await, "tick");
    actor.tell(Pulse::Block);
    assert_eq!(probe.expect_message(T).await, "blocked");
    // The next tick comes due and waits in the mailbox, taking its one place.
    tokio::time::sleep(Duration::from_millis(50)).await;
    actor.tell(Pulse::Direct(7)); // taken beyond the bound: the tick stays
    gate.add_permits(1);
    let next = receive_for(&mut probe, Duration::from_millis(5)).await;
    assert!(next.contains(&"d7".to_owned()), "{next:?}");
    let later = receive_for(&mut probe, Duration::from_millis(200)).await;
    let ticks = later.iter().filter(|l| *l == "tick").count();
    assert!(
        ticks >= 5,
        "the fixed-delay timer stalled: {ticks} ticks in 200 ms ({next:?} then {later:?})"
    );
    let letters = letters_within(&mut letters, Duration::from_millis(10)).await;
    let pushed_out = letters
        .iter()
        .filter(|l| l.reason() == &DeadLetterReason::PushedOut)
        .count();
    assert_eq!(
        next.first().map(String::as_str),
        Some("tick"),
        "the waiting tick is handled first: {next:?}"
    );
    assert_eq!(pushed_out, 0, "nothing is pushed out: {letters:?}");
}

// S25 + S29 + S30: a single timer's tick takes the one place of a bounded mailbox
// while it waits ("while queued they take room like a message"): an offer waits
// behind it, and the tick is handled first.
#[tapio::test(start_paused = true)]
async fn s25_s30_an_offer_waits_behind_a_queued_tick(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let (actor, gate) = spawn_pulsing(
        &system,
        &probe,
        "ticking",
        bounded(1, OverflowStrategy::DropNew),
        |timers| {
            timers.start_single_timer("once", Pulse::Tick, Duration::from_millis(10));
        },
    );
    actor.tell(Pulse::Block);
    assert_eq!(probe.expect_message(T).await, "blocked");
    tokio::time::sleep(Duration::from_millis(50)).await; // the tick is queued
    let mut offer = actor.offer(Pulse::Direct(1));
    assert!(
        poll_once(&mut offer).is_pending(),
        "the tick holds the room"
    );
    actor.tell(Pulse::Direct(2)); // refused: the tick holds the room
    let refused = letter_within(&mut letters, T).await;
    assert_eq!(refused.reason(), &DeadLetterReason::MailboxFull);
    assert!(matches!(
        refused.take_message::<Pulse>(),
        Some(Pulse::Direct(2))
    ));
    gate.add_permits(1);
    assert!(timeout(T, offer).await.unwrap());
    assert_eq!(probe.receive_messages(2, T).await, ["tick", "d1"]);
}

// S25 + S29: a fixed-rate timer sends the ticks missed during a stall one after
// another; a bound of one does not refuse them (ticks are never refused by the
// bound), so the actor gets the catch-up, and nothing is dead-lettered.
#[tapio::test(start_paused = true)]
async fn s25_s29_fixed_rate_catch_up_is_not_refused_by_a_bound_of_one(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let (actor, gate) = spawn_pulsing(
        &system,
        &probe,
        "rating",
        bounded(1, OverflowStrategy::DropNew),
        |timers| {
            timers
                .start_fixed_rate("rate", Pulse::Tick, Duration::from_millis(10))
                .unwrap();
        },
    );
    assert_eq!(probe.expect_message(T).await, "tick");
    actor.tell(Pulse::Block);
    assert_eq!(probe.expect_message(T).await, "blocked");
    tokio::time::sleep(Duration::from_millis(100)).await; // about nine ticks missed
    gate.add_permits(1);
    let deadline = Instant::now() + Duration::from_millis(25);
    let mut ticks = 0;
    while let Some(line) = probe.receive_message(deadline - Instant::now()).await {
        assert_eq!(line, "tick");
        ticks += 1;
    }
    assert!(
        ticks >= 7,
        "fixed rate behind a bound of one: {ticks} ticks, expected the catch-up"
    );
    let refused = letters_within(&mut letters, Duration::from_millis(1)).await;
    assert!(refused.is_empty(), "ticks refused: {refused:?}");
}
