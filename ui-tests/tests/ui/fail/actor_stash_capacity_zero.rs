// A stash of no room is refused where it is written: it would hold nothing, and the
// first message a stashing state held would stop the actor.
use tapio::prelude::*;

#[message]
pub struct Open;
#[message]
pub struct Write;

pub struct File;

#[actor(messages(Open, Write), states(Closed => Opened, Opened), stash_capacity = 0)]
impl File {}

pub struct Closed;

#[state(File, unhandled = stash)]
impl Closed {
    fn open(self, _: Open) -> Next<Self> {
        Next::to(Opened)
    }
}

pub struct Opened;

#[state(File)]
impl Opened {
    fn write(&mut self, _: Write) {}
}

fn main() {}
