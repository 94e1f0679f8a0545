//! [`AnyActorRef`]: an actor's identity with its protocol erased.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use tokio::sync::Notify;

use crate::actor::SystemShared;
use crate::actor::{ActorPath, ActorRef, AnyCell, CellCore, LocalCell};
use crate::ground::message::Message;
use crate::mailbox::SystemMessage;

/// An actor reference with its protocol erased: it identifies an actor, and cannot
/// send it anything.
///
/// It is what [`Terminated`](crate::Terminated) carries. It compares equal to the
/// typed [`ActorRef`] of the same actor, so a registry can find the entry a
/// `Terminated` is about.
#[derive(Clone)]
pub struct AnyActorRef {
    cell: Arc<dyn AnyCell>,
}

impl AnyActorRef {
    /// The same target with its protocol, when it is `P`.
    pub(crate) fn typed<P: Message>(&self) -> Option<ActorRef<P>> {
        self.cell
            .clone()
            .into_any()
            .downcast::<LocalCell<P>>()
            .ok()
            .map(ActorRef::local)
    }

    /// Whether the target is an actor of another system.
    pub(crate) fn is_remote(&self) -> bool {
        self.local().is_some_and(|core| core.lane().is_remote())
    }

    /// Whether the target is an ask's promise.
    pub(crate) fn is_promise(&self) -> bool {
        self.local().is_some_and(|core| core.lane().is_promise())
    }

    /// Decode a payload from a peer into the target's protocol and deliver it.
    pub(crate) fn deliver_wire(
        &self,
        key: &str,
        bytes: &[u8],
        ctx: &crate::ground::codec::WireContext<'_>,
    ) -> Result<(), crate::ground::codec::Undelivered> {
        self.cell.deliver_wire(key, bytes, ctx)
    }
}

impl AnyActorRef {
    #[inline]
    pub(crate) fn from_cell(cell: Arc<dyn AnyCell>) -> Self {
        Self { cell }
    }

    /// The actor's path.
    pub fn path(&self) -> &ActorPath {
        self.cell.path()
    }

    /// The actor's incarnation uid.
    pub fn uid(&self) -> u64 {
        self.cell.uid()
    }

    /// A handle to the target that keeps nothing of it alive.
    pub(crate) fn downgrade(&self) -> std::sync::Weak<dyn AnyCell> {
        Arc::downgrade(&self.cell)
    }

    /// The cell's core, for a target of this process (see [`AnyCell::local`]).
    pub(crate) fn local(&self) -> Option<&CellCore> {
        self.cell.local()
    }

    /// The system the target was made in.
    pub(crate) fn system(&self) -> &Arc<SystemShared> {
        self.cell.system()
    }

    /// Put a message on the actor's system lane; hands it back if the actor stopped.
    pub(crate) fn send_system(&self, message: SystemMessage) -> Result<(), SystemMessage> {
        self.cell.send_system(message)
    }

    /// Ask the actor to stop; nothing happens if it has stopped already.
    pub(crate) fn request_stop(&self) {
        self.cell.request_stop();
    }

    /// Whether the target has begun to stop.
    pub(crate) fn is_stopping(&self) -> bool {
        self.cell.is_stopping()
    }

    /// Whether the target has ended.
    pub(crate) fn has_ended(&self) -> bool {
        self.cell.has_ended()
    }

    /// Something to wait on for the target's end (see [`AnyCell::end_notice`]).
    pub(crate) fn end_notice(&self) -> Option<Arc<Notify>> {
        self.cell.end_notice()
    }

    /// Wait until the target has ended (at once if it has). For a ref to another
    /// system's actor, until its session has: its end arrives as a watch's
    /// `Terminated`, not here.
    pub(crate) async fn ended(&self) {
        if let Some(outbox) = self.outbox() {
            outbox.session_end().await;
            return;
        }
        let Some(end) = self.end_notice() else {
            return;
        };
        let notified = end.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        // An end between taking the notice and enabling it would not wake us.
        if self.has_ended() {
            return;
        }
        notified.await;
    }

    /// For a ref to an actor of another system, where it lives and the association
    /// that reaches it.
    pub(crate) fn outbox(&self) -> Option<Arc<dyn crate::mailbox::Outbox>> {
        self.cell.outbox()
    }

    /// For an ask's promise: its request was given up on the link.
    pub(crate) fn request_lost(&self) {
        self.cell.request_lost();
    }

    /// For an ask's promise: its request was refused on the asked system.
    pub(crate) fn request_refused(&self, refusal: crate::actor::promise::Refusal) {
        self.cell.request_refused(refusal);
    }

    /// The actor whose stop ends this ref: the ref's own, an adapter's owner, a
    /// narrowed ref's actor (however many times narrowed).
    pub(crate) fn ends_with(&self) -> AnyActorRef {
        let mut actor = self.clone();
        while let Some(owner) = actor.owner() {
            actor = owner;
        }
        actor
    }

    /// The actor a narrowed ref names (however many times narrowed); any other
    /// ref itself.
    pub(crate) fn unnarrowed(&self) -> AnyActorRef {
        let mut actor = self.clone();
        while actor.local().is_some_and(|core| core.lane().is_narrowed())
            && let Some(owner) = actor.owner()
        {
            actor = owner;
        }
        actor
    }

    /// For a message adapter, the actor it belongs to.
    pub(crate) fn owner(&self) -> Option<AnyActorRef> {
        self.cell.owner()
    }

    /// Wake the actor's task if it waits.
    pub(crate) fn wake(&self) {
        self.cell.wake();
    }

    pub(crate) fn same_cell(&self, other: &AnyActorRef) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.cell), Arc::as_ptr(&other.cell))
    }
}

impl PartialEq for AnyActorRef {
    fn eq(&self, other: &Self) -> bool {
        self.same_cell(other) || (self.uid() == other.uid() && self.path() == other.path())
    }
}

impl Eq for AnyActorRef {}

impl Hash for AnyActorRef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.path().hash(state);
        self.uid().hash(state);
    }
}

impl<P: Message> PartialEq<ActorRef<P>> for AnyActorRef {
    fn eq(&self, other: &ActorRef<P>) -> bool {
        self.uid() == other.uid() && self.path() == other.path()
    }
}

impl<P: Message> PartialEq<AnyActorRef> for ActorRef<P> {
    fn eq(&self, other: &AnyActorRef) -> bool {
        other == self
    }
}

impl fmt::Display for AnyActorRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.path().to_uri(), self.uid())
    }
}

impl fmt::Debug for AnyActorRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AnyActorRef({self})")
    }
}

impl<P: Message> From<ActorRef<P>> for AnyActorRef {
    fn from(actor: ActorRef<P>) -> Self {
        actor.erase()
    }
}

impl<P: Message> From<&ActorRef<P>> for AnyActorRef {
    fn from(actor: &ActorRef<P>) -> Self {
        actor.erase()
    }
}

impl From<&AnyActorRef> for AnyActorRef {
    fn from(actor: &AnyActorRef) -> Self {
        actor.clone()
    }
}
