// A handler of a plain message answers with `()`, a next behavior, or a `Result` of
// one: anything else is refused on the return type.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: Ping) -> u32 {
        1
    }
}

fn main() {}
