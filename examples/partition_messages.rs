//! The messages of the `partition` example, registered for the wire once (see
//! `two_nodes_messages`).

use tapio::prelude::*;

/// Proof that an actor is still working: the answer to a [`Poke`].
#[message(remote = "example.partition.poked.v1")]
pub struct Poked {
    /// The name of the system the answer came from.
    pub by: String,
}

/// A poke, with the ref the answer goes to.
#[message(remote = "example.partition.poke.v1")]
pub struct Poke {
    /// The name of the system the poke came from.
    pub by: String,
    /// Where the answer goes.
    pub reply_to: ActorRef<Poked>,
}
