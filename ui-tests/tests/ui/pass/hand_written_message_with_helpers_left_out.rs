// An actor that asks for typed helpers can still handle a message that implements
// `Message` by hand: `#[handler(no_helper)]` leaves that one helper out.
#![deny(warnings)]

use tapio::prelude::*;

pub struct Manual(pub u32);

impl tapio::Message for Manual {
    type ReplySlot = tapio::NoReply;
}

#[message]
pub struct Derived(pub u32);

pub struct Keeper(pub u32);

#[actor(helpers)]
impl Keeper {
    #[handler(no_helper)]
    fn manual(&mut self, Manual(n): Manual) {
        self.0 = n;
    }

    fn derived(&mut self, Derived(n): Derived) {
        self.0 += n;
    }
}

fn main() {
    let _ = |keeper: ActorRef<KeeperMsg>| {
        keeper.tell(Manual(3));
        keeper.derived(4);
    };
}
