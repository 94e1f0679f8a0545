// Two handlers whose typed helpers are given the same name.
use tapio::prelude::*;

#[message]
pub struct Start;

#[message]
pub struct Restart;

#[derive(Clone)]
pub struct Engine;

#[actor(helpers)]
impl Engine {
    #[handler(helper = go)]
    fn start(&mut self, _: Start) {}

    #[handler(helper = go)]
    fn restart(&mut self, _: Restart) {}
}

fn main() {}
