// One `#[signal]` handler per actor: the second is refused, naming the first.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: Ping) {}

    #[signal]
    fn on_signal(&mut self, _: &Signal) {}

    #[signal]
    fn on_stop(&mut self, _: &Signal) {}
}

fn main() {}
