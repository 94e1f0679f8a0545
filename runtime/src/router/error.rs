//! What can go wrong when a router is built or resized.

/// A router that cannot be built, or a resize that cannot be done. Each message
/// says what to do instead. When a constructor returns one of these, nothing was
/// spawned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RouterError {
    /// `Routers::pool(0, ..)`, or a resize to zero: a pool with no routee would take
    /// every message and hand it to nobody.
    #[error(
        "a pool router needs at least one routee, not 0: ask for 1 or more; to end the \
         pool, stop the router itself"
    )]
    EmptyPool,
    /// `Routers::group` was given no refs.
    #[error(
        "a group router needs at least one routee: pass one or more `ActorRef`s to \
         `Routers::group`"
    )]
    EmptyGroup,
    /// The recipe of a pool was started a second time while the router it started
    /// first is still running. A pool's [`PoolHandle`](crate::router::PoolHandle)
    /// resizes one router, so one recipe runs one router at a time. This is the
    /// failure the second router's start fails with.
    #[error(
        "this pool already runs as {running}: a pool's handle resizes one router, so \
         build a second pool with `Routers::pool` to run another"
    )]
    PoolAlreadyRunning {
        /// The path of the router that runs the pool.
        running: crate::ActorPath,
    },
    /// The pool's router has stopped, so there is nothing left to resize.
    #[error(
        "the pool router {router} has stopped: there is nothing left to resize; build \
         and spawn a new pool"
    )]
    RouterStopped {
        /// The path of the router that stopped.
        router: crate::ActorPath,
    },
}
