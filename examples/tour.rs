//! Every example of the guide, one after the other: the project's main command.
//!
//! Each example runs in a fresh actor system and prints the lines it promises, under
//! a heading with its name. Read an example's own file for what it shows and what to
//! watch for.
//!
//! Run it with `cargo run --example tour`.

use tapio_examples::support::{self, ExampleError};

/// Run every example in turn, on the single-threaded runtime each example's own
/// `main` uses, so every section reads exactly as that example prints it.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::init_logging();
    for (name, run) in tapio_examples::EXAMPLES {
        let lines = run().await?;
        support::print(&[format!("== {name} ==")]);
        support::print(&lines);
        support::print(&[String::new()]);
    }
    Ok(())
}
