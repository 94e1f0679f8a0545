//! Behaviors: the next behavior a handler answers with (S6), deferred construction
//! and struct-style actors (S7).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason, Signal};

const SECOND: Duration = Duration::from_secs(1);

#[message]
#[derive(Debug, PartialEq, Eq)]
pub enum Door {
    Open,
    Close,
    Knock(ActorRef<&'static str>),
    Leave,
}

fn closed() -> Behavior<Door> {
    Behaviors::receive_message(|message: Door| match message {
        Door::Open => opened(),
        Door::Knock(who) => {
            who.tell("nobody answers");
            Behaviors::same()
        }
        Door::Close => Behaviors::unhandled(),
        Door::Leave => Behaviors::stopped(),
    })
    .into()
}

fn opened() -> Behavior<Door> {
    Behaviors::receive_message(|message: Door| match message {
        Door::Close => closed(),
        Door::Knock(who) => {
            who.tell("come in");
            Behaviors::same()
        }
        Door::Open => Behaviors::unhandled(),
        Door::Leave => Behaviors::stopped(),
    })
    .into()
}

// S6: `same` keeps the behavior, another behavior switches to it, `unhandled` makes
// the message an unhandled dead letter (and keeps the behavior), `stopped` stops.
#[tapio::test(start_paused = true)]
async fn the_answer_is_the_next_behavior(system: ActorSystem) {
    let mut probe = TestProbe::<&'static str>::new(&system);
    let mut letters = system.events().subscribe::<DeadLetter>();
    let door = system.spawn(closed(), "door").unwrap();
    let visitor = probe.actor_ref().clone();
    let knock = || Door::Knock(visitor.clone());

    door.tell(knock());
    assert_eq!(probe.expect_message(SECOND).await, "nobody answers");
    door.tell(Door::Open); // switch
    door.tell(knock());
    assert_eq!(probe.expect_message(SECOND).await, "come in");

    door.tell(Door::Open); // not for this state: unhandled
    let letter = tokio::time::timeout(SECOND, letters.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(letter.reason(), &DeadLetterReason::Unhandled);
    assert_eq!(letter.recipient().to_string(), "/user/door");
    assert!(letter.message_type().ends_with("Door"));
    door.tell(knock()); // and the behavior is the same as before
    assert_eq!(probe.expect_message(SECOND).await, "come in");

    probe.watch(&door);
    door.tell(Door::Leave);
    probe.expect_terminated(&door, SECOND).await;
}

// S7: deferred construction. The factory runs when the actor starts, on the actor's
// own task, not inside `spawn`; it gets the context.
#[tapio::test]
async fn setup_runs_when_the_actor_starts(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let runs = Arc::new(AtomicUsize::new(0));
    let (counter, to) = (runs.clone(), probe.actor_ref().clone());
    let actor = system
        .spawn(
            Behaviors::setup(move |ctx| {
                counter.fetch_add(1, Ordering::SeqCst);
                to.tell(format!("set up at {}", ctx.path()));
                Behaviors::ignore::<u64>()
            }),
            "deferred",
        )
        .unwrap();
    // On a current-thread runtime, the actor's task has not run yet.
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(
        probe.expect_message(SECOND).await,
        "set up at /user/deferred"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let _ = actor;
}

#[derive(Debug, thiserror::Error)]
#[error("broken")]
pub struct Broken;

// S7: the factory runs again on every restart, building fresh state each time.
#[tapio::test]
async fn setup_runs_again_on_every_restart(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let runs = Arc::new(AtomicUsize::new(0));
    let (counter, to) = (runs.clone(), probe.actor_ref().clone());
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| {
                let run = counter.fetch_add(1, Ordering::SeqCst) + 1;
                to.tell(format!("setup run {run}"));
                let seen = AtomicUsize::new(0);
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| {
                    if n == 0 {
                        return Err(Broken);
                    }
                    let count = seen.fetch_add(1, Ordering::SeqCst) + 1;
                    to.tell(format!("message {count} of this incarnation"));
                    Ok(())
                })
            }))
            .on_failure::<Broken>(SupervisorStrategy::restart()),
            "rebuilt",
        )
        .unwrap();
    assert_eq!(probe.expect_message(SECOND).await, "setup run 1");
    for _ in 0..2 {
        actor.tell(1_u64);
        actor.tell(0_u64);
    }
    actor.tell(1_u64);
    assert_eq!(
        probe.receive_messages(5, SECOND).await,
        [
            "message 1 of this incarnation",
            "setup run 2",
            "message 1 of this incarnation",
            "setup run 3",
            "message 1 of this incarnation",
        ]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

/// A struct-style actor: its fields are its state.
#[derive(Clone, Default)]
struct Account {
    balance: i64,
    history: Vec<i64>,
}

#[message]
pub struct Deposit(pub i64);

#[message]
pub struct Statement(pub ActorRef<(i64, Vec<i64>)>);

#[actor]
impl Account {
    fn deposit(&mut self, Deposit(amount): Deposit) {
        self.balance += amount;
        self.history.push(amount);
    }

    fn statement(&mut self, Statement(to): Statement) {
        to.tell((self.balance, self.history.clone()));
    }
}

// S7: a struct with fields is a first-class way to write an actor: spawned by value,
// or built by a setup.
#[tapio::test]
async fn struct_actors_keep_their_state_in_fields(system: ActorSystem) {
    let mut probe = TestProbe::<(i64, Vec<i64>)>::new(&system);
    let by_value = system.spawn(Account::default(), "by-value").unwrap();
    let by_setup = system
        .spawn(Behaviors::setup(|_| Account::default()), "by-setup")
        .unwrap();
    for account in [&by_value, &by_setup] {
        account.tell(Deposit(10));
        account.tell(Deposit(-3));
        account.tell(Statement(probe.actor_ref().clone()));
        assert_eq!(probe.expect_message(SECOND).await, (7, vec![10, -3]));
    }
}

/// An actor with `async` handlers, handlers taking the context, and a signal handler.
#[derive(Clone)]
struct Greeter {
    log: ActorRef<String>,
}

#[message]
pub struct Greet(pub String);

#[message]
pub struct WhoAmI;

#[message]
pub struct Leave;

#[actor]
impl Greeter {
    async fn greet(&mut self, Greet(whom): Greet) {
        tokio::task::yield_now().await;
        self.log.tell(format!("hello, {whom}"));
    }

    fn who_am_i(&mut self, ctx: &mut Ctx<Self>, _: WhoAmI) {
        self.log.tell(ctx.path().to_string());
    }

    fn leave(&mut self, _: Leave) -> Behavior<GreeterMsg> {
        Behaviors::stopped()
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        self.log.tell(format!("signal: {signal:?}"));
    }
}

#[tapio::test]
async fn struct_actors_take_async_handlers_contexts_and_signals(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let greeter = system
        .spawn(
            Greeter {
                log: probe.actor_ref().clone(),
            },
            "greeter",
        )
        .unwrap();
    greeter.tell(Greet("world".into()));
    greeter.tell(WhoAmI);
    greeter.tell(Leave);
    let lines = probe.receive_messages(3, SECOND).await;
    assert_eq!(lines, ["hello, world", "/user/greeter", "signal: PostStop"]);
}

// A behavior cannot start as `same`: that is a failure of the actor, which stops.
#[tapio::test]
async fn starting_as_same_is_a_failure(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let odd = system.spawn(Behaviors::same::<u64>(), "odd").unwrap();
    probe.watch(&odd);
    probe.expect_terminated(&odd, SECOND).await;
}
