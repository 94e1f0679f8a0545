// `#[otherwise]`, `#[on_entry]` and `#[on_exit]` are a state's hooks: on a method of
// a plain `#[actor]` each is refused with one error that says what to do instead.
use tapio::prelude::*;

#[message]
pub struct Knock;

pub struct Door;

#[actor]
impl Door {
    fn knock(&mut self, _: Knock) {}

    #[otherwise]
    fn rest(&mut self, _: DoorMsg) {}

    #[on_entry]
    fn opened(&mut self) {}
}

fn main() {}
