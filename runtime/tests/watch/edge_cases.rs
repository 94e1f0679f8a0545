//! Death watch at its edges: a child's name is free when its parent hears `Terminated`,
//! a watch after the stop, and unwatch before and after the `Terminated` is on its way
//! (S2, S18).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_cases::*;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::sync::Semaphore;

#[message]
enum Nursery {
    StopKid,
    Probe(ActorRef<String>),
}

// S2 + S18: a parent that stops a child and hears its `Terminated` can reuse the
// child's name right there, in the signal handler.
#[tapio::test(start_paused = true)]
async fn s2_child_name_free_when_parent_hears_terminated(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let kid = ctx.spawn(Behaviors::ignore::<u64>(), "kid").unwrap();
                ctx.watch(&kid);
                let report = report.clone();
                Behaviors::receive(move |ctx, message: Nursery| {
                    match message {
                        Nursery::StopKid => {
                            let kid = ctx.child("kid").unwrap();
                            ctx.stop(kid).unwrap();
                        }
                        Nursery::Probe(to) => to.tell(format!("{}", ctx.children().len())),
                    }
                    Behaviors::same()
                })
                .on_signal(move |ctx, signal| {
                    if let Signal::Terminated(_) = signal {
                        let outcome = ctx.spawn(Behaviors::ignore::<u64>(), "kid");
                        report.tell(match outcome {
                            Ok(_) => "respawned".to_owned(),
                            Err(error) => format!("refused: {error}"),
                        });
                    }
                    Behaviors::same()
                })
            }),
            "nursery",
        )
        .unwrap();
    parent.tell(Nursery::StopKid);
    assert_eq!(probe.expect_message(T).await, "respawned");
    parent.tell(Nursery::Probe(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "1");
}

// S18: watching an actor that stopped before the watch delivers `Terminated` once;
// watching twice is watching once.
#[tapio::test(start_paused = true)]
async fn s18_watch_after_stop_delivers_once(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let target = system
        .spawn(Behaviors::ignore::<u64>(), "short-lived")
        .unwrap();
    ends.watch(&target);
    system.stop(&target).unwrap();
    ends.expect_terminated(&target, T).await;
    let late = system
        .spawn(watcher(probe.actor_ref().clone()), "late-watcher")
        .unwrap();
    late.tell(Watcher::WatchTwice(target.clone()));
    assert_eq!(probe.expect_message(T).await, "terminated short-lived");
    late.tell(Watcher::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "pong");
    probe.expect_no_message(Duration::from_millis(100)).await;
}

// S18: after `unwatch`, no `Terminated` comes, and the watcher (which would fail
// with a death pact on an unhandled one) lives on.
#[tapio::test(start_paused = true)]
async fn s18_unwatch_means_no_terminated(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let target = system.spawn(Behaviors::ignore::<u64>(), "watched").unwrap();
    let w = system
        .spawn(watcher(probe.actor_ref().clone()), "watcher")
        .unwrap();
    ends.watch(&target);
    ends.watch(&w);
    w.tell(Watcher::Watch(target.clone()));
    w.tell(Watcher::Unwatch(target.clone()));
    w.tell(Watcher::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "pong");
    system.stop(&target).unwrap();
    ends.expect_terminated(&target, T).await;
    probe.expect_no_message(Duration::from_millis(100)).await;
    w.tell(Watcher::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "pong");
}

// ---------------------------------------------------------------------------------
// More combinations
// ---------------------------------------------------------------------------------

#[message]
enum Late {
    Watch(ActorRef<u64>),
    WaitThenUnwatch(ActorRef<u64>),
    Ping(ActorRef<String>),
}

// S18: `unwatch` also stops a `Terminated` that is already on its way: the target
// stopped while the watcher was busy in an async handler, which then unwatches.
#[tapio::test(start_paused = true)]
async fn s18_unwatch_drops_a_terminated_already_on_its_way(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let in_gate = gate.clone();
    let report = probe.actor_ref().clone();
    let signal_report = probe.actor_ref().clone();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let w = system
        .spawn(
            Behaviors::receive_async(async move |ctx, message: Late| match message {
                Late::Watch(t) => ctx.watch(&t),
                Late::WaitThenUnwatch(t) => {
                    report.tell("waiting".to_owned());
                    in_gate.acquire().await.unwrap().forget();
                    ctx.unwatch(&t);
                }
                Late::Ping(to) => to.tell("pong".to_owned()),
            })
            .on_signal(move |_, signal| {
                if let Signal::Terminated(_) = signal {
                    signal_report.tell("terminated".to_owned());
                }
                Behaviors::same()
            }),
            "watcher",
        )
        .unwrap();
    ends.watch(&target);
    w.tell(Late::Watch(target.clone()));
    w.tell(Late::WaitThenUnwatch(target.clone()));
    assert_eq!(probe.expect_message(T).await, "waiting");
    system.stop(&target).unwrap();
    ends.expect_terminated(&target, T).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    gate.add_permits(1);
    w.tell(Late::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "pong");
    probe.expect_no_message(Duration::from_millis(100)).await;
}
