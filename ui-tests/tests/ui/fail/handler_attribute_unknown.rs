// An unknown argument of `#[handler]` is refused, saying which ones exist.
use tapio::prelude::*;

#[message]
pub struct Start;

#[derive(Clone)]
pub struct Engine;

#[actor(helpers)]
impl Engine {
    #[handler(rename = go)]
    fn start(&mut self, _: Start) {}
}

fn main() {}
