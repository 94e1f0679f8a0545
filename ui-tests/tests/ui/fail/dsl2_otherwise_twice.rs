// Two `#[otherwise]` handlers in one state: only one can take what the state does not
// handle.
use tapio::prelude::*;

#[message]
pub struct Knock;

#[message]
pub struct Ring;

#[derive(Clone)]
pub struct Door;

#[actor(messages(Knock, Ring), states(Locked))]
impl Door {}

#[derive(Clone)]
pub struct Locked;

#[state(Door)]
impl Locked {
    #[otherwise]
    fn rest(&mut self, _: DoorMsg) {}

    #[otherwise]
    fn more(&mut self, _: DoorMsg) {}
}

fn main() {}
