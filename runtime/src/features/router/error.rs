//! What can go wrong when a router is built or resized.
//!
//! `check_pool_size` (1 to `MAX_POOL_SIZE`) serves `Routers::pool` and every resize.

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
    /// `Routers::pool(size, ..)`, or a resize, above [`MAX_POOL_SIZE`]: a pool that
    /// large would spawn routees until memory runs out.
    ///
    /// [`MAX_POOL_SIZE`]: crate::features::router::MAX_POOL_SIZE
    #[error(
        "a pool router of {size} routees is more than the {max} a pool may have: ask for \
         fewer, or put several pools behind a group router"
    )]
    PoolTooLarge {
        /// The size asked for.
        size: usize,
        /// The most a pool may have ([`MAX_POOL_SIZE`](crate::features::router::MAX_POOL_SIZE)).
        max: usize,
    },
    /// `Routers::group` was given no refs.
    #[error(
        "a group router needs at least one routee: pass one or more `ActorRef`s to \
         `Routers::group`"
    )]
    EmptyGroup,
    /// The recipe of a pool was started a second time while the router it started
    /// first is still running. A pool's [`PoolHandle`](crate::features::router::PoolHandle)
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

/// A pool's size, checked: at least one routee, at most [`MAX_POOL_SIZE`].
///
/// [`MAX_POOL_SIZE`]: crate::features::router::MAX_POOL_SIZE
pub(crate) fn check_pool_size(size: usize) -> Result<(), RouterError> {
    match size {
        0 => Err(RouterError::EmptyPool),
        size if size > crate::features::router::MAX_POOL_SIZE => Err(RouterError::PoolTooLarge {
            size,
            max: crate::features::router::MAX_POOL_SIZE,
        }),
        _ => Ok(()),
    }
}
