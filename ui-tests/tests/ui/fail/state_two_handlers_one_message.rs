// A state has one handler per message type.
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
    fn go(&mut self, _: Go) {}
    fn go_again(&mut self, _: Go) {}
}

fn main() {}
