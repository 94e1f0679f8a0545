// A handler's message cannot be written `Self`: in the protocol enum it would mean
// the enum. Refused on the type, with what to write.
use tapio::prelude::*;

#[message]
pub struct Echo;

pub struct Echoer;

#[actor]
impl Echoer {
    fn echo(&mut self, _: Echo) {}

    fn again(&mut self, _: Self) {}
}

fn main() {}
