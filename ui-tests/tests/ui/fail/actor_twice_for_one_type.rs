// One `#[actor]` block per actor type: its handlers make one protocol enum and one
// dispatch. A second block is refused once, on its type, saying to merge them.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[message]
pub struct Pong;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: Ping) {}
}

#[actor]
impl Pinger {
    fn pong(&mut self, _: Pong) {}
}

fn main() {}
