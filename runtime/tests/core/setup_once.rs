//! `Behaviors::setup_once`: deferred construction (S7) with a factory that runs
//! once, so it can move a one-shot value into the actor. A restart cannot run it
//! again (S11, S14): the actor stops with `RestartWithoutFactory` (what the log
//! says is checked in `setup_once_log.rs`).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::sync::oneshot;

const SECOND: Duration = Duration::from_secs(1);

#[message]
pub enum Work {
    Finish(u64),
    Fail,
    Ping(ActorRef<u64>),
}

/// Owns the sending half of a oneshot channel, moved in by the setup.
pub struct Job {
    done: Option<oneshot::Sender<u64>>,
    pings: u64,
}

#[actor]
impl Job {
    fn work(&mut self, work: Work) -> Result<Behavior<JobMsg>, io::Error> {
        match work {
            Work::Finish(n) => {
                if let Some(done) = self.done.take() {
                    let _ = done.send(n);
                }
                Ok(Behaviors::stopped())
            }
            Work::Fail => Err(io::Error::other("disk gone")),
            Work::Ping(to) => {
                self.pings += 1;
                to.tell(self.pings);
                Ok(Behaviors::same())
            }
        }
    }
}

fn job(done: oneshot::Sender<u64>) -> Behavior<JobMsg> {
    Behaviors::setup_once(move |_ctx| Job {
        done: Some(done),
        pings: 0,
    })
}

// S7: a oneshot sender moves into the actor; no Mutex, no Clone.
#[tapio::test]
async fn a_one_shot_value_moves_into_the_actor(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let (done, result) = oneshot::channel();
    let job = system.spawn(job(done), "job").unwrap();
    probe.watch(&job);
    job.tell(Work::Finish(42));
    let answer = tokio::time::timeout(SECOND, result).await.unwrap();
    assert_eq!(answer.unwrap(), 42);
    probe.expect_terminated(&job, SECOND).await;
}

// S11: resume keeps the incarnation, so a one-shot setup is no obstacle.
#[tapio::test]
async fn resume_works_as_usual(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let (done, _result) = oneshot::channel();
    let behavior =
        Behaviors::supervise(job(done)).on_failure::<io::Error>(SupervisorStrategy::resume());
    let job = system.spawn(behavior, "job").unwrap();
    job.tell(Work::Ping(probe.actor_ref().clone()));
    job.tell(Work::Fail);
    job.tell(Work::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.receive_messages(2, SECOND).await, [1, 2]);
}

/// A value that exists once, like a connected socket.
pub struct Socket {
    id: u64,
}

// S7, S14: with `supervise` inside the one-shot setup, a restart rebuilds only what
// is supervised; the one-shot setup does not run again, and what it moved in stays.
#[tapio::test]
async fn supervise_inside_a_one_shot_setup_restarts(system: ActorSystem) {
    let mut probe = TestProbe::<(u64, u64)>::new(&system);
    let socket = Socket { id: 7 };
    let to = probe.actor_ref().clone();
    let behavior: Behavior<u64> = Behaviors::setup_once(move |_ctx| {
        let socket = Arc::new(socket);
        Behaviors::supervise(Behaviors::setup(move |_ctx| {
            // State that a restart resets.
            let count = Arc::new(Mutex::new(0_u64));
            let (socket, to) = (socket.clone(), to.clone());
            Behaviors::receive_message(move |n: u64| {
                if n == 0 {
                    return Err(io::Error::other("zero"));
                }
                let mut count = count.lock().unwrap();
                *count += 1;
                to.tell((socket.id, *count));
                Ok(())
            })
        }))
        .on_failure::<io::Error>(SupervisorStrategy::restart())
    });
    let actor = system.spawn(behavior, "connection").unwrap();
    actor.tell(1);
    actor.tell(1);
    actor.tell(0);
    actor.tell(1);
    assert_eq!(
        probe.receive_messages(3, SECOND).await,
        [(7, 1), (7, 2), (7, 1)]
    );
}

// A one-shot behavior is used once: a second actor spawned from a clone of it fails
// to start with the same failure and stops.
#[tapio::test]
async fn a_second_spawn_of_a_one_shot_behavior_stops(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let (done, _result) = oneshot::channel();
    let behavior = job(done);
    let first = system.spawn(behavior.clone(), "first").unwrap();
    let second = system.spawn(behavior, "second").unwrap();
    probe.watch(&second);
    probe.expect_terminated(&second, SECOND).await;
    first.tell(Work::Ping(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(SECOND).await, 1);
}
