// A state cannot handle a message its actor's `messages(..)` does not list.
use tapio::prelude::*;

#[message]
pub struct Go;
#[message]
pub struct Stop;

pub struct Light;

#[actor(messages(Go), states(Red))]
impl Light {}

pub struct Red;

#[state(Light)]
impl Red {
    fn stop(&mut self, _: Stop) {}
}

fn main() {}
