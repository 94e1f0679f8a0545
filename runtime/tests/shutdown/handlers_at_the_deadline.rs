//! Handlers at the shutdown deadline: a synchronous handler past it is cut off and
//! reported, and an awaiting one is dropped, sees `PostStop` and leaks nothing (S19,
//! S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::local_corners::*;
use crate::support::outside;
use outside::{Log, T, entries, expect_lines, ms, new_log, push};
use tapio::prelude::*;
use tapio::testkit::{LeakReport, TestProbe};
use tokio::sync::mpsc;
use tokio::time::timeout;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_s48_a_synchronous_handler_past_the_deadline_is_cut_off_and_reported() {
    let system = ActorSystem::builder("deadline")
        .shutdown_timeout(ms(100))
        .track_leaks(true)
        .build()
        .unwrap();
    let log = new_log();
    let (in_tx, mut in_handler) = mpsc::unbounded_channel::<()>();
    let (stuck_tx, mut stuck_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let for_tree = log.clone();
    let _tree = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.spawn(post_stop_logger(for_tree.clone(), "leaf"), "leaf")
                    .unwrap();
                let in_tx = in_tx.clone();
                let for_stuck = for_tree.clone();
                let stuck = ctx
                    .spawn(
                        Behaviors::receive_message(move |_: u64| {
                            let _ = in_tx.send(());
                            // Blocks its worker: a misbehaving synchronous handler.
                            std::thread::sleep(ms(700));
                        })
                        .on_signal(move |_ctx, signal| {
                            if *signal == Signal::PostStop {
                                push(&for_stuck, "stuck");
                            }
                            Behaviors::same()
                        }),
                        "stuck",
                    )
                    .unwrap();
                let _ = stuck_tx.send(stuck);
                post_stop_logger(for_tree.clone(), "tree")
            }),
            "tree",
        )
        .unwrap();
    let stuck = timeout(T, stuck_rx.recv()).await.unwrap().unwrap();
    stuck.tell(1_u64);
    timeout(T, in_handler.recv())
        .await
        .expect("in its handler")
        .unwrap();
    let started = std::time::Instant::now();
    timeout(T, system.terminate())
        .await
        .expect("terminate ends");
    let took = started.elapsed();
    assert!(took < ms(500), "one deadline of 100 ms, took {took:?}");
    let seen = entries(&log);
    // The parent stops waiting for its stuck child and still sees its own PostStop.
    assert_eq!(
        seen,
        ["leaf", "tree"],
        "children first, and no PostStop for the stuck actor"
    );
    let report = LeakReport::after_terminating(&system).await;
    let stuck_paths: Vec<String> = report
        .stuck_in_handler
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(stuck_paths, ["/user/tree/stuck"], "{report}");
    assert!(
        report.not_stopped.is_empty(),
        "the parent stopped, it was not cancelled: {report}"
    );
    assert!(!report.is_clean());
}

struct Guard(Log);

impl Drop for Guard {
    fn drop(&mut self) {
        push(&self.0, "guard dropped");
    }
}

#[tokio::test(start_paused = true)]
async fn s19_s48_an_awaiting_handler_is_dropped_at_terminate_sees_post_stop_and_leaks_nothing() {
    let system = ActorSystem::builder("awaiting")
        .shutdown_timeout(ms(100))
        .track_leaks(true)
        .build()
        .unwrap();
    let log = new_log();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let for_handler = log.clone();
    let for_signal = log.clone();
    let waiter = system
        .spawn(
            Behaviors::receive_async(async move |_ctx: &mut ActorContext<u64>, _: u64| {
                let _guard = Guard(for_handler.clone());
                to.tell("waiting".to_string());
                std::future::pending::<()>().await;
            })
            .on_signal(move |_ctx, signal| {
                if *signal == Signal::PostStop {
                    push(&for_signal, "post-stop");
                }
                Behaviors::same()
            }),
            "waiter",
        )
        .unwrap();
    waiter.tell(1_u64);
    expect_lines(&mut probe, &["waiting"]).await;
    let report = LeakReport::after_terminating(&system).await;
    assert_eq!(entries(&log), ["guard dropped", "post-stop"]);
    assert!(report.is_clean(), "{report}");
    assert!(
        report.stuck_in_handler.is_empty() && report.not_stopped.is_empty(),
        "{report}"
    );
}

/// A link of a chain: spawns the next link below it until `left` is 0, where the
/// last one says the chain is built.
fn link(left: usize, built: mpsc::UnboundedSender<()>) -> Behavior<u64> {
    Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        if left == 0 {
            let _ = built.send(());
        } else {
            ctx.spawn(link(left - 1, built.clone()), "link").unwrap();
        }
        Behaviors::ignore()
    })
}

// S19 at any depth: the deadline cancels what is wedged without crashing, however
// deep the tree below the wedged actor. Its top actor is stuck in a synchronous
// handler with a chain of 5,000 actors below it; walking that chain at the deadline
// must not take a stack frame a level (it overflowed a worker's stack).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_the_deadline_cancels_a_wedged_actor_over_a_chain_of_5000() {
    const DEPTH: usize = 5_000;
    let system = ActorSystem::builder("deep")
        .shutdown_timeout(ms(100))
        .track_leaks(true)
        .build()
        .unwrap();
    let (built_tx, mut built) = mpsc::unbounded_channel::<()>();
    let (in_tx, mut in_handler) = mpsc::unbounded_channel::<()>();
    let top = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.spawn(link(DEPTH - 1, built_tx.clone()), "link")
                    .unwrap();
                let in_tx = in_tx.clone();
                Behaviors::receive_message(move |_: u64| {
                    let _ = in_tx.send(());
                    // Blocks its worker well past the 100 ms deadline.
                    std::thread::sleep(ms(700));
                })
            }),
            "top",
        )
        .unwrap();
    timeout(T, built.recv())
        .await
        .expect("the chain is built")
        .unwrap();
    top.tell(1_u64);
    timeout(T, in_handler.recv())
        .await
        .expect("in its handler")
        .unwrap();
    timeout(T, system.terminate())
        .await
        .expect("terminate ends past the deadline");
    let report = LeakReport::after_terminating(&system).await;
    let stuck: Vec<String> = report
        .stuck_in_handler
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(stuck, ["/user/top"], "{report}");
}
