//! Shutting a system down on SIGINT, and stopping the tree in the right order.
//!
//! Concepts: `system.shutdown_on_signals()`, `system.terminate()`, the bottom-up
//! drain, and `PostStop` as the place a resource is released.
//!
//! The signal is real: the handlers are installed with `shutdown_on_signals` and the
//! process sends itself SIGINT, so this exercises the wiring a deployed service uses.
//! Nothing is simulated, which matters: "we handle SIGINT" is the claim that turns out
//! to be false the first time a container is stopped.
//!
//! Shutdown is bottom-up, and the whole tree races one deadline rather than one per
//! actor, so the worst case follows `shutdown_timeout` instead of the depth of the
//! tree. Each actor sees `PostStop` after its children have seen theirs, so a pool
//! outlives the connections still handing work back to it. An `async` handler that
//! awaits is interrupted by the stop; an actor still stuck in a handler when the
//! deadline passes (one blocking its thread) is cancelled and never sees `PostStop`,
//! while every idle actor still does. Release what must be released there, but do not
//! make correctness depend on it.
//!
//! The example runs on a current-thread runtime, so the two connections answer in the
//! order they were asked, and the output is the same on every run.
//!
//! What to watch in the output: the two connections close before the pool that owns
//! them, and the pool's own line is last.
//!
//! Run it with `cargo run --example graceful_shutdown`.

use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, Lines, Tally};

/// A unit of work for a connection.
#[message]
pub struct Query {
    /// The statement to run.
    pub sql: &'static str,
}

/// One pooled connection, which says when it is closed.
pub fn connection(name: &'static str, lines: Lines, served: Tally) -> Behavior<Query> {
    let closing = lines.clone();
    Behaviors::receive_message(move |query: Query| {
        lines.push(format!("{name}: ran {:?}", query.sql));
        served.mark();
    })
    .on_signal(move |_, signal| {
        if *signal == Signal::PostStop {
            closing.push(format!("{name}: closed"));
        }
    })
    .into()
}

/// A pool that owns two connections and outlives both of them.
pub fn pool(lines: Lines, served: Tally) -> Behavior<Query> {
    Behaviors::setup(move |ctx| {
        for name in ["conn-1", "conn-2"] {
            let conn = ctx.spawn(connection(name, lines.clone(), served.clone()), name)?;
            conn.tell(Query { sql: "select 1" });
        }
        let closing = lines.clone();
        Ok::<_, tapio::SpawnError>(Behaviors::receive_message(|_: Query| ()).on_signal(
            move |_, signal| {
                if *signal == Signal::PostStop {
                    closing.push("pool: closed, after every connection in it");
                }
            },
        ))
    })
}

/// Send SIGINT to this very process, as Ctrl-C in its terminal would.
fn interrupt_myself() -> Result<(), ExampleError> {
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("kill -INT {}", std::process::id())])
        .status()?;
    if !status.success() {
        return Err("could not send SIGINT".into());
    }
    Ok(())
}

/// Run the example and return one line per thing that happened, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let served = Tally::default();
    let system = ActorSystem::new("graceful")?;
    // Installed before anything can send the signal, so it cannot be missed.
    let mut signals = system.shutdown_on_signals()?;
    system.spawn(pool(lines.clone(), served.clone()), "pool")?;
    served.reached(2).await;

    interrupt_myself()?;
    let signal = signals.received().await;
    // The handler does nothing but start the shutdown: it runs outside every actor, so
    // anything it touched directly would be state no mailbox protects.
    lines.push(format!("signal: {signal}, shutting down"));
    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
