//! Holding messages while an actor loads what it needs to answer them.
//!
//! Concepts: `Behaviors::with_stash`, `StashBuffer::unstash_all`, and a switch of
//! behavior as the way an actor says "ready now".
//!
//! An actor that has to load something before it can work has three options. It
//! can drop what arrives in the meantime, and lose work. It can wait for the load
//! inside a handler, and then it answers nothing at all, not even a stop, until the
//! load is over. Or it can take each message, put it aside, and replay what it put
//! aside once the load is done. The stash is the third option, and the only good
//! one.
//!
//! The replay goes back through the mailbox, at its front: the held messages keep
//! the order they arrived in and come before anything that queued up during the
//! load. The actor stays an ordinary actor while it replays, so a stop that arrives
//! then is read before the rest of the backlog rather than after it.
//!
//! The capacity is required. A stash holds traffic the actor is not keeping up with,
//! and without a bound it is a memory leak; overflowing it fails the actor that
//! stashed (`StashOverflow`), whose supervision decides what happens next.
//!
//! What to watch in the output: greetings 1 and 2 arrive before the template and 3
//! after it, and all three are answered in the order they were sent. Without the
//! stash the first two would be answered wrongly, or not at all.
//!
//! Run it with `cargo run --example stash_on_startup`.

use std::time::Duration;

use tapio::prelude::*;
use tapio::{InvalidStash, StashBuffer};
use tapio_examples::support::{self, ExampleError, Lines, Tally};

/// How long the pretend store takes to hand over the template.
pub const LOAD_TIME: Duration = Duration::from_millis(20);

/// How many greetings the greeter may hold while it loads.
pub const HOLD: usize = 16;

/// What the greeter is told.
#[message]
pub enum Desk {
    /// Greet someone: this needs the template.
    Greet {
        /// Who to greet.
        whom: String,
    },
    /// The template has arrived: the greeter can start working.
    Loaded {
        /// `{}` marks where the name goes.
        template: String,
    },
}

/// A greeter that cannot greet until its template has loaded. The load is a timer
/// here, standing in for the ask or the child actor a real one would use: all that
/// matters is that the template arrives later, as a message, like everything else
/// an actor learns.
pub fn greeter(
    lines: Lines,
    loaded: Tally,
    greeted: Tally,
) -> Result<Behavior<Desk>, InvalidStash> {
    Behaviors::with_stash(HOLD, move |stash| {
        let (lines, loaded, greeted) = (lines.clone(), loaded.clone(), greeted.clone());
        Behaviors::with_timers(move |timers| {
            let template = "hello, {}!".to_owned();
            timers.start_single_timer("load", Desk::Loaded { template }, LOAD_TIME);
            lines.push("greeter: loading, holding what arrives");
            loading(
                stash.clone(),
                lines.clone(),
                loaded.clone(),
                greeted.clone(),
            )
        })
    })
}

/// While the template loads: hold every greeting; once it is there, switch to
/// `ready` and replay what was held, in one answer.
fn loading(
    stash: StashBuffer<Desk>,
    lines: Lines,
    loaded: Tally,
    greeted: Tally,
) -> Behavior<Desk> {
    Behaviors::receive_message(move |message: Desk| match message {
        Desk::Loaded { template } => {
            lines.push(format!("greeter: loaded, replaying {} held", stash.len()));
            loaded.mark();
            // Everything held goes back in front of whatever arrived meanwhile.
            Ok(stash.unstash_all(ready(template, lines.clone(), greeted.clone())))
        }
        Desk::Greet { whom } => {
            lines.push(format!("greeter: not ready, stashed {whom}"));
            // A full stash fails the greeter, under its supervision.
            stash
                .stash(Desk::Greet { whom })
                .map(|()| Behaviors::same())
        }
    })
    .into()
}

/// What the greeter becomes once it has something to greet with.
fn ready(template: String, lines: Lines, greeted: Tally) -> Behavior<Desk> {
    Behaviors::receive_message(move |message: Desk| {
        if let Desk::Greet { whom } = message {
            lines.push(format!("greeter: {}", template.replace("{}", &whom)));
            greeted.mark();
        }
    })
    .into()
}

/// Run the example and return one line per thing the greeter did, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let (loaded, greeted) = (Tally::default(), Tally::default());
    let system = ActorSystem::new("stash-on-startup")?;
    let desk = system.spawn(
        greeter(lines.clone(), loaded.clone(), greeted.clone())?,
        "greeter",
    )?;
    // Two arrive before the template does.
    desk.tell(Desk::Greet { whom: "ada".into() });
    desk.tell(Desk::Greet {
        whom: "grace".into(),
    });
    // And one after it, which must not overtake them.
    loaded.reached(1).await;
    desk.tell(Desk::Greet {
        whom: "carol".into(),
    });
    greeted.reached(3).await;
    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
