// An associated const or a macro call in an `#[actor]` block is refused on the item,
// saying where it goes.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct Pinger;

macro_rules! nothing {
    () => {};
}

#[actor]
impl Pinger {
    const LIMIT: u32 = 3;
    nothing!();
    fn ping(&mut self, _: Ping) {}
}

fn main() {}
