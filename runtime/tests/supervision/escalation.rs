//! Escalation: `ChildFailed` on the parent's system lane and the parent's own decision
//! (S16); an escalation reaching a guardian terminates the system with the path it
//! climbed (S17).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;

const SECOND: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
#[error("unparseable")]
pub struct Unparseable;

/// A worker that escalates what it cannot parse (an empty line), and logs its start
/// and stop.
fn worker(log: ActorRef<String>) -> Behavior<String> {
    Behaviors::supervise(Behaviors::setup(move |ctx| {
        log.tell(format!("{} ready", ctx.path()));
        let log = log.clone();
        Behaviors::receive(|_, line: String| {
            if line.is_empty() {
                Err(Unparseable)
            } else {
                Ok(())
            }
        })
        .on_signal(move |ctx, signal| {
            if *signal == Signal::PostStop {
                log.tell(format!("{} stopped", ctx.path()));
            }
        })
    }))
    .on_failure::<Unparseable>(SupervisorStrategy::escalate())
    .into()
}

/// A pipeline that spawns its worker in setup (so a restart rebuilds it) and reports
/// each worker to `workers`.
fn pipeline(
    log: ActorRef<String>,
    workers: ActorRef<ActorRef<String>>,
    strategy: SupervisorStrategy,
) -> Behavior<u64> {
    Behaviors::supervise(Behaviors::setup(move |ctx| {
        log.tell(format!("{} building", ctx.path()));
        let child = ctx.spawn(worker(log.clone()), "worker").unwrap();
        workers.tell(child);
        let log = log.clone();
        Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
            if *signal == Signal::PreRestart {
                log.tell("pipeline restarting".into());
            }
        })
    }))
    .on_any_failure(strategy)
    .into()
}

// S16: the failing child stops, its parent takes the decision (restart), which
// rebuilds the parent's subtree; a sibling outside it is untouched.
#[tapio::test(start_paused = true)]
async fn a_parent_decides_on_an_escalated_failure(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let mut workers = TestProbe::<ActorRef<String>>::new(&system);
    let mut ticks = TestProbe::<u64>::new(&system);
    system
        .spawn(
            pipeline(
                log.actor_ref().clone(),
                workers.actor_ref().clone(),
                SupervisorStrategy::restart().into(),
            ),
            "pipeline",
        )
        .unwrap();
    let to = ticks.actor_ref().clone();
    let ticker: ActorRef<u64> = system
        .spawn(
            Behaviors::setup(move |_| {
                let to = to.clone();
                let count = std::sync::atomic::AtomicU64::new(0);
                Behaviors::receive_message(move |_: u64| {
                    to.tell(count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1);
                })
            }),
            "ticker",
        )
        .unwrap();
    let first = workers.expect_message(SECOND).await;
    assert_eq!(
        log.receive_messages(2, SECOND).await,
        ["/user/pipeline building", "/user/pipeline/worker ready"]
    );
    ticker.tell(1_u64);
    assert_eq!(ticks.expect_message(SECOND).await, 1);

    first.tell(String::new());
    assert_eq!(
        log.receive_messages(4, SECOND).await,
        [
            "/user/pipeline/worker stopped",
            "pipeline restarting",
            "/user/pipeline building",
            "/user/pipeline/worker ready",
        ]
    );
    let second = workers.expect_message(SECOND).await;
    assert_eq!(second.path(), first.path());
    assert_ne!(second.uid(), first.uid());
    // The ticker kept its count through all of it.
    ticker.tell(1_u64);
    assert_eq!(ticks.expect_message(SECOND).await, 2);
}

// S16: a parent with no clause for the escalated failure stops (the default): the
// escalation goes no further on its own.
#[tapio::test(start_paused = true)]
async fn a_parent_without_a_clause_stops(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let mut workers = TestProbe::<ActorRef<String>>::new(&system);
    let behavior = Behaviors::setup({
        let (log, workers) = (log.actor_ref().clone(), workers.actor_ref().clone());
        move |ctx| {
            let child = ctx.spawn(worker(log.clone()), "worker").unwrap();
            workers.tell(child);
            Behaviors::ignore::<u64>()
        }
    });
    let parent = system.spawn(behavior, "parent").unwrap();
    log.watch(&parent);
    let child = workers.expect_message(SECOND).await;
    child.tell(String::new());
    log.expect_terminated(&parent, SECOND).await;
    assert!(!system.is_terminating());
}

/// A chain of `depth` actors that all escalate `Unparseable`; the deepest fails on an
/// empty line. Each reports the deepest actor's ref.
fn escalating_chain(depth: u32, deepest: ActorRef<ActorRef<String>>) -> Behavior<String> {
    Behaviors::supervise(Behaviors::setup(move |ctx| {
        if depth > 1 {
            let below = escalating_chain(depth - 1, deepest.clone());
            let _: ActorRef<String> = ctx.spawn(below, &format!("level-{}", depth - 1)).unwrap();
        } else {
            deepest.tell(ctx.self_ref().clone());
        }
        Behaviors::receive_message(|line: String| {
            if line.is_empty() {
                Err(Unparseable)
            } else {
                Ok(())
            }
        })
    }))
    .on_failure::<Unparseable>(SupervisorStrategy::escalate())
    .into()
}

// S17: an escalation through three levels reaches the guardian: the system
// terminates, and `when_terminated` returns the original error with every path it
// climbed.
#[tokio::test(start_paused = true)]
async fn an_escalation_nobody_catches_terminates_the_system_with_its_path() {
    let system = ActorSystem::new("unsupervised").unwrap();
    let observer = ActorSystem::new("observer").unwrap();
    let mut deepest = TestProbe::<ActorRef<String>>::new(&observer);
    system
        .spawn(escalating_chain(3, deepest.actor_ref().clone()), "level-3")
        .unwrap();
    let bottom = deepest.expect_message(SECOND).await;
    assert_eq!(bottom.path().to_string(), "/user/level-3/level-2/level-1");
    bottom.tell(String::new());
    let failure = tokio::time::timeout(SECOND, system.when_terminated())
        .await
        .expect("the system terminated")
        .expect_err("with the escalated failure");
    assert!(failure.is::<Unparseable>());
    let climbed: Vec<String> = failure.climbed().iter().map(ToString::to_string).collect();
    assert_eq!(
        climbed,
        [
            "/user/level-3/level-2/level-1",
            "/user/level-3/level-2",
            "/user/level-3",
            "/user",
        ]
    );
    assert_eq!(system.live_actors(), 0);
    // `terminate()` after the fact waits for the same end.
    system.terminate().await;
    observer.terminate().await;
}

// S17: an escalation that reaches a guardian while the system is already terminating
// is not lost: `when_terminated` still returns it. The worker fails on a message it
// takes before the stop reaches it (a stop interrupts only an `async` handler that
// awaits; this one fails at once).
#[tokio::test(start_paused = true)]
async fn an_escalation_during_shutdown_is_still_reported() {
    let system = ActorSystem::new("late-failure").unwrap();
    let worker = system
        .spawn(
            Behaviors::supervise(Behaviors::receive_message(|_: u64| {
                Err::<(), _>(Unparseable)
            }))
            .on_failure::<Unparseable>(SupervisorStrategy::escalate()),
            "worker",
        )
        .unwrap();
    worker.tell(1_u64);
    // Terminating begins before the worker has run.
    let stopping = system.terminate();
    assert!(system.is_terminating());
    stopping.await;
    let outcome = system.when_terminated().await;
    assert!(outcome.is_err_and(|failure| failure.is::<Unparseable>()));
}

#[message]
pub struct Hold(pub tokio::sync::watch::Receiver<bool>);

#[message]
pub struct Note(pub &'static str);

/// A parent that logs what it handles and every `ChildFailed` it sees.
struct Desk {
    log: ActorRef<String>,
}

#[actor]
impl Desk {
    /// Busy until the gate opens.
    async fn hold(&mut self, Hold(mut gate): Hold) {
        let _ = gate.wait_for(|open| *open).await;
        self.log.tell("held".into());
    }

    fn note(&mut self, Note(note): Note) {
        self.log.tell(note.into());
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        match signal {
            Signal::ChildFailed(failed) => {
                let climbed: Vec<String> = failed
                    .failure()
                    .climbed()
                    .iter()
                    .map(|p| p.to_string())
                    .collect();
                self.log.tell(format!(
                    "{} failed: {} ({climbed:?})",
                    failed.child().path(),
                    failed.failure()
                ));
            }
            Signal::PreRestart => self.log.tell("PreRestart".into()),
            _ => {}
        }
    }
}

/// The desk, spawning its worker in setup; `strategy` decides the worker's
/// escalations.
fn observing_parent(
    log: ActorRef<String>,
    workers: ActorRef<ActorRef<String>>,
    strategy: SupervisorStrategy,
) -> Behavior<DeskMsg> {
    Behaviors::supervise(Behaviors::setup(move |ctx| {
        let child = ctx.spawn(worker(log.clone()), "worker").unwrap();
        workers.tell(child);
        Desk { log: log.clone() }
    }))
    .on_failure::<Unparseable>(strategy)
    .into()
}

/// A desk at `/user/desk` whose worker is ready: the log, the probe that is told of
/// each worker the desk builds, the desk, and its first worker.
async fn desk(
    system: &ActorSystem,
    strategy: SupervisorStrategy,
) -> (
    TestProbe<String>,
    TestProbe<ActorRef<String>>,
    ActorRef<DeskMsg>,
    ActorRef<String>,
) {
    let mut log = TestProbe::<String>::new(system);
    let mut workers = TestProbe::<ActorRef<String>>::new(system);
    let parent = system
        .spawn(
            observing_parent(
                log.actor_ref().clone(),
                workers.actor_ref().clone(),
                strategy,
            ),
            "desk",
        )
        .unwrap();
    assert_eq!(log.expect_message(SECOND).await, "/user/desk/worker ready");
    let worker = workers.expect_message(SECOND).await;
    (log, workers, parent, worker)
}

// S16: `ChildFailed` travels on the parent's system lane, ahead of user messages
// already queued, and interrupts the `async` handler the parent awaits (the
// escalation is the parent's own failure); the parent's signal handler sees it, and
// then the parent's own supervision decides (here: restart, which keeps the queued
// messages for the new incarnation).
#[tapio::test(start_paused = true)]
async fn child_failed_overtakes_queued_messages_and_is_seen(system: ActorSystem) {
    let (mut log, _workers, parent, worker) =
        desk(&system, SupervisorStrategy::restart().into()).await;
    let (open, gate) = tokio::sync::watch::channel(false);
    parent.tell(Hold(gate));
    parent.tell(Note("queued first"));
    parent.tell(Note("queued second"));
    // While the parent is held in its handler, its worker escalates.
    worker.tell(String::new());
    assert_eq!(
        log.expect_message(SECOND).await,
        "/user/desk/worker stopped"
    );
    // The rebuilt worker logs from its own task, in its own time.
    let (ready, desk): (Vec<_>, Vec<_>) = log
        .receive_messages(5, SECOND)
        .await
        .into_iter()
        .partition(|line| line.ends_with("ready"));
    assert_eq!(ready, ["/user/desk/worker ready"]);
    assert_eq!(
        desk,
        [
            r#"/user/desk/worker failed: unparseable (["/user/desk/worker", "/user/desk"])"#,
            "PreRestart",
            "queued first",
            "queued second",
        ]
    );
    // The interrupted handler is gone: opening its gate now finds nobody.
    open.send_replace(true);
    log.expect_no_message(Duration::from_millis(100)).await;
}

// The parent's own decision can absorb an escalation: with `resume` it keeps its
// state and goes on, and the child that escalated stays stopped.
#[tapio::test(start_paused = true)]
async fn a_parent_can_absorb_an_escalation(system: ActorSystem) {
    let (mut log, mut workers, parent, worker) = desk(&system, SupervisorStrategy::resume()).await;
    log.watch(&parent);
    worker.tell(String::new());
    assert_eq!(
        log.expect_message(SECOND).await,
        "/user/desk/worker stopped"
    );
    assert!(
        log.expect_message(SECOND)
            .await
            .starts_with("/user/desk/worker failed: unparseable")
    );
    parent.tell(Note("still here"));
    assert_eq!(log.expect_message(SECOND).await, "still here");
    log.expect_no_termination(SECOND).await;
    workers.expect_no_message(SECOND).await;
}
