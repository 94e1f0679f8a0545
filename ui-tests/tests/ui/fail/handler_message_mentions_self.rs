// Nor can `Self` appear inside a message type (`Option<Self>`): refused on the type.
use tapio::prelude::*;

#[message]
pub struct Echo;

pub struct Echoer;

#[actor]
impl Echoer {
    fn echo(&mut self, _: Echo) {}

    fn copy(&mut self, _: Option<Self>) {}
}

fn main() {}
