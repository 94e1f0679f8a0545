//! The behavior test kit as the guides show it: `run_async`, messages a behavior tells
//! itself, a child's kit, and `receive_messages` (S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::guide_claims::*;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, Outcome, TestInbox, TestKitError, TestProbe};

// S48: `expect_effect` with nothing recorded fails too, and says so.
#[test]
#[should_panic(expected = "but the behavior recorded []")]
fn s48_expect_effect_fails_when_nothing_was_recorded() {
    let mut kit = BehaviorTestKit::new(Behaviors::ignore::<u64>());
    kit.run(1_u64).unwrap();
    kit.expect_effect(Effect::Spawned { name: "x".into() });
}

// S48: an inbox's failed expectation names the inbox, what was expected, and what
// came (or that nothing was sent).
#[test]
#[should_panic(expected = "/user/replies: expected 2, but the next message was 1")]
fn s48_inbox_expectation_names_the_message_that_came() {
    let mut inbox = TestInbox::<u64>::named("replies").unwrap();
    inbox.actor_ref().tell(1_u64);
    inbox.expect_message(2);
}

#[test]
#[should_panic(expected = "/user/inbox: expected 1, but nothing was sent")]
fn s48_inbox_expectation_says_when_nothing_was_sent() {
    let mut inbox = TestInbox::<u64>::new();
    assert!(!inbox.has_messages());
    inbox.expect_message(1);
}

/// Doubles what it is told after one turn of the scheduler.
fn slow_doubler(to: ActorRef<u64>) -> Behavior<u64> {
    Behaviors::receive_message_async(async move |n: u64| {
        tokio::task::yield_now().await;
        to.tell(n * 2);
    })
    .into()
}

// S48: `run` polls an async handler once; one that awaits something outside the actor
// fails the test with a message that says to use `run_async`.
#[test]
#[should_panic(expected = "did not finish in one poll: use `run_async` inside a runtime")]
fn s48_run_refuses_an_async_handler_that_waits() {
    let inbox = TestInbox::<u64>::new();
    let mut kit = BehaviorTestKit::new(slow_doubler(inbox.actor_ref().clone()));
    let _ = kit.run(21_u64);
}

// S48: `run_async` awaits the handler to its end, even across a long sleep under a
// paused clock, and an async handler that answers `stopped` stops the kit.
#[tokio::test(start_paused = true)]
async fn s48_run_async_awaits_the_handler_to_its_end() {
    let mut inbox = TestInbox::<u64>::new();
    let mut kit = BehaviorTestKit::new(slow_doubler(inbox.actor_ref().clone()));
    assert_eq!(kit.run_async(21_u64).await, Ok(Outcome::Same));
    inbox.expect_message(42);

    let to = inbox.actor_ref().clone();
    let sleeper = Behaviors::receive_message_async(async move |n: u64| {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        to.tell(n);
        Behaviors::stopped()
    });
    let mut kit = BehaviorTestKit::new(sleeper);
    let started = tokio::time::Instant::now();
    assert_eq!(kit.run_async(5_u64).await, Ok(Outcome::Stopped));
    assert!(started.elapsed() >= Duration::from_secs(3600));
    assert!(!kit.is_alive());
    assert_eq!(inbox.messages(), [5]);
}

// S48: what the behavior tells itself waits in the kit's own queue: `take_queued`
// shows it without running it, `run_queued` runs it in order and counts.
#[test]
fn s48_kit_queues_what_the_behavior_tells_itself() {
    let mut seen = TestInbox::<u64>::new();
    let to = seen.actor_ref().clone();
    let countdown = Behaviors::receive(move |ctx, n: u64| {
        to.tell(n);
        if n > 0 {
            ctx.self_ref().tell(n - 1);
        }
    });
    let mut kit = BehaviorTestKit::new(countdown);
    kit.run(3_u64).unwrap();
    assert_eq!(kit.take_queued(), [2]);
    assert_eq!(kit.run_queued(), Ok(0), "take_queued took it");
    kit.self_ref().tell(3_u64);
    assert_eq!(kit.run_queued(), Ok(4));
    assert_eq!(seen.messages(), [3, 3, 2, 1, 0]);
    assert!(kit.take_queued().is_empty());
}

// S6, S48: the four answers of a handler as the kit reports them; a switch takes the
// next message; `stopped` runs PostStop and the kit refuses more, saying why.
#[test]
#[should_panic(expected = "the behavior under test has stopped and takes no more messages")]
fn s6_kit_reports_same_unhandled_switched_and_stopped() {
    let mut log = TestInbox::<String>::new();
    let to = log.actor_ref().clone();
    let second = {
        let said = to.clone();
        Behaviors::receive_message(move |n: u64| {
            said.tell(format!("second {n}"));
            if n == 0 {
                Behaviors::stopped()
            } else {
                Behaviors::same()
            }
        })
        .on_signal({
            let to = to.clone();
            move |_, signal| {
                if matches!(signal, Signal::PostStop) {
                    to.tell("post stop".to_string());
                }
                Behaviors::same()
            }
        })
    };
    let first = Behaviors::receive_message(move |n: u64| match n {
        1 => Behaviors::same(),
        2 => Behaviors::unhandled(),
        _ => Behavior::from(second.clone()),
    });
    let mut kit = BehaviorTestKit::new(first);
    assert_eq!(kit.run(1_u64), Ok(Outcome::Same));
    assert_eq!(kit.run(2_u64), Ok(Outcome::Unhandled));
    assert_eq!(kit.run(3_u64), Ok(Outcome::Switched));
    assert_eq!(kit.run(1_u64), Ok(Outcome::Same));
    assert_eq!(kit.run(0_u64), Ok(Outcome::Stopped));
    assert!(!kit.is_alive());
    assert_eq!(log.messages(), ["second 1", "second 0", "post stop"]);
    let _ = kit.run(5_u64);
}

// S48: a child's kit: messages sent to the child before its kit was taken wait in
// its queue; asking with the wrong protocol, or twice, is a typed error whose text
// says what to do.
#[test]
fn s48_child_kit_keeps_what_was_sent_and_refuses_misuse() {
    let mut seen = TestInbox::<u64>::new();
    let to = seen.actor_ref().clone();
    let parent = Behaviors::receive(move |ctx, n: u64| -> Result<(), tapio::SpawnError> {
        let to = to.clone();
        let child = ctx.spawn(
            Behaviors::receive_message(move |m: u64| to.tell(m + 1)),
            "c",
        )?;
        child.tell(n);
        Ok(())
    });
    let mut kit = BehaviorTestKit::new(parent);
    kit.run(5_u64).unwrap();

    let wrong = kit.child_kit::<String>("c").expect_err("a wrong protocol");
    assert!(
        matches!(wrong, TestKitError::WrongProtocol { .. }),
        "{wrong}"
    );
    assert!(wrong.to_string().contains("has protocol `u64`"), "{wrong}");

    let mut child = kit.child_kit::<u64>("c").unwrap().unwrap();
    assert_eq!(child.run_queued(), Ok(1));
    seen.expect_message(6);

    let twice = kit.child_kit::<u64>("c").expect_err("taken already");
    assert_eq!(
        twice,
        TestKitError::AlreadyTaken { name: "c".into() },
        "{twice}"
    );
    let nobody = kit.child_kit::<u64>("d").expect_err("no such child");
    assert!(
        nobody.to_string().contains("check the `Spawned` effects"),
        "{nobody}"
    );
}

// S48: `receive_messages` takes exactly `n`, in order, and leaves the rest for the
// next expectation; asking for none waits for nothing; `receive_message` returns
// `None` after its whole bound in silence without failing.
#[tapio::test(start_paused = true)]
async fn s48_receive_messages_takes_exactly_n(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    for n in 1..=4_u64 {
        probe.actor_ref().tell(n);
    }
    assert_eq!(probe.receive_messages(3, WAIT).await, [1, 2, 3]);
    assert!(probe.receive_messages(0, WAIT).await.is_empty());
    assert_eq!(probe.expect_message(WAIT).await, 4);
    let started = tokio::time::Instant::now();
    assert_eq!(probe.receive_message(Duration::from_secs(2)).await, None);
    assert_eq!(started.elapsed(), Duration::from_secs(2));
}

// S48: a predicate that rejects the next message fails with that message in the text.
#[tapio::test(start_paused = true)]
#[should_panic(expected = "expected a message matching the predicate within 5s, but 4 arrived")]
async fn s48_expect_message_where_names_the_rejected_message(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    probe.actor_ref().tell(4_u64);
    probe.expect_message_where(WAIT, |n| n % 2 == 1).await;
}

// S48: a setup that fails makes `BehaviorTestKit::new` fail the test with the setup's
// error in the message (`try_new` returns it).
#[test]
#[should_panic(expected = "the behavior under test failed to start")]
fn s48_kit_new_reports_a_failing_setup() {
    let twice = || {
        Behaviors::setup(|ctx: &mut ActorContext<u64>| {
            let _: ActorRef<u64> = ctx.spawn(Behaviors::ignore(), "same")?;
            let _: ActorRef<u64> = ctx.spawn(Behaviors::ignore(), "same")?;
            Ok::<_, tapio::SpawnError>(Behaviors::ignore())
        })
    };
    let failure = BehaviorTestKit::try_new(twice()).unwrap_err();
    assert!(failure.is::<tapio::SpawnError>(), "{failure}");
    let _ = BehaviorTestKit::new(twice());
}
