// A message crosses to the actor's task, so it must be `Send`: an `Rc` field is
// refused on the message's declaration.
use std::rc::Rc;

use tapio::prelude::*;

#[message]
pub struct Shared(pub Rc<u64>);

fn main() {}
