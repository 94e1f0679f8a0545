//! One address in front of several workers, and what happens when one of them stops.
//!
//! Concepts: `Routers::pool`, strict round-robin, a bounded mailbox, and `offer` as
//! the way a producer is made to wait.
//!
//! When the work is uniform and the answer to "too slow" is "more of the same
//! actor", put a pool router in front of several workers. The router is an ordinary
//! actor: it has a mailbox, takes one message at a time, and hands each to the next
//! worker in turn. The workers are its children, so their failures are supervised
//! the ordinary way, and the router watches them: a worker that stops leaves the
//! pool, and the rotation carries on over the others.
//!
//! A router makes no backpressure of its own: a `tell` to it never blocks, so a fast
//! producer fills something up. Here the router is spawned with a bounded mailbox
//! of two, and the producer hands jobs over with `offer`, which waits while that
//! mailbox is full. The producer is slowed to the pace of the pool it feeds instead
//! of piling a backlog in front of it.
//!
//! What to watch in the output: the producer waits twice while handing over the
//! first six jobs; those land on three workers in strict rotation. Then a worker is
//! given a job it does not survive, and the next four jobs go to the other two, the
//! rotation carrying on where it was rather than starting again.
//!
//! The example runs on one thread, so the order of its lines is the same every run.
//! Run it with `cargo run --example worker_pool`.

use tapio::prelude::*;
use tapio::{MailboxConfig, OverflowStrategy};
use tapio_examples::support::{self, ExampleError, Lines, Tally};

/// How many workers sit behind the one address.
pub const POOL_SIZE: usize = 3;

/// How many jobs the router's mailbox holds before `offer` waits.
pub const ROUTER_CAPACITY: usize = 2;

/// What a worker reports.
#[message]
pub enum Report {
    /// It has finished a job.
    Done {
        /// Which worker.
        worker: String,
        /// Which job.
        item: u32,
    },
    /// It is on its way out.
    Stopped {
        /// Which worker.
        worker: String,
    },
}

/// A unit of work, and the address to report it to.
#[message]
pub struct Job {
    /// Which job.
    pub item: u32,
    /// Where the report goes.
    pub reply_to: ActorRef<Report>,
    /// A job the worker does not survive.
    pub poison: bool,
}

/// One member of the pool. The pool calls this once for each worker, so each has
/// its own state (here, just its name).
pub fn worker() -> Behavior<Job> {
    Behaviors::setup(|ctx| {
        let name = ctx.path().name().to_owned();
        Behaviors::receive_message(move |job: Job| {
            if job.poison {
                // A worker deciding it cannot go on. It reports before it stops; its
                // parent is the router, which watches it, so the pool shrinks by one.
                job.reply_to.tell(Report::Stopped {
                    worker: name.clone(),
                });
                return Behaviors::stopped();
            }
            job.reply_to.tell(Report::Done {
                worker: name.clone(),
                item: job.item,
            });
            Behaviors::same()
        })
    })
}

/// Writes down what the workers report, so the run has one output, and marks each
/// report so `run` can wait for it.
pub fn collector(lines: Lines, reported: Tally) -> Behavior<Report> {
    Behaviors::receive_message(move |report: Report| {
        lines.push(match report {
            Report::Done { worker, item } => format!("{worker}: job {item}"),
            Report::Stopped { worker } => format!("{worker}: stopped, and left the pool"),
        });
        reported.mark();
    })
    .into()
}

/// Hand `job` to the pool with `offer`, and say so when the router's mailbox is full
/// and the producer has to wait.
async fn hand_over(workers: &ActorRef<Job>, job: Job, lines: &Lines) -> Result<(), ExampleError> {
    let item = job.item;
    let mut offer = workers.offer(job);
    // One look first: if the offer cannot finish at once, the producer waits.
    let first =
        std::future::poll_fn(|cx| std::task::Poll::Ready(std::pin::Pin::new(&mut offer).poll(cx)))
            .await;
    let accepted = match first {
        std::task::Poll::Ready(accepted) => accepted,
        std::task::Poll::Pending => {
            lines.push(format!(
                "producer: the pool is full, waiting to hand over job {item}"
            ));
            offer.await
        }
    };
    if accepted {
        Ok(())
    } else {
        Err(format!("the pool refused job {item}").into())
    }
}

/// Run the example: the lines the workers and the producer wrote, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let reported = Tally::default();
    let system = ActorSystem::new("worker-pool")?;
    let reports = system.spawn(collector(lines.clone(), reported.clone()), "collector")?;
    // The bounded mailbox is what gives `offer` something to wait for. Unbounded, the
    // producer would hand over all six jobs before a worker had seen one.
    let mailbox = MailboxConfig::bounded(ROUTER_CAPACITY, OverflowStrategy::Fail)?;
    let workers = system.spawn_with(Routers::pool(POOL_SIZE, worker)?, "workers", mailbox)?;
    let job = |item, poison| Job {
        item,
        reply_to: reports.clone(),
        poison,
    };
    for item in 1..=6 {
        hand_over(&workers, job(item, false), &lines).await?;
    }
    reported.reached(6).await;
    // The rotation is where the first six jobs left it: this lands on the first worker.
    hand_over(&workers, job(0, true), &lines).await?;
    // The worker reports before it stops; the router hears of the stop (on its
    // system lane, ahead of any job) before the next job reaches it.
    reported.reached(1).await;
    for item in 7..=10 {
        hand_over(&workers, job(item, false), &lines).await?;
    }
    reported.reached(4).await;
    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
