// A handler takes the message, and optionally the context before it: no message, or
// a parameter too many, is refused on the offending tokens.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[message]
pub struct Pong;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn nothing(&mut self) {}

    fn too_many(&mut self, _ctx: &mut Ctx<Self>, _ping: Ping, _extra: u32) {}

    fn context_last(&mut self, _pong: Pong, _ctx: Ctx<Self>) {}
}

fn main() {}
