//! The seam for a lane that is not local: a ref to an actor of another system.
//!
//! The mailbox knows such a lane only as an [`Outbox`]: something that takes a
//! message to encode, waits for room for an offer, carries a watch, and sends a
//! refusal back. `remote/lane.rs` implements it over a link; the mailbox never
//! names the association, the frame encoder or the system's transport. The local
//! lanes (an actor's mailbox, a promise's slot, an adapter) do not go through it.
//!
//! Layer: mailbox (the seam itself). Imports ground; names an actor's identity only
//! as the mailbox's `Identity` (see `Carried`).

use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::ground::codec::Encoded;
use crate::ground::events::DeadLetterReason;
use crate::mailbox::Identity;
use crate::mailbox::Refusal;

/// A message encoded for the wire, when asked: `Message::encode_wire` of the
/// message being sent (`None`: its type is not registered for the wire).
pub(crate) type Encode<'a> = &'a mut dyn FnMut() -> Option<Result<Encoded, String>>;

/// The wait of an offer to another system's actor for room on the link: `Err`
/// holds the reason of the message's dead letter.
pub(crate) type OutboxWait = Pin<Box<dyn Future<Output = Result<(), DeadLetterReason>> + Send>>;

/// The lane of a ref to an actor of another system, as the mailbox sees it.
pub(crate) trait Outbox: Send + Sync {
    /// Encode a message of type `message_type` with `encode` and queue it for the
    /// peer; or the reason of its dead letter.
    fn send(&self, message_type: &'static str, encode: Encode<'_>) -> Result<(), DeadLetterReason>;

    /// As `send`, but wait for room on the link: the wait, or the reason of the
    /// message's dead letter when it cannot even begin.
    fn offer(
        &self,
        message_type: &'static str,
        encode: Encode<'_>,
    ) -> Result<OutboxWait, DeadLetterReason>;

    /// `watcher` watches this ref's actor (`me`), over the link; without one, it
    /// hears `Terminated` at once.
    fn watch(&self, watcher: &Identity, me: &Identity);

    /// `watcher` no longer watches this ref's actor.
    fn unwatch(&self, watcher: &Identity, me: &Identity);

    /// The request this ref (a promise on the peer) answers was refused here: say
    /// so to the peer.
    fn refuse(&self, refusal: Refusal);

    /// Dropping the ref will say nothing to the peer: it was written into a message.
    fn mark_used(&self);

    /// Why a message to this peer goes nowhere.
    fn no_link(&self) -> DeadLetterReason;

    /// Whether the session the ref is bound to is over (or there is no link).
    fn session_over(&self) -> bool;

    /// Wait until the session the ref is bound to ends; at once without a link.
    fn session_end(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;

    /// The implementation, for the remote side's own tests.
    #[cfg(test)]
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A refusal owed to a peer's ask, waiting on an actor's system lane for the
/// outcome of its turn (see `remote/lane.rs`, `OwedRefusal`). Dropped unsent, it
/// says that the actor stopped.
pub(crate) trait OwedTurn: Send + fmt::Debug {
    /// Send it: the actor is `stopping`, or not.
    fn send(self: Box<Self>, stopping: bool);
}

/// What dropping an unused ref to a peer's promise says to the asker, on this
/// thread now: set by the cell around what it drops, read by the remote lane.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnusedPromise {
    /// The request went unanswered: its handler dropped it, or a restart discarded
    /// it from a stash.
    Unanswered,
    /// The actor of this uid stops, and what it held goes with it: if the request
    /// was delivered to it, its target stopped; if to another actor, that one
    /// passed it on and it went unanswered.
    Stopped(u64),
}

std::thread_local! {
    static UNUSED_PROMISE: Cell<UnusedPromise> = const { Cell::new(UnusedPromise::Unanswered) };
}

/// Run `f` with what an unused promise ref dropped on this thread says set to
/// `said`; the setting before comes back after, even if `f` panics.
pub(crate) fn dropping_promises<T>(said: UnusedPromise, f: impl FnOnce() -> T) -> T {
    struct Restore(UnusedPromise);
    impl Drop for Restore {
        fn drop(&mut self) {
            UNUSED_PROMISE.with(|now| now.set(self.0));
        }
    }
    let _restore = Restore(UNUSED_PROMISE.with(|now| now.replace(said)));
    f()
}

/// What an unused promise ref dropped on this thread now says.
pub(crate) fn unused_promise() -> UnusedPromise {
    UNUSED_PROMISE.with(Cell::get)
}
