//! Pool routers: routees that are the router's own children, built from a factory.
//!
//! `PoolState` holds the routees, the size and which router runs the pool. Routees are
//! the router's children, built by the factory and named `routee-1`, `routee-2`, ...
//! (no number used twice). `start`, the pool's setup, refuses a second router for one
//! pool (`PoolAlreadyRunning`) and, on a restart, keeps the routees that are still its
//! children; `grow` adds routees at the end of the rotation and `shrink` stops the
//! newest.

use std::fmt;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

use crate::actor::ActorRef;
use crate::actor::behavior::{Behavior, Behaviors, IntoBehavior};
use crate::actor::context::ActorContext;
use crate::features::router::actor::{Held, RouterActor};
use crate::features::router::logic::Logic;
use crate::features::router::rotation::Rotation;
use crate::features::router::{PoolHandle, RouterError};
use crate::ground::error::SpawnError;
use crate::ground::failure::BoxError;
use crate::ground::message::Message;
use crate::mailbox::MailboxConfig;

pub(crate) type Factory<P> = dyn Fn() -> Behavior<P> + Send + Sync;

/// A pool router, ready to spawn: built by [`Routers::pool`](crate::Routers::pool).
///
/// Spawn it like any behavior, with `system.spawn(pool, name)` or
/// `ctx.spawn(pool, name)`. When it starts, the router spawns its routees as its own
/// children, named `routee-1`, `routee-2`, ... (a number is never used twice by one
/// pool), and watches them. Routing is round-robin unless
/// [`broadcast`](Self::broadcast) or [`consistent_hash`](Self::consistent_hash) says
/// otherwise. A [`PoolHandle`] from [`handle`](Self::handle) resizes the pool while
/// it runs.
///
/// A restart of the router (when it is supervised and fails, for instance because a
/// routee escalated) spawns the pool again at its current size; routees that
/// outlived the restart (`Restart::with_stop_children(false)`) stay in it.
pub struct Pool<P: Message> {
    factory: Arc<Factory<P>>,
    logic: Logic<P>,
    state: Arc<Mutex<PoolState<P>>>,
}

/// What a pool and its router share: the routees, the size asked for, and which
/// router runs the pool.
pub(crate) struct PoolState<P: Message> {
    pub(crate) routees: Rotation<ActorRef<P>>,
    /// How many routees the pool should have.
    pub(crate) size: usize,
    /// The router that runs (or ran) this pool.
    pub(crate) router: Option<ActorRef<P>>,
    /// Whether that router is running: set when it starts, cleared by its
    /// `PostStop`.
    pub(crate) running: bool,
    /// How many routees this pool has spawned, for their names.
    pub(crate) spawned: u64,
    /// The mailbox each routee is spawned with.
    pub(crate) mailbox: MailboxConfig,
}

impl<P: Message> PoolState<P> {
    pub(crate) fn lock(state: &Mutex<Self>) -> std::sync::MutexGuard<'_, Self> {
        state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<P: Message> Pool<P> {
    pub(crate) fn new(size: usize, factory: Arc<Factory<P>>) -> Result<Self, RouterError> {
        crate::features::router::error::check_pool_size(size)?;
        Ok(Self {
            factory,
            logic: Logic::RoundRobin,
            state: Arc::new(Mutex::new(PoolState {
                routees: Rotation::default(),
                size,
                router: None,
                running: false,
                spawned: 0,
                mailbox: MailboxConfig::unbounded(),
            })),
        })
    }

    /// Route each message to the next routee in turn, in the order they joined the
    /// pool: the default.
    pub fn round_robin(mut self) -> Self {
        self.logic = Logic::RoundRobin;
        self
    }

    /// Route each message to every routee: each gets its own clone.
    pub fn broadcast(mut self) -> Self
    where
        P: Clone,
    {
        self.logic = Logic::Broadcast(P::clone);
        self
    }

    /// Route each message by the key `key` gives it: the same key always reaches the
    /// same routee while the pool does not change. Keys are spread by rendezvous
    /// hashing, so when a routee leaves only the keys it had move (each to another
    /// routee), and a routee that joins takes keys from the others and moves no
    /// other key. Keys are hashed with a hasher that is fixed for the life of the
    /// process, not across builds of it.
    pub fn consistent_hash<K, F>(mut self, key: F) -> Self
    where
        K: Hash,
        F: Fn(&P) -> K + Send + Sync + 'static,
    {
        self.logic = Logic::consistent_hash(key);
        self
    }

    /// Spawn each routee with `mailbox` instead of an unbounded one. A routee whose
    /// bounded mailbox is full when the router hands it a message does with it what
    /// its [`OverflowStrategy`](crate::OverflowStrategy) says; what it refuses is a
    /// dead letter. The router's own mailbox is chosen where the router is spawned
    /// (`spawn_with`).
    pub fn routee_mailbox(self, mailbox: MailboxConfig) -> Self {
        PoolState::lock(&self.state).mailbox = mailbox;
        self
    }

    /// A handle that resizes this pool's router while it runs. See [`PoolHandle`].
    pub fn handle(&self) -> PoolHandle<P> {
        PoolHandle::new(self.state.clone(), self.factory.clone())
    }
}

impl<P: Message> IntoBehavior<P> for Pool<P> {
    fn into_behavior(self) -> Behavior<P> {
        let Self {
            factory,
            logic,
            state,
        } = self;
        Behaviors::setup(move |ctx| start(ctx, &state, &factory, &logic))
    }
}

/// Start (or restart) the router of a pool: claim the pool, keep the routees that
/// are still its children, spawn the rest.
fn start<P: Message>(
    ctx: &mut ActorContext<P>,
    state: &Arc<Mutex<PoolState<P>>>,
    factory: &Arc<Factory<P>>,
    logic: &Logic<P>,
) -> Result<RouterActor<P>, BoxError> {
    let mut pool = PoolState::lock(state);
    let me = ctx.self_ref().clone();
    if pool.running
        && let Some(running) = &pool.router
        && *running != me
    {
        return Err(RouterError::PoolAlreadyRunning {
            running: running.path().clone(),
        }
        .into());
    }
    pool.router = Some(me);
    pool.running = true;
    // A restart has stopped the old incarnation's children unless it was told to
    // keep them, and dropped its watches either way.
    let children = ctx.children();
    pool.routees
        .retain(|routee| children.iter().any(|child| child == routee));
    for routee in pool.routees.members() {
        ctx.watch(routee);
    }
    let size = pool.size;
    grow(ctx, &mut pool, factory, size)?;
    Ok(RouterActor::new(Held::Pool(state.clone()), logic.clone()))
}

/// Spawn and watch routees at the end of the rotation until there are `size`.
pub(crate) fn grow<P: Message>(
    ctx: &mut ActorContext<P>,
    pool: &mut PoolState<P>,
    factory: &Arc<Factory<P>>,
    size: usize,
) -> Result<(), SpawnError> {
    while pool.routees.len() < size {
        pool.spawned += 1;
        let name = format!("routee-{}", pool.spawned);
        let routee = ctx.spawn_with(factory(), &name, pool.mailbox)?;
        ctx.watch(&routee);
        pool.routees.push(routee);
    }
    Ok(())
}

/// Take the newest routees out of the rotation until there are `size`, and stop
/// them. They leave at once, so nothing more is routed to them; what they had
/// queued becomes dead letters as they stop.
pub(crate) fn shrink<P: Message>(ctx: &mut ActorContext<P>, pool: &mut PoolState<P>, size: usize) {
    while pool.routees.len() > size {
        let Some(routee) = pool.routees.pop_newest() else {
            return;
        };
        ctx.unwatch(&routee);
        // Not a child any more only if it has stopped already: nothing to do then.
        let _ = ctx.stop(&routee);
    }
}

impl<P: Message> fmt::Debug for Pool<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = PoolState::lock(&self.state).size;
        f.debug_struct("Pool")
            .field("size", &size)
            .field("logic", &self.logic)
            .finish_non_exhaustive()
    }
}
