// A tuple's variant is `Tuple`: a second tuple handler is refused on its type,
// saying to name its variant.
use tapio::prelude::*;

#[derive(Clone)]
pub struct Plot;

#[actor]
impl Plot {
    fn point(&mut self, _: (i64, i64)) {}
    fn range(&mut self, _: (u64, u64)) {}
}

fn main() {}
