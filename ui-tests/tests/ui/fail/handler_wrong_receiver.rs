// A handler borrows the actor: `self` by value is refused, on the receiver.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(self, _: Ping) {}
}

fn main() {}
