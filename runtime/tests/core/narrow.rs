//! Narrowed refs (S53): `ActorRef::narrow::<Q>()` is the same actor through a
//! narrower protocol: tells and asks reach it, its bound and its dead letters are
//! the actor's, it compares and hashes as the actor, watching it watches the actor,
//! and stopping it stops the actor. Sub-protocols declared by `#[actor]`, for a
//! plain actor and for a state machine.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use crate::support::outside::{Gate, T, recv_within};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, DeadLetter, DeadLetterReason, MailboxConfig, OverflowStrategy};
use tokio::sync::mpsc;

#[message]
pub struct Deposit(pub u64);

#[message(reply = u64)]
pub struct Balance;

#[message]
pub struct Audit(pub mpsc::UnboundedSender<u64>);

/// Holds the account in its handler until the gate opens.
#[message]
pub struct Pause(pub Gate, pub mpsc::UnboundedSender<()>);

#[derive(Clone, Default)]
pub struct Account {
    total: u64,
}

#[actor(sub_protocols(Customer(Deposit, Balance), Auditor(Audit)))]
impl Account {
    fn deposit(&mut self, Deposit(n): Deposit) {
        self.total += n;
    }

    fn balance(&mut self, _: Balance) -> u64 {
        self.total
    }

    fn audit(&mut self, Audit(to): Audit) {
        let _ = to.send(self.total);
    }

    fn pause(&mut self, Pause(gate, paused): Pause) {
        let _ = paused.send(());
        gate.pass();
    }
}

// S53: a ref narrowed to a sub-protocol tells and asks the same actor, and is the
// same actor to equality, hashing and display; a single message narrows too.
#[tapio::test]
async fn s53_a_narrowed_ref_is_the_same_actor(system: ActorSystem) {
    let account = system.spawn(Account::default(), "account").unwrap();
    let customer: ActorRef<Customer> = account.narrow();
    customer.tell(Deposit(5));
    assert_eq!(customer.ask(Balance).timeout(T).await.unwrap(), 5);
    let depositor: ActorRef<Deposit> = account.narrow();
    depositor.tell(Deposit(2));
    let auditor: ActorRef<Auditor> = account.narrow();
    let (to, mut audited) = mpsc::unbounded_channel();
    auditor.tell(Audit(to));
    assert_eq!(recv_within(&mut audited, T).await, 7);
    assert_eq!(customer.erase(), account.erase());
    assert_eq!(depositor.erase(), customer.erase());
    assert_eq!(customer.to_string(), account.to_string());
    assert_eq!(customer.path(), account.path());
    let refs: HashSet<AnyActorRef> = [account.erase(), customer.erase(), auditor.erase()]
        .into_iter()
        .collect();
    assert_eq!(refs.len(), 1, "one actor: {refs:?}");
    // Narrowed twice: still the actor.
    let again: ActorRef<Deposit> = customer.narrow();
    again.tell(Deposit(1));
    assert_eq!(account.ask(Balance).timeout(T).await.unwrap(), 8);
}

// S53 + S18: watching a narrowed ref (once or twice narrowed) watches the actor,
// and `Terminated` names the narrowed ref; stopping through it stops the actor; a
// tell through it afterwards is a dead letter naming the actor.
#[tapio::test]
async fn s53_watching_and_stopping_through_a_narrowed_ref(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let account = system.spawn(Account::default(), "account").unwrap();
    let customer: ActorRef<Customer> = account.narrow();
    let depositor: ActorRef<Deposit> = customer.narrow();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&depositor);
    system.stop(&customer).unwrap();
    probe.expect_terminated(&depositor, T).await;
    depositor.tell(Deposit(3));
    let letter = tokio::time::timeout(T, letters.recv())
        .await
        .expect("a letter")
        .unwrap();
    assert_eq!(letter.recipient(), account.path(), "{letter}");
    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(
        letter.take_message::<Deposit>().map(|Deposit(n)| n),
        Some(3)
    );
    let asked = account.ask(Balance).timeout(T).await;
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
}

// S53 + S54: an ask through a narrowed ref into the actor's full drop-new mailbox
// fails at once with `MailboxFull`, as an ask through the actor's own ref does.
#[tapio::test(worker_threads = 2)]
async fn s53_s54_an_ask_through_a_narrowed_ref_meets_the_actors_bound(system: ActorSystem) {
    let account = system
        .spawn_with(
            Account::default(),
            "account",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    let gate = Gate::new();
    let (paused_tx, mut paused) = mpsc::unbounded_channel();
    account.tell(Pause(gate.clone(), paused_tx));
    recv_within(&mut paused, T).await;
    let customer: ActorRef<Customer> = account.narrow();
    customer.tell(Deposit(4));
    let refused = customer.ask(Balance).timeout(T).await;
    assert!(
        matches!(refused, Err(AskError::MailboxFull { .. })),
        "{refused:?}"
    );
    gate.open();
    // `offer` waits for room behind the deposit.
    let (to, mut audited) = mpsc::unbounded_channel();
    assert!(
        tokio::time::timeout(T, account.offer(Audit(to)))
            .await
            .unwrap()
    );
    assert_eq!(recv_within(&mut audited, T).await, 4);
}

#[message]
pub struct Open;

#[message(reply = &'static str)]
pub struct Status;

pub struct Door;

#[actor(
    messages(Open, Status),
    states(Shut => Ajar, Ajar),
    sub_protocols(Visitor(Status))
)]
impl Door {}

pub struct Shut;

#[state(Door)]
impl Shut {
    fn open(self, _: Open) -> Next<Self> {
        Next::to(Ajar)
    }

    fn status(&mut self, _: Status) -> &'static str {
        "shut"
    }
}

pub struct Ajar;

#[state(Door)]
impl Ajar {
    fn status(&mut self, _: Status) -> &'static str {
        "ajar"
    }
}

// S53 + S34: a state machine's sub-protocol: a visitor can ask the status, and what
// it asks is answered by whatever state the machine is in.
#[tapio::test]
async fn s53_s34_a_state_machine_narrows_to_its_sub_protocol(system: ActorSystem) {
    let door = system
        .spawn(Behaviors::setup(|_| Machine::new(Door, Shut)), "door")
        .unwrap();
    let visitor: ActorRef<Visitor> = door.narrow();
    assert_eq!(visitor.ask(Status).timeout(T).await.unwrap(), "shut");
    door.tell(Open);
    assert_eq!(visitor.ask(Status).timeout(T).await.unwrap(), "ajar");
}
