//! `Behaviors::setup_once` under a restart (S11, S14): the restart fails with
//! `RestartWithoutFactory`, the actor stops after that one attempt, the log names
//! the failure and what to do, and a watcher sees the actor terminated.
//!
//! Alone in its test binary: `tracing` caches per call site whether anyone listens,
//! so tests without a subscriber running alongside could hide the records.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::common;

use std::io;
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{TestConfig, TestProbe};
use tapio::{Restart, RestartWithoutFactory};
use tokio::sync::oneshot;

use common::capturing;

const SECOND: Duration = Duration::from_secs(1);

#[message]
pub enum Work {
    Fail,
    Ping(ActorRef<u64>),
}

/// Owns the sending half of a oneshot channel, moved in by the setup.
pub struct Job {
    _done: oneshot::Sender<u64>,
    pings: u64,
}

#[actor]
impl Job {
    fn work(&mut self, work: Work) -> Result<(), io::Error> {
        match work {
            Work::Fail => Err(io::Error::other("disk gone")),
            Work::Ping(to) => {
                self.pings += 1;
                to.tell(self.pings);
                Ok(())
            }
        }
    }
}

// S11, S14: a restart of a one-shot setup fails with `RestartWithoutFactory`; the
// actor stops after that one attempt (not after using up the restart limit), the
// log names the failure and what to do, and a watcher sees it terminated.
#[test]
fn a_restart_of_a_one_shot_setup_stops_the_actor_with_a_clear_failure() {
    let (captured, subscriber) = capturing(tracing::Level::WARN);
    // A current-thread runtime: every actor logs on this thread, to this subscriber.
    let _default = tracing::subscriber::set_default(subscriber);
    TestConfig::new("setup-once-restart").run(|system: ActorSystem| async move {
        let mut probe = TestProbe::<u64>::new(&system);
        let (done, result) = oneshot::channel();
        let job = Behaviors::setup_once(move |_ctx| Job {
            _done: done,
            pings: 0,
        });
        let behavior = Behaviors::supervise(job).on_failure::<io::Error>(Restart::default());
        let job = system.spawn(behavior, "job").unwrap();
        probe.watch(&job);
        job.tell(Work::Ping(probe.actor_ref().clone()));
        assert_eq!(probe.expect_message(SECOND).await, 1);
        job.tell(Work::Fail);
        job.tell(Work::Ping(probe.actor_ref().clone()));
        probe.expect_terminated(&job, SECOND).await;
        // The queued ping was not handled, and the sender went with the actor.
        probe.expect_no_message(Duration::from_millis(50)).await;
        assert!(result.await.is_err());
    });
    let log = captured.text();
    let expected = RestartWithoutFactory.to_string();
    assert!(log.contains(&expected), "the log names the failure: {log}");
    assert_eq!(
        log.matches("restarting").count(),
        1,
        "one restart was tried, not the whole limit: {log}"
    );
}
