// Two handlers for one message type: the second is refused, one error that names
// the first.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn first(&mut self, _: Ping) {}

    fn second(&mut self, _: Ping) {}
}

fn main() {}
