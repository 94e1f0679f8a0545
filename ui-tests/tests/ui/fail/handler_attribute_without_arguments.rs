// A bare `#[handler]` is refused on its name.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct Pinger;

#[actor(helpers)]
impl Pinger {
    #[handler]
    fn ping(&mut self, _: Ping) {}
}

fn main() {}
