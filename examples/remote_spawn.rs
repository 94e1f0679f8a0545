//! Asking another node to start an actor, and leaving its supervision over there.
//!
//! Concepts: `#[remote_behavior]` (a factory asked for by key), a `Spawner` that
//! offers an allowlist, `spawn_remote` answering a typed ref, watching that ref, and
//! a refusal that comes back with its reason.
//!
//! Sending, asking and watching are the same calls whichever node the target is on.
//! Starting an actor elsewhere is not: it is a round trip, so it is awaited. What
//! crosses is a factory's key and its arguments, never a closure, and the other
//! node looks the key up among the factories linked into its own binary. Both nodes
//! run the same code; a key one of them has never heard of is what version skew
//! looks like from the side that asked.
//!
//! The new actor is the spawner's child, supervised on its own node by the
//! supervision its factory declares. The node that asked holds a ref and watches it:
//! `Terminated` arrives when the actor stops, when its node stops, or when the link
//! is given up on, and all three mean the same here: that worker is gone.
//!
//! What to watch in the output: the third line. The worker crashed between the two
//! jobs, compute restarted it, and the job queued behind the crash was answered by
//! the new incarnation through the same ref. The job count going back to 1 is the
//! only trace of it on this side; nothing was reported, because nothing had to be.
//!
//! Run it with `cargo run --example remote_spawn`.

use std::sync::Arc;
use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio::remote::spawn::{Spawn, SpawnReply, Spawned, Spawner, SpawnerMsg};
use tapio::testkit::two_nodes_named;
// The worker lives in a module of the library only, so its message keys and its
// factory key are registered once (see that module).
use tapio_examples::remote_spawn_doubler::{
    Crash, Double, DoublerArgs, DoublerMsg, Retire, doubler,
};
use tapio_examples::support::{self, ExampleError, Lines};
use tokio::sync::Notify;

/// How long to wait for the worker to be reported gone.
const WAIT: Duration = Duration::from_secs(10);

/// An actor on the requesting node that watches the worker, which is the whole of
/// what that node is promised about it. Told `Retire`, it passes it on.
pub fn overseer(worker: ActorRef<DoublerMsg>, lines: Lines, gone: Arc<Notify>) -> Behavior<Retire> {
    Behaviors::setup(move |ctx| {
        ctx.watch(&worker);
        let (worker, lines, gone) = (worker.clone(), lines.clone(), gone.clone());
        Behaviors::receive_message(move |retire: Retire| worker.tell(retire)).on_signal(
            move |_, signal| {
                if let Signal::Terminated(end) = signal {
                    lines.push(format!(
                        "orders: {} is gone, so the next job needs another worker",
                        end.actor().path().name()
                    ));
                    gone.notify_one();
                }
            },
        )
    })
}

/// Run the example: the lines the requesting node wrote, in order. The port in the
/// first line is the one the OS picked for `compute`.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let nodes = two_nodes_named("orders", "compute", RemoteSettings::loopback())?;
    let (orders, compute) = (&nodes.a, &nodes.b);

    // One factory offered and nothing else. A spawner that started anything linked
    // into its binary would hand that power to whoever can reach the port.
    compute.spawn(Spawner::offering::<doubler>().build()?, "spawner")?;
    let spawner = orders.resolve::<SpawnerMsg>(&format!("{}/user/spawner", compute.address()))?;

    let Spawned {
        actor: worker,
        name,
    } = spawner
        .spawn_remote::<doubler>(DoublerArgs { factor: 2 }, "doubler-1")
        .await?;
    lines.push(format!(
        "orders: compute started {name} at {}",
        worker.path().to_uri()
    ));
    let gone = Arc::new(Notify::new());
    let overseer = orders.spawn(
        overseer(worker.clone(), lines.clone(), gone.clone()),
        "overseer",
    )?;

    let first = worker.ask(Double(6)).await?;
    lines.push(format!(
        "orders: 6 doubled is {}, job {} for it",
        first.n, first.handled
    ));
    // The crash and the next job queue one behind the other in the worker's
    // mailbox on compute. The crash is supervised there, the mailbox survives the
    // restart, and the new incarnation answers the job through this same ref.
    worker.tell(Crash);
    let second = worker.ask(Double(7)).await?;
    lines.push(format!(
        "orders: 7 doubled is {}, job {} for it",
        second.n, second.handled
    ));
    lines.push("orders: its count started again; compute restarted it and told orders nothing");

    // A key compute has never heard of, asked for by hand, since no factory type
    // names it here. Nothing on compute guesses what it might have meant.
    let refused = spawner
        .ask(Spawn {
            factory: "tripler".into(),
            args: Vec::new(),
            name: "tripler-1".into(),
        })
        .await?;
    match refused {
        SpawnReply::SpawnFailed { reason } => {
            lines.push(format!("orders: compute refused tripler: {reason}"));
        }
        SpawnReply::Spawned { actor, .. } => {
            return Err(format!("compute started a tripler it does not have: {actor}").into());
        }
    }

    overseer.tell(Retire);
    tokio::time::timeout(WAIT, gone.notified())
        .await
        .map_err(|_| "the overseer did not hear the worker stop")?;
    nodes.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
