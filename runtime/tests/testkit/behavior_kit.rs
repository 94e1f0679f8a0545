//! The synchronous behavior test kit and the test inbox (S48): each recorded effect,
//! the next behavior, children's own kits, and failures coming back to the test.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, Outcome, TestInbox, TestKitError};
use tapio::{Failure, TimerMode};

#[message]
#[derive(Debug, PartialEq)]
pub enum Command {
    Hire(String),
    HireSomeone,
    Follow(ActorRef<u64>),
    Forget(ActorRef<u64>),
    Report(ActorRef<Vec<String>>),
    Retire,
    Grumble,
    Fail,
    Panic,
}

#[derive(Debug)]
pub struct Broken;

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("broken on purpose")
    }
}

impl std::error::Error for Broken {}

/// A worker: counts the `u64`s it is told.
fn worker() -> Behavior<u64> {
    Behaviors::ignore()
}

/// A manager whose every command shows one kind of effect.
fn manager() -> Behavior<Command> {
    Behaviors::receive(
        |ctx, command: Command| -> Result<Behavior<Command>, tapio::Failure> {
            match command {
                Command::Hire(name) => {
                    ctx.spawn(worker(), &name).map_err(tapio::Failure::new)?;
                }
                Command::HireSomeone => {
                    ctx.spawn_anonymous(worker()).map_err(tapio::Failure::new)?;
                }
                Command::Follow(other) => ctx.watch(&other),
                Command::Forget(other) => ctx.unwatch(&other),
                Command::Report(to) => {
                    let mut names: Vec<_> = ctx
                        .children()
                        .iter()
                        .map(|c| c.path().name().to_owned())
                        .collect();
                    names.sort();
                    to.tell(names);
                }
                Command::Retire => return Ok(Behaviors::stopped()),
                Command::Grumble => return Ok(Behaviors::unhandled()),
                Command::Fail => return Err(tapio::Failure::new(Broken)),
                Command::Panic => panic!("the manager panicked"),
            }
            Ok(Behaviors::same())
        },
    )
    .into()
}

// S48: children spawned are recorded by name, and the kit refuses a duplicate name
// as a running system would.
#[test]
fn spawns_are_recorded_with_their_names() {
    let mut kit = BehaviorTestKit::new(manager());
    assert_eq!(kit.run(Command::Hire("ada".into())), Ok(Outcome::Same));
    assert_eq!(kit.run(Command::HireSomeone), Ok(Outcome::Same));
    assert_eq!(
        kit.effects(),
        [
            Effect::Spawned { name: "ada".into() },
            Effect::SpawnedAnonymous { name: "$a".into() },
        ]
    );
    let duplicate = kit.run(Command::Hire("ada".into()));
    let error = duplicate.err().map(|f| f.to_string()).unwrap_or_default();
    assert!(
        error.contains("already running under /user/testkit"),
        "{error}"
    );
    assert!(kit.effects().is_empty());
}

#[test]
fn children_are_visible_to_the_behavior_and_to_the_test() {
    let mut kit = BehaviorTestKit::new(manager());
    let mut names = TestInbox::<Vec<String>>::new();
    kit.run(Command::Hire("b".into())).unwrap();
    kit.run(Command::Hire("a".into())).unwrap();
    kit.run(Command::Report(names.actor_ref().clone())).unwrap();
    names.expect_message(vec!["a".to_string(), "b".to_string()]);
}

#[message]
pub struct Dismiss;

// S48: stopping a child is recorded, the child leaves the list, and stopping it again
// is the typed error a running system gives.
#[test]
fn stopping_a_child_is_recorded() {
    let behavior = Behaviors::setup(|ctx: &mut ActorContext<Dismiss>| {
        let ada: ActorRef<u64> = ctx.spawn(worker(), "ada")?;
        Ok::<_, tapio::SpawnError>(Behaviors::receive(move |ctx, _: Dismiss| {
            ctx.stop(&ada).map_err(tapio::Failure::new)?;
            Ok::<_, tapio::Failure>(Behaviors::same())
        }))
    });
    let mut kit = BehaviorTestKit::new(behavior);
    kit.expect_effect(Effect::Spawned { name: "ada".into() });
    assert_eq!(kit.run(Dismiss), Ok(Outcome::Same));
    kit.expect_effect(Effect::Stopped { name: "ada".into() });
    let again = kit
        .run(Dismiss)
        .err()
        .map(|f| f.to_string())
        .unwrap_or_default();
    assert!(again.contains("/user/testkit/ada"), "{again}");
    assert!(kit.effects().is_empty());
}

// S48: watches and unwatches.
#[test]
fn watches_and_unwatches_are_recorded() {
    let mut kit = BehaviorTestKit::new(manager());
    let other = TestInbox::<u64>::new();
    let target = other.actor_ref().clone();
    kit.run(Command::Follow(target.clone())).unwrap();
    kit.expect_effect(Effect::Watched {
        actor: target.erase(),
    });
    // Watching twice is watching once.
    kit.run(Command::Follow(target.clone())).unwrap();
    assert!(kit.effects().is_empty());
    kit.run(Command::Forget(target.clone())).unwrap();
    kit.expect_effect(Effect::Unwatched {
        actor: target.erase(),
    });
}

#[message]
#[derive(Clone)]
pub enum Chore {
    Organise,
    Tick,
}

/// One handler that uses every capability of its context once.
fn organiser() -> Behavior<Chore> {
    Behaviors::receive(|ctx, chore: Chore| {
        if let Chore::Organise = chore {
            let helper: ActorRef<u64> = ctx.spawn(worker(), "helper").map_err(Failure::new)?;
            let temp: ActorRef<u64> = ctx.spawn_anonymous(worker()).map_err(Failure::new)?;
            // Found by its generated name, as a running actor finds its children.
            let found = ctx.child(temp.path().name()).expect("the anonymous child");
            ctx.watch(&helper);
            ctx.stop(found).map_err(Failure::new)?;
            ctx.timers()
                .start_single_timer("tick", Chore::Tick, Duration::from_secs(1));
        }
        Ok::<_, Failure>(Behaviors::same())
    })
    .into()
}

// S48: the kit records what the context does through its one seam: the same
// capability code as a running actor's (names checked, children listed and found,
// watches kept, timers keyed), with only the step that leaves the actor recorded.
#[test]
fn one_behavior_records_a_spawn_a_stop_a_watch_and_a_timer() {
    let mut kit = BehaviorTestKit::new(organiser());
    assert_eq!(kit.run(Chore::Organise), Ok(Outcome::Same));
    let effects = kit.effects();
    let Some(Effect::Watched { actor: helper }) = effects.get(2).cloned() else {
        panic!("expected a watch third: {effects:?}");
    };
    assert_eq!(helper.path().to_string(), "/user/testkit/helper");
    assert_eq!(
        effects,
        [
            Effect::Spawned {
                name: "helper".into()
            },
            Effect::SpawnedAnonymous { name: "$a".into() },
            Effect::Watched { actor: helper },
            Effect::Stopped { name: "$a".into() },
            Effect::TimerStarted {
                key: "tick".into(),
                mode: TimerMode::Single,
                delay: Duration::from_secs(1),
            },
        ]
    );
    // The stopped child is gone; the other one is there to be tested on its own.
    assert!(matches!(
        kit.child_kit::<u64>("$a"),
        Err(TestKitError::NoSuchChild { .. })
    ));
    assert!(kit.child_kit::<u64>("helper").unwrap().unwrap().is_alive());
    // A second round fails at once, as it would for real: the live child holds the
    // name. Nothing is recorded.
    assert!(kit.run(Chore::Organise).is_err());
    assert!(kit.effects().is_empty());
}

#[test]
#[should_panic(
    expected = "expected the effect Spawned { name: \"x\" }, but the behavior recorded []"
)]
fn expect_effect_fails_with_what_was_recorded() {
    let mut kit = BehaviorTestKit::new(manager());
    kit.expect_effect(Effect::Spawned { name: "x".into() });
}

// S6, through the kit: the next behavior is reported as what it was.
#[test]
fn the_next_behavior_is_reported() {
    let mut kit = BehaviorTestKit::new(manager());
    assert_eq!(kit.run(Command::Grumble), Ok(Outcome::Unhandled));
    assert!(kit.is_alive());
    assert_eq!(kit.run(Command::Retire), Ok(Outcome::Stopped));
    assert!(!kit.is_alive());

    let mut states = TestInbox::<bool>::new();
    let mut light = BehaviorTestKit::new(switch(false));
    assert_eq!(
        light.run(Flip(states.actor_ref().clone())),
        Ok(Outcome::Switched)
    );
    assert_eq!(
        light.run(Flip(states.actor_ref().clone())),
        Ok(Outcome::Switched)
    );
    assert_eq!(states.messages(), [false, true]);
}

#[message]
pub struct Flip(pub ActorRef<bool>);

/// A light switch: each `Flip` reports the state it leaves and switches to the other.
fn switch(on: bool) -> Behavior<Flip> {
    Behaviors::receive_message(move |Flip(report): Flip| {
        report.tell(on);
        switch(!on)
    })
    .into()
}

#[test]
#[should_panic(expected = "the behavior under test has stopped")]
fn a_stopped_behavior_takes_no_more_messages() {
    let mut kit = BehaviorTestKit::new(manager());
    let _ = kit.run(Command::Retire);
    let _ = kit.run(Command::Grumble);
}

// A handler's error and a handler's panic both come back as the failure.
#[test]
fn failures_come_back_to_the_test() {
    let mut kit = BehaviorTestKit::new(manager());
    let failure = kit.run(Command::Fail).err();
    assert!(
        failure.as_ref().is_some_and(|f| f.is::<Broken>()),
        "{failure:?}"
    );
    let failure = kit.run(Command::Panic).err();
    assert!(
        failure
            .as_ref()
            .and_then(|f| f.downcast_ref::<Panicked>())
            .is_some_and(|p| p.message == "the manager panicked"),
        "{failure:?}"
    );
    // The kit does not apply supervision: the behavior goes on as it was.
    assert!(kit.is_alive());
}

#[test]
fn a_failing_setup_is_reported_by_try_new() {
    let failing: Behavior<u64> = Behaviors::setup(|_| Err::<Behavior<u64>, _>(Broken));
    let failure = BehaviorTestKit::try_new(failing).err();
    assert_eq!(
        failure.map(|f| f.to_string()),
        Some("broken on purpose".into())
    );
}

// S48: a child's own test kit, with what was sent to the child waiting in it.
#[test]
fn a_child_has_a_kit_of_its_own() {
    let mut kit = BehaviorTestKit::new(Behaviors::setup(|ctx| {
        let counter: ActorRef<u64> = ctx.spawn(counting(), "counter")?;
        counter.tell(5_u64);
        Ok::<_, tapio::SpawnError>(Behaviors::ignore::<Flip>())
    }));
    assert_eq!(
        kit.effects(),
        [Effect::Spawned {
            name: "counter".into()
        }]
    );
    let mut child = kit.child_kit::<u64>("counter").unwrap().unwrap();
    assert_eq!(child.self_ref().path().to_string(), "/user/testkit/counter");
    assert_eq!(child.run_queued(), Ok(1));
    assert_eq!(child.run(0_u64), Ok(Outcome::Stopped));

    assert_eq!(
        kit.child_kit::<u64>("counter").err(),
        Some(TestKitError::AlreadyTaken {
            name: "counter".into()
        })
    );
    assert_eq!(
        kit.child_kit::<u64>("nobody").err(),
        Some(TestKitError::NoSuchChild {
            name: "nobody".into()
        })
    );
    assert!(matches!(
        kit.child_kit::<String>("counter").err(),
        Some(TestKitError::WrongProtocol { .. })
    ));
}

/// Stops when told zero.
fn counting() -> Behavior<u64> {
    Behaviors::receive_message(|n: u64| {
        if n == 0 {
            Behaviors::stopped()
        } else {
            Behaviors::same()
        }
    })
    .into()
}

// Messages a behavior sends itself wait in the kit, to be looked at or run.
#[test]
fn messages_to_self_wait_in_the_kit() {
    let mut kit = BehaviorTestKit::new(Behaviors::receive(|ctx, n: u64| {
        if n > 0 {
            ctx.self_ref().tell(n - 1);
        }
    }));
    kit.run(3_u64).unwrap();
    assert_eq!(kit.take_queued(), [2]);
    kit.run(2_u64).unwrap();
    assert_eq!(kit.run_queued(), Ok(2));
    assert!(kit.take_queued().is_empty());
}

// A signal handed to the kit reaches the signal handler.
#[test]
fn signals_reach_the_signal_handler() {
    let mut seen = TestInbox::<String>::new();
    let to = seen.actor_ref().clone();
    let mut kit = BehaviorTestKit::new(
        Behaviors::receive_message(|n: u64| {
            if n == 0 {
                Behaviors::stopped()
            } else {
                Behaviors::same()
            }
        })
        .on_signal(move |_, signal| {
            to.tell(format!("{signal:?}"));
        }),
    );
    let gone = TestInbox::<u64>::named("gone").unwrap();
    kit.signal(Signal::Terminated(tapio::Terminated::new(
        gone.actor_ref().erase(),
    )))
    .unwrap();
    let text = seen.receive_message().unwrap_or_default();
    assert!(
        text.starts_with("Terminated(tapio://testkit/user/gone#"),
        "{text}"
    );
    // Stopping delivers `PostStop`, and nothing else arrives.
    assert_eq!(kit.run(0_u64), Ok(Outcome::Stopped));
    assert_eq!(seen.messages(), ["PostStop"]);
}

#[test]
fn an_inbox_reads_in_order_and_says_when_it_is_empty() {
    let mut inbox = TestInbox::<u64>::new();
    assert!(!inbox.has_messages());
    inbox.actor_ref().tell(1_u64);
    inbox.actor_ref().tell(2_u64);
    assert!(inbox.has_messages());
    assert_eq!(inbox.receive_message(), Some(1));
    assert_eq!(inbox.messages(), [2]);
    assert_eq!(inbox.receive_message(), None);
    assert!(TestInbox::<u64>::named("a/b").is_err());
}

#[test]
#[should_panic(expected = "/user/inbox: expected 2, but the next message was 1")]
fn an_inbox_expectation_fails_with_what_came() {
    let mut inbox = TestInbox::<u64>::new();
    inbox.actor_ref().tell(1_u64);
    inbox.expect_message(2);
}

// The kit treats an unhandled `Terminated` as a running actor does: a death pact.
#[test]
fn an_unhandled_terminated_fails_the_behavior_under_test() {
    let mut kit = BehaviorTestKit::new(Behaviors::receive_message(|_: u64| ()));
    let gone = TestInbox::<u64>::new();
    let outcome = kit.signal(Signal::Terminated(tapio::Terminated::new(
        gone.actor_ref().erase(),
    )));
    assert!(outcome.is_err_and(|failure| failure.is::<tapio::DeathPact>()));
}

/// Stops on any message; its `PostStop` handler awaits.
#[derive(Clone)]
struct SlowToClose(ActorRef<&'static str>);

#[actor]
impl SlowToClose {
    fn any(&mut self, _: u64) -> Behavior<SlowToCloseMsg> {
        Behaviors::stopped()
    }

    #[signal]
    async fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            tokio::task::yield_now().await;
            self.0.tell("closed");
        }
    }
}

// `run_async` awaits an `async` `PostStop` to its end.
#[tokio::test]
async fn run_async_awaits_an_async_post_stop() {
    let mut closed = TestInbox::<&'static str>::new();
    let mut kit = BehaviorTestKit::new(SlowToClose(closed.actor_ref().clone()));
    assert_eq!(kit.run_async(1_u64).await, Ok(Outcome::Stopped));
    closed.expect_message("closed");
}

// As in a running actor, a behavior that sees a child's escalation then fails with
// it: its supervision, which the kit leaves to a real system, decides.
#[test]
fn a_child_failed_signal_is_seen_then_fails_the_behavior() {
    let mut seen = TestInbox::<String>::new();
    let to = seen.actor_ref().clone();
    let mut kit = BehaviorTestKit::new(Behaviors::receive_message(|_: u64| ()).on_signal(
        move |_, signal| {
            if let Signal::ChildFailed(failed) = signal {
                to.tell(failed.failure().to_string());
            }
        },
    ));
    let child = TestInbox::<u64>::new();
    let failure = tapio::Failure::new(Broken);
    let outcome = kit.signal(Signal::ChildFailed(tapio::ChildFailed::new(
        child.actor_ref().erase(),
        failure.clone(),
    )));
    assert_eq!(outcome, Err(failure));
    seen.expect_message("broken on purpose".to_string());
}

#[message]
pub struct Keep(pub std::sync::Arc<()>);

// Children are listed in the kit's cell as a running actor's are; dropping the kit
// lets go of them, and of what waits in their mailboxes.
#[test]
fn a_dropped_kit_lets_go_of_its_children() {
    let token = std::sync::Arc::new(());
    let kit = BehaviorTestKit::new(Behaviors::setup_once({
        let token = token.clone();
        move |ctx: &mut ActorContext<u64>| {
            let child: ActorRef<Keep> = ctx.spawn(Behaviors::ignore(), "keeper")?;
            child.tell(Keep(token));
            Ok::<_, tapio::SpawnError>(Behaviors::ignore())
        }
    }));
    assert_eq!(
        std::sync::Arc::strong_count(&token),
        2,
        "one waits in the child"
    );
    drop(kit);
    assert_eq!(std::sync::Arc::strong_count(&token), 1);
}
