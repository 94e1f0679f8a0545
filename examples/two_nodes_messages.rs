//! The messages of the `two_nodes` example, registered for the wire.

use tapio::prelude::*;

/// Sent back to whoever asked for the greeting.
#[message(remote = "example.greeted.v1")]
pub struct Greeted {
    /// Who was greeted.
    pub whom: String,
}

/// A request to greet someone, with the address for the answer. Both message types
/// are registered: a key on a frame is a registry lookup, never a type path.
#[message(remote = "example.greet.v1")]
pub struct Greet {
    /// Who to greet.
    pub whom: String,
    /// Where the answer goes: a ref that crosses the wire as its address.
    pub reply_to: ActorRef<Greeted>,
}
