//! Resizing a pool while its router runs.
//!
//! `PoolHandle` resizes through `ActorRef::run_in`, so a resize runs inside the router,
//! in order with its messages. The routees are shared with the router in an
//! `Arc<Mutex<PoolState>>` that only the router's task locks on the message path.

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::actor::ActorRef;
use crate::features::router::RouterError;
use crate::features::router::pool::{self, Factory, PoolState};
use crate::ground::failure::IntoFailure;
use crate::ground::message::Message;

/// Resizes a pool router while it runs: from [`Pool::handle`](crate::features::router::Pool::handle).
///
/// The router's protocol is its routees', so a resize cannot be one of its messages;
/// the handle queues the resize on the router's mailbox instead, where it runs in
/// the router in order with the messages: whatever is told to the router after
/// [`resize`](Self::resize) returns (from the same task) is routed over the new
/// pool. Clone it freely; every clone resizes the same pool.
///
/// # Examples
///
/// ```
/// use tapio::prelude::*;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let system = ActorSystem::new("resize")?;
/// let pool = Routers::pool(2, || Behaviors::ignore::<u64>())?;
/// let handle = pool.handle();
/// let router = system.spawn(pool, "workers")?;
/// handle.resize(4)?; // two more routees, at the end of the rotation
/// handle.resize(1)?; // the three newest leave and stop
/// router.tell(7_u64); // routed over the one left
/// assert!(handle.resize(0).is_err());
/// system.terminate().await;
/// # Ok(())
/// # }
/// ```
pub struct PoolHandle<P: Message> {
    state: Arc<Mutex<PoolState<P>>>,
    factory: Arc<Factory<P>>,
}

impl<P: Message> PoolHandle<P> {
    pub(crate) fn new(state: Arc<Mutex<PoolState<P>>>, factory: Arc<Factory<P>>) -> Self {
        Self { state, factory }
    }

    /// Make the pool `size` routees: growing spawns new routees (from the pool's
    /// factory) at the end of the rotation; shrinking takes the most recently added
    /// routees out of the rotation at once and stops them (what they had queued
    /// becomes dead letters). Routees that stopped on their own count as gone, so a
    /// resize to the size the pool was built with replaces them.
    ///
    /// Before the router has started, this sets the size it starts with. A restart
    /// of the router brings the pool back at the size last asked for.
    ///
    /// # Errors
    ///
    /// [`RouterError::EmptyPool`] for 0 (stop the router to end the pool),
    /// [`RouterError::PoolTooLarge`] above [`MAX_POOL_SIZE`](crate::features::router::MAX_POOL_SIZE),
    /// and [`RouterError::RouterStopped`] once the router has stopped.
    pub fn resize(&self, size: usize) -> Result<(), RouterError> {
        crate::features::router::error::check_pool_size(size)?;
        let router = {
            let mut pool = PoolState::lock(&self.state);
            match &pool.router {
                Some(router) => router.clone(),
                None => {
                    pool.size = size;
                    return Ok(());
                }
            }
        };
        let state = self.state.clone();
        let factory = self.factory.clone();
        let queued = router.run_in(move |ctx| {
            let mut pool = PoolState::lock(&state);
            pool.size = size;
            pool::shrink(ctx, &mut pool, size);
            pool::grow(ctx, &mut pool, &factory, size).map_err(IntoFailure::into_failure)?;
            Ok(None)
        });
        if queued {
            Ok(())
        } else {
            Err(RouterError::RouterStopped {
                router: router.path().clone(),
            })
        }
    }

    /// The routees, in rotation order, as the router last left them: a snapshot,
    /// which a resize still queued or a routee stopping right now can change.
    pub fn routees(&self) -> Vec<ActorRef<P>> {
        PoolState::lock(&self.state).routees.members().to_vec()
    }

    /// The router that runs the pool, once it has started.
    pub fn router(&self) -> Option<ActorRef<P>> {
        PoolState::lock(&self.state).router.clone()
    }
}

impl<P: Message> Clone for PoolHandle<P> {
    fn clone(&self) -> Self {
        Self {
            state: self.state.clone(),
            factory: self.factory.clone(),
        }
    }
}

impl<P: Message> fmt::Debug for PoolHandle<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pool = PoolState::lock(&self.state);
        f.debug_struct("PoolHandle")
            .field("size", &pool.size)
            .field("router", &pool.router)
            .finish_non_exhaustive()
    }
}
