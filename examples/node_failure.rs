//! Watching a worker on another node, and rebuilding it here when that node goes.
//!
//! Concepts: `ctx.watch` on a ref that came from `resolve`, `Terminated` arriving
//! because a whole system went away, and a coordinator that answers it by starting
//! the work again somewhere it can still reach.
//!
//! The watch is the same call as in `death_watch`, on a ref that happens to point at
//! another system. That is the whole difference in the API. The difference that
//! matters is in what the signal means. Locally, `Terminated` is a fact: the actor
//! stopped. Across a link it is a conclusion: the actor stopped, or its system
//! stopped, or this node stopped hearing from that one. Here the other system really
//! did terminate (and said so as it went, so the news is immediate), but nothing in
//! the signal says which of the three it was, and nothing could.
//!
//! Supervision does not cross the link: the coordinator is not the remote worker's
//! parent and never sees it fail, only disappear. Watching is the supported way to
//! depend on an actor somewhere else, with a plan for the day it is gone.
//!
//! What to watch in the output: after `away` terminates, the coordinator does not
//! retry against the node that is gone. It starts a worker of its own, a child it
//! supervises, and the jobs after that are done on `home`. That is the difference
//! between a failover and a stall.
//!
//! Run it with `cargo run --example node_failure`.

use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio_examples::node_failure_messages::{Done, Job};
use tapio_examples::support::{self, ExampleError, Lines, Tally, within};

/// Get one job done, wherever the coordinator can. Never crosses the link, so it
/// needs no wire key.
#[message]
pub struct Assign(pub u32);

/// A system that listens on a loopback port the OS picks.
fn node(name: &str) -> Result<ActorSystem, tapio::SystemError> {
    ActorSystem::builder(name)
        .remote(RemoteSettings::loopback())
        .build()
}

/// A worker on the node `node`: it does the job and says where it was done.
pub fn worker(node: &'static str, lines: Lines) -> Behavior<Job> {
    Behaviors::receive_message(move |job: Job| {
        lines.push(format!("{node}: the worker did job {}", job.item));
        job.reply_to.tell(Done {
            item: job.item,
            by: node.to_owned(),
        });
    })
    .into()
}

/// Where the results come back to, on the coordinator's node: it writes each down
/// and marks `finished`.
pub fn results(lines: Lines, finished: Tally) -> Behavior<Done> {
    Behaviors::receive_message(move |done: Done| {
        lines.push(format!(
            "home: job {} came back from {}",
            done.item, done.by
        ));
        finished.mark();
    })
    .into()
}

/// Hands out jobs to its current worker, and replaces the worker when it is gone.
#[derive(Debug)]
pub struct Coordinator {
    worker: ActorRef<Job>,
    results: ActorRef<Done>,
    lines: Lines,
    rebuilt: Tally,
}

impl Coordinator {
    /// A coordinator that watches `worker` (on another node) from the start.
    pub fn watching(
        worker: ActorRef<Job>,
        results: ActorRef<Done>,
        lines: Lines,
        rebuilt: Tally,
    ) -> Behavior<CoordinatorMsg> {
        Behaviors::setup(move |ctx| {
            // One call, and from here on this coordinator cannot hold a ref to a
            // node that is gone without being told.
            ctx.watch(&worker);
            Self {
                worker: worker.clone(),
                results: results.clone(),
                lines: lines.clone(),
                rebuilt: rebuilt.clone(),
            }
        })
    }
}

#[actor]
impl Coordinator {
    fn assign(&mut self, Assign(item): Assign) {
        // An ordinary tell. Whether it crosses a link is a property of the ref, and
        // this code does not ask.
        self.worker.tell(Job {
            item,
            reply_to: self.results.clone(),
        });
    }

    #[signal]
    fn on_signal(&mut self, ctx: &mut Ctx<Self>, signal: &Signal) {
        if let Signal::Terminated(end) = signal {
            let node = end.actor().path().address().system().to_owned();
            self.lines.push(format!(
                "home: the worker on {node} is gone, rebuilding it here"
            ));
            // A child this time, so it is supervised by the actor that depends on
            // it: what could never be true of the worker on the other node.
            match ctx.spawn(worker("home", self.lines.clone()), "worker") {
                Ok(local) => self.worker = local,
                Err(error) => self.lines.push(format!("home: cannot rebuild: {error}")),
            }
            self.rebuilt.mark();
        }
    }
}

/// Run the example: the lines both nodes wrote, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let (finished, rebuilt) = (Tally::default(), Tally::default());
    let home = node("home")?;
    let away = node("away")?;

    let hand = away.spawn(worker("away", lines.clone()), "worker")?;
    // Read off the ref because both systems share this process; in a deployment the
    // address comes from configuration or from a message.
    let remote = home.resolve::<Job>(&hand.path().to_uri())?;
    let results = home.spawn(results(lines.clone(), finished.clone()), "results")?;
    let coordinator = home.spawn(
        Coordinator::watching(remote, results, lines.clone(), rebuilt.clone()),
        "coordinator",
    )?;

    // The watch went out ahead of the first job, on the same link, so once the job
    // is back the other node knows it is watched.
    coordinator.tell(Assign(1));
    within("job 1", finished.reached(1)).await?;

    // The whole node goes away, not just the actor. It tells its peers as it goes,
    // so the coordinator hears at once instead of after the failure detector's
    // window.
    lines.push("away: the whole system terminates");
    away.terminate().await;
    within("the coordinator to rebuild", rebuilt.reached(1)).await?;

    for item in 2..=3 {
        coordinator.tell(Assign(item));
        within("a job done at home", finished.reached(1)).await?;
    }
    home.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
