//! Routing logics: which routee (or routees) a message goes to.
//!
//! Round-robin; broadcast (a clone to each); consistent hashing, where the message's key
//! is hashed with std's `DefaultHasher` (fixed keys, so a key stays on its routee) and
//! the routee picked by rendezvous hashing on uids (`Rotation::by_key`).

use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use crate::actor::ActorRef;
use crate::features::router::rotation::Rotation;
use crate::ground::message::Message;

type KeyFn<P> = dyn Fn(&P) -> u64 + Send + Sync;

/// How a router picks routees. Round-robin unless the builder says otherwise.
pub(crate) enum Logic<P: Message> {
    /// Each routee in turn, in the order they joined.
    RoundRobin,
    /// Every routee, each with its own clone.
    Broadcast(fn(&P) -> P),
    /// The routee rendezvous hashing gives the message's key.
    ConsistentHash(Arc<KeyFn<P>>),
}

impl<P: Message> Logic<P> {
    /// A consistent-hash logic from a function that gives each message its key.
    pub(crate) fn consistent_hash<K, F>(key: F) -> Self
    where
        K: Hash,
        F: Fn(&P) -> K + Send + Sync + 'static,
    {
        Self::ConsistentHash(Arc::new(move |message| {
            // `DefaultHasher::new` has fixed keys: the same key hashes the same way
            // for the life of the process, which is what keeps a key on its routee.
            let mut hasher = DefaultHasher::new();
            key(message).hash(&mut hasher);
            hasher.finish()
        }))
    }

    /// Hand `message` to the routee(s) this logic picks. A routee that cannot take
    /// it makes it a dead letter, as any tell does. With no routee at all, the
    /// message comes back.
    pub(crate) fn route(&self, routees: &mut Rotation<ActorRef<P>>, message: P) -> Result<(), P> {
        match self {
            Self::RoundRobin => match routees.next() {
                Some(routee) => routee.tell(message),
                None => return Err(message),
            },
            Self::Broadcast(clone) => {
                let Some((last, others)) = routees.members().split_last() else {
                    return Err(message);
                };
                for routee in others {
                    routee.tell(clone(&message));
                }
                last.tell(message);
            }
            Self::ConsistentHash(key) => match routees.by_key(key(&message), ActorRef::uid) {
                Some(routee) => routee.tell(message),
                None => return Err(message),
            },
        }
        Ok(())
    }
}

impl<P: Message> Clone for Logic<P> {
    fn clone(&self) -> Self {
        match self {
            Self::RoundRobin => Self::RoundRobin,
            Self::Broadcast(clone) => Self::Broadcast(*clone),
            Self::ConsistentHash(key) => Self::ConsistentHash(key.clone()),
        }
    }
}

impl<P: Message> fmt::Debug for Logic<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::RoundRobin => "RoundRobin",
            Self::Broadcast(_) => "Broadcast",
            Self::ConsistentHash(_) => "ConsistentHash",
        })
    }
}
