// A hook runs on the way into a state and stays in it: an `#[on_entry]` that answers
// a behavior does not compile (the behavior would be dropped unseen).
use tapio::prelude::*;

#[message]
pub struct Go;

pub struct Light;

#[actor(messages(Go), states(Red => Green, Green => Red))]
impl Light {}

pub struct Red;

#[state(Light)]
impl Red {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Green)
    }

    #[on_entry]
    fn enter(&mut self) -> Behavior<LightMsg> {
        Behaviors::same()
    }
}

pub struct Green;

#[state(Light)]
impl Green {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Red)
    }
}

fn main() {}
