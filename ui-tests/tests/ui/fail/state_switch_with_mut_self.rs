// A handler that answers with a `Next` may switch, so it must take the state by
// value: `&mut self` is refused on the receiver.
use tapio::prelude::*;

#[message]
pub struct Go;
#[message]
pub struct Stop;

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
