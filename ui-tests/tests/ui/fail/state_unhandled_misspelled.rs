// `#[state]` takes its actor and `unhandled = stash | refuse`; a misspelled
// argument is named, with what it takes.
use tapio::prelude::*;

#[message]
pub struct Go;

pub struct Light;

#[actor(messages(Go), states(Red))]
impl Light {}

pub struct Red;

#[state(Light, unhandeld = stash)]
impl Red {
    fn go(&mut self, _: Go) {}
}

fn main() {}
