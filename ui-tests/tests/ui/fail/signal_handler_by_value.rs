// A signal handler borrows the signal: one taking `Signal` by value is refused on
// the type.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: Ping) {}

    #[signal]
    fn on_signal(&mut self, _: Signal) {}
}

fn main() {}
