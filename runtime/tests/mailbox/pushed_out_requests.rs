//! S54: a request that a mailbox drops or pushes out fails its ask at once, with a
//! reason that says so, never at its deadline: under drop-oldest `PushedOut` (whether
//! or not a dead-letter subscriber keeps the letter), under drop-new and fail
//! `MailboxFull`; for a plain `#[actor]` and for a state machine.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use tapio::prelude::*;
use tapio::{AskError, DeadLetter, DeadLetterReason, MailboxConfig, OverflowStrategy};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::timeout;

const WAIT: Duration = Duration::from_secs(10);
/// An ask's deadline far beyond `WAIT`: an ask that ends within `WAIT` did not end
/// at its deadline.
const DEADLINE: Duration = Duration::from_secs(600);

/// Holds the actor in its handler until the gate opens.
#[message]
pub struct Hold;

#[message(reply = u64)]
pub struct Square(pub u64);

#[derive(Clone)]
pub struct Squarer {
    gate: Arc<Semaphore>,
    holding: mpsc::UnboundedSender<()>,
}

#[actor]
impl Squarer {
    async fn hold(&mut self, _: Hold) {
        let _ = self.holding.send(());
        let _ = self.gate.acquire().await;
    }

    fn square(&mut self, Square(n): Square) -> u64 {
        n * n
    }
}

#[derive(Clone)]
pub struct Shop {
    gate: Arc<Semaphore>,
    holding: mpsc::UnboundedSender<()>,
}

#[actor(messages(Hold, Square), states(Open))]
impl Shop {}

#[derive(Clone)]
pub struct Open;

#[state(Shop)]
impl Open {
    async fn hold(&mut self, shop: &mut Shop, _: Hold) {
        let _ = shop.holding.send(());
        let _ = shop.gate.acquire().await;
    }

    fn square(&mut self, Square(n): Square) -> u64 {
        n * n
    }
}

/// A held actor with a mailbox of one behind its handler, and the gate that frees it.
struct Held<P: Message> {
    actor: ActorRef<P>,
    gate: Arc<Semaphore>,
}

async fn held<P, B>(
    system: &ActorSystem,
    strategy: OverflowStrategy,
    behavior: impl FnOnce(Arc<Semaphore>, mpsc::UnboundedSender<()>) -> B,
) -> Held<P>
where
    P: Message + tapio::Accepts<Hold>,
    B: tapio::IntoBehavior<P>,
{
    let gate = Arc::new(Semaphore::new(0));
    let (holding_tx, mut holding) = mpsc::unbounded_channel();
    let actor = system
        .spawn_with(
            behavior(gate.clone(), holding_tx),
            "held",
            MailboxConfig::bounded(1, strategy).unwrap(),
        )
        .unwrap();
    actor.tell(Hold);
    timeout(WAIT, holding.recv())
        .await
        .expect("the actor holds")
        .unwrap();
    Held { actor, gate }
}

/// Two asks at a held actor whose mailbox has room for one: under drop-oldest the
/// second pushes the first out, under drop-new the second is refused. The refused
/// ask must fail while the actor is still held (so at once, not at its deadline,
/// which is `DEADLINE`), with `reason`; then the gate opens and the other is
/// answered. A subscriber keeps every dead letter until the end, and one letter
/// names the refused request.
async fn one_refused_while_held<P>(system: &ActorSystem, held: &Held<P>, strategy: OverflowStrategy)
where
    P: tapio::Answers<Square>,
{
    let mut letters = system.events().subscribe::<DeadLetter>();
    let first = held.actor.ask(Square(3)).timeout(DEADLINE);
    let second = held.actor.ask(Square(4)).timeout(DEADLINE);
    let (refused, answered, expected, refused_n) = match strategy {
        OverflowStrategy::DropOldest => (first, second, 16, 3),
        _ => (second, first, 9, 4),
    };
    let error = timeout(WAIT, refused)
        .await
        .expect("the refused ask ends while its target is held")
        .expect_err("refused");
    let letter = timeout(WAIT, letters.recv())
        .await
        .expect("a letter")
        .unwrap();
    let kept: Vec<DeadLetter> = vec![letter.clone()];
    held.gate.add_permits(1);
    assert_eq!(
        timeout(WAIT, answered).await.expect("answered in time"),
        Ok(expected)
    );
    match strategy {
        OverflowStrategy::DropOldest => {
            assert!(matches!(error, AskError::PushedOut { .. }), "{error:?}");
            assert!(error.to_string().contains("drop-oldest"), "{error}");
            assert_eq!(letter.reason(), &DeadLetterReason::PushedOut, "{letter}");
        }
        _ => {
            assert!(matches!(error, AskError::MailboxFull { .. }), "{error:?}");
            assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull, "{letter}");
        }
    }
    assert!(error.to_string().contains("/user/held"), "{error}");
    assert_eq!(
        letter.take_message::<Square>().map(|Square(n)| n),
        Some(refused_n),
        "{letter}"
    );
    drop(kept);
}

fn squarer(gate: Arc<Semaphore>, holding: mpsc::UnboundedSender<()>) -> Squarer {
    Squarer { gate, holding }
}

fn shop(gate: Arc<Semaphore>, holding: mpsc::UnboundedSender<()>) -> Machine<Shop> {
    Machine::new(Shop { gate, holding }, Open)
}

// S54: a request pushed out of a full drop-oldest mailbox fails its ask at once
// with `PushedOut`, while a dead-letter subscriber keeps its letter.
#[tapio::test]
async fn s54_a_request_pushed_out_by_drop_oldest_fails_its_ask_at_once(system: ActorSystem) {
    let held = held(&system, OverflowStrategy::DropOldest, squarer).await;
    one_refused_while_held(&system, &held, OverflowStrategy::DropOldest).await;
}

// S54, the same for a state machine's request.
#[tapio::test]
async fn s54_a_state_machines_request_pushed_out_fails_its_ask_at_once(system: ActorSystem) {
    let held = held(&system, OverflowStrategy::DropOldest, shop).await;
    one_refused_while_held(&system, &held, OverflowStrategy::DropOldest).await;
}

// S54 (and S29): a request a full drop-new mailbox refuses fails its ask at once
// with `MailboxFull`; the queued one is answered.
#[tapio::test]
async fn s54_a_request_refused_by_drop_new_fails_its_ask_at_once(system: ActorSystem) {
    let held = held(&system, OverflowStrategy::DropNew, squarer).await;
    one_refused_while_held(&system, &held, OverflowStrategy::DropNew).await;
}
