// S34, its compile-time clause: a switch to a state the table does not list after
// the current one does not compile, and the message names the declared successors.
use tapio::prelude::*;

#[message]
pub struct Go;
#[message]
pub struct Stop;

pub struct Light;

#[actor(messages(Go, Stop), states(Red => Green | Amber, Green => Amber, Amber => Red))]
impl Light {}

pub struct Red;
pub struct Green;
pub struct Amber;

#[state(Light)]
impl Red {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Green)
    }

    // `Red` has two successors, and neither is `Red`.
    fn stop(self, _: Stop) -> Next<Self> {
        Next::to(Red)
    }
}

#[state(Light)]
impl Green {
    // `Green` has a single successor, `Amber`: rustc must not guess it.
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Red)
    }

    fn stop(self, _: Stop) -> Next<Self> {
        Next::<Self>::to(Red)
    }
}

#[state(Light)]
impl Amber {
    // Written with the successor's data moved in, as often: the same message.
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Green)
    }
}

fn main() {}
