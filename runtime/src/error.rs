//! Errors a caller can get back from the runtime, each saying what to do about it.
//!
//! Layer: ground. Imports only other ground modules (`path`); the spawn error's
//! remote causes are the exception listed in `.ci/layers.allow`.

use crate::path::{ActorPath, InvalidName};

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

/// Why an actor system could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SystemError {
    /// The system was built outside a tokio runtime.
    #[error(
        "an actor system runs on tokio and none is running here: build it inside \
         `#[tokio::main]`, `#[tokio::test]` or `Runtime::block_on`"
    )]
    NoRuntime,
    /// The system name is unusable.
    #[error("invalid system name {name:?}: use one or more ASCII letters, digits, `-` or `_`")]
    InvalidName {
        /// The name that was refused.
        name: String,
    },
    /// A wire key is registered for two types in this binary (or in the registry
    /// given to the builder).
    #[error(transparent)]
    Wire(#[from] crate::wire::RegistryError),
    /// A factory key is registered by two `#[remote_behavior]` functions in this
    /// binary, or a factory's arguments type can carry an `ActorRef`.
    #[error(transparent)]
    Factory(#[from] crate::remote::spawn::SpawnerError),
    /// The remote settings cannot be used: a port that cannot be bound, or
    /// listening beyond loopback without a shared secret.
    #[error(transparent)]
    Remote(#[from] crate::remote::RemoteError),
    /// A setting is out of range.
    #[error("invalid setting `{setting}`: {reason}")]
    InvalidSetting {
        /// The setting.
        setting: &'static str,
        /// What is wrong with it and what would be accepted.
        reason: String,
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

/// Returned by `ctx.try_watch` for a target that cannot be watched: a message
/// adapter, which has no life of its own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{target} is a message adapter and cannot be watched: it stops with its owner, \
     so watch the owner ({owner}) instead"
)]
pub struct NotWatchable {
    /// The adapter.
    pub target: ActorPath,
    /// The actor that owns it.
    pub owner: ActorPath,
}
