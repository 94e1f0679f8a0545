// A state handler that takes `&mut self` (it stays) answers `Next`, which only a
// handler taking `self` can give.
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
    fn go(&mut self, _: Go) -> Next<Self> {
        Next::to(Moving)
    }
}

#[derive(Clone)]
pub struct Moving;

#[state(Walker)]
impl Moving {}

fn main() {}
