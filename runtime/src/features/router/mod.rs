//! Routers: one address in front of several actors. This module owns [`Routers`]
//! (the constructors), [`Pool`] and [`PoolHandle`] (routees that are the router's
//! children, resizable while it runs), [`Group`] (routees given as refs), the
//! routing logics, and [`RouterError`].
//!
//! A router is an ordinary actor whose protocol is its routees' protocol `P`: it
//! handles one message at a time, and all it does with one is hand it on to a
//! routee, whole, so a request asked of the router is answered by the routee that
//! gets it. Which routee gets it is the routing logic's choice:
//!
//! - **round-robin** (the default): each routee in turn, strictly, in the order
//!   they joined;
//! - **broadcast** (`P: Clone`): every routee, each with a clone;
//! - **consistent hashing** by a key the message gives: the same key always lands
//!   on the same routee while the routees do not change; keys are spread by
//!   rendezvous hashing, so a routee leaving moves only its own keys.
//!
//! The router watches its routees. A routee that stops leaves, and the rotation
//! carries on over the others from where it was; when the last one stops the router
//! stops too, so whoever watches it sees `Terminated`. A message handed to a routee
//! that can no longer take it becomes a [`DeadLetter`](crate::DeadLetter), as every
//! tell does: a routee that has stopped, or whose bounded mailbox
//! ([`Pool::routee_mailbox`]) is full.
//!
//! A router creates no backpressure of its own: telling it never blocks, and it
//! hands a message on as soon as it has it. [`offer`](crate::ActorRef::offer) on a
//! router waits for room in the router's own mailbox (spawn it with `spawn_with` and
//! a bounded [`MailboxConfig`](crate::MailboxConfig)), not in its routees'.
//!
//! A [`Pool`]'s routees are the router's children, each built by the factory (so
//! each has its own state). Their failures are theirs: a routee whose behavior is
//! `Behaviors::supervise(..)` restarts in place and keeps its place in the pool; one
//! that stops, leaves. A [`PoolHandle`] grows or shrinks the pool while it runs.
//!
//! # Examples
//!
//! Six jobs over three workers, two each, in strict rotation:
//!
//! ```
//! use tapio::prelude::*;
//!
//! #[message]
//! pub struct Job { pub n: u64, pub done: ActorRef<String> }
//!
//! fn worker() -> Behavior<Job> {
//!     Behaviors::receive(|ctx, job: Job| {
//!         job.done.tell(format!("{} did job {}", ctx.path().name(), job.n));
//!     })
//!     .into()
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let system = ActorSystem::new("pool")?;
//! let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
//! let done = system.spawn(Behaviors::receive_message(move |line: String| { let _ = tx.send(line); }), "done")?;
//! let workers = system.spawn(Routers::pool(3, worker)?, "workers")?;
//! for n in 1..=6 {
//!     workers.tell(Job { n, done: done.clone() });
//! }
//! let mut lines = Vec::new();
//! while lines.len() < 6 {
//!     lines.push(rx.recv().await.ok_or("the reader stopped")?);
//! }
//! // The workers run side by side, so their reports arrive in any order.
//! lines.sort();
//! assert_eq!(lines, [
//!     "routee-1 did job 1", "routee-1 did job 4",
//!     "routee-2 did job 2", "routee-2 did job 5",
//!     "routee-3 did job 3", "routee-3 did job 6",
//! ]);
//! system.terminate().await;
//! # Ok(())
//! # }
//! ```
//!
//! Bad input is refused when the router is built, before anything is spawned:
//!
//! ```
//! use tapio::prelude::*;
//! use tapio::router::RouterError;
//!
//! let none = Routers::pool(0, || Behaviors::ignore::<u64>());
//! assert_eq!(none.err(), Some(RouterError::EmptyPool));
//! let nobody = Routers::group(Vec::<ActorRef<u64>>::new());
//! assert_eq!(nobody.err(), Some(RouterError::EmptyGroup));
//! ```

mod actor;
mod error;
mod group;
mod handle;
mod logic;
mod pool;
mod rotation;

pub use self::error::RouterError;

/// The most routees a pool may have: [`Routers::pool`] and
/// [`PoolHandle::resize`] refuse a larger size with [`RouterError::PoolTooLarge`].
pub const MAX_POOL_SIZE: usize = 65_536;
pub use self::group::Group;
pub use self::handle::PoolHandle;
pub use self::pool::Pool;

use std::sync::Arc;

use crate::actor::ActorRef;
use crate::actor::behavior::IntoBehavior;
use crate::ground::message::Message;

/// The constructors of routers: [`Routers::pool`] and [`Routers::group`].
#[derive(Debug, Clone, Copy)]
pub struct Routers;

impl Routers {
    /// A pool of `size` routees, each built by `factory` as a child of the router
    /// when the router starts. Spawn what this returns.
    ///
    /// `factory` runs once per routee, so each has its own state; it runs again
    /// for every routee a resize or a restart of the router adds. It runs inside the
    /// router, with the pool's state locked: it must not call the pool's
    /// [`PoolHandle`], which would wait for that lock.
    ///
    /// # Errors
    ///
    /// [`RouterError::EmptyPool`] if `size` is 0, [`RouterError::PoolTooLarge`] if it
    /// is more than [`MAX_POOL_SIZE`].
    pub fn pool<P, F, B>(size: usize, factory: F) -> Result<Pool<P>, RouterError>
    where
        P: Message,
        F: Fn() -> B + Send + Sync + 'static,
        B: IntoBehavior<P>,
    {
        Pool::new(size, Arc::new(move || factory().into_behavior()))
    }

    /// A group router over `routees`, actors spawned elsewhere. The router watches
    /// them but does not own them. A ref given twice counts once. Spawn what this
    /// returns.
    ///
    /// A routee may be a message adapter: an adapter stops with its owner, so the
    /// router watches the owner, and when the owner stops, every adapter of that
    /// owner leaves the group.
    ///
    /// # Errors
    ///
    /// [`RouterError::EmptyGroup`] if `routees` is empty.
    pub fn group<P, I>(routees: I) -> Result<Group<P>, RouterError>
    where
        P: Message,
        I: IntoIterator<Item = ActorRef<P>>,
    {
        Group::new(routees)
    }
}
