// A switch to a type that is not a state of this actor (here a number, and a state
// of another actor) gets the same message.
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

pub struct Other;
#[actor(messages(Stop), states(Elsewhere))]
impl Other {}
pub struct Elsewhere;
#[state(Other)]
impl Elsewhere {}

#[state(Light)]
impl Red {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(7u8)
    }
}

#[state(Light)]
impl Green {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Elsewhere)
    }
}

fn main() {}
