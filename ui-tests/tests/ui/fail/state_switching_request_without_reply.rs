// A request's switching handler answers `(reply, Next<Self>)`: one that answers a
// bare `Next<Self>`, or a tuple with a reply of the wrong type, is refused on its
// return type with what to answer.
use tapio::prelude::*;

#[message(reply = bool)]
pub struct Connect;
#[message(reply = bool)]
pub struct Hangup;

pub struct Link;

#[actor(messages(Connect, Hangup), states(Down => Up, Up => Down))]
impl Link {}

pub struct Down;

#[state(Link)]
impl Down {
    fn connect(self, _: Connect) -> Next<Self> {
        Next::to(Up)
    }
}

pub struct Up;

#[state(Link)]
impl Up {
    fn hangup(self, _: Hangup) -> (String, Next<Self>) {
        (String::from("bye"), Next::to(Down))
    }
}

fn main() {}
