// An `#[otherwise]` method takes what its state has no handler for, and stays in
// the state: answering a behavior (here the actor's stop, as a plain actor may) does
// not compile.
use tapio::prelude::*;

#[message]
pub struct Go;
#[message]
pub struct Halt;

pub struct Light;

#[actor(messages(Go, Halt), states(Red => Green, Green => Red))]
impl Light {}

pub struct Red;

#[state(Light)]
impl Red {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Green)
    }

    #[otherwise]
    fn rest(&mut self, _: LightMsg) -> Behavior<LightMsg> {
        Behaviors::stopped()
    }
}

pub struct Green;

#[state(Light)]
impl Green {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Red)
    }
}

fn main() {}
