// Every state of the table needs its `#[state]` block, even an empty one.
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
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Green)
    }
}

fn main() {}
