// A handler's error fails the actor, and supervision matches failures by type: the
// error must be a `std::error::Error` (or a message, `String` or `&'static str`,
// which becomes one). A `u32` is neither.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: Ping) -> Result<(), u32> {
        Err(7)
    }
}

fn main() {}
