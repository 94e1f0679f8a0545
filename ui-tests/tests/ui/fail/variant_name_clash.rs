// Two message types with the same name from two modules would both be the variant
// `Ping` of the protocol enum: the second is refused, saying how to rename it.
use tapio::prelude::*;

mod a {
    use tapio::prelude::*;

    #[message]
    pub struct Ping;
}

mod b {
    use tapio::prelude::*;

    #[message]
    pub struct Ping;
}

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping_a(&mut self, _: a::Ping) {}

    fn ping_b(&mut self, _: b::Ping) {}
}

fn main() {}
