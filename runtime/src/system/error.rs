//! Why an actor system could not be built: the builder's error, which names what
//! the builder composes (the wire registry, remote spawn, remote settings).
//!
//! Layer: system, the composition root.

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
    Wire(#[from] crate::net::wire::RegistryError),
    /// A factory key is registered by two `#[remote_behavior]` functions in this
    /// binary, or a factory's arguments type can carry an `ActorRef`.
    #[error(transparent)]
    Factory(#[from] crate::net::remote::spawn::SpawnerError),
    /// The remote settings cannot be used: a port that cannot be bound, or
    /// listening beyond loopback without a shared secret.
    #[error(transparent)]
    Remote(#[from] crate::net::remote::RemoteError),
    /// A setting is out of range.
    #[error("invalid setting `{setting}`: {reason}")]
    InvalidSetting {
        /// The setting.
        setting: &'static str,
        /// What is wrong with it and what would be accepted.
        reason: String,
    },
}
