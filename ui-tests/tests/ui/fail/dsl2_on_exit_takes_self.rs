// An `#[on_exit]` hook that takes `&mut self`: the switching handler took the state,
// so the exit hook has none.
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

    #[on_exit]
    fn leave(&mut self) {}
}

#[derive(Clone)]
pub struct Moving;

#[state(Walker)]
impl Moving {}

fn main() {}
