// Offering a message to a bounded mailbox checks the protocol as telling does.
use tapio::prelude::*;

#[message]
pub struct Increment;

#[message]
pub struct Shelf;

pub struct Counter;

#[actor]
impl Counter {
    fn increment(&mut self, _: Increment) {}
}

fn main() {
    let _ = |counter: ActorRef<CounterMsg>| counter.offer(Shelf);
}
