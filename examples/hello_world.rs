//! The smallest complete actor program: spawn, tell, reply, shut down.
//!
//! Concepts: an `ActorSystem` scoped to a block, spawning a top-level actor, sending
//! it a message with `tell`, and carrying a return address in the message as an
//! `ActorRef` field.
//!
//! There is no `ask` here. A reply is just another message, sent to a ref the sender
//! put in the request; seeing that once makes `ask` read as the shorthand it is.
//!
//! What to watch in the output: the greeter's line comes first, then the
//! listener's, because the reply is a second message and cannot overtake the
//! handler that sends it. Both actors stop when the system terminates.
//!
//! Run it with `cargo run --example hello_world` (add `RUST_LOG=info` to see the
//! greeter's log record, tagged with its path).

use std::sync::Arc;

use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, Lines};
use tokio::sync::Notify;

/// Sent back to whoever asked for the greeting.
#[message]
pub struct Greeted {
    /// Who was greeted.
    pub whom: String,
}

/// A request to greet someone, carrying the address for the reply.
#[message]
pub struct Greet {
    /// Who to greet.
    pub whom: String,
    /// Where to say it was done.
    pub reply_to: ActorRef<Greeted>,
}

/// The greeter: it greets, replies, and stays as it is.
pub fn greeter(lines: Lines) -> Behavior<Greet> {
    Behaviors::receive(move |_ctx, message: Greet| {
        tracing::info!("hello, {}!", message.whom);
        lines.push(format!("greeter: hello, {}!", message.whom));
        message.reply_to.tell(Greeted { whom: message.whom });
    })
    .into()
}

/// Run the example and return the lines the actors produced, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    // The system lives as long as this block: `scope` terminates it, every actor
    // stopped, once the block is done.
    ActorSystem::scope("hello", |system| {
        let lines = lines.clone();
        async move {
            let done = Arc::new(Notify::new());
            let (heard, notify) = (lines.clone(), done.clone());
            let listener = system.spawn(
                Behaviors::receive_message(move |message: Greeted| {
                    heard.push(format!("listener: {} has been greeted", message.whom));
                    // Handing a result back to code outside the actors. `ask` packages
                    // this pattern once the request and reply shape is familiar.
                    notify.notify_one();
                }),
                "listener",
            )?;
            let hello = system.spawn(greeter(lines), "greeter")?;
            hello.tell(Greet {
                whom: "world".into(),
                reply_to: listener,
            });
            done.notified().await;
            Ok::<_, ExampleError>(())
        }
    })
    .await??;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
