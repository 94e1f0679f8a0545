//! Group routers: routees the user spawned elsewhere and hands over as refs.
//!
//! A ref given twice counts once. The router watches its routees and does not stop
//! them with it. A routee that is a message adapter stops with its owner: the group
//! watches the owner, whose `Terminated` drops every adapter it owns.

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use crate::actor::ActorRef;
use crate::actor::behavior::{Behavior, Behaviors, IntoBehavior};
use crate::features::router::RouterError;
use crate::features::router::actor::{Held, RouterActor};
use crate::features::router::logic::Logic;
use crate::features::router::rotation::Rotation;
use crate::ground::message::Message;

/// A group router, ready to spawn: built by [`Routers::group`](crate::Routers::group).
///
/// Its routees are the refs it was given, not its children: the router watches
/// them, and stopping the router does not stop them. A routee that stops leaves the
/// group; when none is left, the router stops. Routing is round-robin, in the order
/// the refs were given, unless [`broadcast`](Self::broadcast) or
/// [`consistent_hash`](Self::consistent_hash) says otherwise.
pub struct Group<P: Message> {
    routees: Arc<[ActorRef<P>]>,
    logic: Logic<P>,
}

impl<P: Message> Group<P> {
    pub(crate) fn new(routees: impl IntoIterator<Item = ActorRef<P>>) -> Result<Self, RouterError> {
        let mut distinct: Vec<ActorRef<P>> = Vec::new();
        for routee in routees {
            if !distinct.contains(&routee) {
                distinct.push(routee);
            }
        }
        if distinct.is_empty() {
            return Err(RouterError::EmptyGroup);
        }
        Ok(Self {
            routees: distinct.into(),
            logic: Logic::RoundRobin,
        })
    }

    /// Route each message to the next routee in turn: the default.
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
    /// same routee while the group does not change, and when a routee leaves, only
    /// the keys it had move. See [`Pool::consistent_hash`](crate::features::router::Pool::consistent_hash).
    pub fn consistent_hash<K, F>(mut self, key: F) -> Self
    where
        K: Hash,
        F: Fn(&P) -> K + Send + Sync + 'static,
    {
        self.logic = Logic::consistent_hash(key);
        self
    }
}

impl<P: Message> IntoBehavior<P> for Group<P> {
    fn into_behavior(self) -> Behavior<P> {
        let Self { routees, logic } = self;
        Behaviors::setup(move |ctx| {
            let mut rotation = Rotation::default();
            for routee in routees.iter() {
                // A message adapter stops with its owner (S28, S51): the owner is
                // watched, once for all its adapters, whose `Terminated` drops them
                // all (`RouterActor`).
                match routee.erase().owner() {
                    Some(owner) => ctx.watch_any(owner),
                    None => ctx.watch(routee),
                }
                rotation.push(routee.clone());
            }
            RouterActor::new(Held::Own(rotation), logic.clone())
        })
    }
}

impl<P: Message> fmt::Debug for Group<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Group")
            .field("routees", &self.routees)
            .field("logic", &self.logic)
            .finish()
    }
}
