//! The greeter the link tests talk to across a link: a tell answered through a
//! reply ref in the message, and a request answered through its reply slot.

use tapio::prelude::*;

#[message(remote = "link.greet.v1")]
#[derive(Debug)]
pub struct Greet {
    pub whom: String,
    pub reply_to: ActorRef<Greeted>,
}

#[message(remote = "link.greeted.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Greeted(pub String);

#[message(remote = "link.count.v1", reply = Counted)]
pub struct Count;

#[message(remote = "link.counted.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Counted(pub u64);

/// Greets, and counts how many it greeted.
pub struct Greeter {
    pub greeted: u64,
}

#[actor]
impl Greeter {
    fn greet(&mut self, message: Greet) {
        self.greeted += 1;
        message
            .reply_to
            .tell(Greeted(format!("hello, {}!", message.whom)));
    }

    fn count(&mut self, _: Count) -> Counted {
        Counted(self.greeted)
    }
}
