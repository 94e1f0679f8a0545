//! Asking for an answer, and the three ways of not getting one.
//!
//! Concepts: `ref.ask_with`, `AskError::Timeout`, `AskError::TargetTerminated`, and
//! where an answer goes once nobody is waiting for it.
//!
//! `ask` is shorthand for the `reply_to` field `hello_world` starts with. The request
//! still carries a ref for the answer; what `ask` adds is that the ref is a promise
//! rather than an actor, so the caller can await the answer instead of arranging to be
//! told about it later. The answer's type is the type of that ref, so expecting
//! anything else does not compile.
//!
//! The interesting part is what happens when no answer comes. A timeout is the
//! expensive answer, so tapio avoids it when it can: an ask watches its target, and a
//! target that stops fails the ask at once instead of letting the caller wait out the
//! deadline for an answer that cannot come.
//!
//! What to watch in the output: the third line is the answer the desk produced for a
//! lookup that had already timed out. It did not vanish, and it resolved nothing,
//! because there was nobody left to resolve: it became a dead letter. The fourth line
//! is the fast failure: the desk closes while a reader waits, and the reader hears
//! about it at once although it allowed thirty seconds.
//!
//! Run it with `cargo run --example ask_timeout`.

use std::collections::HashMap;
use std::time::Duration;

use tapio::prelude::*;
use tapio::{AskError, DeadLetter};
use tapio_examples::support::{self, ExampleError, Lines};
use tokio::sync::watch;

/// Short enough to keep the example quick, and the number the reader prints.
pub const TIMEOUT: Duration = Duration::from_millis(50);

/// Where a book is: what a lookup is answered with.
#[message]
pub struct Shelf {
    /// The book.
    pub title: String,
    /// Its shelf.
    pub shelf: u32,
}

/// Ask the desk where a book is, and say where to send the answer.
#[message]
pub struct Lookup {
    /// The book.
    pub title: String,
    /// Where the answer goes.
    pub reply_to: ActorRef<Shelf>,
}

/// Tell the desk to shut, with whatever it was doing unfinished.
#[message]
pub struct Close;

/// A reference desk that answers lookups, and stalls on a title it does not know
/// until `stuck` opens. The stall is an `await` inside the handler, the usual way an
/// actor becomes slow: while it waits, everything behind it in the mailbox waits too.
#[derive(Debug, Clone)]
pub struct Desk {
    catalogue: HashMap<String, u32>,
    stuck: watch::Receiver<bool>,
}

#[actor]
impl Desk {
    async fn lookup(&mut self, lookup: Lookup) {
        let shelf = match self.catalogue.get(&lookup.title) {
            Some(shelf) => *shelf,
            None => {
                // From the asker's side this looks the same as a desk that has died.
                let _ = self.stuck.wait_for(|unstuck| *unstuck).await;
                0
            }
        };
        lookup.reply_to.tell(Shelf {
            title: lookup.title,
            shelf,
        });
    }

    fn close(&mut self, _: Close) -> Behavior<DeskMsg> {
        tracing::info!("closing with work outstanding");
        Behaviors::stopped()
    }
}

fn lookup(title: &str) -> impl FnOnce(ActorRef<Shelf>) -> Lookup + '_ {
    move |reply_to| Lookup {
        title: title.to_owned(),
        reply_to,
    }
}

/// Run the example and return one line per thing the reader learned, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let (unstick, stuck) = watch::channel(false);
    let system = ActorSystem::new("ask-timeout")?;
    let mut letters = system.events().subscribe::<DeadLetter>();
    let desk = Desk {
        catalogue: HashMap::from([("Dune".to_owned(), 3)]),
        stuck,
    };
    let desk = system.spawn(desk, "desk")?;

    // The happy path: one call, one answer, and a value with a type.
    let found = desk.ask_with(lookup("Dune")).timeout(TIMEOUT).await?;
    lines.push(format!(
        "reader: '{}' is on shelf {}",
        found.title, found.shelf
    ));

    // The desk stalls on this one, so the deadline is what ends the wait.
    if let Err(AskError::Timeout { after, .. }) =
        desk.ask_with(lookup("Ulysses")).timeout(TIMEOUT).await
    {
        lines.push(format!("reader: gave up on 'Ulysses' after {after:?}"));
    }

    // The desk gets unstuck and answers a lookup nobody waits for any more. The
    // answer is not lost: it is a dead letter.
    unstick.send_replace(true);
    while let Some(letter) = letters.recv().await {
        if letter.is::<Shelf>() {
            lines.push(format!(
                "dead letter: {} ({})",
                letter.short_message_type(),
                letter.reason()
            ));
            break;
        }
    }

    // Now the desk closes with a reader still waiting. The ask allowed thirty seconds
    // and uses none of them, because it watches the desk and hears that it stopped.
    desk.tell(Close);
    let outcome = desk
        .ask_with(lookup("Dune"))
        .timeout(Duration::from_secs(30))
        .await;
    if let Err(AskError::TargetTerminated { .. }) = outcome {
        lines.push("reader: the desk closed, so there was no point waiting".to_owned());
    }

    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
