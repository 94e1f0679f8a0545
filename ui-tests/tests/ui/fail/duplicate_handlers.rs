// Two handlers for one message type: the second is refused, pointing at both.
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
