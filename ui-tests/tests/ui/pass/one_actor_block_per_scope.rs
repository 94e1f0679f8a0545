// A second `#[actor]` block for one type is refused (see fail/actor_twice_for_one_type),
// but types of the same name in nested scopes are other types: each gets its block.
#![deny(warnings)]

use tapio::prelude::*;

#[message]
pub struct Ping;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: Ping) {}
}

#[derive(Clone)]
pub struct Ponger;

#[actor]
impl Ponger {
    fn ping(&mut self, _: Ping) {}
}

mod nested {
    use tapio::prelude::*;

    #[derive(Clone)]
    pub struct Pinger;

    #[actor]
    impl Pinger {
        fn ping(&mut self, _: super::Ping) {}
    }
}

fn main() {
    #[derive(Clone)]
    struct Pinger;

    #[actor]
    impl Pinger {
        fn ping(&mut self, _: Ping) {}
    }

    let _: Option<(ActorRef<PingerMsg>, ActorRef<PongerMsg>, ActorRef<nested::PingerMsg>)> = None;
}
