// An `unsafe fn` handler is refused on the `unsafe` token: the runtime calls it and
// cannot uphold its contract.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct Pinger;

#[actor]
impl Pinger {
    unsafe fn ping(&mut self, _: Ping) {}
}

fn main() {}
