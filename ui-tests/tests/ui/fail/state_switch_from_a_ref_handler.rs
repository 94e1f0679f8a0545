// A handler that may switch takes `self`, so the state can move into the next; one
// that borrows it cannot switch.
use tapio::prelude::*;

#[message]
pub struct Go;

pub struct Light;

#[actor(messages(Go), states(Red => Green, Green))]
impl Light {}

pub struct Red;
pub struct Green;

#[state(Light)]
impl Red {
    fn go(&mut self, _: Go) -> Next<Self> {
        Next::to(Green)
    }
}

#[state(Light)]
impl Green {}

fn main() {}
