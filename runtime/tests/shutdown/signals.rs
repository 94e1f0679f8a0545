//! A real SIGTERM, sent to this test process, terminates a system wired to it (S20).
//! One test in this file: a signal reaches the whole process.

// The library's documentation lints do not apply to tests, nor does its ban on
// unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::ShutdownSignal;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

/// Send `signal` (such as `TERM`) to this process, through the shell's `kill`.
fn raise(signal: &str) {
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("kill -{signal} {}", std::process::id())])
        .status()
        .expect("sh runs");
    assert!(status.success(), "kill -{signal} failed");
}

// S20: SIGTERM, a real one, wired to `terminate()`: every actor stops, bottom-up, and
// the wait returns which signal it was.
#[tokio::test(flavor = "current_thread")]
async fn sigterm_terminates_the_system() {
    let system = ActorSystem::new("service").unwrap();
    let observer = ActorSystem::new("observer").unwrap();
    let mut closed = TestProbe::<&'static str>::new(&observer);
    let log = closed.actor_ref().clone();
    system
        .spawn(
            Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                if *signal == Signal::PostStop {
                    log.tell("worker closed");
                }
            }),
            "worker",
        )
        .unwrap();
    let signals = system.shutdown_on_signals().unwrap();
    raise("TERM");
    let signal = tokio::time::timeout(Duration::from_secs(10), signals.wait())
        .await
        .expect("the signal arrived and the system terminated");
    assert_eq!(signal, ShutdownSignal::Terminate);
    assert_eq!(signal.to_string(), "SIGTERM");
    assert!(system.is_terminating());
    assert_eq!(system.live_actors(), 0);
    assert_eq!(
        closed.expect_message(Duration::from_secs(1)).await,
        "worker closed"
    );
    observer.terminate().await;
}
