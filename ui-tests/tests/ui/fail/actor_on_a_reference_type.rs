// `#[actor]` on `impl &Pinger` is refused on the type.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct Pinger;

#[actor]
impl &Pinger {
    fn ping(&self, _: Ping) {}
}

fn main() {}
