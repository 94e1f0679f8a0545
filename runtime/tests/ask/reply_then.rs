//! A request handler that answers and then stops (or switches): `ReplyThen`. The
//! reply keeps its declared type (S21); the answer goes out before the next
//! behavior applies (S4), so the ask resolves with it and a watcher then sees the
//! actor terminated (S18) instead of the ask failing with `TargetTerminated` (S23).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, BoxError, Handled, NoReply, ReplyThen, ReplyTo};

const SECOND: Duration = Duration::from_secs(1);

#[message]
pub struct Deposit(pub u64);

/// Answered with the final balance; the account closes.
#[message(reply = u64)]
pub struct Close;

/// Answered with the balance; the account then refuses everything.
#[message(reply = u64)]
pub struct Freeze;

/// Answered with the balance, after an await; fails when the balance is zero.
#[message(reply = u64)]
pub struct Settle;

#[message(reply = u64)]
pub struct Balance;

#[derive(Clone, Default)]
pub struct Account {
    balance: u64,
}

#[derive(Debug, thiserror::Error)]
#[error("nothing to settle")]
pub struct NothingToSettle;

#[actor]
impl Account {
    fn deposit(&mut self, Deposit(n): Deposit) {
        self.balance += n;
    }

    fn balance(&mut self, _: Balance) -> u64 {
        self.balance
    }

    fn close(&mut self, _: Close) -> ReplyThen<u64, AccountMsg> {
        ReplyThen::stop(self.balance)
    }

    fn freeze(&mut self, _: Freeze) -> ReplyThen<u64, AccountMsg> {
        ReplyThen::new(self.balance, Behaviors::empty())
    }

    async fn settle(&mut self, _: Settle) -> Result<ReplyThen<u64, AccountMsg>, BoxError> {
        tokio::task::yield_now().await;
        if self.balance == 0 {
            return Err(NothingToSettle.into());
        }
        Ok(ReplyThen::stop(self.balance))
    }
}

// S21, S18: the ask gets the typed answer, then the actor is observed terminated.
#[tapio::test]
async fn a_request_handler_answers_then_stops_its_actor(system: ActorSystem) {
    let mut probe = TestProbe::<()>::new(&system);
    let account = system.spawn(Account::default(), "account").unwrap();
    probe.watch(&account);
    account.tell(Deposit(5));
    let balance: u64 = account.ask(Close).timeout(SECOND).await.unwrap();
    assert_eq!(balance, 5);
    probe.expect_terminated(&account, SECOND).await;
}

// The same from an `async` handler returning a `Result` of a `ReplyThen`.
#[tapio::test]
async fn an_async_request_handler_answers_then_stops_its_actor(system: ActorSystem) {
    let mut probe = TestProbe::<()>::new(&system);
    let account = system.spawn(Account { balance: 3 }, "account").unwrap();
    probe.watch(&account);
    assert_eq!(account.ask(Settle).timeout(SECOND).await.unwrap(), 3);
    probe.expect_terminated(&account, SECOND).await;
}

// S9: an error instead of the `ReplyThen` sends no answer and fails the actor
// (stopped, by default); the ask learns that the target stopped.
#[tapio::test]
async fn an_error_instead_of_a_reply_then_answers_nothing(system: ActorSystem) {
    let mut probe = TestProbe::<()>::new(&system);
    let account = system.spawn(Account::default(), "account").unwrap();
    probe.watch(&account);
    let answer = account.ask(Settle).timeout(SECOND).await;
    assert!(
        matches!(answer, Err(AskError::TargetTerminated { .. })),
        "{answer:?}"
    );
    probe.expect_terminated(&account, SECOND).await;
}

// S6: `ReplyThen::new` answers and then switches: to `empty` here, so the next
// request goes unanswered and the actor lives on.
#[tapio::test]
async fn a_request_handler_answers_then_switches_behavior(system: ActorSystem) {
    let mut probe = TestProbe::<()>::new(&system);
    let account = system.spawn(Account { balance: 9 }, "account").unwrap();
    probe.watch(&account);
    assert_eq!(account.ask(Freeze).timeout(SECOND).await.unwrap(), 9);
    let refused = account.ask(Balance).timeout(SECOND).await;
    assert!(
        matches!(refused, Err(AskError::Unanswered { .. })),
        "{refused:?}"
    );
    probe.expect_no_termination(Duration::from_millis(50)).await;
}

/// A request for an actor written without the macros.
pub struct Drain;

impl tapio::Message for Drain {
    type ReplySlot = ReplyTo<u64>;
}

impl tapio::Request for Drain {
    type Reply = u64;
}

pub struct Fill(pub u64);

impl tapio::Message for Fill {
    type ReplySlot = NoReply;
}

/// The protocol, as `#[actor]` would generate it.
pub enum TankMsg {
    Drain(Drain, ReplyTo<u64>),
    Fill(Fill, NoReply),
}

impl tapio::Message for TankMsg {
    type ReplySlot = NoReply;
}

impl tapio::Accepts<Drain> for TankMsg {
    fn wrap_with(message: Drain, reply: ReplyTo<u64>) -> Self {
        Self::Drain(message, reply)
    }
}

impl tapio::Answers<Drain> for TankMsg {}

impl tapio::Accepts<Fill> for TankMsg {
    fn wrap_with(message: Fill, reply: NoReply) -> Self {
        Self::Fill(message, reply)
    }
}

#[derive(Default)]
pub struct Tank {
    level: u64,
}

impl tapio::Protocol for Tank {
    type Msg = TankMsg;
}

impl Actor for Tank {
    fn handle<'a>(
        &'a mut self,
        ctx: &'a mut ActorContext<TankMsg>,
        message: TankMsg,
    ) -> Handled<'a, TankMsg> {
        match message {
            TankMsg::Fill(Fill(n), NoReply) => {
                self.level += n;
                Handled::ready(())
            }
            // `ReplyTo::answer` does what the generated dispatch does.
            TankMsg::Drain(Drain, reply) => {
                Handled::ready(reply.answer(ctx, ReplyThen::stop(self.level)))
            }
        }
    }
}

// S21: an actor written by hand answers and stops through `ReplyTo::answer`.
#[tapio::test]
async fn a_hand_written_actor_answers_then_stops(system: ActorSystem) {
    let mut probe = TestProbe::<()>::new(&system);
    let tank = system
        .spawn(Behaviors::setup(|_| Tank::default()), "tank")
        .unwrap();
    probe.watch(&tank);
    tank.tell(Fill(4));
    assert_eq!(tank.ask(Drain).timeout(SECOND).await.unwrap(), 4);
    probe.expect_terminated(&tank, SECOND).await;
}
