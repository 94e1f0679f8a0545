// A message is moved to the actor: telling a reference to one is refused, naming
// the reference type.
use tapio::prelude::*;

#[message]
pub struct Increment {
    pub by: u64,
}

pub struct Counter;

#[actor]
impl Counter {
    fn increment(&mut self, _: Increment) {}
}

fn main() {
    let increment = Increment { by: 1 };
    let _ = |counter: ActorRef<CounterMsg>| counter.tell(&increment);
}
