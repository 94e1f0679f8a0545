// With two parameters the first is the context: a `&mut` of anything else is
// refused on its type, with what to write.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _count: &mut u64, _: Ping) {}
}

fn main() {}
