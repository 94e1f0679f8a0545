// A message crosses to the actor's task, so it must be `Send`: a field that is not
// is refused on its type, with what to write instead, once per field. A `RefCell`
// alone is `Send`; inside an `Arc` it is not.
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use tapio::prelude::*;

#[message]
pub struct Shared(pub Rc<u64>);

#[message]
pub enum Update {
    Set(u64),
    Swap { next: Vec<Arc<RefCell<u64>>> },
}

fn main() {}
