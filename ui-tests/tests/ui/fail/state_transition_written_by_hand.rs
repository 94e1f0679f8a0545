// S34: `Transition` is sealed. A hand-written impl that would let `Green` switch
// back to `Red`, which the table does not allow, does not compile.
use tapio::prelude::*;
use tapio::state::{StateOf, StateMachine, Transition};

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
impl Green {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Red)
    }
}

impl Transition<Red> for Green {
    fn into_successor(target: Red) -> <<Green as StateOf>::Machine as StateMachine>::States {
        target.into_states()
    }
}

fn main() {}
