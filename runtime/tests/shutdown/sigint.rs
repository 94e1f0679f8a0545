//! One SIGINT before anyone waits terminates two wired systems (S20).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use crate::support::past_happy_paths::*;
use outside::T;
use tapio::ShutdownSignal;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::time::timeout;

/// S20: one SIGINT reaches every system wired to the signals, and a signal that
/// arrives before anyone waits is recorded: both waits, begun after it, return
/// `Interrupt` and leave their systems terminated. (The only test of this binary
/// that raises a signal.)
#[tokio::test(flavor = "current_thread")]
async fn s20_one_sigint_before_anyone_waits_terminates_two_wired_systems() {
    let first = ActorSystem::new("wired-one").unwrap();
    let second = ActorSystem::new("wired-two").unwrap();
    let observer = ActorSystem::new("observer").unwrap();
    let mut log = TestProbe::<String>::new(&observer);
    for (system, name) in [(&first, "one"), (&second, "two")] {
        system
            .spawn(post_stop_reporter(name, log.actor_ref().clone()), "worker")
            .unwrap();
    }
    let one = first.shutdown_on_signals().unwrap();
    let two = second.shutdown_on_signals().unwrap();
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("kill -INT {}", std::process::id())])
        .status()
        .expect("sh runs");
    assert!(status.success());
    let (a, b) = timeout(T, async { tokio::join!(one.wait(), two.wait()) })
        .await
        .expect("both systems terminated");
    assert_eq!(
        (a, b),
        (ShutdownSignal::Interrupt, ShutdownSignal::Interrupt)
    );
    assert_eq!(first.live_actors(), 0);
    assert_eq!(second.live_actors(), 0);
    let mut lines = log.receive_messages(2, T).await;
    lines.sort();
    assert_eq!(lines, ["one stopped", "two stopped"]);
    assert!(!observer.is_terminating());
    observer.terminate().await;
}
