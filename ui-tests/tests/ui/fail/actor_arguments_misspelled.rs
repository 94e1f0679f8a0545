// `#[actor]`'s arguments written wrong: an argument given twice, and a name or a
// visibility in quotes, are refused on the token with how to write them.
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct A;

#[actor(protocol = AMsg, protocol = BMsg)]
impl A {
    fn ping(&mut self, _: Ping) {}
}

pub struct B;

#[actor(protocol = "BProtocol")]
impl B {
    fn ping(&mut self, _: Ping) {}
}

pub struct C;

#[actor(helpers, vis = "pub(crate)")]
impl C {
    fn ping(&mut self, _: Ping) {}
}

fn main() {}
