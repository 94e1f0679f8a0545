// Unknown macro arguments are refused, saying which ones exist.
use tapio::prelude::*;

#[message(answer = u64)]
pub struct Ask;

#[derive(Clone)]
pub struct Pinger;

#[actor(name = PingerMsg)]
impl Pinger {
    fn on_ask(&mut self, _: Ask) {}
}

fn main() {}
