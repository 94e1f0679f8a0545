// A state's handlers live in one `#[state]` block: a second block for the same
// state is refused on its type, once.
use tapio::prelude::*;

#[message]
pub struct Go;
#[message]
pub struct Stop;

pub struct Light;

#[actor(messages(Go, Stop), states(Red))]
impl Light {}

pub struct Red;

#[state(Light)]
impl Red {
    fn go(&mut self, _: Go) {}
}

#[state(Light)]
impl Red {
    fn stop(&mut self, _: Stop) {}
}

fn main() {}
