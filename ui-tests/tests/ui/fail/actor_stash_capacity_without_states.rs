// `stash_capacity` is a state machine's: on an actor without states it is refused,
// not ignored.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct Pinger;

#[actor(stash_capacity = 8)]
impl Pinger {
    fn ping(&mut self, _: Ping) {}
}

fn main() {}
