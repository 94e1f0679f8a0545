// `#[message]` on a trait is refused on the keyword.
use tapio::prelude::*;

#[message]
pub trait Command {}

fn main() {}
