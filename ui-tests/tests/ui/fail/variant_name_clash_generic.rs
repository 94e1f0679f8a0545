// Two instances of one generic message type would both be the variant `ActorRef`:
// the second is refused, saying to name a variant with `#[handler(variant = ..)]`.
use tapio::prelude::*;

#[derive(Clone)]
pub struct Relay;

#[actor]
impl Relay {
    fn numbers(&mut self, _: ActorRef<u64>) {}

    fn words(&mut self, _: ActorRef<&'static str>) {}
}

fn main() {}
