// A handler owns its message: taking it by reference is refused, saying to take it
// by value.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: &Ping) {}
}

fn main() {}
