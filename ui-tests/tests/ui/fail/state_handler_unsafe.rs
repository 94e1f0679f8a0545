// The same for a state's handler.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct Conn;
pub struct Idle;

#[actor(messages(Ping), states(Idle))]
impl Conn {}

#[state(Conn)]
impl Idle {
    unsafe fn ping(&mut self, _: Ping) {}
}

fn main() {}
