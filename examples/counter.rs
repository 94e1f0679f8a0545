//! An actor that holds mutable state, written as a struct with `#[actor]`.
//!
//! Concepts: a struct whose fields are the actor's state, one handler method per
//! message type, the protocol enum `#[actor]` generates (`CounterMsg`), the typed
//! helpers it generates on the ref (`CounterRef`: `counter.increment(2)`), and
//! answering a query by sending to the `reply_to` address it carried.
//!
//! The count is an ordinary field, changed in place with no lock anywhere. One actor
//! handles one message at a time, so the mailbox already gives the mutual exclusion a
//! lock would. Telling the counter anything but an `Increment` or a `GetCount` does
//! not compile.
//!
//! What to watch in the output: the reply reports 3, not 1. Messages sent to one
//! actor from one place arrive in order, so both increments are applied before the
//! query behind them.
//!
//! Run it with `cargo run --example counter`; `counter_without_macros` is the same
//! program with what `#[actor]` generates written out by hand.

use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError};

/// The answer to a `GetCount`.
#[message]
pub struct Count {
    /// The count when the query was handled.
    pub value: u64,
}

/// Add to the count.
#[message]
pub struct Increment {
    /// How much to add.
    pub by: u64,
}

impl Default for Increment {
    fn default() -> Self {
        Self { by: 1 }
    }
}

/// Ask for the count, and say where to send it.
#[message]
pub struct GetCount {
    /// Where the count goes.
    pub reply_to: ActorRef<Count>,
}

/// Counts, and reports the count when asked.
#[derive(Debug, Default)]
pub struct Counter {
    count: u64,
}

#[actor(helpers)]
impl Counter {
    fn increment(&mut self, message: Increment) {
        self.count += message.by;
        tracing::debug!("count is now {}", self.count);
    }

    fn get_count(&mut self, message: GetCount) {
        message.reply_to.tell(Count { value: self.count });
    }
}

/// Run the example and return the line it prints.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let system = ActorSystem::new("counter")?;
    let (answer, mut answered) = tokio::sync::mpsc::unbounded_channel();
    let readout = system.spawn(
        Behaviors::receive_message(move |message: Count| {
            let _ = answer.send(message.value);
        }),
        "readout",
    )?;
    // Deferred construction: the factory runs when the actor starts, and again on a
    // restart, so the count starts from zero in every incarnation.
    let counter = system.spawn(Behaviors::setup(|_ctx| Counter::default()), "counter")?;
    // `tell` takes any message the protocol accepts; the typed helpers of
    // `CounterRef` take the message's fields: one method per handler.
    counter.tell(Increment::default());
    counter.increment(2);
    counter.get_count(readout);
    let value = answered.recv().await.ok_or("the readout stopped")?;
    system.terminate().await;
    Ok(vec![format!("counter: {value}")])
}

/// Print the line.
#[tokio::main]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
