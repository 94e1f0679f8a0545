//! Every example of the guide, one after the other: the project's main command.
//!
//! Each example runs in a fresh actor system and prints the lines it promises, under
//! a heading with its name. Read an example's own file for what it shows and what to
//! watch for.
//!
//! Run it with `cargo run --example tour`.

use tapio_examples::support::{self, ExampleError};

/// Run every example in turn.
#[tokio::main]
pub async fn main() -> Result<(), ExampleError> {
    support::init_logging();
    for (name, lines) in [
        ("hello_world", tapio_examples::hello_world::run().await?),
        ("ping_pong", tapio_examples::ping_pong::run().await?),
        ("counter", tapio_examples::counter::run().await?),
        (
            "counter_without_macros",
            tapio_examples::counter_without_macros::run().await?,
        ),
    ] {
        support::print(&[format!("== {name} ==")]);
        support::print(&lines);
        support::print(&[String::new()]);
    }
    Ok(())
}
