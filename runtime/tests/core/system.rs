//! The actor system: guardians, settings, termination (S1), and bad input to them.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{IntoBehavior, SpawnError, SystemError};

const SECOND: Duration = Duration::from_secs(1);

// S1: a system is created inside async code and spawns top-level actors under the
// `/user` guardian; the runtime's own actors live under `/system`.
#[tapio::test]
async fn top_level_actors_live_under_user_and_probes_under_system(system: ActorSystem) {
    let worker = system.spawn(Behaviors::ignore::<u64>(), "worker").unwrap();
    assert_eq!(worker.path().to_string(), "/user/worker");
    assert_eq!(worker.path().parent().map(|p| p.name()), Some("user"));
    let probe = TestProbe::<u64>::new(&system);
    assert!(
        probe
            .actor_ref()
            .path()
            .to_string()
            .starts_with("/system/probe-")
    );
    assert_eq!(
        worker.path().to_uri(),
        "tapio://top_level_actors_live_under_user_and_probes_under_system/user/worker"
    );
}

// S1: terminated explicitly; `when_terminated` resolves for every waiter, and the
// actors have stopped by then.
#[tapio::test(start_paused = true)]
async fn terminate_stops_everything_and_wakes_every_waiter(system: ActorSystem) {
    system.spawn(Behaviors::ignore::<u64>(), "worker").unwrap();
    let other = system.spawn(Behaviors::ignore::<u64>(), "other").unwrap();
    let waiter = {
        let system = system.clone();
        tokio::spawn(async move { system.when_terminated().await })
    };
    assert!(!system.is_terminating());
    let outcome = tokio::time::timeout(SECOND, system.terminate()).await;
    assert!(outcome.is_ok(), "terminate did not finish within a second");
    assert!(system.is_terminating());
    assert_eq!(waiter.await.ok(), Some(Ok(())));
    assert_eq!(system.live_actors(), 0);
    // The name is gone with its actor: what is sent now is a dead letter.
    let mut letters = system.events().subscribe::<tapio::DeadLetter>();
    other.tell(1_u64);
    let letter = letters.try_recv();
    assert_eq!(
        letter.map(|l| l.recipient().to_string()),
        Some("/user/other".into())
    );
}

// Bad input: spawning on a terminated system is a typed error; nothing is spawned.
#[tapio::test]
async fn spawning_on_a_terminated_system_is_refused(system: ActorSystem) {
    system.terminate().await;
    let refused = system.spawn(Behaviors::ignore::<u64>(), "late");
    assert_eq!(
        refused.err(),
        Some(SpawnError::SystemTerminated {
            system: "spawning_on_a_terminated_system_is_refused".into()
        })
    );
    let anonymous = system.spawn_anonymous(Behaviors::ignore::<u64>());
    assert!(matches!(
        anonymous,
        Err(SpawnError::SystemTerminated { .. })
    ));
    let message = TestProbe::<u64>::try_new(&system)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        message.as_deref(),
        Some(
            "the actor system \"spawning_on_a_terminated_system_is_refused\" has terminated: create a new system to spawn actors"
        )
    );
}

#[test]
fn a_system_needs_a_tokio_runtime() {
    let error = ActorSystem::new("orphan").err();
    assert_eq!(error, Some(SystemError::NoRuntime));
    assert!(
        SystemError::NoRuntime
            .to_string()
            .contains("build it inside `#[tokio::main]`")
    );
}

#[tokio::test]
async fn settings_are_checked_when_the_system_is_built() {
    for bad in ["", "has space", "a/b", "dot.ted"] {
        let error = ActorSystem::new(bad).err();
        assert_eq!(
            error,
            Some(SystemError::InvalidName { name: bad.into() }),
            "{bad:?}"
        );
    }
    let zero = ActorSystem::builder("zero")
        .shutdown_timeout(Duration::ZERO)
        .build();
    assert!(matches!(
        zero,
        Err(SystemError::InvalidSetting {
            setting: "shutdown_timeout",
            ..
        })
    ));
    let system = ActorSystem::builder("fine-name_1")
        .shutdown_timeout(Duration::from_millis(250))
        .build()
        .unwrap();
    assert_eq!(
        system.settings().shutdown_timeout(),
        Duration::from_millis(250)
    );
    assert_eq!(system.settings().name(), "fine-name_1");
    assert_eq!(system.address().to_string(), "tapio://fine-name_1");
    system.terminate().await;
}

// The system runs on whichever runtime it was built in: here a multi-thread one.
#[tapio::test(worker_threads = 2)]
async fn a_system_runs_on_a_multi_thread_runtime(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let namer = system
        .spawn(
            Behaviors::receive(move |ctx, _: u64| to.tell(ctx.path().to_string())),
            "namer",
        )
        .unwrap();
    namer.tell(1_u64);
    assert_eq!(probe.expect_message(SECOND).await, "/user/namer");
}

// Bad input: a shutdown timeout too large to add to the clock means no deadline; it
// must not break `terminate()`.
#[tokio::test(start_paused = true)]
async fn an_enormous_shutdown_timeout_still_terminates() {
    let system = ActorSystem::builder("patient")
        .shutdown_timeout(Duration::MAX)
        .build()
        .unwrap();
    system.spawn(Behaviors::ignore::<u64>(), "idle").unwrap();
    let outcome = tokio::time::timeout(SECOND, system.terminate()).await;
    assert!(outcome.is_ok(), "terminate hung");
    assert_eq!(system.live_actors(), 0);
}

/// Stays in its `PostStop` handler until the gate opens, so termination is in
/// progress meanwhile.
fn slow_to_stop(
    entered: ActorRef<&'static str>,
    gate: tokio::sync::watch::Receiver<bool>,
) -> Behavior<u64> {
    #[derive(Clone)]
    struct Slow {
        entered: ActorRef<&'static str>,
        gate: tokio::sync::watch::Receiver<bool>,
    }
    impl tapio::Protocol for Slow {
        type Msg = u64;
    }
    impl Actor for Slow {
        fn handle<'a>(
            &'a mut self,
            _: &'a mut ActorContext<u64>,
            _: u64,
        ) -> tapio::Handled<'a, u64> {
            tapio::Handled::ready(())
        }
        fn signal<'a>(
            &'a mut self,
            _: &'a mut ActorContext<u64>,
            signal: &'a Signal,
        ) -> tapio::Handled<'a, u64> {
            tapio::Handled::pending(async move {
                if *signal == Signal::PostStop {
                    self.entered.tell("stopping");
                    let _ = self.gate.wait_for(|open| *open).await;
                }
            })
        }
    }
    Slow { entered, gate }.into_behavior()
}

// Bad input: once termination has begun, spawning is refused, on the system and for
// probes alike, even while actors are still stopping.
#[tokio::test(start_paused = true)]
async fn spawning_is_refused_once_termination_has_begun() {
    let system = ActorSystem::new("closing").unwrap();
    let observer = ActorSystem::new("observer").unwrap();
    let mut entered = TestProbe::<&'static str>::new(&observer);
    let (open, gate) = tokio::sync::watch::channel(false);
    system
        .spawn(slow_to_stop(entered.actor_ref().clone(), gate), "slow")
        .unwrap();
    let terminating = {
        let system = system.clone();
        tokio::spawn(async move { system.terminate().await })
    };
    assert_eq!(entered.expect_message(SECOND).await, "stopping");
    let refused = system.spawn(Behaviors::ignore::<u64>(), "late");
    assert!(
        matches!(refused, Err(SpawnError::SystemTerminated { .. })),
        "{refused:?}"
    );
    assert!(TestProbe::<u64>::try_new(&system).is_err());
    open.send_replace(true);
    terminating.await.unwrap();
    observer.terminate().await;
}

// A system whose tokio runtime has shut down (the program's `main` returned, a test's
// runtime was dropped) answers a spawn at once instead of hanging: the actor's task is
// dropped on the spot and its end is told like any other.
#[test]
fn spawning_after_the_runtime_has_shut_down_returns_at_once() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let system = runtime
        .block_on(async { ActorSystem::new("orphaned") })
        .unwrap();
    let kept = system.clone();
    runtime.shutdown_background();
    let (done, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let spawned = kept.spawn(Behaviors::ignore::<u64>(), "late");
        let _ = done.send(spawned.map(|actor| actor.path().to_string()));
    });
    let answer = outcome
        .recv_timeout(Duration::from_secs(10))
        .expect("spawn returned instead of hanging");
    let error = answer.expect_err("no task can run on a runtime that has shut down");
    assert_eq!(
        error,
        SpawnError::RuntimeShutDown {
            system: "orphaned".to_owned()
        }
    );
    assert!(error.to_string().contains("has shut down"), "{error}");
    assert_eq!(system.live_actors(), 0);
}

// S1: a system can be owned by a block: `scope` terminates it when the block is done,
// after every actor's `PostStop`, and hands back what the block returned.
#[tokio::test(start_paused = true)]
async fn a_scoped_system_ends_with_its_block() {
    let observer = ActorSystem::new("observer").unwrap();
    let mut log = TestProbe::<&'static str>::new(&observer);
    let to = log.actor_ref().clone();
    let kept = ActorSystem::scope("scoped", |system| async move {
        system
            .spawn(
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                    if *signal == Signal::PostStop {
                        to.tell("stopped with the block");
                    }
                }),
                "resident",
            )
            .unwrap();
        system
    })
    .await
    .unwrap();
    assert_eq!(
        log.expect_message(Duration::ZERO).await,
        "stopped with the block"
    );
    assert_eq!(kept.when_terminated().await, Ok(()));
    assert_eq!(kept.live_actors(), 0);
    assert!(matches!(
        kept.spawn(Behaviors::ignore::<u64>(), "late"),
        Err(SpawnError::SystemTerminated { .. })
    ));
    observer.terminate().await;
}

// S1: a block that panics still ends its system, and then the panic goes on.
#[tokio::test(start_paused = true)]
async fn a_scoped_system_ends_when_its_block_panics() {
    let observer = ActorSystem::new("observer").unwrap();
    let mut log = TestProbe::<&'static str>::new(&observer);
    let to = log.actor_ref().clone();
    let block = tokio::spawn(ActorSystem::scope("panicking", |system| async move {
        system
            .spawn(
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                    if *signal == Signal::PostStop {
                        to.tell("stopped before the panic went on");
                    }
                }),
                "resident",
            )
            .unwrap();
        tokio::task::yield_now().await;
        panic!("the block gave up");
    }));
    let outcome = block.await;
    assert!(outcome.is_err_and(|e| e.is_panic()));
    assert_eq!(
        log.expect_message(Duration::ZERO).await,
        "stopped before the panic went on"
    );
    observer.terminate().await;
}

// A scope whose system cannot be built runs nothing and says why.
#[tokio::test]
async fn a_scope_with_a_bad_name_runs_nothing() {
    let mut ran = false;
    let outcome = ActorSystem::scope("not a name", |_| {
        ran = true;
        async {}
    })
    .await;
    assert!(matches!(outcome, Err(SystemError::InvalidName { .. })));
    assert!(!ran);
}

// S1: a scope dropped before its end (here by a timeout) still ends its system.
#[tokio::test(start_paused = true)]
async fn a_dropped_scope_still_ends_its_system() {
    let (hand_out, handed) = tokio::sync::oneshot::channel();
    let scope = ActorSystem::scope("abandoned", |system| async move {
        let _ = hand_out.send(system.clone());
        std::future::pending::<()>().await;
    });
    let timed_out = tokio::time::timeout(Duration::from_millis(10), scope).await;
    assert!(timed_out.is_err());
    let system = handed.await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), system.when_terminated())
        .await
        .expect("the dropped scope began the termination")
        .unwrap();
}
