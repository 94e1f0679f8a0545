//! Lifecycle signals: what the runtime tells an actor about itself and the actors it
//! watches. Signals travel on the system lane, ahead of ordinary messages.
//!
//! Layer: actor (the actor core).

use std::fmt;

use crate::actor::AnyActorRef;
use crate::ground::failure::Failure;

/// A lifecycle signal, handed to a behavior's signal handler.
///
/// A signal handler returns the next behavior like a message handler does. Returning
/// `Behaviors::unhandled()` for [`Signal::Terminated`] fails the actor with
/// [`DeathPact`]: an actor that watches another and ignores its death has lost
/// something it depended on.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Signal {
    /// Sent before a restart, to the incarnation that is about to be replaced.
    PreRestart,
    /// Sent after the actor and all of its children have stopped; the last thing the
    /// actor sees. Best effort: an actor still in a handler when the system's
    /// shutdown deadline passes is cancelled and never sees it.
    PostStop,
    /// An actor this one watches has stopped.
    Terminated(Terminated),
    /// A child escalated its failure to this actor and has stopped. The signal is
    /// for seeing it (log it, count it, tell someone); the decision is not the
    /// handler's: whatever it answers, this actor then fails with the child's error,
    /// under its own supervision (a `resume` clause for that error type absorbs the
    /// escalation; `restart` rebuilds the subtree). A handler that itself fails makes
    /// its own failure the one decided on.
    ChildFailed(ChildFailed),
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PreRestart => f.write_str("PreRestart"),
            Self::PostStop => f.write_str("PostStop"),
            Self::Terminated(terminated) => fmt::Debug::fmt(terminated, f),
            Self::ChildFailed(failed) => fmt::Debug::fmt(failed, f),
        }
    }
}

/// A watched actor has stopped. Delivered exactly once per watch, on the system lane,
/// even when the actor had already stopped before the watch.
#[derive(Clone, PartialEq, Eq)]
pub struct Terminated {
    actor: AnyActorRef,
}

impl Terminated {
    /// The signal for `actor`'s end; for handing to a `BehaviorTestKit`.
    pub fn new(actor: AnyActorRef) -> Self {
        Self { actor }
    }

    /// The actor that stopped. It compares equal to the typed ref that was watched.
    pub fn actor(&self) -> &AnyActorRef {
        &self.actor
    }
}

impl fmt::Debug for Terminated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Terminated({})", self.actor)
    }
}

/// A child escalated its failure: the signal [`Signal::ChildFailed`] carries.
#[derive(Clone, PartialEq, Eq)]
pub struct ChildFailed {
    child: AnyActorRef,
    failure: Failure,
}

impl ChildFailed {
    /// The signal for `child`'s escalated `failure`; for handing to a
    /// `BehaviorTestKit`.
    pub fn new(child: AnyActorRef, failure: Failure) -> Self {
        Self { child, failure }
    }

    /// The child that failed (it has stopped).
    pub fn child(&self) -> &AnyActorRef {
        &self.child
    }

    /// Its failure, with the paths it climbed so far (this actor's included).
    pub fn failure(&self) -> &Failure {
        &self.failure
    }
}

impl fmt::Debug for ChildFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChildFailed({}: {})", self.child, self.failure)
    }
}

/// The failure of an actor that watched another and returned `unhandled` for its
/// `Terminated` signal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{actor} stopped and the actor watching it did not handle `Terminated`: handle the \
     signal, or unwatch before the watched actor stops"
)]
pub struct DeathPact {
    /// The watched actor that stopped.
    pub actor: AnyActorRef,
}
