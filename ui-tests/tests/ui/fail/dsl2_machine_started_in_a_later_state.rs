// A machine spawned in a state that is not its table's first row: the first row is the
// initial state.
use tapio::prelude::*;

#[message]
pub struct Go;

#[derive(Clone)]
pub struct Walker;

#[actor(messages(Go), states(Idle => Moving, Moving))]
impl Walker {}

#[derive(Clone)]
pub struct Idle;

#[state(Walker)]
impl Idle {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Moving)
    }
}

#[derive(Clone)]
pub struct Moving;

#[state(Walker)]
impl Moving {}

fn main() {
    let _ = Machine::new(Walker, Moving);
}
