// A message that implements `Message` by hand (no `#[message]`) is handled by an
// `#[actor]` that does not ask for typed helpers: it compiles as it always did.
#![deny(warnings)]

use tapio::prelude::*;

pub struct Manual(pub u32);

impl tapio::Message for Manual {
    type ReplySlot = tapio::NoReply;
}

#[derive(Clone)]
pub struct Keeper(pub u32);

#[actor]
impl Keeper {
    fn manual(&mut self, Manual(n): Manual) {
        self.0 = n;
    }
}

fn main() {
    let _ = |keeper: ActorRef<KeeperMsg>| keeper.tell(Manual(3));
}
