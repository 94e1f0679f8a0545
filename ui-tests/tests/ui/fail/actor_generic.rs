// Generic actors are not supported: refused on the generics.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[derive(Clone)]
pub struct Holder<T>(T);

#[actor]
impl<T: Send + Clone + 'static> Holder<T> {
    fn ping(&mut self, _: Ping) {}
}

fn main() {}
