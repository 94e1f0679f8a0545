//! The mailbox's types as the actor layer uses them: with the context that queued
//! work and adapted messages run with set to [`ActorContext`]. The mailbox is
//! generic over that context (it stores the work and never runs it), so it names
//! nothing of this layer.

use crate::actor::context::ActorContext;
use crate::mailbox;

/// What travels on an actor's user lane (see [`mailbox::Envelope`]).
pub(crate) type Envelope<P> = mailbox::Envelope<P, ActorContext<P>>;

/// The backlog a cell task took from its lane (see [`mailbox::Batch`]).
pub(crate) type Batch<P> = mailbox::Batch<P, ActorContext<P>>;

/// An actor's user lane (see [`mailbox::UserLane`]).
pub(crate) type UserLane<P> = mailbox::UserLane<P, ActorContext<P>>;

/// What a send to a user lane did (see [`mailbox::Sent`]).
pub(crate) type Sent<P> = mailbox::Sent<P, ActorContext<P>>;

/// A message that came through an adapter, translated inside its owner (see
/// [`mailbox::AdaptedMessage`]).
pub(crate) type Adapted<P> = dyn mailbox::AdaptedMessage<P, ActorContext<P>>;
