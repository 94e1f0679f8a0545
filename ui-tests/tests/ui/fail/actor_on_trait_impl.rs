// `#[actor]` generates the `Actor` impl itself: a trait impl is refused on the trait.
use tapio::prelude::*;

#[derive(Clone)]
pub struct Counter;

#[actor]
impl Default for Counter {
    fn default() -> Self {
        Counter
    }
}

fn main() {}
