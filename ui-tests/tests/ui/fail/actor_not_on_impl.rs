// `#[actor]` goes on an inherent impl block, not on the struct.
use tapio::prelude::*;

#[actor]
pub struct Counter {
    count: u64,
}

fn main() {}
