// A handler with its context after the message: the message is the last parameter.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: Ping, _ctx: &mut Ctx<Self>) {}
}

fn main() {}
