// `#[message]` goes on a struct or an enum.
use tapio::prelude::*;

#[message]
pub fn not_a_type() {}

#[message]
pub union Bits {
    a: u32,
    b: f32,
}

fn main() {}
