//! Narrowed refs (S53): `ActorRef<P>::narrow::<Q>()` is the same actor, reached
//! through a narrower protocol `Q` whose every message `P` accepts.
//!
//! A narrowed ref is a cell with no task, as an adapter is, but with the actor's own
//! path and uid, so equality, hashing and its text are the actor's. Its lane
//! (`LaneKind::Narrowed`, closed) takes no system messages, and its user lane is an
//! `AdapterSlot` whose `Forward` (`ToActor`) widens each message into `P` at once,
//! on the sender's thread, with its reply slot, and delivers it to the actor as a
//! message of its own: bounds, overflow, dead letters and asks are the actor's. Its
//! `owner` is the actor, so a watch of it watches the actor (`Terminated` names the
//! narrowed ref, S51), and its stop, end and end notice are the actor's.

use std::sync::Arc;

use crate::actor::lanes::{Envelope, UserLane};
use crate::actor::{ActorRef, AnyActorRef, CellCore, Delivery, LocalCell, Target};
use crate::ground::message::{Accepts, Message};
use crate::mailbox::{AdapterSlot, Forward, Passed};

/// Where a narrowed ref's messages go: the actor, widened into its protocol.
struct ToActor<P: Message> {
    actor: Arc<LocalCell<P>>,
}

impl<Q: Message, P: Accepts<Q>> Forward<Q> for ToActor<P> {
    fn forward(&self, message: Q) -> Passed {
        match self.actor.deliver_to(Envelope::Message(P::wrap(message))) {
            Delivery::Queued => Passed::Queued,
            Delivery::Full => Passed::Full,
            Delivery::Refused => Passed::Refused,
        }
    }

    fn owner(&self) -> AnyActorRef {
        ActorRef::local(self.actor.clone()).erase()
    }
}

impl<P: Message> ActorRef<P> {
    /// The same actor, as a ref of the narrower protocol `Q`: every message of `Q`
    /// is one of `P`'s (`P: Accepts<Q>`, checked at compile time), so hand out only
    /// what others may send (S53). It is the same actor to every other part of
    /// tapio: it compares and hashes equal to this ref erased
    /// ([`erase`](Self::erase)), prints the same, watching it watches the actor,
    /// and asks through it are answered by the actor.
    ///
    /// `Q` is one of `P`'s messages, or a sub-protocol that `#[actor]` declares
    /// (`#[actor(sub_protocols(Public(A, B)))]` makes the enum `Public`, whose messages
    /// can be asked through the narrowed ref as through the actor's own).
    ///
    /// ```
    /// use tapio::prelude::*;
    ///
    /// #[message]
    /// pub struct Deposit(pub u64);
    ///
    /// #[message(reply = u64)]
    /// pub struct Balance;
    ///
    /// #[message]
    /// pub struct Audit;
    ///
    /// #[derive(Clone, Default)]
    /// pub struct Account(u64);
    ///
    /// #[actor(sub_protocols(Customer(Deposit, Balance)))]
    /// impl Account {
    ///     fn deposit(&mut self, Deposit(n): Deposit) {
    ///         self.0 += n;
    ///     }
    ///
    ///     fn balance(&mut self, _: Balance) -> u64 {
    ///         self.0
    ///     }
    ///
    ///     fn audit(&mut self, _: Audit) {}
    /// }
    ///
    /// # #[tokio::main] async fn main() {
    /// let system = ActorSystem::new("bank").unwrap();
    /// let account = system.spawn(Account::default(), "account").unwrap();
    /// // A customer can deposit and ask the balance, and cannot audit.
    /// let customer: ActorRef<Customer> = account.narrow();
    /// customer.tell(Deposit(5));
    /// assert_eq!(customer.ask(Balance).await.unwrap(), 5);
    /// assert_eq!(customer.erase(), account.erase());
    /// // A single message narrows too.
    /// let depositor: ActorRef<Deposit> = account.narrow();
    /// depositor.tell(Deposit(1));
    /// assert_eq!(account.ask(Balance).await.unwrap(), 6);
    /// system.terminate().await;
    /// # }
    /// ```
    pub fn narrow<Q: Message>(&self) -> ActorRef<Q>
    where
        P: Accepts<Q>,
    {
        let Target::Local(actor) = &self.target;
        let core = &actor.core;
        let forward: Box<dyn Forward<Q>> = Box::new(ToActor {
            actor: actor.clone(),
        });
        ActorRef::local(Arc::new(LocalCell {
            core: CellCore::narrowed(core.path().clone(), core.uid(), core.system().clone()),
            user: UserLane::adapter(AdapterSlot::new(forward)),
        }))
    }
}
