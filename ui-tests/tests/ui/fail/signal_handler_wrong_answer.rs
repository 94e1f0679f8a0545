// A signal handler answers with `()` or a next behavior of the actor's protocol:
// anything else is refused on its return type, naming the protocol.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: Ping) {}

    #[signal]
    fn on_signal(&mut self, _: &Signal) -> u32 {
        1
    }
}

fn main() {}
