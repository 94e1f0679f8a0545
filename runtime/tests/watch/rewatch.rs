//! Watch, unwatch and watch again of a live target hears one `Terminated`, and watching
//! an actor of a terminated system hears it once (S18).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{T, expect_lines, ms};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::time::timeout;

/// S18: watch, unwatch, watch and watch again of a live target: one watch stands,
/// and its `Terminated` comes exactly once.
#[tapio::test(start_paused = true)]
async fn s18_watch_unwatch_watch_watch_of_a_live_target_hears_one_terminated(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let watched = target.clone();
    let _watcher = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&watched);
                ctx.unwatch(&watched);
                ctx.watch(&watched);
                ctx.watch(&watched);
                to.tell("set".to_string());
                let to = to.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                    if let Signal::Terminated(t) = signal {
                        to.tell(format!("terminated {}", t.actor().path().name()));
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    expect_lines(&mut probe, &["set"]).await;
    system.stop(&target).unwrap();
    expect_lines(&mut probe, &["terminated target"]).await;
    probe.expect_no_message(ms(200)).await;
}

/// S18: an actor of a system that has terminated, watched from another system,
/// is heard `Terminated` once, at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s18_watching_an_actor_of_a_terminated_system_hears_terminated_once() {
    let gone = ActorSystem::new("gone").unwrap();
    let target = gone.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    timeout(T, gone.terminate()).await.unwrap();
    let live = ActorSystem::new("live").unwrap();
    let mut probe = TestProbe::<String>::new(&live);
    let to = probe.actor_ref().clone();
    let _watcher = live
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&target);
                let to = to.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                    if let Signal::Terminated(t) = signal {
                        to.tell(format!("terminated {}", t.actor().path()));
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    expect_lines(&mut probe, &["terminated /user/target"]).await;
    probe.expect_no_message(ms(100)).await;
    timeout(T, live.terminate()).await.unwrap();
}
