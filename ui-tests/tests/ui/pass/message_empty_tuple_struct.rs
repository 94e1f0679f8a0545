// A message that is an empty tuple struct compiles (built as `Tick {}`).
use tapio::prelude::*;

#[message]
pub struct Tick();

fn main() {}
