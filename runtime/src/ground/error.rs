//! Errors a caller can get back from the runtime, each saying what to do about it.
//!
//! The errors of the local core. Why a system could not be built, which can be a
//! remote setting's fault, is `system/error.rs`'s.
//!
//! Layer: ground. Imports only other ground modules (`path`).

use crate::ground::path::{ActorPath, InvalidName};

/// Why an actor was not spawned. When `spawn` returns one of these, nothing started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The name breaks the naming rules.
    #[error(transparent)]
    InvalidName(#[from] InvalidName),
    /// A live sibling already has this name.
    #[error(
        "an actor named {name:?} is already running under {parent}: pick another name, \
         or wait for the running one's `Terminated` before reusing it"
    )]
    NameTaken {
        /// The name asked for.
        name: String,
        /// The parent both would live under.
        parent: ActorPath,
    },
    /// The system has terminated, or is terminating.
    #[error("the actor system {system:?} has terminated: create a new system to spawn actors")]
    SystemTerminated {
        /// The name of the system.
        system: String,
    },
    /// The system runs no actors: it belongs to a `BehaviorTestKit` (only with the
    /// `testkit` feature).
    #[cfg(feature = "testkit")]
    #[error(
        "the actor system {system:?} runs no actors (it belongs to a BehaviorTestKit): \
         spawn children with `ctx.spawn`, which the kit records"
    )]
    NoRuntime {
        /// The name of the system.
        system: String,
    },
    /// The tokio runtime the system was built in has shut down, so no task can run.
    #[error(
        "the tokio runtime of actor system {system:?} has shut down: spawn actors while \
         the runtime runs, and terminate the system before the runtime ends"
    )]
    RuntimeShutDown {
        /// The name of the system.
        system: String,
    },
    /// The parent is stopping, and takes no new children.
    #[error(
        "{parent} is stopping and takes no new children: spawn from an actor that is not stopping, or before the stop"
    )]
    ParentStopping {
        /// The parent that is stopping.
        parent: ActorPath,
    },
}

/// Returned by [`ActorSystem::stop`](crate::ActorSystem::stop) for an actor that is
/// not a top-level actor of that system.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{target} is not a top-level actor of the system {system:?}: the system stops only \
     children of /user; stop a deeper actor from its parent (`ctx.stop`), or send it a \
     message that makes it stop itself"
)]
pub struct NotTopLevel {
    /// The actor that was to be stopped.
    pub target: ActorPath,
    /// The system asked to stop it.
    pub system: String,
}

/// Returned by `ctx.stop` for an actor that is not a child of the caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{target} is not a child of {caller}: an actor can stop only its own children; \
     send the target a message that makes it stop itself instead"
)]
pub struct NotAChild {
    /// The actor that was to be stopped.
    pub target: ActorPath,
    /// The actor that tried.
    pub caller: ActorPath,
}
