// A state machine lists each message of its protocol once.
use tapio::prelude::*;

#[message]
pub struct Go;

pub struct Light;

#[actor(messages(Go, Go), states(Red))]
impl Light {}

pub struct Red;

#[state(Light)]
impl Red {
    fn go(&mut self, _: Go) {}
}

fn main() {}
