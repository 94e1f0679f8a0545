//! The leak check of `#[tapio::test]` and `TestConfig` (S48): a clean test passes, and
//! an actor deliberately left stuck in a handler past the shutdown deadline fails it.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{LeakReport, TestProbe};

/// An actor that never finishes stopping: told to, it says it has started; its
/// `PostStop` then awaits a future that never completes. (A stop interrupts an
/// `async` message handler, but `PostStop` runs to its end, or to the deadline.)
#[derive(Clone)]
struct Stuck;

#[message]
pub struct Hang {
    pub entered: ActorRef<&'static str>,
}

#[actor]
impl Stuck {
    fn hang(&mut self, hang: Hang) {
        hang.entered.tell("entered");
    }

    #[signal]
    async fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            std::future::pending::<()>().await;
        }
    }
}

/// Spawn a stuck actor named `name` and wait until it is inside its handler.
async fn leave_stuck(system: &ActorSystem, probe: &mut TestProbe<&'static str>, name: &str) {
    let stuck = system.spawn(Stuck, name).unwrap();
    stuck.tell(Hang {
        entered: probe.actor_ref().clone(),
    });
    assert_eq!(
        probe.expect_message(Duration::from_secs(1)).await,
        "entered"
    );
}

#[tapio::test(start_paused = true)]
async fn a_test_whose_actors_all_stop_is_clean(system: ActorSystem) {
    let busy = system.spawn(Behaviors::ignore::<u64>(), "busy").unwrap();
    busy.tell(1_u64);
}

// The deliberately leaked actor: the system's deadline passes with it still inside
// its handler, so it is cancelled, and the test fails naming it (and nothing else:
// the idle probe still stops).
#[tapio::test(start_paused = true, shutdown_timeout_ms = 200)]
#[should_panic(
    expected = "leaked:\n- /user/stuck was still in a handler at the shutdown deadline and was cancelled"
)]
async fn an_actor_stuck_in_a_handler_is_reported_as_leaked(system: ActorSystem) {
    let mut probe = TestProbe::new(&system);
    leave_stuck(&system, &mut probe, "stuck").await;
}

#[tokio::test(start_paused = true)]
async fn the_report_lists_each_leak() {
    let system = ActorSystem::builder("report")
        .shutdown_timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let mut probe = TestProbe::new(&system);
    leave_stuck(&system, &mut probe, "stuck").await;
    leave_stuck(&system, &mut probe, "stuck-too").await;
    let report = LeakReport::after_terminating(&system).await;
    assert!(!report.is_clean());
    let mut stuck: Vec<_> = report
        .stuck_in_handler
        .iter()
        .map(|p| p.to_string())
        .collect();
    stuck.sort();
    assert_eq!(stuck, ["/user/stuck", "/user/stuck-too"]);
    // The probe, under `/system`, still got its turn to stop (S19): only the actors
    // in a handler were given up on.
    assert!(report.not_stopped.is_empty(), "{report}");
    assert_eq!(report.running_tasks, 0, "cancelled tasks are dropped");
    assert!(
        report
            .to_string()
            .starts_with("the actor system \"report\" leaked:")
    );
}

#[tokio::test(start_paused = true)]
async fn a_clean_report_says_so() {
    let system = ActorSystem::builder("clean")
        .track_leaks(true)
        .build()
        .unwrap();
    system.spawn(Behaviors::ignore::<u64>(), "idle").unwrap();
    let report = LeakReport::after_terminating(&system).await;
    assert!(report.is_clean(), "{report}");
    assert_eq!(
        report.to_string(),
        "the actor system \"clean\" left nothing behind"
    );
}

// A reply ref kept beyond the system (here deliberately leaked) is an ask still
// waiting: the attribute fails the test and says so.
#[tapio::test(start_paused = true)]
#[should_panic(
    expected = "- 1 ask promise(s) still waiting for an answer after termination (a reply ref kept alive)"
)]
async fn an_ask_left_waiting_fails_the_test(system: ActorSystem) {
    let mut inbox = TestProbe::<ActorRef<u64>>::new(&system);
    let asked = inbox
        .actor_ref()
        .ask_with(|reply_to: ActorRef<u64>| reply_to)
        .timeout(Duration::from_millis(10));
    let (outcome, reply_to) = tokio::join!(asked, inbox.expect_message(Duration::from_secs(1)));
    assert!(outcome.is_err(), "nobody answered");
    Box::leak(Box::new(reply_to));
}

// A handler that blocks its worker thread cannot be cancelled at the deadline: its
// task is still running when the report is made, and the report counts it. The
// handler blocks on a channel that the test releases once it has the report, so the
// test waits on nothing but signals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_blocking_its_thread_is_reported_as_running() {
    let system = ActorSystem::builder("blocked")
        .shutdown_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    // Told straight from the handler: an actor woken from the blocked thread would
    // wait in that worker's queue until the block ends.
    let (entered, blocking) = tokio::sync::oneshot::channel::<()>();
    let entered = std::sync::Mutex::new(Some(entered));
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = std::sync::Mutex::new(released);
    let blocker = system
        .spawn(
            Behaviors::receive_message(move |_: u64| {
                if let Some(entered) = entered.lock().unwrap().take() {
                    let _ = entered.send(());
                }
                // A synchronous call that should have gone to `spawn_blocking`,
                // bounded so that a broken test cannot hang.
                let _ = released
                    .lock()
                    .unwrap()
                    .recv_timeout(Duration::from_secs(30));
            }),
            "blocker",
        )
        .unwrap();
    blocker.tell(1_u64);
    tokio::time::timeout(Duration::from_secs(5), blocking)
        .await
        .unwrap()
        .unwrap();
    let report = LeakReport::after_terminating(&system).await;
    release.send(()).unwrap();
    assert_eq!(report.running_tasks, 1, "{report}");
    assert!(
        report
            .to_string()
            .contains("- 1 actor task(s) still running after termination"),
        "{report}"
    );
}

#[message]
pub struct Question {
    pub reply_to: ActorRef<u64>,
}

/// Ask a question nobody answers, on a system whose hoarder keeps the reply ref
/// past termination (it comes back, to be dropped after the report).
async fn leave_an_ask_waiting(
    system: &ActorSystem,
) -> tokio::sync::mpsc::UnboundedReceiver<ActorRef<u64>> {
    let (keep, kept) = tokio::sync::mpsc::unbounded_channel();
    let hoarder = system
        .spawn(
            Behaviors::receive_message(move |q: Question| {
                let _ = keep.send(q.reply_to);
            }),
            "hoarder",
        )
        .unwrap();
    let asked = hoarder
        .ask_with(|reply_to| Question { reply_to })
        .timeout(Duration::from_millis(10))
        .await;
    assert!(asked.is_err(), "nobody answers");
    kept
}

// Leak tracking is a per-system flag: with it, the ask left waiting is counted.
#[tokio::test(start_paused = true)]
async fn a_system_that_tracks_leaks_counts_an_ask_left_waiting() {
    let system = ActorSystem::builder("tracked")
        .track_leaks(true)
        .build()
        .unwrap();
    assert!(system.settings().tracks_leaks());
    let kept = leave_an_ask_waiting(&system).await;
    let report = LeakReport::after_terminating(&system).await;
    assert_eq!(report.pending_asks, Some(1), "{report}");
    assert_eq!(report.pending_timers, Some(0), "{report}");
    assert!(!report.is_clean());
    drop(kept);
}

// Without the flag, asks and timers are not counted (nothing on their path touches a
// shared counter), and the report says so instead of reporting none.
#[tokio::test(start_paused = true)]
async fn a_system_that_does_not_track_leaks_says_so_in_its_report() {
    let system = ActorSystem::builder("untracked")
        .track_leaks(false)
        .build()
        .unwrap();
    assert!(!system.settings().tracks_leaks());
    let kept = leave_an_ask_waiting(&system).await;
    let report = LeakReport::after_terminating(&system).await;
    assert_eq!(report.pending_asks, None, "{report}");
    assert_eq!(report.pending_timers, None, "{report}");
    assert!(!report.counted_everything());
    assert!(report.is_clean(), "no actor was left behind: {report}");
    assert_eq!(
        report.to_string(),
        "the actor system \"untracked\" left no actor behind; its timers and asks were not counted: build it with `track_leaks(true)` to count them"
    );
    drop(kept);
}

// Whatever the build, `#[tapio::test]` tracks leaks.
#[tapio::test]
async fn the_test_attribute_tracks_leaks(system: ActorSystem) {
    assert!(system.settings().tracks_leaks());
}
