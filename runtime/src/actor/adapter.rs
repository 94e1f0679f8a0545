//! Message adapters: a ref of a foreign protocol whose messages are translated into
//! the owner's, inside the owner.
//!
//! An adapter is a cell with no task, like an ask's promise: its user lane
//! ([`AdapterSlot`]) queues nothing, and hands each message to the owner as an
//! [`Envelope::Adapted`], which goes on the owner's user lane in order with the rest
//! of its traffic (never refused by a bound). The owner's cell translates it with the
//! function its context keeps for the foreign type *at that moment*, so registering a
//! second adapter for the same type replaces the function for every adapter of that
//! type. A translation that fails or panics is the owner's failure. When the owner
//! stops, what is still queued, and whatever is told to the adapter after, becomes a
//! dead letter naming the adapter.
//!
//! The adapter's cell is at `{owner}/$adapter-{uid}` (`CellCore::adapter`): its system
//! lane is closed, and its `LaneKind::Adapter` (in the system lane's padding) tells
//! `owner` it is an adapter without a lock; a third kind of `Parent`
//! would have cost every cell a word. The context keeps the translations in `Adapters`,
//! by the foreign type's `TypeId`; `ToOwner::forward` queues the `Envelope::Adapted`,
//! and the owner runs `AdaptedMessage::adapt` as it runs `Run` work (`run_work`, panics
//! caught). `AnyCell` for an adapter takes `is_stopping`, `has_ended` and `end_notice`
//! from its owner; a watch of it is a watch of its owner (`ctx.watch`, S51), and an
//! ask fails at once (`AskError::Adapter`). The `BehaviorTestKit`'s
//! `DetachedMailbox` translates adapted envelopes with the kit's context.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

use crate::actor::SystemShared;
use crate::actor::context::ActorContext;
use crate::actor::lanes::{self, Envelope, Sent, UserLane};
use crate::actor::{ActorPath, ActorRef, AnyActorRef, CellCore, LocalCell};
use crate::ground::events::DeadLetterReason;
use crate::ground::failure::Failure;
use crate::ground::message::Message;
use crate::mailbox::{AdaptedMessage, AdapterSlot, Forward, Passed};

/// The translation of one foreign type into the owner's protocol.
type Translate<F, P> = dyn Fn(F) -> Result<P, Failure> + Send + Sync;

/// The translations an actor's adapters use, by foreign type. Each value is an
/// `Arc<Translate<F, P>>` for the `F` of its key.
#[derive(Default)]
pub(crate) struct Adapters {
    by_type: HashMap<TypeId, Box<dyn Any + Send>>,
}

impl Adapters {
    /// Use `translate` for `F` from now on, in place of any earlier one.
    pub(crate) fn register<F: Message, P: Message>(&mut self, translate: Arc<Translate<F, P>>) {
        self.by_type.insert(TypeId::of::<F>(), Box::new(translate));
    }

    fn get<F: Message, P: Message>(&self) -> Option<Arc<Translate<F, P>>> {
        self.by_type
            .get(&TypeId::of::<F>())?
            .downcast_ref::<Arc<Translate<F, P>>>()
            .cloned()
    }
}

/// Make an adapter for `F` on the actor whose cell is `owner`, whose context
/// registered the translation already.
pub(crate) fn adapter<F: Message, P: Message>(owner: &Arc<LocalCell<P>>) -> ActorRef<F> {
    let owner_cell = owner.clone();
    let system = owner_cell.core.system().clone();
    let uid = system.next_uid();
    let name = format!("$adapter-{uid}");
    let path = owner_cell.core.path().child(&name);
    let forward = ToOwner {
        owner: owner_cell,
        adapter: path.clone(),
        system: system.clone(),
    };
    let cell = Arc::new(LocalCell {
        core: CellCore::adapter(path, uid, system),
        user: UserLane::adapter(AdapterSlot::new(Box::new(forward))),
    });
    ActorRef::local(cell)
}

/// An adapter's way to its owner.
struct ToOwner<P: Message> {
    owner: Arc<LocalCell<P>>,
    /// The adapter's own path, for the dead letters it causes.
    adapter: ActorPath,
    system: Arc<SystemShared>,
}

impl<F: Message, P: Message> Forward<F> for ToOwner<P> {
    fn forward(&self, message: F) -> Passed {
        let adapted: Box<lanes::Adapted<P>> = Box::new(Adapted {
            message,
            adapter: self.adapter.clone(),
            system: self.system.clone(),
        });
        let waiting = self.owner.core.lane().reader_waiting();
        match self
            .owner
            .user
            .send(Envelope::Adapted(Box::new(adapted)), waiting)
        {
            Sent::Refused(Envelope::Adapted(adapted)) => {
                (*adapted).dead_letter(DeadLetterReason::RecipientStopped);
                Passed::Refused
            }
            Sent::Refused(_) | Sent::DeadLettered => Passed::Refused,
            // Adapted envelopes are never refused by a bound.
            Sent::Queued
            | Sent::PushedOut(_)
            | Sent::Full { .. }
            | Sent::Unwanted(..)
            | Sent::FullThere => Passed::Queued,
        }
    }

    fn owner(&self) -> AnyActorRef {
        ActorRef::local(self.owner.clone()).erase()
    }
}

/// A foreign message on its way into the owner.
struct Adapted<F: Message> {
    message: F,
    adapter: ActorPath,
    system: Arc<SystemShared>,
}

impl<F: Message, P: Message> AdaptedMessage<P, ActorContext<P>> for Adapted<F> {
    fn adapt(self: Box<Self>, ctx: &mut ActorContext<P>) -> Result<Option<P>, Failure> {
        match ctx.adapters().and_then(Adapters::get::<F, P>) {
            Some(translate) => translate(self.message).map(Some),
            // No translation for its type (a context built without it): nobody
            // handles it.
            None => {
                self.system
                    .dead_letter(self.message, &self.adapter, DeadLetterReason::Unhandled);
                Ok(None)
            }
        }
    }

    fn dead_letter(self: Box<Self>, reason: DeadLetterReason) {
        self.system.dead_letter(self.message, &self.adapter, reason);
    }
}
