// A state machine's typed helpers are named after its messages; one that would be
// called like a method of `ActorRef` is refused on the message, with how to rename.
use tapio::prelude::*;

#[message]
pub struct Ask;

pub struct Desk;

#[actor(helpers, messages(Ask), states(Open))]
impl Desk {}

pub struct Open;

#[state(Desk)]
impl Open {}

fn main() {}
