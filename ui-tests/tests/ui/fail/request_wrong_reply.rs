// S21 (C): a handler of a request must answer with the declared reply type.
use tapio::prelude::*;

#[message]
pub struct Count(pub u64);

#[message(reply = Count)]
pub struct GetCount;

#[derive(Clone)]
pub struct Counter;

#[actor]
impl Counter {
    fn get_count(&mut self, _: GetCount) -> u64 {
        0
    }
}

fn main() {}
