// A handler handles one concrete message type: a generic method is refused on
// its generics.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct Pinger;

#[actor]
impl Pinger {
    fn ping<T: Message>(&mut self, _: T) {}
    fn pong(&mut self, _: Ping) {}
}

fn main() {}
