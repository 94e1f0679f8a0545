//! Ask: one request, one typed answer (S21), a deadline and late answers (S22), and a
//! fast failure when the target stops first (S23).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::ms;
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{LeakReport, TestProbe};
use tapio::{AskError, DeadLetter, DeadLetterReason};
use tokio::sync::watch;

const SECOND: Duration = Duration::from_secs(1);

#[message]
#[derive(Debug, PartialEq)]
pub struct Shelf {
    pub title: String,
    pub shelf: u32,
}

#[message(reply = Shelf)]
pub struct Find(pub String);

#[message]
pub struct Lookup {
    pub title: String,
    pub reply_to: ActorRef<Shelf>,
}

#[message]
pub struct Stall(pub watch::Receiver<bool>);

#[message]
pub struct Close;

/// A reference desk: answers `Find` (the typed way) and `Lookup` (the reference
/// library's way); `Stall` keeps it busy until a gate opens; `Close` stops it.
#[derive(Clone)]
struct Desk;

#[actor]
impl Desk {
    fn find(&mut self, Find(title): Find) -> Shelf {
        Shelf {
            shelf: title.len() as u32,
            title,
        }
    }

    fn lookup(&mut self, lookup: Lookup) {
        lookup.reply_to.tell(Shelf {
            shelf: lookup.title.len() as u32,
            title: lookup.title,
        });
    }

    async fn stall(&mut self, Stall(mut gate): Stall) {
        let _ = gate.wait_for(|open| *open).await;
    }

    fn close(&mut self, _: Close) -> Behavior<DeskMsg> {
        Behaviors::stopped()
    }
}

// S21: the answer's type is the one the request declares.
#[tapio::test(start_paused = true)]
async fn an_ask_resolves_to_the_declared_reply(system: ActorSystem) {
    let desk = system.spawn(Desk, "desk").unwrap();
    let shelf: Shelf = desk.ask(Find("Dune".into())).await.unwrap();
    assert_eq!(
        shelf,
        Shelf {
            title: "Dune".into(),
            shelf: 4
        }
    );
    let shelf = desk
        .ask_with(|reply_to| Lookup {
            title: "Ulysses".into(),
            reply_to,
        })
        .timeout(SECOND)
        .await
        .unwrap();
    assert_eq!(shelf.shelf, 7);
}

// S21: the reply ref is a promise under `/system/promises`, an `ActorRef` like any
// other; erased, it is a stopped actor.
#[tapio::test(start_paused = true)]
async fn the_reply_ref_is_a_promise(system: ActorSystem) {
    let mut seen = TestProbe::<String>::new(&system);
    let report = seen.actor_ref().clone();
    let spy = system
        .spawn(
            Behaviors::receive_message(move |lookup: Lookup| {
                report.tell(lookup.reply_to.to_string());
                lookup.reply_to.tell(Shelf {
                    title: lookup.title,
                    shelf: 1,
                });
            }),
            "spy",
        )
        .unwrap();
    let ask = spy.ask_with(|reply_to| Lookup {
        title: "x".into(),
        reply_to,
    });
    assert_eq!(ask.await.unwrap().shelf, 1);
    let uri = seen.expect_message(SECOND).await;
    assert!(
        uri.starts_with("tapio://the_reply_ref_is_a_promise/system/promises/"),
        "{uri}"
    );
}

// S22: no answer before the deadline is `Timeout`; the answer that comes later is a
// dead letter with its reason.
#[tapio::test(start_paused = true)]
async fn a_late_answer_times_out_and_becomes_a_dead_letter(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let desk = system.spawn(Desk, "desk").unwrap();
    let (open, gate) = watch::channel(false);
    desk.tell(Stall(gate));
    let started = tokio::time::Instant::now();
    let outcome = desk.ask(Find("Ulysses".into())).timeout(ms(50)).await;
    assert_eq!(
        outcome,
        Err(AskError::Timeout {
            target: desk.path().clone(),
            after: ms(50)
        })
    );
    assert_eq!(started.elapsed(), ms(50));
    open.send_replace(true);
    let letter = tokio::time::timeout(SECOND, letters.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(letter.reason(), &DeadLetterReason::AskEnded);
    assert_eq!(
        letter.take_message::<Shelf>(),
        Some(Shelf {
            title: "Ulysses".into(),
            shelf: 7
        })
    );
    assert!(
        letter
            .recipient()
            .to_string()
            .starts_with("/system/promises/")
    );
}

// S23: an ask watches its target: when the target stops first, the ask fails at once,
// not at its (long) deadline.
#[tapio::test(start_paused = true)]
async fn an_ask_fails_at_once_when_its_target_stops(system: ActorSystem) {
    let desk = system.spawn(Desk, "desk").unwrap();
    let (open, gate) = watch::channel(false);
    desk.tell(Stall(gate));
    // The desk will close before it reads the request.
    desk.tell(Close);
    let started = tokio::time::Instant::now();
    let ask = desk
        .ask(Find("Dune".into()))
        .timeout(Duration::from_secs(30));
    let waiting = tokio::spawn(async move { ask.await });
    tokio::task::yield_now().await;
    open.send_replace(true);
    let outcome = waiting.await.unwrap();
    assert!(
        matches!(outcome, Err(AskError::TargetTerminated { ref target }) if target == desk.path()),
        "{outcome:?}"
    );
    assert!(started.elapsed() < SECOND, "waited {:?}", started.elapsed());
}

// S23: an ask to an actor that has already stopped fails at once too.
#[tapio::test(start_paused = true)]
async fn an_ask_to_a_stopped_actor_fails_at_once(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let desk = system.spawn(Desk, "desk").unwrap();
    probe.watch(&desk);
    desk.tell(Close);
    probe.expect_terminated(&desk, SECOND).await;
    let started = tokio::time::Instant::now();
    let outcome = desk
        .ask(Find("Dune".into()))
        .timeout(Duration::from_secs(30))
        .await;
    assert!(
        matches!(outcome, Err(AskError::TargetTerminated { .. })),
        "{outcome:?}"
    );
    assert_eq!(started.elapsed(), Duration::ZERO);
}

// An ask dropped before it waits (never awaited, or given up in its first turn)
// leaves its answer a dead letter with `AskEnded`, as a late answer does.
#[tapio::test(start_paused = true)]
async fn an_ask_dropped_before_it_waits_leaves_its_answer_a_dead_letter(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let desk = system.spawn(Desk, "desk").unwrap();
    let (open, gate) = watch::channel(false);
    desk.tell(Stall(gate));
    drop(desk.ask(Find("Emma".into())));
    let mut polled_once = Box::pin(desk.ask(Find("Ulysses".into())).into_future());
    assert!(futures_poll_once(polled_once.as_mut()).is_pending());
    drop(polled_once);
    open.send_replace(true);
    for title in ["Emma", "Ulysses"] {
        let letter = tokio::time::timeout(SECOND, letters.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(letter.reason(), &DeadLetterReason::AskEnded);
        assert_eq!(
            letter.take_message::<Shelf>().map(|shelf| shelf.title),
            Some(title.to_string())
        );
    }
}

/// Poll `future` once, with a waker that does nothing.
fn futures_poll_once<F: std::future::Future>(
    future: std::pin::Pin<&mut F>,
) -> std::task::Poll<F::Output> {
    future.poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
}

// A request dropped without an answer fails the ask at once, saying so.
#[tapio::test(start_paused = true)]
async fn a_request_dropped_unanswered_fails_the_ask(system: ActorSystem) {
    let forgetful = system
        .spawn(Behaviors::receive_message(|_: Lookup| ()), "forgetful")
        .unwrap();
    let outcome = forgetful
        .ask_with(|reply_to| Lookup {
            title: "Dune".into(),
            reply_to,
        })
        .timeout(Duration::from_secs(30))
        .await;
    let error = outcome.unwrap_err();
    assert!(matches!(error, AskError::Unanswered { .. }));
    assert!(
        error
            .to_string()
            .contains("dropped the request without answering")
    );
}

// A request told rather than asked: its answer has nobody to go to, a dead letter.
#[tapio::test(start_paused = true)]
async fn the_answer_to_a_told_request_is_a_dead_letter(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let desk = system.spawn(Desk, "desk").unwrap();
    desk.tell(Find("Dune".into()));
    let letter = tokio::time::timeout(SECOND, letters.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(letter.reason(), &DeadLetterReason::NoReplyExpected);
    assert!(letter.is::<Shelf>());
}

// A second answer to one ask is a dead letter too.
#[tapio::test(start_paused = true)]
async fn a_second_answer_is_a_dead_letter(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let twice = system
        .spawn(
            Behaviors::receive_message(|lookup: Lookup| {
                lookup.reply_to.tell(Shelf {
                    title: lookup.title.clone(),
                    shelf: 1,
                });
                lookup.reply_to.tell(Shelf {
                    title: lookup.title,
                    shelf: 2,
                });
            }),
            "twice",
        )
        .unwrap();
    let first = twice
        .ask_with(|reply_to| Lookup {
            title: "a".into(),
            reply_to,
        })
        .await;
    assert_eq!(first.unwrap().shelf, 1);
    let letter = tokio::time::timeout(SECOND, letters.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(letter.reason(), &DeadLetterReason::AlreadyAnswered);
    assert_eq!(letter.take_message::<Shelf>().map(|s| s.shelf), Some(2));
}

// The leak report counts ask promises whose reply ref something kept alive.
#[tokio::test(start_paused = true)]
async fn a_kept_reply_ref_is_reported_as_a_pending_ask() {
    let system = ActorSystem::builder("hoarder")
        .track_leaks(true)
        .build()
        .unwrap();
    let mut kept = TestProbe::<ActorRef<Shelf>>::new(&system);
    let keep = kept.actor_ref().clone();
    let hoarder = system
        .spawn(
            Behaviors::receive_message(move |lookup: Lookup| {
                keep.tell(lookup.reply_to);
            }),
            "hoarder",
        )
        .unwrap();
    let outcome = hoarder
        .ask_with(|reply_to| Lookup {
            title: "Dune".into(),
            reply_to,
        })
        .timeout(ms(10))
        .await;
    assert!(matches!(outcome, Err(AskError::Timeout { .. })));
    let hoarded = kept.expect_message(SECOND).await;
    let report = LeakReport::after_terminating(&system).await;
    assert_eq!(report.pending_asks, Some(1), "{report}");
    assert!(
        report
            .to_string()
            .contains("1 ask promise(s) still waiting")
    );
    drop(hoarded);
    let report = LeakReport::after_terminating(&system).await;
    assert_eq!(report.pending_asks, Some(0), "{report}");
}

// A promise that has been answered is settled, even while a ref to it is still held:
// the leak report counts only asks still waiting for their answer.
#[tokio::test(start_paused = true)]
async fn an_answered_promise_is_not_pending_while_its_ref_is_kept() {
    let system = ActorSystem::builder("keeper")
        .track_leaks(true)
        .build()
        .unwrap();
    let mut kept = TestProbe::<ActorRef<Shelf>>::new(&system);
    let keep = kept.actor_ref().clone();
    let keeper = system
        .spawn(
            Behaviors::receive_message(move |lookup: Lookup| {
                lookup.reply_to.tell(Shelf {
                    title: lookup.title.clone(),
                    shelf: 7,
                });
                keep.tell(lookup.reply_to);
            }),
            "keeper",
        )
        .unwrap();
    let answer = keeper
        .ask_with(|reply_to| Lookup {
            title: "Dune".into(),
            reply_to,
        })
        .await
        .unwrap();
    assert_eq!(answer.shelf, 7);
    let still_held = kept.expect_message(SECOND).await;
    let report = LeakReport::after_terminating(&system).await;
    assert_eq!(report.pending_asks, Some(0), "{report}");
    drop(still_held);
}

// S23: a target that hands the reply ref on and then stops still fails the ask, as
// soon as the ask watches it (after a millisecond of waiting), not at the deadline.
#[tapio::test(start_paused = true)]
async fn an_ask_whose_reply_ref_lives_on_fails_when_its_target_stops(system: ActorSystem) {
    let mut kept = TestProbe::<ActorRef<Shelf>>::new(&system);
    let keep = kept.actor_ref().clone();
    let relay = system
        .spawn(
            Behaviors::receive_message(move |lookup: Lookup| {
                keep.tell(lookup.reply_to);
                Behaviors::stopped()
            }),
            "relay",
        )
        .unwrap();
    let started = tokio::time::Instant::now();
    let outcome = relay
        .ask_with(|reply_to| Lookup {
            title: "Dune".into(),
            reply_to,
        })
        .timeout(Duration::from_secs(30))
        .await;
    assert!(
        matches!(outcome, Err(AskError::TargetTerminated { ref target }) if target == relay.path()),
        "{outcome:?}"
    );
    assert!(started.elapsed() <= ms(1), "waited {:?}", started.elapsed());
    // The reply ref still works: its answer is a dead letter now.
    drop(kept.expect_message(SECOND).await);
}

// An answer that comes in the target's first turn settles the ask without a timer;
// one that takes longer still meets its deadline, counted from the first wait.
#[tapio::test(start_paused = true)]
async fn quick_and_slow_answers_both_arrive(system: ActorSystem) {
    let desk = system.spawn(Desk, "desk").unwrap();
    for n in 0..100_u32 {
        let shelf = desk.ask(Find("x".repeat(n as usize))).await.unwrap();
        assert_eq!(shelf.shelf, n);
    }
    let (open, gate) = watch::channel(false);
    desk.tell(Stall(gate));
    let slow = desk.ask(Find("Dune".into())).timeout(ms(500));
    let waiting = tokio::spawn(async move { slow.await });
    tokio::time::sleep(ms(100)).await;
    open.send_replace(true);
    assert_eq!(waiting.await.unwrap().unwrap().shelf, 4);
}
