//! The messages of the `node_failure` example that cross the link, registered for
//! the wire once (see `two_nodes_messages`).

use tapio::prelude::*;

/// A finished job, and the node that did it.
#[message(remote = "example.node_failure.done.v1")]
pub struct Done {
    /// Which job.
    pub item: u32,
    /// The name of the system the worker ran on.
    pub by: String,
}

/// A unit of work, with the ref its result goes back to.
#[message(remote = "example.node_failure.job.v1")]
pub struct Job {
    /// Which job.
    pub item: u32,
    /// Where the result goes: on the coordinator's node, whichever node the worker
    /// is on.
    pub reply_to: ActorRef<Done>,
}
