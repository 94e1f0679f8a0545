// `#[state]` names a state machine: an actor without `messages(..)` and
// `states(..)` has no states.
use tapio::prelude::*;

#[message]
pub struct Go;

pub struct Counter;

#[actor]
impl Counter {
    fn go(&mut self, _: Go) {}
}

pub struct Red;

#[state(Counter)]
impl Red {
    fn go(&mut self, _: Go) {}
}

fn main() {}
