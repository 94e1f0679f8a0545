// A request handler that stays in its state answers its reply: a `ReplyThen` would
// carry a behavior out of the machine. Answering and then switching is a switching
// handler's `(reply, Next<Self>)`, which the error says.
use tapio::ReplyThen;
use tapio::prelude::*;

#[message]
pub struct Go;
#[message(reply = u64)]
pub struct Count;

pub struct Light;

#[actor(messages(Go, Count), states(Red => Green, Green => Red))]
impl Light {}

pub struct Red;

#[state(Light)]
impl Red {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Green)
    }

    fn count(&mut self, _: Count) -> ReplyThen<u64, LightMsg> {
        ReplyThen::stop(1)
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
