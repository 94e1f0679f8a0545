//! Lifecycle signals: what the runtime tells an actor about itself and the actors it
//! watches. Signals travel on the system lane, ahead of ordinary messages.

use std::fmt;

use crate::actor::AnyActorRef;

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
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PreRestart => f.write_str("PreRestart"),
            Self::PostStop => f.write_str("PostStop"),
            Self::Terminated(terminated) => fmt::Debug::fmt(terminated, f),
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
