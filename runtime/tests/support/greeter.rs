//! The greeter the link tests talk to across a link: a tell answered through a
//! reply ref in the message, and a request answered through its reply slot; and
//! the listener that hears the greetings.

use tapio::prelude::*;
use tokio::sync::mpsc;

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

/// A `listener` on `system` that forwards each greeting it hears to a channel.
pub fn listener(system: &ActorSystem) -> (ActorRef<Greeted>, mpsc::UnboundedReceiver<String>) {
    let (heard, rx) = mpsc::unbounded_channel();
    let listener = system
        .spawn(
            Behaviors::receive_message(move |greeted: Greeted| {
                let _ = heard.send(greeted.0);
            }),
            "listener",
        )
        .unwrap();
    (listener, rx)
}
