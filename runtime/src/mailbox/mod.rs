//! The two lanes of an actor's mailbox, and what a user chooses about them.
//!
//! - [`user`]: the user lane carries the actor's protocol messages (and its timer
//!   ticks, and work the runtime runs inside the actor). An actor's is a mailbox of
//!   its own making, unbounded or bounded with an overflow strategy; an ask's promise
//!   has the slot its one answer goes to instead. Closing it makes every later send
//!   fail with the message handed back, so a tell racing a stop becomes a dead letter
//!   at the sender instead of a message stranded in a queue nobody reads.
//! - [`system`]: the system lane carries signals and lifecycle commands; it
//!   outranks the user lane.
//! - [`config`]: [`MailboxConfig`], [`OverflowStrategy`] and their errors.
//! - [`outbox`]: `Outbox`, the seam for the lane of a ref to an actor of another
//!   system, which `remote/` implements.
//!
//! - `refusal`: what an ask's promise receives, the answer or a `Refusal`.
//!
//! A message adapter's lane is a third kind of user lane: it queues nothing, and
//! hands each message to the adapter's owner as an [`Envelope::Adapted`].
//!
//! Layer: mailbox, above ground (names, messages, failures, events, the codec's
//! vocabulary), below the actor. Two seams reach up without naming what is above:
//! `Outbox`, the lane of a ref to an actor of another system, which `net/remote/`
//! implements; and `Carried`, the identity a system message names, which `actor/`
//! fills in. The context that queued work runs with is a type parameter (`C`) of
//! the user lane and its envelopes, which the actor layer sets to its
//! `ActorContext` (its aliases in `actor/lanes.rs`); an associated type in its place
//! would make `Send` of a recursive generic protocol overflow.

mod answer;
mod config;
mod leaks;
mod lock;
mod outbox;
mod refusal;
mod system;
mod user;

pub(crate) use self::answer::{AnswerSlot, Look};
pub use self::config::{InvalidMailbox, MailboxConfig, MailboxOverflow, OverflowStrategy};
#[cfg(feature = "testkit")]
pub(crate) use self::leaks::LeakCounts;
pub(crate) use self::leaks::Pending;
pub(crate) use self::outbox::{
    Encode, Outbox, OutboxWait, OwedTurn, UnusedPromise, dropping_promises, unused_promise,
};
pub(crate) use self::refusal::{Answer, Refusal};
pub(crate) use self::system::{
    ABANDONED, IN_HANDLER, NEVER_RAN, STOPPING, SystemLane, SystemMessage, TurnWaiter,
    WAITING_FOR_CHILDREN,
};
pub(crate) use self::user::{AdapterSlot, Batch, Forward, Offered, Passed, Sent, UserLane};

use std::fmt;

use crate::ground::failure::Failure;
use crate::ground::message::Message;

/// The type of the layer above that the mailbox carries without looking into it: an
/// actor's identity with its protocol erased, which `Watch`, `Terminated` and an
/// adapter's owner name. The actor layer says what it is (`impl Carried for Above`),
/// so the mailbox compiles against this seam and not against the cell.
pub(crate) trait Carried {
    /// An actor's identity with its protocol erased.
    type Identity: Clone + fmt::Debug + Send + Sync + 'static;
}

/// The layer above the mailbox, as the mailbox sees it: the one `Carried` impl.
pub(crate) enum Above {}

/// An actor's identity, as the mailbox carries it (see [`Carried::Identity`]).
pub(crate) type Identity = <Above as Carried>::Identity;

/// What travels on the user lane: a message; the tick of one of the actor's own
/// timers, which the cell turns into the timer's message if the timer still runs; or
/// work the runtime queued to run inside the actor, in order with its messages.
///
/// The two rare kinds are boxed twice, so each is one thin pointer: an envelope is a
/// word bigger than its message (16 bytes for a `u64`), not two, and a backlog of
/// them is that much less memory to write and read.
pub(crate) enum Envelope<P: Message, C> {
    Message(P),
    Tick(u64),
    Run(Box<Box<RunFn<P, C>>>),
    /// A message of another protocol, told to one of the actor's message adapters:
    /// translated inside the actor, in order with its messages.
    Adapted(Box<Box<dyn AdaptedMessage<P, C>>>),
}

/// A message that came through a message adapter, on its way into the actor that owns
/// the adapter (see `actor::adapter`).
pub(crate) trait AdaptedMessage<P: Message, C>: Send {
    /// Translate it inside the owner, with the adapter's current function: the
    /// message to handle, nothing (no adapter for its type: it is dead-lettered), or
    /// the owner's failure.
    fn adapt(self: Box<Self>, ctx: &mut C) -> Result<Option<P>, Failure>;

    /// It went nowhere: a dead letter naming the adapter it was told to.
    fn dead_letter(self: Box<Self>, reason: crate::ground::events::DeadLetterReason);
}

/// Work run inside the actor, on its user lane (see `ActorRef::run_in`): what it
/// returns is handled as a message, or nothing; an error or a panic is the actor's
/// failure.
pub(crate) type RunFn<P, C> = dyn FnOnce(&mut C) -> Result<Option<P>, Failure> + Send;
