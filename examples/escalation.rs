//! A failure the actor that hit it cannot fix, handed to the one that can.
//!
//! Concepts: `SupervisorStrategy::escalate()`, `Signal::ChildFailed`, a whole subtree
//! rebuilt by its supervisor, and what happens when an escalation runs out of
//! supervisors.
//!
//! A worker that cannot parse its input has no way to repair the pipeline it is part
//! of. Its parent, which built the pipeline, does. Escalating says exactly that: stop
//! me, and make this your decision. The parent then takes its own decision, here a
//! restart, so its setup runs again and rebuilds every child rather than only the one
//! that broke.
//!
//! Escalation is ordinary message flow, not a panic thrown across a task: the child
//! stops and a `ChildFailed` goes to the parent's system lane, ahead of its queued
//! messages, so it can be ordered, observed (the parent's signal handler sees
//! `Signal::ChildFailed` before its supervision decides) and tested like anything
//! else. An actor outside the restarted subtree is
//! untouched: a child failing never cancels its siblings. And an escalation that
//! reaches a guardian has run out of actors willing to take responsibility, so the
//! system terminates and `when_terminated` returns the original error, with the path
//! it climbed. The program embedding tapio then decides whether to exit or rebuild.
//!
//! What to watch in the output: the ticker keeps counting across the restart, and the
//! second scenario ends with the original error and the paths it climbed through.
//!
//! Run it with `cargo run --example escalation`.

use std::time::Duration;

use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, Lines, Tally};

/// A line for the worker to parse. An empty one is unparseable.
#[message]
pub struct Parse {
    /// The line.
    pub line: String,
}

/// A nudge for the ticker, which is here to keep working throughout.
#[message]
pub struct Tick;

/// Why a line could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unparseable(&'static str);

impl std::fmt::Display for Unparseable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Unparseable {}

/// A parser that escalates rather than pretending it can recover. `ready` is marked
/// when an incarnation starts, `parsed` when a line went through.
pub fn worker(lines: Lines, ready: Tally, parsed: Tally) -> Behavior<Parse> {
    let build = Behaviors::setup(move |_| {
        lines.push("worker: ready");
        ready.mark();
        let (parsing, stopping, parsed) = (lines.clone(), lines.clone(), parsed.clone());
        Behaviors::receive_message(move |message: Parse| {
            if message.line.is_empty() {
                parsing.push("worker: cannot parse an empty line");
                return Err(Unparseable("empty input"));
            }
            parsing.push(format!("worker: parsed {:?}", message.line));
            parsed.mark();
            Ok(())
        })
        .on_signal(move |_, signal| {
            if *signal == Signal::PostStop {
                stopping.push("worker: stopped");
            }
        })
    });
    Behaviors::supervise(build)
        .on_failure::<Unparseable>(SupervisorStrategy::escalate())
        .into()
}

/// A supervisor that builds its subtree in setup, and so rebuilds it on restart. Each
/// worker it builds goes to `workers`.
pub fn pipeline(
    lines: Lines,
    workers: tokio::sync::mpsc::UnboundedSender<ActorRef<Parse>>,
    ready: Tally,
    parsed: Tally,
) -> Result<Behavior<Tick>, ExampleError> {
    let strategy = SupervisorStrategy::restart().with_limit(3, Duration::from_secs(60))?;
    let incarnation = std::sync::atomic::AtomicU32::new(0);
    let build = Behaviors::setup(move |ctx| {
        let n = incarnation.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        lines.push(format!("pipeline: building, incarnation {n}"));
        // Spawned in setup, which is what makes this child come back. A child spawned
        // from a message handler would be gone until that message came again.
        let worker = ctx.spawn(
            worker(lines.clone(), ready.clone(), parsed.clone()),
            "worker",
        )?;
        let _ = workers.send(worker);
        let restarting = lines.clone();
        Ok::<_, tapio::SpawnError>(Behaviors::receive_message(|_: Tick| ()).on_signal(
            move |_, signal| {
                if *signal == Signal::PreRestart {
                    restarting.push("pipeline: restarting after the worker escalated");
                }
            },
        ))
    });
    Ok(Behaviors::supervise(build)
        .on_failure::<Unparseable>(strategy)
        .into())
}

/// An actor with no part in any of this, which is the point of it.
#[derive(Debug, Clone)]
pub struct Ticker {
    ticks: u32,
    lines: Lines,
    ticked: Tally,
}

#[actor]
impl Ticker {
    fn tick(&mut self, _: Tick) {
        self.ticks += 1;
        self.lines.push(format!("ticker: tick {}", self.ticks));
        self.ticked.mark();
    }
}

/// The first scenario: a worker escalates and its parent rebuilds the subtree.
async fn subtree_restarted_by_its_supervisor(lines: &Lines) -> Result<(), ExampleError> {
    let (ready, parsed, ticked) = (Tally::default(), Tally::default(), Tally::default());
    let (workers, mut built) = tokio::sync::mpsc::unbounded_channel();
    let system = ActorSystem::new("escalation")?;
    system.spawn(
        pipeline(lines.clone(), workers, ready.clone(), parsed.clone())?,
        "pipeline",
    )?;
    let beat = system.spawn(
        Ticker {
            ticks: 0,
            lines: lines.clone(),
            ticked: ticked.clone(),
        },
        "ticker",
    )?;
    let first = built.recv().await.ok_or("the pipeline stopped")?;
    ready.reached(1).await;
    beat.tell(Tick);
    ticked.reached(1).await;

    first.tell(Parse {
        line: String::new(),
    });
    let second = built.recv().await.ok_or("the pipeline stopped")?;
    ready.reached(1).await;
    // The sibling never noticed: a failing actor stops only itself and, through its
    // supervisor's decision, that supervisor's subtree.
    beat.tell(Tick);
    ticked.reached(1).await;
    second.tell(Parse { line: "ok".into() });
    parsed.reached(1).await;
    system.terminate().await;
    Ok(())
}

/// The second scenario: the escalation reaches the guardian.
async fn escalation_that_nobody_catches(lines: &Lines) -> Result<(), ExampleError> {
    let system = ActorSystem::new("unsupervised")?;
    let ready = Tally::default();
    let lonely = system.spawn(
        worker(lines.clone(), ready.clone(), Tally::default()),
        "worker",
    )?;
    ready.reached(1).await;
    lonely.tell(Parse {
        line: String::new(),
    });
    if let Err(failure) = system.when_terminated().await {
        lines.push(format!("system: terminated by {failure}"));
        if let [raised, .., guardian] = failure.climbed() {
            lines.push(format!("system: raised in {raised}"));
            lines.push(format!("system: escalated up to the guardian {guardian}"));
        }
    }
    Ok(())
}

/// Run the example and return one line per thing that happened, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    subtree_restarted_by_its_supervisor(&lines).await?;
    escalation_that_nobody_catches(&lines).await?;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
