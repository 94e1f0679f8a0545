//! Shutdown at its edges: a scope terminating on panic, bottom-up termination with busy
//! async leaves, one deadline for the whole tree, and SIGTERM (S1, S19, S20).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_cases::*;
use crate::support::local_corners::post_stop_logger;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::time::{Instant, timeout};

// S1: a system owned by a block ends with the block, even when the block panics:
// its actors still see `PostStop` before the panic goes on.
#[tokio::test(flavor = "current_thread")]
async fn s1_scope_terminates_on_panic() {
    let stops = log();
    let seen = stops.clone();
    let (kept_tx, kept_rx) = tokio::sync::oneshot::channel();
    let outcome = tokio::spawn(async move {
        ActorSystem::scope("scoped-panic", move |system| async move {
            let _ = kept_tx.send(system.clone());
            let seen = seen.clone();
            system
                .spawn(post_stop_logger(seen.clone(), "post-stop"), "doomed")
                .unwrap();
            panic!("the block fails");
        })
        .await
    })
    .await;
    assert!(outcome.unwrap_err().is_panic());
    let system = kept_rx.await.unwrap();
    assert!(system.is_terminating());
    assert_eq!(entries(&stops), ["post-stop"]);
    assert_eq!(system.live_actors(), 0);
}

#[message]
#[derive(Clone)]
enum Busy {
    Work,
}

struct Guard(Log, String);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.lock().unwrap().push(format!("dropped {}", self.1));
    }
}

/// A node of a binary tree `depth` deep: `Work` goes down to the leaves, which then
/// await for an hour (a drop guard logs the interruption); every node logs its
/// `PostStop`.
fn busy_node(name: String, depth: u32, log: Log, busy: ActorRef<String>) -> Behavior<Busy> {
    Behaviors::setup(move |ctx| {
        let mut children: Vec<ActorRef<Busy>> = Vec::new();
        if depth > 0 {
            for i in 0..2 {
                let child = format!("{name}.{i}");
                children.push(
                    ctx.spawn(
                        busy_node(child.clone(), depth - 1, log.clone(), busy.clone()),
                        &child,
                    )
                    .unwrap(),
                );
            }
        }
        let (me, stop_log, work_log, busy) = (name.clone(), log.clone(), log.clone(), busy.clone());
        let leaf_name = name.clone();
        Behaviors::receive_message_async(async move |_: Busy| {
            for child in &children {
                child.tell(Busy::Work);
            }
            if children.is_empty() {
                let _guard = Guard(work_log.clone(), leaf_name.clone());
                busy.tell(leaf_name.clone());
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
        })
        .on_signal(move |_, signal| {
            if *signal == Signal::PostStop {
                stop_log.lock().unwrap().push(format!("stop {me}"));
            }
        })
    })
}

/// Each `stop X` in `seen` comes after every `stop X.…` of its descendants.
fn assert_bottom_up(seen: &[String], names: &[&str]) {
    for name in names {
        let at = seen
            .iter()
            .position(|e| *e == format!("stop {name}"))
            .unwrap_or_else(|| panic!("{name} saw PostStop: {seen:?}"));
        for later in &seen[at + 1..] {
            if let Some(other) = later.strip_prefix("stop ") {
                assert!(
                    !other.starts_with(&format!("{name}.")),
                    "{other} stopped after its ancestor {name}: {seen:?}"
                );
            }
        }
    }
}

// S19: `terminate()` stops the tree bottom-up, interrupting async handlers where they
// await (their drop guards run, before their `PostStop`) well before the deadline,
// and each actor sees `PostStop` after all of its children.
#[tapio::test(start_paused = true, shutdown_timeout_ms = 2000)]
async fn s19_terminate_bottom_up_with_busy_async_leaves(system: ActorSystem) {
    let order = log();
    let mut busy = TestProbe::<String>::new(&system);
    let root = system
        .spawn(
            busy_node("r".into(), 2, order.clone(), busy.actor_ref().clone()),
            "r",
        )
        .unwrap();
    root.tell(Busy::Work);
    let mut working = busy.receive_messages(4, T).await;
    working.sort();
    assert_eq!(working, ["r.0.0", "r.0.1", "r.1.0", "r.1.1"]);
    let started = Instant::now();
    system.terminate().await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let seen = entries(&order);
    assert_bottom_up(
        &seen,
        &["r", "r.0", "r.1", "r.0.0", "r.0.1", "r.1.0", "r.1.1"],
    );
    for leaf in ["r.0.0", "r.0.1", "r.1.0", "r.1.1"] {
        let dropped = seen.iter().position(|e| *e == format!("dropped {leaf}"));
        let stopped = seen.iter().position(|e| *e == format!("stop {leaf}"));
        assert!(
            dropped.is_some() && dropped < stopped,
            "{leaf}: its handler is dropped before its PostStop: {seen:?}"
        );
    }
}

// S19: the whole tree races one deadline, not one per level: three levels whose
// `PostStop` each awaits 400 ms do not fit in a 1 s deadline; the top one is cut
// short, and `terminate` returns at the deadline.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn s19_one_deadline_for_the_whole_tree() {
    let system = ActorSystem::builder("one-deadline")
        .shutdown_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let order = log();
    system
        .spawn(slow_chain(&["a", "b", "c"], order.clone()), "a")
        .unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    let started = Instant::now();
    timeout(Duration::from_secs(10), system.terminate())
        .await
        .expect("terminate ends");
    let took = started.elapsed();
    let seen = entries(&order);
    assert_eq!(
        seen,
        ["begin c", "end c", "begin b", "end b", "begin a"],
        "took {took:?}"
    );
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(1200),
        "{took:?}"
    );
}

// S20: a real SIGTERM, delivered to this process, terminates the system that wired
// the signals.
#[tokio::test(flavor = "current_thread")]
async fn s20_sigterm_terminates_the_system() {
    let system = ActorSystem::new("signalled").unwrap();
    let stops = log();
    let seen = stops.clone();
    system
        .spawn(post_stop_logger(seen.clone(), "post-stop"), "service")
        .unwrap();
    let signals = system.shutdown_on_signals().unwrap();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let signal = timeout(T, signals.wait())
        .await
        .expect("the signal is seen");
    assert_eq!(signal, tapio::ShutdownSignal::Terminate);
    assert!(timeout(T, system.when_terminated()).await.unwrap().is_ok());
    assert_eq!(entries(&stops), ["post-stop"]);
}
