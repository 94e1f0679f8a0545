// A generic message is a message only for parameters that are `Send + 'static`:
// a handler for one that is not is refused on the message type.
use std::rc::Rc;

use tapio::prelude::*;

#[message]
pub struct Wrap<T>(pub T);

pub struct Keeper;

#[actor]
impl Keeper {
    fn keep(&mut self, _: Wrap<Rc<u8>>) {}
}

fn main() {}
