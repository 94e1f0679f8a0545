// A factory's actor is spawned for a peer, which talks to it over the link: every
// message of its protocol must be registered for the wire.
use tapio::prelude::*;
use tapio::remote_behavior;

/// Not registered.
#[message]
pub struct Job;

#[remote_behavior("shop.worker.v1")]
pub fn worker(_threads: u32) -> Behavior<Job> {
    Behaviors::ignore()
}

fn main() {}
