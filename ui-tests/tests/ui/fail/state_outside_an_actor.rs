// `#[state]` names an actor whose `#[actor]` block declares states; a plain
// type, or no actor at all, is refused.
use tapio::prelude::*;

#[message]
pub struct Go;
#[message]
pub struct Stop;

pub struct Light;

pub struct Plain;
pub struct Red;

#[state(Plain)]
impl Red {
    fn go(&mut self, _: Go) {}
}

pub struct Blue;

#[state]
impl Blue {}

fn main() {}
