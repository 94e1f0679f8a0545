// A `#[state]` block for a type the actor's table does not list is refused on the
// type: list it in `states(..)`.
use tapio::prelude::*;

#[message]
pub struct Go;

pub struct Light;

#[actor(messages(Go), states(Red))]
impl Light {}

pub struct Red;

#[state(Light)]
impl Red {}

pub struct Forgotten;

#[state(Light)]
impl Forgotten {
    fn go(&mut self, _: Go) {}
}

fn main() {}
