//! Death watch as the docs describe it: watching twice delivers `Terminated` once, and
//! watching an actor already stopped delivers it.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::sync::mpsc;

// ---------------------------------------------------------------- watching

// README.md, Watching: "`ctx.watch(&r)` delivers `Signal::Terminated` exactly once"
// (here: watched twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watching_twice_delivers_terminated_once() {
    let system = ActorSystem::new("twice").unwrap();
    let target = system.spawn(Seven, "target").unwrap();
    let mut probe = TestProbe::<&'static str>::new(&system);
    let report = probe.actor_ref().clone();
    let (ready_tx, mut ready) = mpsc::unbounded_channel();
    let t = target.clone();
    let _watcher = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&t);
                ctx.watch(&t);
                let _ = ready_tx.send(());
                let report = report.clone();
                Behaviors::receive_message(|_: u64| {}).on_signal(move |_, signal| {
                    if let Signal::Terminated(_) = signal {
                        report.tell("terminated");
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    recv(&mut ready).await;
    system.stop(&target).unwrap();
    assert_eq!(probe.expect_message(WAIT).await, "terminated");
    probe.expect_no_message(Duration::from_millis(300)).await;
    within("terminate", system.terminate()).await;
}

// README.md, Watching: "delivers `Signal::Terminated` exactly once, also for an actor
// that had already stopped."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watching_an_actor_already_stopped_delivers_terminated() {
    let system = ActorSystem::new("late-watch").unwrap();
    let target = system.spawn(Seven, "target").unwrap();
    let mut first = TestProbe::<u64>::new(&system);
    first.watch(&target);
    system.stop(&target).unwrap();
    first.expect_terminated(&target, WAIT).await;
    let mut late = TestProbe::<u64>::new(&system);
    late.watch(&target);
    late.expect_terminated(&target, WAIT).await;
    within("terminate", system.terminate()).await;
}
