// A handler's last parameter is the message it handles: its type must be a message.
// Refused once, on that type, saying to put `#[message]` on it.
use tapio::prelude::*;

pub struct Ping;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: Ping) {}
}

fn main() {}
