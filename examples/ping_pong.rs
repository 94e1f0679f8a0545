//! Two actors passing a message back and forth a fixed number of times.
//!
//! Concepts: messaging between two live actors, `Behaviors::same()` as "keep going,
//! unchanged", and stopping an actor from inside its own handler with
//! `Behaviors::stopped()`.
//!
//! Each message carries the address of its sender, so neither actor needs to know the
//! other in advance. Neither actor holds any state: the hop count travels in the
//! message, which is the cheapest kind of state an actor system has.
//!
//! What to watch in the output: hops alternate strictly, ping then pong, and the last
//! line is ping stopping itself once the rally is over.
//!
//! Run it with `cargo run --example ping_pong`.

use std::sync::Arc;

use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, Lines};
use tokio::sync::Notify;

/// How many times the ball crosses to pong before ping calls it a day.
pub const ROUNDS: u32 = 3;

/// A hop towards the ping actor, with the address to answer.
#[message]
pub struct Ping {
    /// Which hop this is.
    pub hop: u32,
    /// Who sent it.
    pub reply_to: ActorRef<Pong>,
}

/// A hop towards the pong actor, with the address to answer.
#[message]
pub struct Pong {
    /// Which hop this is.
    pub hop: u32,
    /// Who sent it.
    pub reply_to: ActorRef<Ping>,
}

/// The pong actor: it answers every hop and never stops itself.
pub fn pong(lines: Lines) -> Behavior<Pong> {
    Behaviors::receive(move |ctx, message: Pong| {
        lines.push(format!("pong: hop {}", message.hop));
        message.reply_to.tell(Ping {
            hop: message.hop + 1,
            reply_to: ctx.self_ref().clone(),
        });
    })
    .into()
}

/// The ping actor: it answers until the rally is long enough.
pub fn ping(partner: ActorRef<Pong>, lines: Lines, finished: Arc<Notify>) -> Behavior<Ping> {
    Behaviors::receive(move |ctx, message: Ping| {
        lines.push(format!("ping: hop {}", message.hop));
        if message.hop > ROUNDS * 2 {
            lines.push("ping: that is enough, stopping");
            finished.notify_one();
            return Behaviors::stopped();
        }
        partner.tell(Pong {
            hop: message.hop + 1,
            reply_to: ctx.self_ref().clone(),
        });
        Behaviors::same()
    })
    .into()
}

/// Run the example and return one line per hop, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let finished = Arc::new(Notify::new());
    let system = ActorSystem::new("ping-pong")?;
    let table = system.spawn(pong(lines.clone()), "pong")?;
    let player = system.spawn(ping(table.clone(), lines.clone(), finished.clone()), "ping")?;
    player.tell(Ping {
        hop: 1,
        reply_to: table,
    });
    finished.notified().await;
    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
