//! A blocking call made the right way, then the wrong way, beside a neighbour that
//! only wants to keep ticking.
//!
//! Concepts: `ctx.run_blocking`, an `async fn` handler that awaits it, and why a
//! blocking call made directly in a handler stalls actors that have nothing to do
//! with it.
//!
//! Actors share a few threads. A handler that blocks its thread (a synchronous file
//! read, a database driver without `async`, a long computation) does not only hold
//! up its own mailbox: every actor waiting for that thread waits too. Nothing fails
//! and nothing is logged; the neighbours just go quiet. `ctx.run_blocking(call)`
//! hands the call to tokio's blocking pool, a separate set of threads kept for this,
//! and the handler awaits the result. Its own actor still waits for the call (it is
//! inside its handler, and still answers a stop), but nobody else does.
//!
//! The blocking call here is a stand-in for any of those, made measurable: it holds
//! its thread until it has heard three beats of the heartbeat actor next door, and
//! gives up after half a second. Counting the neighbour's beats, not milliseconds,
//! is what makes the lines the same on every run. The worker makes the call twice:
//! once through `run_blocking`, once directly in a synchronous handler.
//!
//! What to watch in the output: through `run_blocking` the heartbeat ticks on while
//! the call waits, and the call returns as soon as it has heard its three beats.
//! Made directly in the handler, the same call hears nothing: the heartbeat cannot
//! run while the worker holds the thread, so the call waits out its whole half
//! second. The call did not change; only the thread it held did.
//!
//! The example runs on one thread (a current-thread runtime), where holding the
//! thread provably stops everything else. On a multi-thread runtime the same mistake
//! stalls whatever shares the blocked worker: harder to see, just as real.
//! Run it with `cargo run --example blocking_calls`.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use tapio::Failure;
use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, Lines, Tally};

/// How often the heartbeat ticks.
pub const BEAT: Duration = Duration::from_millis(10);

/// How many beats the blocking call waits to hear.
pub const BEATS_WANTED: u32 = 3;

/// How long the blocking call waits for them at most.
pub const CEILING: Duration = Duration::from_millis(500);

/// Send the number of each beat to this channel, until it is dropped.
#[message]
pub struct Listen(pub Sender<u32>);

/// The heartbeat's timer.
#[message]
#[derive(Clone)]
pub struct Beat;

/// An actor that ticks, and tells its ticks to whoever listens.
#[derive(Debug, Clone)]
pub struct Heartbeat {
    /// Who listens, and how many beats they have heard.
    listener: Option<(Sender<u32>, u32)>,
}

#[actor]
impl Heartbeat {
    fn listen(&mut self, Listen(to): Listen) {
        self.listener = Some((to, 0));
    }

    fn beat(&mut self, _: Beat) {
        if let Some((to, heard)) = &mut self.listener {
            *heard += 1;
            if to.send(*heard).is_err() {
                // The call is over and stopped listening.
                self.listener = None;
            }
        }
    }
}

/// The heartbeat, ticking every [`BEAT`] from the start.
pub fn heartbeat() -> Behavior<HeartbeatMsg> {
    Behaviors::with_timers(|timers| {
        timers.start_fixed_rate("beat", Beat, BEAT)?;
        Ok::<_, tapio::ZeroInterval>(Heartbeat { listener: None })
    })
}

/// The blocking call: it holds its thread until it has heard [`BEATS_WANTED`] beats,
/// or for [`CEILING`] at most, and returns how many it heard.
pub fn wait_for_beats(beats: Receiver<u32>) -> u32 {
    let deadline = Instant::now() + CEILING;
    let mut heard = 0;
    while heard < BEATS_WANTED {
        let left = deadline.saturating_duration_since(Instant::now());
        if beats.recv_timeout(left).is_err() {
            break;
        }
        heard += 1;
    }
    heard
}

/// Make the blocking call through `run_blocking`.
#[message]
pub struct OffTheThread;

/// Make the blocking call directly in the handler: the mistake.
#[message]
pub struct OnTheThread;

/// Makes the blocking call, both ways, and says what the heartbeat did meanwhile.
#[derive(Debug, Clone)]
pub struct Worker {
    heartbeat: ActorRef<HeartbeatMsg>,
    lines: Lines,
    done: Tally,
}

#[actor]
impl Worker {
    async fn off_the_thread(
        &mut self,
        ctx: &mut Ctx<Self>,
        _: OffTheThread,
    ) -> Result<(), Failure> {
        let (to, beats) = channel();
        self.heartbeat.tell(Listen(to));
        // The call holds a thread of the blocking pool; this handler only awaits it.
        let heard = ctx.run_blocking(move || wait_for_beats(beats)).await?;
        self.report("run_blocking", heard);
        Ok(())
    }

    fn on_the_thread(&mut self, _: OnTheThread) {
        let (to, beats) = channel();
        self.heartbeat.tell(Listen(to));
        // The same call, holding the thread this handler runs on, which every other
        // actor here needs too.
        let heard = wait_for_beats(beats);
        self.report("in the handler", heard);
    }
}

impl Worker {
    fn report(&self, how: &str, heard: u32) {
        self.lines.push(format!(
            "{how}: the heartbeat ticked {heard} times during the call"
        ));
        let ended = if heard == BEATS_WANTED {
            format!("the call returned as soon as it had heard {heard} beats")
        } else {
            format!(
                "the call gave up after {}ms, the heartbeat stalled all along",
                CEILING.as_millis()
            )
        };
        self.lines.push(format!("{how}: {ended}"));
        self.done.mark();
    }
}

/// Run the example and return what the worker saw, the right way first.
///
/// # Errors
///
/// If the runtime is not a current-thread one: only there is the stall certain, so
/// only there are the lines the same every run.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if Handle::current().runtime_flavor() != RuntimeFlavor::CurrentThread {
        return Err(
            "run blocking_calls on a current-thread runtime, as its `main` does: \
                    only there does a blocked thread certainly stall the heartbeat"
                .into(),
        );
    }
    let lines = Lines::default();
    let done = Tally::default();
    let system = ActorSystem::new("blocking-calls")?;
    let heartbeat = system.spawn(heartbeat(), "heartbeat")?;
    let worker = system.spawn(
        Worker {
            heartbeat,
            lines: lines.clone(),
            done: done.clone(),
        },
        "worker",
    )?;
    worker.tell(OffTheThread);
    done.reached(1).await;
    worker.tell(OnTheThread);
    done.reached(1).await;
    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
