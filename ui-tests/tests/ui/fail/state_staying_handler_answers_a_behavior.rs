// A handler that borrows its state (`&mut self`) stays in it: answering a behavior
// would leave the machine by a side door, so it does not compile, and the error on
// the return type says how to switch or stop instead.
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

    fn halt(&mut self, _: Halt) -> Behavior<LightMsg> {
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
