// A message travels to another task, so it owns its data: `&str` and `&[u8]` are
// refused on the type, saying what to write (`&'static str` is a message).
use tapio::prelude::*;

#[derive(Clone)]
pub struct Log;

#[actor]
impl Log {
    fn line(&mut self, _: &str) {}
    fn bytes(&mut self, _: &[u8]) {}
    fn fine(&mut self, _: &'static str) {}
}

fn main() {}
