// A ref crosses a link only for a protocol whose messages are all registered for
// the wire: a registered message cannot carry a ref of a protocol that is not, and
// the error names the type that is missing.
use tapio::prelude::*;

#[message(remote = "shop.add.v1")]
pub struct Add(pub u64);

/// Not registered.
#[message]
pub struct Reset;

pub struct Counter;

#[actor]
impl Counter {
    fn add(&mut self, _: Add) {}
    fn reset(&mut self, _: Reset) {}
}

#[message(remote = "shop.subscribe.v1")]
pub struct Subscribe {
    pub counter: ActorRef<CounterMsg>,
}

fn main() {}
