//! The greeting of `hello_world`, with a socket in the middle.
//!
//! Concepts: switching remoting on with `RemoteSettings`, turning another system's
//! address into a ref with `resolve`, sending across the link, and getting the
//! answer back through a `reply_to` that crossed the wire.
//!
//! Compare it with `hello_world`: the actors are the same. One greets, one listens,
//! and the request carries the address for the reply. What changed is outside them:
//! the settings, the `#[message(remote = ..)]` keys, and the one `resolve`. That is
//! location transparency. It does not make the failure model the same (a network is
//! in the middle), nor placement uniform (the greeter is started on its own node),
//! and the message the greeter gets is equal to what was sent rather than the same
//! value: it was rebuilt from bytes on the other side.
//!
//! Both systems run in this one process, on loopback ports the OS picks, so the
//! example needs no second machine. Loopback is also the one place a system may
//! listen without a shared secret.
//!
//! What to watch in the output: the node name in front of every line. The request
//! is written by `home`, handled by `away`, and the answer arrives back at `home`
//! without either actor knowing there is a link between them.
//!
//! Run it with `cargo run --example two_nodes`.

use std::sync::Arc;

use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio_examples::support::{self, ExampleError, Lines};
// The messages live in a module of the library, so that they are registered for
// the wire once: this file is compiled into the library and into its own example
// binary, and a key registered by two types stops a system from starting.
use tapio_examples::two_nodes_messages::{Greet, Greeted};
use tokio::sync::Notify;

/// A system that listens on a loopback port the OS picks.
fn node(name: &str) -> Result<ActorSystem, tapio::SystemError> {
    ActorSystem::builder(name)
        .remote(RemoteSettings::loopback())
        .build()
}

/// The greeter: exactly the local one.
fn greeter(lines: Lines) -> Behavior<Greet> {
    Behaviors::receive_message(move |message: Greet| {
        lines.push(format!("away: hello, {}!", message.whom));
        // An ordinary tell. The ref came off the wire, so this answer crosses back
        // over the link, and nothing here had to know that.
        message.reply_to.tell(Greeted { whom: message.whom });
    })
    .into()
}

/// Run the example: the lines both nodes wrote, in order. The port in the first
/// line is the one the OS picked for `away`.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let away = node("away")?;
    let home = node("home")?;
    let hello = away.spawn(greeter(lines.clone()), "greeter")?;
    let done = Arc::new(Notify::new());
    let listener = {
        let (lines, done) = (lines.clone(), done.clone());
        home.spawn(
            Behaviors::receive_message(move |message: Greeted| {
                lines.push(format!("home: {} has been greeted", message.whom));
                done.notify_one();
            }),
            "listener",
        )?
    };
    // In a real deployment this address comes from configuration or from a
    // message; here both systems share a process, so it is read off the ref.
    let address = hello.path().to_uri();
    lines.push(format!("home: resolving {address}"));
    let remote = home.resolve::<Greet>(&address)?;
    remote.tell(Greet {
        whom: "world".into(),
        reply_to: listener,
    });
    done.notified().await;
    home.terminate().await;
    away.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
