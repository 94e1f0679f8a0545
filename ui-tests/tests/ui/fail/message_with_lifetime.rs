// A message cannot borrow: refused on the lifetime parameter.
use tapio::prelude::*;

#[message]
pub struct Borrowed<'a> {
    pub text: &'a str,
}

fn main() {}
