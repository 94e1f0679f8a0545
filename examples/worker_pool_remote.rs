//! Backpressure across a link, which the transport cannot give: credit.
//!
//! Concepts: why `offer` on a remote ref is local backpressure only, and the
//! credit-based protocol that is end to end. Workers say how much they will take;
//! the producer sends that much and no more.
//!
//! `ref.offer(item).await` on a remote ref waits for room in this node's outbound
//! buffer: a socket that is not draining, not a worker that is falling behind. The
//! two come apart exactly when it matters. A worker with a large mailbox reads every
//! frame the moment it arrives, so the buffer stays empty, `offer` never waits, and
//! the backlog piles up on the other node where this one cannot see it.
//!
//! So the flow is controlled with messages, by the side that knows. Each worker
//! grants the producer a number of items it will have outstanding. The producer
//! sends that many and no more, and each item finished grants one back. Compare it
//! with `worker_pool`, where a bounded mailbox in the same process pushes back on
//! `offer` directly and none of this is needed.
//!
//! The producer here is not an actor but the example's own task, as a loop reading
//! a source would be: the credit reaches it through a small actor that hands each
//! one over a channel. The workers are started on the other node by a spawner.
//!
//! What to watch in the output: the third line. Twelve items were done, and the
//! producer's own counts (sent to a worker, minus what that worker reported done)
//! never went above the grant. The workers chose that number, the producer obeyed
//! it, and nothing in the transport enforced it. How the twelve split between the
//! two workers depends on whose credit came back first, and may differ between runs.
//!
//! Run it with `cargo run --example worker_pool_remote`.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio::remote::spawn::{Spawned, Spawner, SpawnerMsg};
use tapio::testkit::two_nodes_named;
use tapio_examples::support::{self, ExampleError, Lines};
// The worker and its messages live in a module of the library only, so their keys
// are registered once (see that module).
use tapio_examples::worker_pool_remote_sink::{Credit, Hello, Item, SinkArgs, sink};

/// How many workers are started on the other node.
pub const WORKERS: u32 = 2;

/// How many items each worker will have outstanding at once.
pub const GRANT: u32 = 3;

/// How much work there is.
pub const ITEMS: u32 = 12;

/// How long the producer waits for a credit before giving up.
const WAIT: Duration = Duration::from_secs(10);

/// What the producer knows about one worker.
#[derive(Debug, Default)]
struct Account {
    /// Items it may still be sent.
    credit: u32,
    /// Items sent to it.
    sent: u32,
    /// Items it reported done.
    done: u32,
}

/// Run the example: the lines the producer wrote, in order.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let nodes = two_nodes_named("orders", "compute", RemoteSettings::loopback())?;
    let (orders, compute) = (&nodes.a, &nodes.b);

    compute.spawn(Spawner::offering::<sink>().build()?, "spawner")?;
    let spawner = orders.resolve::<SpawnerMsg>(&format!("{}/user/spawner", compute.address()))?;
    let mut workers = Vec::new();
    for number in 1..=WORKERS {
        let Spawned { actor, .. } = spawner
            .spawn_remote::<sink>(SinkArgs { grant: GRANT }, &format!("sink-{number}"))
            .await?;
        workers.push(actor);
    }
    lines.push(format!(
        "orders: compute started {WORKERS} workers, each granting {GRANT} items at a time"
    ));

    // Where the credit arrives: an actor on this node, which the workers reach
    // through the ref in `Hello` and `Item`, handing each credit to the loop below.
    let (credits, mut inbox) = tokio::sync::mpsc::unbounded_channel();
    let producer = orders.spawn(
        Behaviors::receive_message(move |credit: Credit| {
            let _ = credits.send(credit);
        }),
        "producer",
    )?;
    for worker in &workers {
        worker.tell(Hello {
            reply_to: producer.clone(),
        });
    }

    let mut work: VecDeque<u32> = (1..=ITEMS).collect();
    let mut books: BTreeMap<String, Account> = BTreeMap::new();
    let mut peak = 0;
    while books.values().map(|account| account.done).sum::<u32>() < ITEMS {
        let credit = tokio::time::timeout(WAIT, inbox.recv())
            .await
            .map_err(|_| "no credit came back within 10 s")?
            .ok_or("the producer's inbox closed")?;
        let account = books
            .entry(credit.worker.path().name().to_owned())
            .or_default();
        account.credit += credit.n;
        account.done = credit.done;
        // Send what has been granted, and not one item more.
        while account.credit > 0 {
            let Some(n) = work.pop_front() else { break };
            credit.worker.tell(Item {
                n,
                reply_to: producer.clone(),
            });
            account.credit -= 1;
            account.sent += 1;
        }
        // What the grant bounds: items sent to this worker that it has not yet
        // reported done.
        peak = peak.max(account.sent - account.done);
    }

    let split: Vec<String> = books
        .iter()
        .map(|(worker, account)| format!("{worker} did {}", account.done))
        .collect();
    lines.push(format!("orders: {}", split.join(" and ")));
    let done: u32 = books.values().map(|account| account.done).sum();
    lines.push(format!(
        "orders: {done} items done, and never more than {peak} outstanding at one worker"
    ));
    lines.push(
        "orders: the credit was the backpressure; offer would have waited only for room in this node's outbound buffer",
    );
    nodes.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
