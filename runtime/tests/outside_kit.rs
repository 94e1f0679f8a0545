//! Outside-in scenarios, written from the promises and the guides before running
//! them: the testkit (S48: the behavior test kit, the test inbox, the probe), the
//! event stream and dead letters (S49, S31), protocols as state machines (S34), the
//! stash (S26, S27), message adapters (S28), and behaviors (S6, S7).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tapio::events::{CapacityError, Received};
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, Outcome, TestInbox, TestKitError, TestProbe};
use tapio::{
    AskError, BoxError, DeadLetter, DeadLetterReason, DeathPact, Failure, StashOverflow,
    Subscription, TimerMode,
};
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
#[error("no child named {0}")]
pub struct Missing(String);

#[derive(Debug, thiserror::Error)]
#[error("refused on purpose: {0}")]
pub struct Refused(u64);

async fn letter(letters: &mut Subscription<DeadLetter>) -> DeadLetter {
    tokio::time::timeout(WAIT, letters.recv())
        .await
        .expect("a dead letter in time")
        .expect("the stream is open")
}

// ---------------------------------------------------------------------------------
// BehaviorTestKit and TestInbox (S48)
// ---------------------------------------------------------------------------------

#[message]
#[derive(Debug, Clone, PartialEq)]
pub enum Shop {
    Hire(String),
    Fire(String),
    Forget,
    Open,
    Close,
    Tick,
}

/// A shop that watches an outsider from its setup and shows one effect per command.
fn shop(outsider: ActorRef<u64>) -> Behavior<Shop> {
    Behaviors::setup(move |ctx: &mut ActorContext<Shop>| {
        ctx.watch(&outsider);
        let outsider = outsider.clone();
        Behaviors::receive(move |ctx, command: Shop| -> Result<(), Failure> {
            match command {
                Shop::Hire(name) => {
                    ctx.spawn(Behaviors::ignore::<u64>(), &name)
                        .map_err(Failure::new)?;
                }
                Shop::Fire(name) => {
                    let child = ctx
                        .child(&name)
                        .ok_or(Missing(name))
                        .map_err(Failure::new)?;
                    ctx.stop(&child).map_err(Failure::new)?;
                }
                Shop::Forget => ctx.unwatch(&outsider),
                Shop::Open => ctx
                    .timers()
                    .start_fixed_rate("tick", Shop::Tick, Duration::from_secs(1))
                    .map_err(Failure::new)?,
                Shop::Close => ctx.timers().cancel("tick"),
                Shop::Tick => {}
            }
            Ok(())
        })
    })
}

// S48, S7: what a setup does through its context is recorded when the kit is built,
// in the order it happened, and `effects()` takes what it returns.
#[test]
fn s48_kit_records_the_effects_of_setup_in_order() {
    let outsider = TestInbox::<u64>::named("outsider").unwrap();
    let target = outsider.actor_ref().clone();
    let mut kit = BehaviorTestKit::new(Behaviors::setup(move |ctx: &mut ActorContext<Shop>| {
        let _clerk: ActorRef<u64> = ctx.spawn(Behaviors::ignore(), "clerk")?;
        let _temp: ActorRef<u64> = ctx.spawn_anonymous(Behaviors::ignore())?;
        ctx.watch(&target);
        ctx.timers()
            .start_single_timer("open", Shop::Open, Duration::from_secs(9));
        Ok::<_, tapio::SpawnError>(Behaviors::ignore())
    }));
    assert_eq!(
        kit.effects(),
        [
            Effect::Spawned {
                name: "clerk".into()
            },
            Effect::SpawnedAnonymous { name: "$a".into() },
            Effect::Watched {
                actor: outsider.actor_ref().erase()
            },
            Effect::TimerStarted {
                key: "open".into(),
                mode: TimerMode::Single,
                delay: Duration::from_secs(9),
            },
        ]
    );
    assert!(kit.effects().is_empty(), "effects() takes what it returns");
}

// S48: a handler's effects: a child spawned then stopped (and gone for `child_kit`),
// an unwatch (recorded once: the second forgets nothing), a timer started, replaced
// under its key (the old one cancelled) and cancelled (a second cancel of a key that
// no longer runs records nothing).
#[test]
fn s48_kit_records_the_effects_of_handlers() {
    let outsider = TestInbox::<u64>::new();
    let mut kit = BehaviorTestKit::new(shop(outsider.actor_ref().clone()));
    assert_eq!(
        kit.effects(),
        [Effect::Watched {
            actor: outsider.actor_ref().erase()
        }]
    );

    assert_eq!(kit.run(Shop::Hire("ada".into())), Ok(Outcome::Same));
    assert_eq!(kit.run(Shop::Fire("ada".into())), Ok(Outcome::Same));
    assert_eq!(
        kit.effects(),
        [
            Effect::Spawned { name: "ada".into() },
            Effect::Stopped { name: "ada".into() },
        ]
    );
    assert!(matches!(
        kit.child_kit::<u64>("ada"),
        Err(TestKitError::NoSuchChild { .. })
    ));
    let again = kit.run(Shop::Fire("ada".into())).unwrap_err();
    assert!(again.is::<Missing>(), "{again}");
    assert!(kit.effects().is_empty());

    kit.run(Shop::Forget).unwrap();
    kit.run(Shop::Forget).unwrap();
    assert_eq!(
        kit.effects(),
        [Effect::Unwatched {
            actor: outsider.actor_ref().erase()
        }]
    );

    kit.run(Shop::Open).unwrap();
    kit.run(Shop::Open).unwrap();
    kit.run(Shop::Close).unwrap();
    kit.run(Shop::Close).unwrap();
    let started = Effect::TimerStarted {
        key: "tick".into(),
        mode: TimerMode::FixedRate,
        delay: Duration::from_secs(1),
    };
    let cancelled = Effect::TimerCancelled { key: "tick".into() };
    assert_eq!(
        kit.effects(),
        [started.clone(), cancelled.clone(), started, cancelled]
    );
}

// S48: a failed `expect_effect` says what was expected and what was recorded.
#[test]
#[should_panic(
    expected = "expected the effect Spawned { name: \"bob\" }, but the behavior recorded [Spawned { name: \"ada\" }]"
)]
fn s48_expect_effect_names_what_was_recorded_instead() {
    let outsider = TestInbox::<u64>::new();
    let mut kit = BehaviorTestKit::new(shop(outsider.actor_ref().clone()));
    let _ = kit.effects();
    kit.run(Shop::Hire("ada".into())).unwrap();
    kit.expect_effect(Effect::Spawned { name: "bob".into() });
}

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

/// Counts the length of words it gets through an adapter, and numbers told directly.
fn word_counter(
    adapters: std::sync::mpsc::Sender<ActorRef<String>>,
    to: ActorRef<u64>,
) -> Behavior<u64> {
    Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        let words: ActorRef<String> = ctx.message_adapter(|word: String| word.len() as u64);
        let _ = adapters.send(words);
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| to.tell(n))
    })
}

/// A kit running `word_counter`, the inbox it reports to, and its words adapter.
fn word_counter_kit() -> (BehaviorTestKit<u64>, TestInbox<u64>, ActorRef<String>) {
    let (adapters, adapter) = std::sync::mpsc::channel();
    let seen = TestInbox::<u64>::new();
    let kit = BehaviorTestKit::new(word_counter(adapters, seen.actor_ref().clone()));
    let words = adapter.try_recv().unwrap();
    (kit, seen, words)
}

// S48, S28: a message through an adapter waits in the kit's queue and is translated
// by `run_queued`, in order with what was told directly.
#[test]
fn s48_kit_translates_adapted_messages_in_order() {
    let (mut kit, mut seen, words) = word_counter_kit();
    words.tell("abc".to_string());
    kit.self_ref().tell(10_u64);
    words.tell("hello".to_string());
    assert_eq!(kit.run_queued(), Ok(3));
    assert_eq!(seen.messages(), [3, 10, 5]);
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

// S48, S18: a `Terminated` handed to the kit: left unhandled it is a `DeathPact`
// failure, as in a running actor; handled, it is an ordinary outcome.
#[test]
fn s48_kit_turns_an_unhandled_terminated_into_a_death_pact() {
    let other = TestInbox::<u64>::named("other").unwrap();
    let ended = || Signal::Terminated(Terminated::new(other.actor_ref().erase()));

    let mut careless = BehaviorTestKit::new(Behaviors::ignore::<u64>());
    let failure = careless.signal(ended()).unwrap_err();
    let pact = failure.downcast_ref::<DeathPact>().expect("a death pact");
    assert_eq!(pact.actor, other.actor_ref().erase());

    let careful = Behaviors::receive_message(|_: u64| {}).on_signal(|_, signal| {
        if let Signal::Terminated(_) = signal {
            Behaviors::stopped()
        } else {
            Behaviors::same()
        }
    });
    let mut careful = BehaviorTestKit::new(careful);
    assert_eq!(careful.signal(ended()), Ok(Outcome::Stopped));
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

// S48, S27: in the kit, a replayed message that fails returns its failure; the
// message `run` was given waits after the rest of the replay, for `run_queued`.
#[test]
fn s27_kit_replay_failure_keeps_the_rest_in_order() {
    let mut seen = TestInbox::<u64>::new();
    let to = seen.actor_ref().clone();
    let gate = Behaviors::with_stash(4, move |stash| {
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, BoxError> {
            if n == 0 {
                let to = to.clone();
                return Ok(stash.unstash_all(Behaviors::receive_message(
                    move |n: u64| -> Result<(), Refused> {
                        if n == 13 {
                            return Err(Refused(n));
                        }
                        to.tell(n);
                        Ok(())
                    },
                )));
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap();
    let mut kit = BehaviorTestKit::new(gate);
    for n in [1_u64, 13, 2] {
        assert_eq!(kit.run(n), Ok(Outcome::Same));
    }
    assert_eq!(kit.run(0_u64), Ok(Outcome::Switched));
    let failed = kit.run(99_u64).unwrap_err();
    assert!(failed.is::<Refused>(), "{failed}");
    assert_eq!(kit.run_queued(), Ok(2));
    assert_eq!(seen.messages(), [1, 2, 99]);
}

// ---------------------------------------------------------------------------------
// TestProbe (S48)
// ---------------------------------------------------------------------------------

// S48: `expect_no_message` fails when a message comes inside its window, and says
// which message and when, not only at the window's start.
#[tapio::test(start_paused = true)]
#[should_panic(expected = "expected no message for 1s, but 7 arrived after 300ms")]
async fn s48_expect_no_message_fails_on_a_late_arrival(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let to = probe.actor_ref().clone();
    let _late = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_single_timer("late", 7_u64, Duration::from_millis(300));
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| to.tell(n))
            }),
            "late",
        )
        .unwrap();
    probe.expect_no_message(Duration::from_secs(1)).await;
}

// S48, S18: an actor that was dead before the probe watched it is still reported
// terminated, at once.
#[tapio::test(start_paused = true)]
async fn s48_expect_terminated_for_an_actor_already_dead(system: ActorSystem) {
    let mut first = TestProbe::<u64>::new(&system);
    let once = system
        .spawn(
            Behaviors::receive_message(|_: u64| Behaviors::stopped()),
            "once",
        )
        .unwrap();
    first.watch(&once);
    once.tell(1_u64);
    first.expect_terminated(&once, WAIT).await;

    let mut late = TestProbe::<u64>::new(&system);
    late.watch(&once);
    let started = tokio::time::Instant::now();
    late.expect_terminated(&once, WAIT).await;
    assert!(started.elapsed() < Duration::from_millis(1));
    late.expect_no_termination(Duration::from_secs(1)).await;
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

// S48: `with_max_wait` caps every bound; the failure says both the bound asked for
// and how long it really waited.
#[tapio::test(start_paused = true)]
#[should_panic(expected = "expected a message within 3600s, but nothing arrived within 100ms")]
async fn s48_max_wait_caps_an_absurd_bound(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system).with_max_wait(Duration::from_millis(100));
    probe.expect_message(Duration::from_secs(3600)).await;
}

// S48, S14: a restart is not an end: a probe watching a restarting actor sees no
// termination, and the actor answers afterwards.
#[tapio::test(start_paused = true)]
async fn s48_a_restart_is_no_termination(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let to = probe.actor_ref().clone();
    let fragile: Behavior<u64> = Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
        assert!(n != 0, "zero breaks it");
        to.tell(n);
    }))
    .on_failure::<Panicked>(SupervisorStrategy::restart())
    .into();
    let fragile = system.spawn(fragile, "fragile").unwrap();
    probe.watch(&fragile);
    fragile.tell(0_u64);
    fragile.tell(5_u64);
    assert_eq!(probe.expect_message(WAIT).await, 5);
    probe.expect_no_termination(Duration::from_secs(1)).await;
    system.stop(&fragile).unwrap();
    probe.expect_terminated(&fragile, WAIT).await;
}

// ---------------------------------------------------------------------------------
// The event stream and dead letters (S49, S31)
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub struct Weather(u32);

#[derive(Debug, Clone, PartialEq)]
pub struct Traffic(u32);

// S49: subscriptions are typed: two subscribers of one type each get every event, a
// subscriber of another type gets none of them; unsubscribing (explicitly or by
// dropping) ends delivery and the count follows.
#[tapio::test(start_paused = true)]
async fn s49_typed_subscribers_and_unsubscribe(system: ActorSystem) {
    let events = system.events();
    let first = events.subscribe::<Weather>();
    let mut second = events.subscribe::<Weather>();
    let mut traffic = events.subscribe::<Traffic>();
    assert_eq!(events.subscriber_count::<Weather>(), 2);
    assert_eq!(events.publish(Weather(1)), 2);
    first.unsubscribe();
    assert_eq!(events.subscriber_count::<Weather>(), 1);
    assert_eq!(events.publish(Weather(2)), 1);
    assert_eq!(second.recv().await, Some(Weather(1)));
    assert_eq!(second.recv().await, Some(Weather(2)));
    assert_eq!(traffic.try_recv(), None);
    assert_eq!(events.publish(Traffic(3)), 1);
    assert_eq!(traffic.try_recv(), Some(Traffic(3)));
    assert_eq!(second.try_recv(), None);
    drop(second);
    assert_eq!(events.subscriber_count::<Weather>(), 0);
    assert_eq!(events.publish(Weather(4)), 0);
}

// S49, S31: a slow subscriber with a small buffer loses the newest dead letters of a
// burst and counts them; `recv_with_loss` reports the gap where it happened; a fast
// subscriber beside it loses nothing.
#[tapio::test(start_paused = true)]
async fn s49_a_slow_subscriber_counts_the_dead_letters_it_lost(system: ActorSystem) {
    let mut fast = system.events().subscribe::<DeadLetter>();
    let mut slow = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(3)
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    let gone = system.spawn(Behaviors::ignore::<u64>(), "gone").unwrap();
    probe.watch(&gone);
    system.stop(&gone).unwrap();
    probe.expect_terminated(&gone, WAIT).await;
    for n in 0..10_u64 {
        gone.tell(n);
    }
    for n in 0..10_u64 {
        let l = letter(&mut fast).await;
        assert_eq!(l.reason(), &DeadLetterReason::RecipientStopped);
        assert_eq!(l.take_message::<u64>(), Some(n));
    }
    assert_eq!(fast.lost(), 0);
    assert_eq!(slow.lost(), 7);
    assert_eq!(slow.buffered(), 3);
    for _ in 0..3 {
        assert!(matches!(
            slow.recv_with_loss().await,
            Some(Received::Event(_))
        ));
    }
    assert!(matches!(
        slow.recv_with_loss().await,
        Some(Received::Lost(7))
    ));
    gone.tell(10_u64);
    match slow.recv_with_loss().await {
        Some(Received::Event(l)) => assert_eq!(l.recipient().name(), "gone"),
        other => panic!("expected the next letter after the gap, got {other:?}"),
    }
    assert_eq!(slow.lost(), 7, "lost only grows, and nothing more was lost");
}

// S31, S6: a dead letter says what, to whom and why. `unhandled` from a handler
// names the type (the value was consumed); a message no behavior could take keeps its
// value; every subscriber sees the same letter, and the value can be taken once.
#[tapio::test(start_paused = true)]
async fn s31_dead_letters_carry_message_recipient_and_reason(system: ActorSystem) {
    let mut one = system.events().subscribe::<DeadLetter>();
    let mut two = system.events().subscribe::<DeadLetter>();
    let picky = system
        .spawn(
            Behaviors::receive_message(|n: u64| {
                if n == 0 {
                    Behaviors::unhandled()
                } else {
                    Behaviors::same()
                }
            }),
            "picky",
        )
        .unwrap();
    picky.tell(0_u64);
    let refused = letter(&mut one).await;
    assert_eq!(refused.reason(), &DeadLetterReason::Unhandled);
    assert_eq!(refused.recipient().to_string(), "/user/picky");
    assert_eq!(refused.message_type(), "u64");
    assert_eq!(refused.take_message::<u64>(), None);
    let _ = letter(&mut two).await;

    let wall = system.spawn(Behaviors::empty::<String>(), "wall").unwrap();
    wall.tell("hello".to_string());
    let first = letter(&mut one).await;
    let second = letter(&mut two).await;
    assert_eq!(first.reason(), &DeadLetterReason::Unhandled);
    assert!(second.is::<String>());
    assert_eq!(
        first.to_string(),
        "dead letter: String to /user/wall (the recipient did not handle it)"
    );
    assert_eq!(second.take_message::<u64>(), None, "not a u64");
    assert_eq!(second.take_message::<String>().as_deref(), Some("hello"));
    assert_eq!(first.take_message::<String>(), None, "taken once");
}

// S31, S49: a storm of dead letters with nobody subscribed leaves nothing behind for
// a later subscriber, and the system keeps answering; the first letter a new
// subscriber gets is the next one.
#[tapio::test(start_paused = true)]
async fn s31_a_storm_of_dead_letters_without_subscribers(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let gone = system.spawn(Behaviors::ignore::<u64>(), "gone").unwrap();
    probe.watch(&gone);
    system.stop(&gone).unwrap();
    probe.expect_terminated(&gone, WAIT).await;
    for n in 0..100_000_u64 {
        gone.tell(n);
    }
    probe.actor_ref().tell(1_u64);
    assert_eq!(probe.expect_message(WAIT).await, 1);
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(4)
        .unwrap();
    gone.tell(777_u64);
    assert_eq!(letter(&mut letters).await.take_message::<u64>(), Some(777));
    assert_eq!(letters.try_recv().map(|l| l.to_string()), None);
    assert_eq!(letters.lost(), 0);
}

// S49: a subscription's capacity is checked, and the error says why.
#[tapio::test]
async fn s49_capacity_zero_and_too_large_are_refused(system: ActorSystem) {
    let zero = system
        .events()
        .subscribe_with_capacity::<Weather>(0)
        .unwrap_err();
    assert_eq!(zero, CapacityError::Zero);
    assert!(zero.to_string().contains("lose every event"), "{zero}");
    let huge = system
        .events()
        .subscribe_with_capacity::<Weather>(usize::MAX)
        .unwrap_err();
    assert!(matches!(huge, CapacityError::TooLarge { .. }), "{huge}");
    assert_eq!(system.events().subscriber_count::<Weather>(), 0);
}

// ---------------------------------------------------------------------------------
// Protocols as state machines (S34)
// ---------------------------------------------------------------------------------

#[message]
pub struct Lift;
#[message]
pub struct Lower;
#[message(reply = u64)]
pub struct Pass;
#[message(reply = &'static str)]
pub struct Peek;
#[message]
pub struct Jam;

pub struct Gate {
    passed: u64,
}

#[actor(
    messages(Lift, Lower, Pass, Peek, Jam),
    states(Closed => Opened, Opened => Closed)
)]
impl Gate {}

pub struct Closed;

#[state(Gate)]
impl Closed {
    fn lift(self, _: Lift) -> Next<Self> {
        Next::to(Opened)
    }

    fn peek(&mut self, _: Peek) -> &'static str {
        "closed"
    }
}

pub struct Opened;

#[state(Gate)]
impl Opened {
    fn pass(&mut self, gate: &mut Gate, _: Pass) -> u64 {
        gate.passed += 1;
        gate.passed
    }

    fn peek(&mut self, _: Peek) -> &'static str {
        "opened"
    }

    fn lower(self, _: Lower) -> Next<Self> {
        Next::to(Closed)
    }

    fn jam(&mut self, _: Jam) {
        panic!("jammed open")
    }
}

fn gate(setups: Arc<AtomicUsize>) -> Behavior<GateMsg> {
    Behaviors::setup(move |_ctx| {
        setups.fetch_add(1, Ordering::SeqCst);
        Machine::new(Gate { passed: 0 }, Closed)
    })
}

// S34: a request the current state does not handle fails the ask at once (no waiting
// for the deadline) with the state's name; a tell of it is a dead letter naming the
// state, with the message; after a switch the same request is answered.
#[tapio::test(start_paused = true)]
async fn s34_a_state_refuses_asks_and_tells_it_does_not_handle(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let gate = system.spawn(gate(Arc::default()), "gate").unwrap();
    let started = tokio::time::Instant::now();
    match gate.ask(Pass).timeout(Duration::from_secs(3600)).await {
        Err(refused @ AskError::NotHandled { state, .. }) => {
            assert_eq!(state, "Closed");
            assert!(
                refused
                    .to_string()
                    .contains("refused the request in its state `Closed`"),
                "{refused}"
            );
        }
        other => panic!("expected a refusal by `Closed`, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(1));
    let refused_ask = letter(&mut letters).await;
    assert_eq!(
        refused_ask.reason(),
        &DeadLetterReason::NotHandledInState("Closed")
    );

    gate.tell(Lower);
    let refused = letter(&mut letters).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::NotHandledInState("Closed")
    );
    assert_eq!(refused.recipient().name(), "gate");
    assert!(refused.take_message::<Lower>().is_some());

    gate.tell(Lift);
    assert_eq!(gate.ask(Peek).await.unwrap(), "opened");
    assert_eq!(gate.ask(Pass).await.unwrap(), 1);
    gate.tell(Lift);
    let again = letter(&mut letters).await;
    assert_eq!(
        again.reason(),
        &DeadLetterReason::NotHandledInState("Opened")
    );
}

// S34, S7: a restart runs the setup again and starts from the initial state with
// fresh data.
#[tapio::test(start_paused = true)]
async fn s34_a_restart_returns_to_the_initial_state(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let supervised: Behavior<GateMsg> = Behaviors::supervise(gate(setups.clone()))
        .on_failure::<Panicked>(SupervisorStrategy::restart())
        .into();
    let gate = system.spawn(supervised, "gate").unwrap();
    gate.tell(Lift);
    assert_eq!(gate.ask(Pass).await.unwrap(), 1);
    assert_eq!(gate.ask(Pass).await.unwrap(), 2);
    gate.tell(Jam);
    assert_eq!(gate.ask(Peek).await.unwrap(), "closed");
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    gate.tell(Lift);
    assert_eq!(
        gate.ask(Pass).await.unwrap(),
        1,
        "fresh data after a restart"
    );
}

#[message]
pub struct Fill(pub u64);
#[message]
pub struct Go;

pub struct Tank {
    out: ActorRef<u64>,
}

#[actor(stash_capacity = 2, messages(Fill, Go), states(Waiting => Going, Going))]
impl Tank {}

pub struct Waiting;

#[state(Tank, unhandled = stash)]
impl Waiting {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Going)
    }
}

pub struct Going;

#[state(Tank)]
impl Going {
    fn fill(&mut self, tank: &mut Tank, Fill(n): Fill) {
        tank.out.tell(n);
    }
}

fn tank(out: ActorRef<u64>) -> Behavior<TankMsg> {
    Behaviors::setup(move |_ctx| Machine::new(Tank { out: out.clone() }, Waiting))
}

// S34, S27: a stashing state holds what it does not handle and the switch replays it
// in arrival order, ahead of what comes after.
#[tapio::test(start_paused = true)]
async fn s34_a_stashing_state_replays_in_order(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let tank = system
        .spawn(tank(probe.actor_ref().clone()), "tank")
        .unwrap();
    tank.tell(Fill(1));
    tank.tell(Fill(2));
    tank.tell(Go);
    tank.tell(Fill(3));
    assert_eq!(probe.receive_messages(3, WAIT).await, [1, 2, 3]);
}

// S34, S26: a stashing state's stash is bounded by `stash_capacity`: one more fails
// the actor with `StashOverflow` (stopping it, by default) and the message that did
// not fit is a dead letter saying so.
#[tapio::test(start_paused = true)]
async fn s34_a_stashing_state_overflows_into_a_failure(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let tank = system
        .spawn(tank(probe.actor_ref().clone()), "tank")
        .unwrap();
    probe.watch(&tank);
    for n in 1..=3 {
        tank.tell(Fill(n));
    }
    let full = letter(&mut letters).await;
    assert_eq!(full.reason(), &DeadLetterReason::StashFull);
    // The letter holds the message as it was told, not the protocol enum.
    assert_eq!(full.take_message::<Fill>().map(|Fill(n)| n), Some(3));
    probe.expect_terminated(&tank, WAIT).await;
    probe.expect_no_message(Duration::from_millis(10)).await;
}

// ---------------------------------------------------------------------------------
// Stash (S26, S27)
// ---------------------------------------------------------------------------------

/// Holds numbers until 0, then replays them into `ready`.
fn holding(capacity: usize, ready: Behavior<u64>) -> Behavior<u64> {
    Behaviors::with_stash(capacity, move |stash| {
        let ready = ready.clone();
        Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, StashOverflow> {
            if n == 0 {
                return Ok(stash.unstash_all(ready.clone()));
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap()
}

// S26, S14: overflow fails the stashing actor under its supervision: restarted, its
// stash is emptied and what it held becomes dead letters (`StashDiscarded`), beside
// the one that did not fit (`StashFull`); the new incarnation works.
#[tapio::test(start_paused = true)]
async fn s26_overflow_restarts_and_discards_the_stash(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let to = probe.actor_ref().clone();
    let supervised: Behavior<u64> = Behaviors::supervise(holding(
        2,
        Behaviors::receive_message(move |n: u64| to.tell(n)).into(),
    ))
    .on_failure::<StashOverflow>(SupervisorStrategy::restart())
    .into();
    let holder = system.spawn(supervised, "holder").unwrap();
    for n in 1..=3 {
        holder.tell(n as u64);
    }
    let mut seen = Vec::new();
    for _ in 0..3 {
        let l = letter(&mut letters).await;
        seen.push((l.take_message::<u64>(), l.reason().clone()));
    }
    seen.sort_by_key(|(n, _)| *n);
    assert_eq!(
        seen,
        [
            (Some(1), DeadLetterReason::StashDiscarded),
            (Some(2), DeadLetterReason::StashDiscarded),
            (Some(3), DeadLetterReason::StashFull),
        ]
    );
    holder.tell(4_u64);
    holder.tell(0_u64);
    holder.tell(5_u64);
    assert_eq!(probe.receive_messages(2, WAIT).await, [4, 5]);
}

#[message]
#[derive(Debug, PartialEq)]
pub enum Step {
    Item(u64),
    Ready,
}

// S27: a watched actor's end, a signal, outranks the replayed backlog: it reaches the
// actor between two replayed messages, not after the whole replay.
#[tapio::test(start_paused = true)]
async fn s27_a_signal_outranks_the_replayed_backlog(system: ActorSystem) {
    let (log, mut lines) = mpsc::unbounded_channel::<String>();
    let watcher = Behaviors::setup(move |ctx: &mut ActorContext<Step>| {
        let child: ActorRef<u64> = ctx.spawn(Behaviors::ignore(), "child").unwrap();
        ctx.watch(&child);
        let log = log.clone();
        Behaviors::with_stash(8, move |stash| {
            let log = log.clone();
            let child = child.clone();
            Behaviors::receive_message(move |step: Step| match step {
                Step::Ready => {
                    let signal_log = log.clone();
                    let log = log.clone();
                    let child = child.clone();
                    let replay = Behaviors::receive_async(async move |ctx, step: Step| {
                        if step == Step::Item(1) {
                            let _ = ctx.stop(&child);
                        }
                        // Time for the child to stop while this handler still runs.
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        let _ = log.send(format!("{step:?}"));
                    });
                    let replay = replay.on_signal(move |_, signal| {
                        if let Signal::Terminated(_) = signal {
                            let _ = signal_log.send("Terminated".into());
                        }
                        Behaviors::same()
                    });
                    Ok(stash.unstash_all(replay))
                }
                item => stash.stash(item).map(|()| Behaviors::same()),
            })
        })
        .unwrap()
    });
    let watcher = system.spawn(watcher, "watcher").unwrap();
    for n in 1..=3 {
        watcher.tell(Step::Item(n));
    }
    watcher.tell(Step::Ready);
    let mut got = Vec::new();
    for _ in 0..4 {
        got.push(
            tokio::time::timeout(WAIT, lines.recv())
                .await
                .unwrap()
                .unwrap(),
        );
    }
    assert_eq!(got, ["Item(1)", "Terminated", "Item(2)", "Item(3)"]);
}

// ---------------------------------------------------------------------------------
// Message adapters (S28)
// ---------------------------------------------------------------------------------

#[message]
pub struct Query {
    pub reply_to: ActorRef<u64>,
}

// S28: an adapter translates in order with the owner's other messages; it cannot be
// asked (at once, with a reason that says what to do) nor watched; after its owner
// stops, what it is told is a dead letter naming the adapter.
#[tapio::test(start_paused = true)]
async fn s28_adapters_translate_in_order_and_stop_with_their_owner(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let (adapters, mut adapter) = mpsc::unbounded_channel();
    let to = probe.actor_ref().clone();
    let owner = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let words: ActorRef<String> = ctx.message_adapter(|word: String| word.len() as u64);
                let queries: ActorRef<Query> = ctx.message_adapter(|_: Query| 1000_u64);
                let _ = adapters.send((words, queries));
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| {
                    to.tell(n);
                    if n == 0 {
                        Behaviors::stopped()
                    } else {
                        Behaviors::same()
                    }
                })
            }),
            "owner",
        )
        .unwrap();
    let (words, queries) = adapter.recv().await.unwrap();
    words.tell("abc".to_string());
    owner.tell(10_u64);
    words.tell("hello".to_string());
    owner.tell(7_u64);
    assert_eq!(probe.receive_messages(4, WAIT).await, [3, 10, 5, 7]);

    let started = tokio::time::Instant::now();
    let asked = queries
        .ask_with(|reply_to| Query { reply_to })
        .timeout(Duration::from_secs(3600))
        .await;
    assert!(matches!(asked, Err(AskError::Adapter { .. })), "{asked:?}");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(
        asked
            .unwrap_err()
            .to_string()
            .contains("ask the owner instead")
    );

    let (verdicts, mut verdict) = mpsc::unbounded_channel();
    let words_to_watch = words.clone();
    let _watcher = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let _ = verdicts.send(ctx.try_watch(&words_to_watch).map_err(|e| e.to_string()));
                Behaviors::ignore()
            }),
            "watcher",
        )
        .unwrap();
    let refused = verdict.recv().await.unwrap().unwrap_err();
    assert!(refused.contains("/user/owner"), "{refused}");

    probe.watch(&owner);
    owner.tell(0_u64);
    assert_eq!(probe.expect_message(WAIT).await, 0);
    probe.expect_terminated(&owner, WAIT).await;
    // Drain the letters of the ask above, if any.
    while letters.try_recv().is_some() {}
    words.tell("late".to_string());
    let late = letter(&mut letters).await;
    assert_eq!(late.reason(), &DeadLetterReason::RecipientStopped);
    assert!(
        late.recipient().starts_with(owner.path()),
        "the letter names the adapter under its owner: {}",
        late.recipient()
    );
    assert_eq!(late.take_message::<String>().as_deref(), Some("late"));
}

// S28: registering another adapter for the same foreign type replaces the
// translation for every ref of it handed out before; a translation that fails is the
// owner's failure.
#[tapio::test(start_paused = true)]
async fn s28_a_new_adapter_replaces_the_translation_of_old_refs(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let (adapters, mut adapter) = mpsc::unbounded_channel();
    let to = probe.actor_ref().clone();
    let owner = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let old: ActorRef<String> = ctx.message_adapter(|word: String| word.len() as u64);
                let _ = adapters.send(old);
                let to = to.clone();
                Behaviors::receive(move |ctx, n: u64| {
                    if n == 99 {
                        let _: ActorRef<String> = ctx.try_message_adapter(|word: String| {
                            word.parse::<u64>().map(|n| n + 1000)
                        });
                    }
                    to.tell(n);
                })
            }),
            "owner",
        )
        .unwrap();
    probe.watch(&owner);
    let old = adapter.recv().await.unwrap();
    old.tell("four".to_string());
    assert_eq!(probe.expect_message(WAIT).await, 4);
    owner.tell(99_u64);
    assert_eq!(probe.expect_message(WAIT).await, 99);
    old.tell("5".to_string());
    assert_eq!(probe.expect_message(WAIT).await, 1005);
    old.tell("not a number".to_string());
    probe.expect_terminated(&owner, WAIT).await;
    probe.expect_no_message(Duration::from_millis(10)).await;
}

// ---------------------------------------------------------------------------------
// Behaviors (S6, S7) in a running system
// ---------------------------------------------------------------------------------

// S7, S14: `setup` runs at start and again on every restart; a child spawned in setup
// comes back, one spawned in a handler does not.
#[tapio::test(start_paused = true)]
async fn s7_setup_runs_again_on_every_restart(system: ActorSystem) {
    let setups = Arc::new(AtomicUsize::new(0));
    let (reports, mut report) = mpsc::unbounded_channel::<Vec<String>>();
    let counted = setups.clone();
    let parent: Behavior<u64> =
        Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
            counted.fetch_add(1, Ordering::SeqCst);
            let _: ActorRef<u64> = ctx.spawn(Behaviors::ignore(), "kept").unwrap();
            let reports = reports.clone();
            Behaviors::receive(move |ctx, n: u64| match n {
                0 => panic!("restart me"),
                1 => {
                    let _: ActorRef<u64> = ctx.spawn(Behaviors::ignore(), "extra").unwrap();
                }
                _ => {
                    let mut names: Vec<String> = ctx
                        .children()
                        .iter()
                        .map(|c| c.path().name().to_owned())
                        .collect();
                    names.sort();
                    let _ = reports.send(names);
                }
            })
        }))
        .on_failure::<Panicked>(SupervisorStrategy::restart())
        .into();
    let parent = system.spawn(parent, "parent").unwrap();
    parent.tell(1_u64);
    parent.tell(2_u64);
    assert_eq!(
        tokio::time::timeout(WAIT, report.recv())
            .await
            .unwrap()
            .unwrap(),
        ["extra", "kept"]
    );
    parent.tell(0_u64);
    parent.tell(2_u64);
    assert_eq!(
        tokio::time::timeout(WAIT, report.recv())
            .await
            .unwrap()
            .unwrap(),
        ["kept"]
    );
    assert_eq!(setups.load(Ordering::SeqCst), 2);
}

// ---------------------------------------------------------------------------------
// More edges: the kit's replay and adapters, the stream's loss accounting and end
// ---------------------------------------------------------------------------------

// S48, S28: in the kit, an adapter's failing translation is the behavior's failure,
// returned by `run_queued`; what was queued after it still waits, in order.
#[test]
fn s28_kit_adapter_failure_is_the_behaviors_failure() {
    let (adapters, adapter) = std::sync::mpsc::channel();
    let mut seen = TestInbox::<u64>::new();
    let to = seen.actor_ref().clone();
    let mut kit = BehaviorTestKit::new(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        let numbers: ActorRef<String> = ctx.try_message_adapter(|text: String| text.parse::<u64>());
        let _ = adapters.send(numbers);
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| to.tell(n))
    }));
    let numbers = adapter.try_recv().unwrap();
    numbers.tell("1".to_string());
    numbers.tell("x".to_string());
    kit.self_ref().tell(5_u64);
    let failed = kit.run_queued().unwrap_err();
    assert!(failed.is::<std::num::ParseIntError>(), "{failed}");
    assert_eq!(kit.run_queued(), Ok(1));
    assert_eq!(seen.messages(), [1, 5]);
}

// S27, S48: the replay goes ahead of what the unstashing handler told its own actor
// while it ran, in the kit as in a running actor.
#[test]
fn s27_kit_replay_goes_ahead_of_what_the_unstashing_handler_sent() {
    let mut seen = TestInbox::<u64>::new();
    let to = seen.actor_ref().clone();
    let gate = Behaviors::with_stash(4, move |stash| {
        let to = to.clone();
        Behaviors::receive(move |ctx, n: u64| -> Result<Behavior<u64>, StashOverflow> {
            if n == 0 {
                ctx.self_ref().tell(50_u64);
                let to = to.clone();
                return Ok(stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                    to.tell(n);
                })));
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap();
    let mut kit = BehaviorTestKit::new(gate);
    kit.run(1_u64).unwrap();
    kit.run(2_u64).unwrap();
    assert_eq!(kit.run(0_u64), Ok(Outcome::Switched));
    assert_eq!(kit.run_queued(), Ok(3));
    assert_eq!(seen.messages(), [1, 2, 50]);
}

// S49: with publishers on several threads and nobody reading, a bounded subscription
// keeps exactly its capacity, counts every other event as lost, and reports all of
// that loss through `recv_with_loss`: never counted twice, never missed.
#[tokio::test(start_paused = true)]
async fn s49_concurrent_publishers_never_miscount_the_loss() {
    let stream = tapio::EventStream::default();
    let mut readings = stream.subscribe_with_capacity::<Weather>(16).unwrap();
    let threads: Vec<_> = (0..4_u32)
        .map(|t| {
            let stream = stream.clone();
            std::thread::spawn(move || {
                for i in 0..1000_u32 {
                    stream.publish(Weather(t * 1000 + i));
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(readings.lost(), 4000 - 16);
    assert_eq!(readings.buffered(), 16);
    let (mut events, mut lost) = (0_u64, 0_u64);
    while events + lost < 4000 {
        match tokio::time::timeout(WAIT, readings.recv_with_loss()).await {
            Ok(Some(Received::Event(_))) => events += 1,
            Ok(Some(Received::Lost(n))) => lost += n,
            other => panic!("after {events} events and {lost} lost: {other:?}"),
        }
    }
    assert_eq!((events, lost), (16, 3984));
    assert_eq!(readings.try_recv(), None);
}

/// An event whose `Clone` publishes and subscribes in turn.
pub struct Loud {
    stream: tapio::EventStream,
}

impl Clone for Loud {
    fn clone(&self) -> Self {
        self.stream.publish(Weather(9));
        drop(self.stream.subscribe::<Traffic>());
        Self {
            stream: self.stream.clone(),
        }
    }
}

// S49: "the event's own `Clone` runs without a lock: it may publish or subscribe in
// turn". Run where a deadlock cannot hang the test.
#[test]
fn s49_an_event_whose_clone_publishes_does_not_deadlock() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stream = tapio::EventStream::default();
        let mut loud = stream.subscribe::<Loud>();
        let mut weather = stream.subscribe::<Weather>();
        let took = stream.publish(Loud {
            stream: stream.clone(),
        });
        let _ = done.send((took, loud.try_recv().is_some(), weather.try_recv()));
    });
    let (took, got_loud, got_weather) = finished
        .recv_timeout(WAIT)
        .expect("publishing finished: no deadlock");
    assert_eq!(took, 1);
    assert!(got_loud);
    assert_eq!(got_weather, Some(Weather(9)));
}

// S49: a subscription does not outlive its system: once the system is terminated and
// dropped, `recv` hands out what was buffered, then `None`, rather than waiting
// forever.
#[tokio::test(start_paused = true)]
async fn s49_a_subscription_ends_with_its_system() {
    let system = ActorSystem::new("ending").unwrap();
    let mut weather = system.events().subscribe::<Weather>();
    let mut letters = system.events().subscribe::<DeadLetter>();
    system.events().publish(Weather(1));
    system.terminate().await;
    drop(system);
    assert_eq!(
        tokio::time::timeout(WAIT, weather.recv()).await,
        Ok(Some(Weather(1)))
    );
    assert_eq!(tokio::time::timeout(WAIT, weather.recv()).await, Ok(None));
    assert!(matches!(
        tokio::time::timeout(WAIT, letters.recv()).await,
        Ok(None)
    ));
}

#[message]
pub struct Slow {
    pub reply_to: ActorRef<u64>,
}

// S22, S31: a reply that comes after its ask timed out is a dead letter that says the
// ask ended, with the reply inside.
#[tapio::test(start_paused = true)]
async fn s31_a_late_reply_is_a_dead_letter_saying_the_ask_ended(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let slow = system
        .spawn(
            Behaviors::receive_message_async(async move |slow: Slow| {
                tokio::time::sleep(Duration::from_secs(2)).await;
                slow.reply_to.tell(42_u64);
            }),
            "slow",
        )
        .unwrap();
    let asked = slow
        .ask_with(|reply_to| Slow { reply_to })
        .timeout(Duration::from_secs(1))
        .await;
    assert!(matches!(asked, Err(AskError::Timeout { .. })), "{asked:?}");
    let late = letter(&mut letters).await;
    assert_eq!(late.reason(), &DeadLetterReason::AskEnded);
    assert_eq!(late.take_message::<u64>(), Some(42));
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

// S48, S31: `take_queued` shows the messages waiting for the behavior; one that came
// through an adapter is not translated there, and stays queued, in order, for
// `run_queued`: nothing is silently thrown away.
#[test]
fn s48_take_queued_leaves_adapted_messages_to_run() {
    let (mut kit, mut seen, words) = word_counter_kit();
    words.tell("xy".to_string());
    kit.self_ref().tell(7_u64);
    words.tell("abc".to_string());
    assert_eq!(kit.take_queued(), [7]);
    assert_eq!(kit.run_queued().unwrap(), 2);
    assert_eq!(seen.messages(), [2, 3]);
}
