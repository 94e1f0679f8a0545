// S34: `transitions!` declares the table of a machine written without the macros.
// It cannot add a row to a state that `#[actor(states(..))]` declared: the two
// declarations of `Green` conflict.
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
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Green)
    }
}

#[state(Light)]
impl Green {}

tapio::state::transitions! {
    Green => Red;
}

fn main() {}
