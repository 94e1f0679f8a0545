//! A test that gets a fresh system, terminates it at the end, and fails on leaks.
//!
//! `TestConfig` is what `#[tapio::test]` expands to: a runtime, a system that tracks
//! leaks, the body, then termination and the leak check. `LeakReport::after_terminating`
//! lists the actors the deadline gave up on, tasks still running, and timers and asks
//! still pending when the system counted them.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use crate::actor::ActorPath;
use crate::actor::ActorSystem;

/// How to run one actor test: what `#[tapio::test]` expands to.
///
/// [`run`](Self::run) builds a tokio runtime, starts an [`ActorSystem`] named after
/// the test (one that tracks leaks, whatever the build:
/// [`ActorSystemBuilder::track_leaks`](crate::ActorSystemBuilder::track_leaks)),
/// runs the body with it, then terminates the system and checks that nothing leaked
/// (see [`LeakReport`]); a leak fails the test.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tapio::prelude::*;
/// use tapio::testkit::{TestConfig, TestProbe};
///
/// TestConfig::new("echo_answers").start_paused(true).run(|system: ActorSystem| async move {
///     let mut probe = TestProbe::<u64>::new(&system);
///     let to = probe.actor_ref().clone();
///     let echo = system.spawn(Behaviors::receive_message(move |n: u64| to.tell(n)), "echo").unwrap();
///     echo.tell(7_u64);
///     assert_eq!(probe.expect_message(Duration::from_secs(1)).await, 7);
/// });
/// ```
#[derive(Debug, Clone)]
pub struct TestConfig {
    name: String,
    start_paused: bool,
    worker_threads: Option<usize>,
    shutdown_timeout: Duration,
}

impl TestConfig {
    /// The shutdown deadline of a test's system unless one is given.
    pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(3);

    /// A test named `name`; the system is named after it.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            start_paused: false,
            worker_threads: None,
            shutdown_timeout: Self::DEFAULT_SHUTDOWN_TIMEOUT,
        }
    }

    /// Start tokio's clock paused, so timers, backoffs and expectation bounds elapse
    /// instantly and in order. Needs tapio's `test-util` feature (in the test
    /// crate's dev-dependencies) and a current-thread runtime.
    pub fn start_paused(mut self, paused: bool) -> Self {
        self.start_paused = paused;
        self
    }

    /// Run on a multi-thread runtime with this many workers (current-thread by
    /// default).
    pub fn worker_threads(mut self, workers: usize) -> Self {
        self.worker_threads = Some(workers);
        self
    }

    /// The deadline the system's shutdown races at the end of the test.
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Run `body` with a fresh system; then terminate it and check for leaks.
    ///
    /// # Panics
    ///
    /// When the body panics or returns an error, when the runtime or the system
    /// cannot be built, and when something leaked: the panic message is the
    /// [`LeakReport`].
    pub fn run<F, Fut>(self, body: F)
    where
        F: FnOnce(ActorSystem) -> Fut,
        Fut: Future,
        Fut::Output: TestResult,
    {
        let mut builder = match self.worker_threads {
            Some(workers) => {
                let mut builder = tokio::runtime::Builder::new_multi_thread();
                builder.worker_threads(workers.max(1));
                builder
            }
            None => tokio::runtime::Builder::new_current_thread(),
        };
        builder.enable_all();
        if self.start_paused {
            pause_clock(&mut builder);
        }
        let runtime = match builder.build() {
            Ok(runtime) => runtime,
            Err(error) => panic!("cannot build the test's tokio runtime: {error}"),
        };
        let name: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        runtime.block_on(async move {
            let system = match ActorSystem::builder(&name)
                .shutdown_timeout(self.shutdown_timeout)
                .track_leaks(true)
                .build()
            {
                Ok(system) => system,
                Err(error) => panic!("cannot build the test's actor system: {error}"),
            };
            let outcome = body(system.clone()).await.into_outcome();
            let report = LeakReport::after_terminating(&system).await;
            if let Err(error) = outcome {
                panic!("the test returned an error: {error}");
            }
            if !report.is_clean() {
                panic!("{report}");
            }
        });
    }
}

#[cfg(feature = "test-util")]
fn pause_clock(builder: &mut tokio::runtime::Builder) {
    builder.start_paused(true);
}

#[cfg(not(feature = "test-util"))]
fn pause_clock(_: &mut tokio::runtime::Builder) {
    panic!(
        "`start_paused` needs tapio's `test-util` feature: add `features = [\"test-util\"]` to tapio in [dev-dependencies]"
    );
}

/// What a test body may return: `()` or a `Result` whose error fails the test.
pub trait TestResult {
    /// `Err` with the error's text when the test failed.
    fn into_outcome(self) -> Result<(), String>;
}

impl TestResult for () {
    fn into_outcome(self) -> Result<(), String> {
        Ok(())
    }
}

impl<E: fmt::Debug> TestResult for Result<(), E> {
    fn into_outcome(self) -> Result<(), String> {
        self.map_err(|error| format!("{error:?}"))
    }
}

/// What a terminated system left behind.
///
/// Terminating a system stops every actor; a clean test leaves nothing after that:
/// - no actor still inside a handler when the shutdown deadline passed (it had to be
///   cancelled);
/// - no actor cancelled at the deadline for another reason (it was waiting for a
///   stuck child, or its turn to stop never came);
/// - no actor task still running (a handler blocking its thread cannot be cancelled);
/// - no timer still running;
/// - no ask promise still waiting: its reply ref was kept alive somewhere.
///
/// Timers and asks are counted only by a system that tracks leaks
/// ([`ActorSystemBuilder::track_leaks`](crate::ActorSystemBuilder::track_leaks): on
/// in debug builds and under `#[tapio::test]`); for one that does not, their fields
/// are `None` and the report says they were not counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeakReport {
    system: String,
    /// Actors still awaiting a handler when the shutdown deadline passed.
    pub stuck_in_handler: Vec<ActorPath>,
    /// Other actors the deadline cancelled before they had stopped.
    pub not_stopped: Vec<ActorPath>,
    /// Actor tasks still running after termination (guardians included).
    pub running_tasks: usize,
    /// Timers still running after termination; `None` if the system did not count
    /// them.
    pub pending_timers: Option<usize>,
    /// Ask promises still waiting for an answer after termination: something kept a
    /// reply ref alive. `None` if the system did not count them.
    pub pending_asks: Option<usize>,
}

impl LeakReport {
    /// Terminate `system`, wait (a bounded while) for its tasks to end, and report
    /// what is left.
    pub async fn after_terminating(system: &ActorSystem) -> Self {
        system.terminate().await;
        // Cancelled tasks are dropped by the runtime when it next runs them; give it
        // the chance, for at most a second of real time.
        let started = std::time::Instant::now();
        while system.live_actors() > 0 && started.elapsed() < Duration::from_secs(1) {
            tokio::task::yield_now().await;
        }
        let (stuck, idle): (Vec<_>, Vec<_>) = system
            .shared()
            .cancelled_at_deadline()
            .into_iter()
            .partition(|cancelled| cancelled.in_handler);
        Self {
            system: system.name().to_owned(),
            stuck_in_handler: stuck.into_iter().map(|c| c.path).collect(),
            not_stopped: idle.into_iter().map(|c| c.path).collect(),
            running_tasks: system.live_actors(),
            pending_timers: system.shared().live_timers(),
            pending_asks: system.shared().live_promises(),
        }
    }

    /// Whether nothing was found to have leaked (timers and asks only if they were
    /// counted: see [`counted_everything`](Self::counted_everything)).
    pub fn is_clean(&self) -> bool {
        self.stuck_in_handler.is_empty()
            && self.not_stopped.is_empty()
            && self.running_tasks == 0
            && self.pending_timers.unwrap_or(0) == 0
            && self.pending_asks.unwrap_or(0) == 0
    }

    /// Whether the system counted its timers and asks, so the report covers them.
    pub fn counted_everything(&self) -> bool {
        self.pending_timers.is_some() && self.pending_asks.is_some()
    }
}

impl fmt::Display for LeakReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NOT_COUNTED: &str =
            "its timers and asks were not counted: build it with `track_leaks(true)` to count them";
        if self.is_clean() {
            if !self.counted_everything() {
                return write!(
                    f,
                    "the actor system {:?} left no actor behind; {NOT_COUNTED}",
                    self.system
                );
            }
            return write!(f, "the actor system {:?} left nothing behind", self.system);
        }
        write!(f, "the actor system {:?} leaked:", self.system)?;
        for path in &self.stuck_in_handler {
            write!(
                f,
                "\n- {path} was still in a handler at the shutdown deadline and was cancelled"
            )?;
        }
        for path in &self.not_stopped {
            write!(
                f,
                "\n- {path} had not stopped by the shutdown deadline (waiting for a child, or for its turn) and was cancelled"
            )?;
        }
        if let Some(timers @ 1..) = self.pending_timers {
            write!(f, "\n- {timers} timer(s) still running after termination")?;
        }
        if let Some(asks @ 1..) = self.pending_asks {
            write!(
                f,
                "\n- {asks} ask promise(s) still waiting for an answer after termination (a reply ref kept alive)"
            )?;
        }
        if self.running_tasks > 0 {
            write!(
                f,
                "\n- {} actor task(s) still running after termination (a handler blocking its thread?)",
                self.running_tasks
            )?;
        }
        if !self.counted_everything() {
            write!(f, "\n({NOT_COUNTED})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Every kind of leak makes the report unclean and is named in its text, timers
    // included (a running actor's timers are cancelled with it, so no test of the
    // public API can leave one behind on purpose).
    #[test]
    fn every_kind_of_leak_is_named() {
        let clean = LeakReport {
            system: "s".to_owned(),
            pending_timers: Some(0),
            pending_asks: Some(0),
            ..LeakReport::default()
        };
        assert!(clean.is_clean());
        let leaks = [
            (
                LeakReport {
                    pending_timers: Some(2),
                    ..clean.clone()
                },
                "- 2 timer(s) still running after termination",
            ),
            (
                LeakReport {
                    pending_asks: Some(1),
                    ..clean.clone()
                },
                "- 1 ask promise(s) still waiting",
            ),
            (
                LeakReport {
                    running_tasks: 3,
                    ..clean.clone()
                },
                "- 3 actor task(s) still running",
            ),
        ];
        for (report, line) in leaks {
            assert!(!report.is_clean());
            let text = report.to_string();
            assert!(text.starts_with("the actor system \"s\" leaked:"), "{text}");
            assert!(text.contains(line), "{text}");
        }
    }

    // A system that did not count its timers and asks is not reported as having none:
    // the report says they were not counted, clean or not.
    #[test]
    fn uncounted_timers_and_asks_are_said_to_be_uncounted() {
        let uncounted = LeakReport {
            system: "s".to_owned(),
            ..LeakReport::default()
        };
        assert!(uncounted.is_clean());
        assert!(!uncounted.counted_everything());
        assert_eq!(
            uncounted.to_string(),
            "the actor system \"s\" left no actor behind; its timers and asks were not counted: build it with `track_leaks(true)` to count them"
        );
        let leaked = LeakReport {
            running_tasks: 1,
            ..uncounted
        };
        let text = leaked.to_string();
        assert!(text.starts_with("the actor system \"s\" leaked:"), "{text}");
        assert!(
            text.ends_with("\n(its timers and asks were not counted: build it with `track_leaks(true)` to count them)"),
            "{text}"
        );
    }
}
