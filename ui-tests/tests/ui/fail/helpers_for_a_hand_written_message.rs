// `#[actor(helpers)]` writes each helper from the message's `#[message]` expansion;
// a message that implements `Message` by hand has none.
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
    fn manual(&mut self, Manual(n): Manual) {
        self.0 = n;
    }

    fn derived(&mut self, Derived(n): Derived) {
        self.0 = n;
    }
}

fn main() {}
