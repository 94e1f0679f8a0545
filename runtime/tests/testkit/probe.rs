//! The test probe: each expectation passing, and failing with a message that says
//! what was expected, what came instead, and after how long (S48).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;

const SECOND: Duration = Duration::from_secs(1);

#[message]
#[derive(Debug, PartialEq)]
pub struct Note(u32);

/// An actor that forwards every `Note` to `to`.
fn relay(to: ActorRef<Note>) -> Behavior<Note> {
    Behaviors::receive_message(move |note: Note| to.tell(note)).into()
}

// S48: a message within a bound, returned to the test.
#[tapio::test(start_paused = true)]
async fn expect_message_returns_the_message(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    let relay = system
        .spawn(relay(probe.actor_ref().clone()), "relay")
        .unwrap();
    relay.tell(Note(1));
    assert_eq!(probe.expect_message(SECOND).await, Note(1));
}

#[tapio::test(start_paused = true)]
#[should_panic(expected = "expected a message within 250ms, but nothing arrived within 250ms")]
async fn expect_message_fails_when_nothing_arrives(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    probe.expect_message(Duration::from_millis(250)).await;
}

#[tapio::test(start_paused = true)]
async fn expect_message_where_checks_the_next_message(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    probe.actor_ref().tell(Note(7));
    let note = probe.expect_message_where(SECOND, |n| n.0 > 5).await;
    assert_eq!(note, Note(7));
}

#[tapio::test(start_paused = true)]
#[should_panic(
    expected = "expected a message matching the predicate within 1s, but Note(3) arrived after"
)]
async fn expect_message_where_fails_on_a_message_that_does_not_match(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    probe.actor_ref().tell(Note(3));
    probe.expect_message_where(SECOND, |n| n.0 > 5).await;
}

#[tapio::test(start_paused = true)]
async fn expect_no_message_passes_in_silence(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    probe.expect_no_message(Duration::from_secs(10)).await;
}

#[tapio::test(start_paused = true)]
#[should_panic(expected = "expected no message for 1s, but Note(9) arrived after")]
async fn expect_no_message_fails_on_a_message(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    probe.actor_ref().tell(Note(9));
    probe.expect_no_message(SECOND).await;
}

#[tapio::test(start_paused = true)]
async fn receive_messages_returns_n_in_order(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    let relay = system
        .spawn(relay(probe.actor_ref().clone()), "relay")
        .unwrap();
    for n in 0..5 {
        relay.tell(Note(n));
    }
    let notes = probe.receive_messages(5, SECOND).await;
    assert_eq!(notes, (0..5).map(Note).collect::<Vec<_>>());
}

#[tapio::test(start_paused = true)]
#[should_panic(expected = "expected 3 messages within 1s (got 2 of them), but nothing arrived")]
async fn receive_messages_fails_when_too_few_arrive(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    probe.actor_ref().tell(Note(1));
    probe.actor_ref().tell(Note(2));
    probe.receive_messages(3, SECOND).await;
}

// S48: the termination of a watched actor.
#[tapio::test(start_paused = true)]
async fn expect_terminated_sees_a_watched_actor_stop(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    let once = system
        .spawn(
            Behaviors::receive_message(|_: Note| Behaviors::stopped()),
            "once",
        )
        .unwrap();
    probe.watch(&once);
    once.tell(Note(0));
    probe.expect_terminated(&once, SECOND).await;
}

#[tapio::test(start_paused = true)]
#[should_panic(expected = "within 500ms, but nothing arrived within 500ms")]
async fn expect_terminated_fails_when_the_actor_lives_on(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    let alive = system.spawn(Behaviors::ignore::<Note>(), "alive").unwrap();
    probe.watch(&alive);
    probe
        .expect_terminated(&alive, Duration::from_millis(500))
        .await;
}

#[tapio::test(start_paused = true)]
#[should_panic(expected = "but Terminated(tapio://")]
async fn expect_terminated_fails_when_another_actor_stops_first(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    let first = system
        .spawn(
            Behaviors::receive_message(|_: Note| Behaviors::stopped()),
            "first",
        )
        .unwrap();
    let second = system.spawn(Behaviors::ignore::<Note>(), "second").unwrap();
    probe.watch(&first);
    probe.watch(&second);
    first.tell(Note(0));
    probe.expect_terminated(&second, SECOND).await;
}

// A zero bound looks once, without waiting: with nothing there it fails at once.
#[tapio::test]
#[should_panic(expected = "nothing arrived within 0ns")]
async fn a_zero_bound_does_not_wait(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    probe.expect_message(Duration::ZERO).await;
}

// An absurd bound is capped by the probe's `max_wait`, so nothing hangs. Under the
// paused clock the capped wait takes no real time; the message gives the cap.
#[tapio::test(start_paused = true)]
#[should_panic(expected = "nothing arrived within 2s")]
async fn an_absurd_bound_is_capped(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system).with_max_wait(Duration::from_secs(2));
    probe.expect_message(Duration::MAX).await;
}

// A probe whose system terminates fails its pending expectation with a clear
// message, instead of waiting out its bound.
#[tapio::test(start_paused = true)]
#[should_panic(expected = "but the probe stopped after 0ns: its actor system terminated")]
async fn a_probe_whose_system_terminated_fails_its_expectation(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    system.terminate().await;
    probe.expect_message(Duration::from_secs(3600)).await;
}

// An expectation already waiting when the system terminates fails then, not at its
// bound: the failure reports the wait so far (half a second), not the hour.
#[tapio::test(start_paused = true)]
#[should_panic(expected = "but the probe stopped after 500ms: its actor system terminated")]
async fn a_waiting_expectation_fails_when_its_system_terminates(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    let terminating = system.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        terminating.terminate().await;
    });
    probe.expect_message(Duration::from_secs(3600)).await;
}

// Silence from a probe that can no longer receive anything proves nothing: it fails.
#[tapio::test(start_paused = true)]
#[should_panic(expected = "expected no message for 1s, but the probe stopped")]
async fn expect_no_message_fails_once_the_system_has_terminated(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    system.terminate().await;
    probe.expect_no_message(SECOND).await;
}

#[tapio::test(start_paused = true)]
#[should_panic(expected = "but the probe stopped after 0ns: its actor system terminated")]
async fn expect_terminated_fails_once_the_system_has_terminated(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    let target = system.spawn(Behaviors::ignore::<Note>(), "target").unwrap();
    system.terminate().await;
    // The target stopped too, but the probe was not watching it: there is
    // nothing to expect, and the probe says why.
    probe.expect_terminated(&target, SECOND).await;
}

// `receive_messages` reports the whole wait when it fails, not the last message's.
#[tapio::test(start_paused = true)]
#[should_panic(
    expected = "expected 2 messages within 1s (got 1 of them), but nothing arrived within 1s"
)]
async fn receive_messages_reports_the_whole_wait(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    let late = probe.actor_ref().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        late.tell(Note(1));
    });
    probe.receive_messages(2, SECOND).await;
}

// Even an absurd cap is capped: no probe waits more than an hour.
#[tapio::test]
async fn an_absurd_cap_is_capped_too(system: ActorSystem) {
    let probe = TestProbe::<Note>::new(&system).with_max_wait(Duration::MAX);
    assert_eq!(probe.max_wait(), TestProbe::<Note>::LONGEST_MAX_WAIT);
    assert_eq!(probe.max_wait(), Duration::from_secs(3600));
}

// S48: no termination for a while: passing in silence, failing on an end.
#[tapio::test(start_paused = true)]
async fn expect_no_termination_passes_while_watched_actors_live(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    let alive = system.spawn(Behaviors::ignore::<Note>(), "alive").unwrap();
    probe.watch(&alive);
    probe.expect_no_termination(SECOND).await;
}

#[tapio::test(start_paused = true)]
#[should_panic(expected = "expected no Terminated for 1s, but Terminated(tapio://")]
async fn expect_no_termination_fails_on_an_end(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    let once = system
        .spawn(
            Behaviors::receive_message(|_: Note| Behaviors::stopped()),
            "once",
        )
        .unwrap();
    probe.watch(&once);
    once.tell(Note(0));
    probe.expect_no_termination(SECOND).await;
}

// A zero bound on a probe whose system has terminated still says so: it is not a
// timeout, and silence proves nothing there either.
#[tapio::test(start_paused = true)]
#[should_panic(expected = "expected no message for 0ns, but the probe stopped after 0ns")]
async fn a_zero_bound_on_a_dead_probe_fails_too(system: ActorSystem) {
    let mut probe = TestProbe::<Note>::new(&system);
    system.terminate().await;
    probe.expect_no_message(Duration::ZERO).await;
}

// S48 + S51: a probe watching a message adapter watches its owner (an adapter
// stops with it), and its end names the adapter.
#[tapio::test]
async fn a_probe_watching_an_adapter_hears_its_owner_stop(system: ActorSystem) {
    let (adapter_tx, mut adapter_rx) = tokio::sync::mpsc::unbounded_channel();
    let owner = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let words: ActorRef<String> = ctx.message_adapter(|word: String| word.len() as u64);
                let _ = adapter_tx.send(words);
                Behaviors::ignore()
            }),
            "owner",
        )
        .unwrap();
    let adapter = tokio::time::timeout(Duration::from_secs(5), adapter_rx.recv())
        .await
        .unwrap()
        .unwrap();
    let mut probe = TestProbe::<Note>::new(&system);
    probe.watch(&adapter);
    system.stop(&owner).unwrap();
    probe
        .expect_terminated(&adapter, Duration::from_secs(5))
        .await;
}
