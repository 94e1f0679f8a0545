//! Asks at the edges of their lifetime: zero and tiny deadlines, a builder or handler
//! that drops the reply ref, an ask dropped or cancelled mid-wait, answers in the order
//! asked, and nothing leaked when the target stops holding the reply ref (S5, S21, S22,
//! S23, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{T, ms};
use std::sync::Mutex;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{LeakReport, TestProbe};
use tapio::{AskError, DeadLetter, DeadLetterReason, Subscription};
use tokio::time::{Instant, sleep, timeout};

/// The first dead letter whose reason is `reason`, within `T`.
async fn letter_with(
    letters: &mut Subscription<DeadLetter>,
    reason: DeadLetterReason,
) -> DeadLetter {
    timeout(T, async {
        loop {
            let letter = letters.recv().await.expect("the event stream is open");
            if *letter.reason() == reason {
                return letter;
            }
        }
    })
    .await
    .expect("a dead letter with that reason in time")
}

// =================================================================================
// 3. Ask
// =================================================================================

fn echo() -> Behavior<(u64, ActorRef<u64>)> {
    Behaviors::receive_message(|(n, to): (u64, ActorRef<u64>)| to.tell(n)).into()
}

/// Answers after 50 ms of tokio time.
fn slow_echo() -> Behavior<(u64, ActorRef<u64>)> {
    Behaviors::receive_message_async(async move |(n, to): (u64, ActorRef<u64>)| {
        sleep(ms(50)).await;
        to.tell(n);
    })
    .into()
}

// S21 + S22 + Ask docs: the deadline is "counted from when the ask starts to wait:
// its first poll, or one turn of the scheduler later when the answer did not come in
// that turn". On a current-thread runtime an idle actor that answers at once answers
// within that turn, so even a zero deadline gets the answer, every time.
#[tapio::test(start_paused = true)]
async fn s22_a_zero_deadline_takes_an_answer_given_in_the_first_turn(system: ActorSystem) {
    let echo = system.spawn(echo(), "echo").unwrap();
    for i in 0..20_u64 {
        let answer = timeout(T, echo.ask_with(|to| (i, to)).timeout(Duration::ZERO))
            .await
            .expect("no hang");
        assert_eq!(answer, Ok(i), "ask {i}");
    }
}

// S22: a deadline of one nanosecond on an actor that answers after 50 ms times out
// with exactly that deadline and the target's path; the answer that comes later is an
// `AskEnded` dead letter carrying its value, addressed to the ask's promise.
#[tapio::test(start_paused = true)]
async fn s22_a_tiny_deadline_times_out_and_the_late_answer_is_ask_ended(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let slow = system.spawn(slow_echo(), "slow").unwrap();
    let started = Instant::now();
    let asked = timeout(
        T,
        slow.ask_with(|to| (4, to)).timeout(Duration::from_nanos(1)),
    )
    .await
    .expect("no hang");
    assert_eq!(
        asked,
        Err(AskError::Timeout {
            target: slow.path().clone(),
            after: Duration::from_nanos(1)
        })
    );
    assert!(started.elapsed() < ms(2), "{:?}", started.elapsed());
    let letter = letter_with(&mut letters, DeadLetterReason::AskEnded).await;
    assert_eq!(letter.take_message::<u64>(), Some(4));
    assert!(
        letter
            .recipient()
            .to_string()
            .starts_with("/system/promises/"),
        "{}",
        letter.recipient()
    );
}

// S21 + AskError::Unanswered docs: a builder that drops the reply ref (the message
// does not carry it) still sends the message, and the ask fails with `Unanswered` at
// once, not at its 30 s deadline.
#[tapio::test(start_paused = true)]
async fn s21_ask_with_a_builder_that_drops_the_reply_ref_is_unanswered_at_once(
    system: ActorSystem,
) {
    let mut seen = TestProbe::<u64>::new(&system);
    let to = seen.actor_ref().clone();
    let sink = system
        .spawn(Behaviors::receive_message(move |n: u64| to.tell(n)), "sink")
        .unwrap();
    let started = Instant::now();
    let asked: Result<u64, AskError> = timeout(
        T,
        sink.ask_with(|_reply: ActorRef<u64>| 7_u64)
            .timeout(Duration::from_secs(30)),
    )
    .await
    .expect("well before the ask's own deadline");
    assert_eq!(
        asked,
        Err(AskError::Unanswered {
            target: sink.path().clone()
        })
    );
    assert!(started.elapsed() < ms(2), "{:?}", started.elapsed());
    assert_eq!(seen.expect_message(T).await, 7);
}

#[message]
enum Keeper {
    Hold(ActorRef<u64>),
    Forget,
}

/// An ask of `keeper` to hold its reply ref (deadline 30 s), awaited on a task that
/// returns its outcome and how long it took.
fn timed_hold(
    keeper: &ActorRef<Keeper>,
) -> tokio::task::JoinHandle<(Result<u64, AskError>, Duration)> {
    let ask = keeper
        .ask_with(Keeper::Hold)
        .timeout(Duration::from_secs(30));
    tokio::spawn(async move {
        let started = Instant::now();
        (ask.await, started.elapsed())
    })
}

fn keeper() -> Behavior<Keeper> {
    Behaviors::setup(|_| {
        let held = Mutex::new(Vec::new());
        Behaviors::receive_message(move |m: Keeper| match m {
            Keeper::Hold(to) => held.lock().unwrap().push(to),
            Keeper::Forget => held.lock().unwrap().clear(),
        })
    })
}

// S21 + AskError::Unanswered: a target that keeps the reply ref and later drops it
// without answering fails the ask when it drops it (2 s in), not at the deadline.
#[tapio::test(start_paused = true)]
async fn s21_a_reply_ref_kept_then_dropped_is_unanswered_when_dropped(system: ActorSystem) {
    let keeper = system.spawn(keeper(), "keeper").unwrap();
    let waiting = timed_hold(&keeper);
    sleep(Duration::from_secs(2)).await;
    keeper.tell(Keeper::Forget);
    let (asked, took) = timeout(T, waiting).await.unwrap().unwrap();
    assert_eq!(
        asked,
        Err(AskError::Unanswered {
            target: keeper.path().clone()
        })
    );
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_millis(2010),
        "{took:?}"
    );
}

// S22 + Ask docs: "The request was sent when the ask was made". An ask dropped without
// being awaited still delivers its request; the answer, which nobody waits for, is an
// `AskEnded` dead letter with its value.
#[tapio::test(start_paused = true)]
async fn s22_an_ask_dropped_unawaited_still_sends_and_its_answer_is_ask_ended(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut seen = TestProbe::<u64>::new(&system);
    let to = seen.actor_ref().clone();
    let echo = system
        .spawn(
            Behaviors::receive_message(move |(n, reply): (u64, ActorRef<u64>)| {
                to.tell(n);
                reply.tell(n * 10);
            }),
            "echo",
        )
        .unwrap();
    drop(echo.ask_with(|reply| (3_u64, reply)));
    assert_eq!(seen.expect_message(T).await, 3);
    let letter = letter_with(&mut letters, DeadLetterReason::AskEnded).await;
    assert_eq!(letter.take_message::<u64>(), Some(30));
}

// S22 + AskFuture cancel safety: "Dropping it ends the ask: an answer that comes later
// is a dead letter." An ask cancelled by an outer timeout mid-wait leaves its answer
// as an `AskEnded` letter, and no promise waiting (the test's leak check).
#[tapio::test(start_paused = true)]
async fn s22_an_ask_cancelled_mid_wait_leaves_an_ask_ended_letter(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let slow = system.spawn(slow_echo(), "slow").unwrap();
    let outer = timeout(ms(10), slow.ask_with(|to| (8, to)).timeout(T)).await;
    assert!(outer.is_err(), "the outer timeout came first: {outer:?}");
    let letter = letter_with(&mut letters, DeadLetterReason::AskEnded).await;
    assert_eq!(letter.take_message::<u64>(), Some(8));
}

#[message(reply = u64)]
pub struct Next;

#[derive(Clone, Default)]
pub struct Sequencer(u64);

#[actor]
impl Sequencer {
    fn next(&mut self, _: Next) -> u64 {
        self.0 += 1;
        self.0
    }
}

// S5 + S21 + Ask docs: a hundred asks made one after the other are sent in that order
// (each is sent when made) and each keeps its own answer until it is awaited: awaited
// in reverse, they still hold 1..=100 in the order they were made.
#[tapio::test(start_paused = true)]
async fn s5_s21_asks_made_in_order_are_answered_in_order_whatever_the_await_order(
    system: ActorSystem,
) {
    let sequencer = system.spawn(Sequencer::default(), "sequencer").unwrap();
    let asks: Vec<_> = (0..100).map(|_| sequencer.ask(Next).timeout(T)).collect();
    let mut answers = Vec::new();
    for ask in asks.into_iter().rev() {
        answers.push(timeout(T, ask).await.expect("no hang").expect("an answer"));
    }
    answers.reverse();
    assert_eq!(answers, (1..=100).collect::<Vec<u64>>());
}

// S23 + S48: an ask whose target holds the reply ref and is then stopped fails with
// `TargetTerminated` when it stops (1 s in), not at its 30 s deadline; terminating the
// system then leaves nothing behind: no ask waiting, no timer, no task.
#[tokio::test(start_paused = true)]
async fn s23_s48_an_ask_whose_target_stopped_holding_its_reply_ref_leaks_nothing() {
    let system = ActorSystem::builder("held-then-stopped")
        .track_leaks(true)
        .build()
        .unwrap();
    let keeper = system.spawn(keeper(), "keeper").unwrap();
    let waiting = timed_hold(&keeper);
    sleep(Duration::from_secs(1)).await;
    system.stop(&keeper).unwrap();
    let (asked, took) = timeout(T, waiting).await.unwrap().unwrap();
    assert_eq!(
        asked,
        Err(AskError::TargetTerminated {
            target: keeper.path().clone()
        })
    );
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(1010),
        "{took:?}"
    );
    let report = LeakReport::after_terminating(&system).await;
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.pending_asks, Some(0));
    assert_eq!(report.pending_timers, Some(0));
}
