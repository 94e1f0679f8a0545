//! Restarting an actor whose dependency keeps refusing, without thrashing.
//!
//! Concepts: `Behaviors::supervise(..).on_failure::<E>(..)`, a restart strategy with
//! exponential `Backoff`, the restart window, and what happens to messages sent to an
//! actor that is between incarnations.
//!
//! The uploader stands in for anything that talks to a flaky dependency. Its first two
//! attempts fail and the third works. Restarting at once would burn the whole restart
//! window in a millisecond and stop the actor for a fault that was about to clear, so
//! the strategy waits, and waits longer each time. While it waits, the actor is
//! absent, not dead: `tell` still works, its mailbox keeps filling, and work sent
//! during the backoff is handled by the next incarnation instead of being dropped.
//!
//! The second actor is the other half of the deal: its failure never clears, so it
//! uses up its restart window and is stopped. A supervisor that restarted forever
//! would turn one bug into a busy one.
//!
//! What to watch in the output: item 1 fails, and items 2 and 3 were sent while no
//! incarnation was there to take them, yet all three are accounted for. The doomed
//! actor stops after its second failure instead of retrying forever.
//!
//! Run it with `cargo run --example supervision_backoff`.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, Lines, Tally};

/// How many attempts the simulated dependency refuses before it recovers.
pub const FAILING_ATTEMPTS: u32 = 2;

/// One item to send to the flaky dependency.
#[message]
pub struct Upload {
    /// Which item.
    pub item: u32,
}

fn refused(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionRefused, why)
}

/// An uploader whose dependency refuses the first two attempts.
///
/// `attempts` counts every attempt across incarnations: it lives outside the
/// behavior on purpose, because a restart rebuilds the actor's own state and the
/// dependency it talks to does not reset.
pub fn uploader(
    lines: Lines,
    failed: Tally,
    recovered: Tally,
) -> Result<Behavior<Upload>, ExampleError> {
    let attempts = Arc::new(AtomicU32::new(0));
    let backoff = Backoff::new(
        Duration::from_millis(20),
        Duration::from_millis(80),
        // No jitter, so the example is reproducible. Keep some in production: without
        // it, every actor that saw the dependency fail retries at the same moment.
        0.0,
    )?;
    let strategy = SupervisorStrategy::restart()
        .with_limit(5, Duration::from_secs(1))?
        .with_backoff(backoff);
    let build = Behaviors::setup(move |_| {
        lines.push(format!(
            "uploader: incarnation {} ready",
            attempts.load(Ordering::SeqCst) + 1
        ));
        let (lines, attempts, failed, recovered) = (
            lines.clone(),
            attempts.clone(),
            failed.clone(),
            recovered.clone(),
        );
        Behaviors::receive_message(move |upload: Upload| {
            if attempts.fetch_add(1, Ordering::SeqCst) < FAILING_ATTEMPTS {
                lines.push(format!("uploader: item {} failed", upload.item));
                failed.mark();
                return Err(refused("the dependency refused the connection"));
            }
            lines.push(format!("uploader: item {} uploaded", upload.item));
            recovered.mark();
            Ok(())
        })
    });
    // Only the failure this actor knows how to survive. Anything else falls through to
    // stop, which is what an unsupervised actor already does.
    Ok(Behaviors::supervise(build)
        .on_failure::<io::Error>(strategy)
        .into())
}

/// An actor whose failure never clears, so its restart window runs out.
pub fn doomed(lines: Lines, gave_up: Tally) -> Result<Behavior<Upload>, ExampleError> {
    // One restart per second: a second failure inside that window says the fault is
    // not transient after all.
    let strategy = SupervisorStrategy::restart().with_limit(1, Duration::from_secs(1))?;
    let build = Behaviors::setup(move |_| {
        let (failures, stops, gave_up) = (lines.clone(), lines.clone(), gave_up.clone());
        Behaviors::receive_message(move |upload: Upload| {
            failures.push(format!("doomed: item {} failed", upload.item));
            Err::<(), _>(refused("this one is never going to work"))
        })
        .on_signal(move |_, signal| {
            if *signal == Signal::PostStop {
                stops.push("doomed: restart window exhausted, stopped");
                gave_up.mark();
            }
        })
    });
    Ok(Behaviors::supervise(build)
        .on_failure::<io::Error>(strategy)
        .into())
}

/// Run the example and return one line per thing that happened, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let (failed, recovered, gave_up) = (Tally::default(), Tally::default(), Tally::default());
    let system = ActorSystem::new("supervision")?;

    let flaky = system.spawn(
        uploader(lines.clone(), failed.clone(), recovered.clone())?,
        "uploader",
    )?;
    flaky.tell(Upload { item: 1 });
    failed.reached(1).await;
    // Sent into the backoff window, at an actor that does not exist right now. Neither
    // tell fails, and neither message is lost.
    flaky.tell(Upload { item: 2 });
    flaky.tell(Upload { item: 3 });
    recovered.reached(1).await;

    let unlucky = system.spawn(doomed(lines.clone(), gave_up.clone())?, "doomed")?;
    unlucky.tell(Upload { item: 4 });
    unlucky.tell(Upload { item: 5 });
    gave_up.reached(1).await;

    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
