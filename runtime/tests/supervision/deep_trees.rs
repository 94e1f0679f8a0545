//! Supervision past the happy path: nested supervise, resume past an await, restarts
//! and stops in deep trees, stacked clauses against boxed errors and panics,
//! escalations over several levels, and panicking `PostStop` handlers (S6-S18).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::common::scoped_capture;
use crate::support::edge_orders::climbed;
use crate::support::outside;
use crate::support::past_happy_paths::*;
use outside::{Boom, Other, T, expect_lines, letters, ms, next, no_letter_for};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{TestConfig, TestProbe};
use tapio::{AskError, BoxError, IntoBehavior};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

/// The position of `line` in `lines`, which must hold it once.
fn position(lines: &[String], line: &str) -> usize {
    let found: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.as_str() == line)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(found.len(), 1, "{line:?} once in {lines:?}");
    found[0]
}

// =================================================================================
// 4. Setup and supervision (S7, S9, S10, S11, S15, S16, S17)
// =================================================================================

/// S7, S11, S10, S14: two setups, each under its own `supervise`: `Boom` is decided
/// by the inner clause (only the inner setup runs again, and the child spawned by
/// the outer setup is stopped for good, as the supervision docs say), `Other` falls
/// through to the outer clause (both run again). A child spawned in the inner setup
/// comes back under the same name each time, with a new uid.
#[tapio::test]
async fn s7_s11_setups_counted_at_two_levels_of_nested_supervise(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let outer_runs = Arc::new(AtomicU64::new(0));
    let inner_runs = Arc::new(AtomicU64::new(0));
    let (outer, inner) = (outer_runs.clone(), inner_runs.clone());
    let behavior = Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        let a = outer.fetch_add(1, SeqCst) + 1;
        let spawned = ctx.spawn(Behaviors::ignore::<u64>(), "outer-kid").is_ok();
        to.tell(format!("outer setup {a} kid={spawned}"));
        let inner = inner.clone();
        let to = to.clone();
        Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
            let b = inner.fetch_add(1, SeqCst) + 1;
            let kid = ctx.spawn(Behaviors::ignore::<u64>(), "inner-kid");
            to.tell(format!("inner setup {b} kid={}", kid.is_ok()));
            let uid = kid.map(|k| k.uid()).unwrap_or(0);
            let to = to.clone();
            let handled = AtomicU64::new(0);
            Behaviors::receive(move |ctx, n: u64| -> Result<(), BoxError> {
                let c = handled.fetch_add(1, SeqCst) + 1;
                match n {
                    1 => Err(Box::new(Boom)),
                    2 => Err(Box::new(Other)),
                    _ => {
                        let mut kids: Vec<String> = ctx
                            .children()
                            .iter()
                            .map(|k| k.path().name().to_string())
                            .collect();
                        kids.sort();
                        to.tell(format!("a{a} b{b} c{c} kids={kids:?} uid={uid}"));
                        Ok(())
                    }
                }
            })
        }))
        .on_failure::<Boom>(SupervisorStrategy::restart())
    }))
    .on_failure::<Other>(SupervisorStrategy::restart());
    let actor = system.spawn(behavior, "nested").unwrap();
    let uid_of = |line: &str| line.rsplit_once("uid=").unwrap().1.to_string();

    expect_lines(
        &mut probe,
        &["outer setup 1 kid=true", "inner setup 1 kid=true"],
    )
    .await;
    actor.tell(0_u64);
    let line = probe.expect_message(T).await;
    assert!(
        line.starts_with(r#"a1 b1 c1 kids=["inner-kid", "outer-kid"]"#),
        "{line}"
    );
    let mut uids = HashSet::from([uid_of(&line)]);

    for b in 2..=3 {
        actor.tell(1_u64);
        actor.tell(0_u64);
        expect_lines(&mut probe, &[&format!("inner setup {b} kid=true")]).await;
        let line = probe.expect_message(T).await;
        assert!(
            line.starts_with(&format!(r#"a1 b{b} c1 kids=["inner-kid"]"#)),
            "{line}"
        );
        assert!(uids.insert(uid_of(&line)), "a new inner kid: {line}");
    }
    actor.tell(2_u64);
    actor.tell(0_u64);
    actor.tell(0_u64);
    expect_lines(
        &mut probe,
        &["outer setup 2 kid=true", "inner setup 4 kid=true"],
    )
    .await;
    let first = probe.expect_message(T).await;
    let second = probe.expect_message(T).await;
    assert!(
        first.starts_with(r#"a2 b4 c1 kids=["inner-kid", "outer-kid"]"#),
        "{first}"
    );
    assert!(second.starts_with("a2 b4 c2 "), "{second}");
    assert_eq!((outer_runs.load(SeqCst), inner_runs.load(SeqCst)), (2, 4));
}

#[message]
pub struct Put(pub u64);

#[message(reply = Vec<u64>)]
pub struct Items;

#[derive(Clone, Default)]
pub struct Keeper {
    items: Vec<u64>,
}

#[actor]
impl Keeper {
    async fn put(&mut self, Put(n): Put) -> Result<(), Boom> {
        self.items.push(n);
        tokio::task::yield_now().await;
        if n % 3 == 0 {
            panic!("a panic past an await at {n}");
        }
        if n % 5 == 0 {
            return Err(Boom);
        }
        Ok(())
    }

    fn items(&mut self, _: Items) -> Vec<u64> {
        self.items.clone()
    }
}

/// S11, S9: resume keeps an `#[actor]`'s state after failures that came past an
/// await (a panic and a returned error): the next messages are handled by the same
/// value, changes made before the failure included, and the sender never sees the
/// failure; a `Stop` for other errors is not reached.
#[tapio::test]
async fn s11_s9_resume_keeps_an_actors_state_after_failures_past_an_await(system: ActorSystem) {
    let keeper = system
        .spawn(
            Behaviors::supervise(Keeper::default())
                .on_failure::<Boom>(SupervisorStrategy::resume())
                .on_failure::<Panicked>(SupervisorStrategy::resume()),
            "keeper",
        )
        .unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    probe.watch(&keeper);
    for n in 1..=10 {
        keeper.tell(Put(n));
    }
    let items = keeper.ask(Items).timeout(T).await.unwrap();
    assert_eq!(items, (1..=10).collect::<Vec<u64>>());
    probe.expect_no_termination(ms(20)).await;
}

/// S11, S15, S14: a parent under `restart` with a child and a grandchild, both made
/// in setup: `PreRestart` reaches the parent first, then its subtree stops bottom-up
/// (grandchild, then child), the parent sees no `PostStop`, and only then do the
/// setups run again, top-down. A second failure does the same once more.
#[tapio::test]
async fn s11_s15_a_restart_with_grandchildren_orders_every_signal(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let runs = Arc::new(AtomicU64::new(0));
    let parent = Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        let run = runs.fetch_add(1, SeqCst) + 1;
        to.tell(format!("p setup {run}"));
        let to_c = to.clone();
        ctx.spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                to_c.tell(format!("c setup {run}"));
                let to_g = to_c.clone();
                ctx.spawn(
                    Behaviors::setup(move |_ctx| {
                        to_g.tell(format!("g setup {run}"));
                        post_stop_reporter("g", to_g.clone())
                    }),
                    "g",
                )
                .unwrap();
                post_stop_reporter("c", to_c.clone())
            }),
            "c",
        )
        .unwrap();
        let to = to.clone();
        let on_signal = to.clone();
        Behaviors::receive_message(move |n: u64| {
            if n == 1 {
                Err(Boom)
            } else {
                to.tell(format!("p handles {n}"));
                Ok(())
            }
        })
        .on_signal(move |_ctx, signal| match signal {
            Signal::PreRestart => on_signal.tell("p pre-restart".to_string()),
            Signal::PostStop => on_signal.tell("p stopped".to_string()),
            _ => {}
        })
    }))
    .on_failure::<Boom>(SupervisorStrategy::restart());
    let p = system.spawn(parent, "p").unwrap();
    expect_lines(&mut probe, &["p setup 1", "c setup 1", "g setup 1"]).await;
    for run in 2..=3 {
        p.tell(1_u64);
        p.tell(run);
        let lines = probe.receive_messages(7, T).await;
        assert_eq!(
            lines[..4],
            [
                "p pre-restart".to_string(),
                "g stopped".to_string(),
                "c stopped".to_string(),
                format!("p setup {run}"),
            ],
            "{lines:?}"
        );
        // The new child and grandchild start in their own tasks, while the parent
        // already handles the next message.
        let c = position(&lines, &format!("c setup {run}"));
        let g = position(&lines, &format!("g setup {run}"));
        assert!(c < g, "{lines:?}");
        position(&lines, &format!("p handles {run}"));
    }
    probe.expect_no_message(ms(20)).await;
}

/// A node of a tree whose `PostStop` awaits before it is done.
#[derive(Clone)]
pub struct Slowpoke {
    name: &'static str,
    log: ActorRef<String>,
}

#[actor]
impl Slowpoke {
    fn noop(&mut self, _: u64) {}

    #[signal]
    async fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            self.log.tell(format!("{} begins", self.name));
            for _ in 0..3 {
                tokio::task::yield_now().await;
            }
            tokio::time::sleep(ms(20)).await;
            self.log.tell(format!("{} ends", self.name));
        }
    }
}

fn slow_tree(
    name: &'static str,
    kids: Vec<(&'static str, Vec<&'static str>)>,
    log: ActorRef<String>,
) -> Behavior<SlowpokeMsg> {
    Behaviors::setup(move |ctx: &mut ActorContext<SlowpokeMsg>| {
        for (kid, grandkids) in kids.iter().cloned() {
            let nested = grandkids.into_iter().map(|g| (g, Vec::new())).collect();
            ctx.spawn(slow_tree(kid, nested, log.clone()), kid).unwrap();
        }
        Slowpoke {
            name,
            log: log.clone(),
        }
        .into_behavior()
    })
}

/// The tree every `slow_tree` test builds, and the order its `PostStop`s must keep:
/// a child's async `PostStop` ends before its parent's begins.
const TREE_EDGES: [(&str, &str); 4] = [("p", "c1"), ("p", "c2"), ("c1", "g1"), ("c1", "g2")];

fn check_bottom_up(lines: &[String]) {
    for (parent, child) in TREE_EDGES {
        assert!(
            position(lines, &format!("{child} ends"))
                < position(lines, &format!("{parent} begins")),
            "{child} before {parent}: {lines:?}"
        );
    }
    for name in ["p", "c1", "c2", "g1", "g2"] {
        assert!(
            position(lines, &format!("{name} begins")) < position(lines, &format!("{name} ends"))
        );
    }
}

/// S15, S19: `PostStop` handlers that await, in a tree of three levels: stopped by
/// `system.stop` and by `terminate`, each actor's `PostStop` starts only after every
/// child's has ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s15_async_post_stops_in_a_three_level_tree_end_below_before_they_begin_above() {
    let system = ActorSystem::new("slow-stops").unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    let tree = || vec![("c1", vec!["g1", "g2"]), ("c2", vec![])];
    let p = system
        .spawn(slow_tree("p", tree(), probe.actor_ref().clone()), "p")
        .unwrap();
    probe.watch(&p);
    p.tell(0_u64);
    system.stop(&p).unwrap();
    probe.expect_terminated(&p, T).await;
    let lines = probe.receive_messages(10, T).await;
    check_bottom_up(&lines);

    let observer = ActorSystem::new("slow-stops-observer").unwrap();
    let mut probe = TestProbe::<String>::new(&observer);
    let other = ActorSystem::new("slow-stops-2").unwrap();
    other
        .spawn(slow_tree("p", tree(), probe.actor_ref().clone()), "p")
        .unwrap();
    timeout(T, system.terminate()).await.unwrap();
    timeout(T, other.terminate()).await.unwrap();
    let lines = probe.receive_messages(10, T).await;
    check_bottom_up(&lines);
    observer.terminate().await;
}

#[message]
pub struct Probe {
    pub code: u64,
    pub reply_to: ActorRef<String>,
}

/// Fails by its code: 1 `Boom`, 2 `Other`, 3 an `io::Error` (all three boxed), 4 a
/// panic with a formatted message, 5 one with a static one, 6 one with a payload
/// that is not text; anything else answers "g<generation> c<count>".
fn by_code() -> Behavior<Probe> {
    let generation = Arc::new(AtomicU64::new(0));
    Behaviors::setup(move |_ctx| {
        let g = generation.fetch_add(1, SeqCst) + 1;
        let count = AtomicU64::new(0);
        Behaviors::receive_message(move |probe: Probe| -> Result<(), BoxError> {
            let c = count.fetch_add(1, SeqCst) + 1;
            match probe.code {
                1 => Err(Box::new(Boom)),
                2 => Err(Box::new(Other)),
                3 => Err(Box::new(std::io::Error::other("disk"))),
                4 => panic!("formatted {}", probe.code),
                5 => panic!("static text"),
                6 => std::panic::panic_any(42_u32),
                _ => {
                    probe.reply_to.tell(format!("g{g} c{c}"));
                    Ok(())
                }
            }
        })
    })
}

/// S9, S10, S11: boxed errors are matched by the type inside the box, panics of any
/// payload by `Panicked`; of two clauses for one type the first decides; an error
/// no clause names stops the actor. An asker of each failing request gets an error
/// at once (never a panic, never the deadline), and the counts show which failures
/// kept the state and which restarted it.
#[tapio::test]
async fn s9_s10_boxed_errors_and_panics_meet_stacked_clauses_in_order(system: ActorSystem) {
    let actor = system
        .spawn(
            Behaviors::supervise(by_code())
                .on_failure::<Boom>(SupervisorStrategy::resume())
                .on_failure::<std::io::Error>(SupervisorStrategy::restart())
                .on_failure::<Panicked>(SupervisorStrategy::resume())
                .on_failure::<Boom>(SupervisorStrategy::restart()),
            "coded",
        )
        .unwrap();
    let mut watcher = TestProbe::<String>::new(&system);
    watcher.watch(&actor);
    let ask = |code: u64| {
        let actor = actor.clone();
        async move {
            timeout(
                T,
                actor
                    .ask_with(|reply_to| Probe { code, reply_to })
                    .timeout(Duration::from_secs(60)),
            )
            .await
            .expect("no ask waits for its deadline")
        }
    };
    let mut got = Vec::new();
    for code in [0_u64, 1, 0, 1, 0, 3, 0, 4, 5, 6, 0, 1, 0] {
        match ask(code).await {
            Ok(line) => got.push(line),
            Err(AskError::Unanswered { .. }) => got.push(format!("failed {code}")),
            Err(other) => panic!("code {code}: {other}"),
        }
    }
    assert_eq!(
        got,
        [
            "g1 c1", "failed 1", "g1 c3", "failed 1", "g1 c5", "failed 3", "g2 c1", "failed 4",
            "failed 5", "failed 6", "g2 c5", "failed 1", "g2 c7",
        ]
    );
    watcher.expect_no_termination(ms(20)).await;
    match ask(2).await {
        Err(AskError::Unanswered { .. } | AskError::TargetTerminated { .. }) => {}
        other => panic!("an `Other` answered {other:?}"),
    }
    watcher.expect_terminated(&actor, T).await;
}

/// S11, S16: an escalation over three levels (great-grandchild, grandchild and child
/// escalate) reaches a parent under `restart`, which rebuilds its whole subtree
/// (every setup runs again, in order); a sibling top-level actor keeps its state.
#[tapio::test]
async fn s11_s16_an_escalation_over_three_levels_rebuilds_the_subtree_that_decides(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let (leaf_tx, mut leaf_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();

    fn level(
        names: &'static [&'static str],
        to: ActorRef<String>,
        leaf: mpsc::UnboundedSender<ActorRef<u64>>,
        runs: Arc<AtomicU64>,
    ) -> Behavior<u64> {
        Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
            let run = runs.fetch_add(1, SeqCst) + 1;
            to.tell(format!("{} setup {run}", names[0]));
            if names.len() > 1 {
                let below = level(
                    &names[1..],
                    to.clone(),
                    leaf.clone(),
                    Arc::new(AtomicU64::new(0)),
                );
                let below =
                    Behaviors::supervise(below).on_any_failure(SupervisorStrategy::escalate());
                ctx.spawn(below, names[1]).unwrap();
            } else {
                let _ = leaf.send(ctx.self_ref().clone());
            }
            Behaviors::receive_message(|n: u64| if n == 1 { Err(Boom) } else { Ok(()) })
        })
    }

    static NAMES: [&str; 4] = ["p", "c", "g", "l"];
    let top = Behaviors::supervise(level(
        &NAMES,
        probe.actor_ref().clone(),
        leaf_tx,
        Arc::new(AtomicU64::new(0)),
    ))
    .on_failure::<Boom>(SupervisorStrategy::restart());
    system.spawn(top, "p").unwrap();
    let sibling = system
        .spawn(
            Keeper {
                items: vec![1, 2, 3],
            },
            "sibling",
        )
        .unwrap();
    sibling.tell(Put(4));
    expect_lines(
        &mut probe,
        &["p setup 1", "c setup 1", "g setup 1", "l setup 1"],
    )
    .await;
    let leaf = next(&mut leaf_rx).await;
    leaf.tell(1_u64);
    // Only `p`'s run count goes on: the levels below are new actors, whose setup
    // counters were made anew by `p`'s setup.
    expect_lines(
        &mut probe,
        &["p setup 2", "c setup 1", "g setup 1", "l setup 1"],
    )
    .await;
    let new_leaf = next(&mut leaf_rx).await;
    assert_ne!(new_leaf.uid(), leaf.uid());
    assert_eq!(new_leaf.path(), leaf.path());
    assert_eq!(
        sibling.ask(Items).timeout(T).await.unwrap(),
        vec![1, 2, 3, 4]
    );
    probe.expect_no_message(ms(20)).await;
}

/// Builds `/user/a/b/c/d` in `system`, each level escalating whatever fails below
/// it, with `d` failing as `fail` says on any message; sends it one, and returns
/// what `when_terminated` gave and the `PostStop`s seen.
async fn escalate_from_depth_four(
    name: &str,
    fail: fn() -> Result<(), BoxError>,
) -> (tapio::Failure, Vec<String>) {
    let system = ActorSystem::new(name).unwrap();
    let observer = ActorSystem::new(&format!("{name}-observer")).unwrap();
    let mut probe = TestProbe::<String>::new(&observer);
    let (leaf_tx, mut leaf_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();

    fn chain(
        names: &'static [&'static str],
        to: ActorRef<String>,
        leaf: mpsc::UnboundedSender<ActorRef<u64>>,
        fail: fn() -> Result<(), BoxError>,
    ) -> Behavior<u64> {
        let me = names[0];
        let inner = Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
            if names.len() > 1 {
                ctx.spawn(chain(&names[1..], to.clone(), leaf.clone(), fail), names[1])
                    .unwrap();
            } else {
                let _ = leaf.send(ctx.self_ref().clone());
            }
            let to = to.clone();
            Behaviors::receive_message(move |_: u64| fail()).on_signal(move |_ctx, signal| {
                if *signal == Signal::PostStop {
                    to.tell(format!("{me} stopped"));
                }
            })
        });
        Behaviors::supervise(inner)
            .on_any_failure(SupervisorStrategy::escalate())
            .into()
    }

    static NAMES: [&str; 4] = ["a", "b", "c", "d"];
    system
        .spawn(chain(&NAMES, probe.actor_ref().clone(), leaf_tx, fail), "a")
        .unwrap();
    system
        .spawn(
            post_stop_reporter("bystander", probe.actor_ref().clone()),
            "bystander",
        )
        .unwrap();
    let leaf = next(&mut leaf_rx).await;
    assert_eq!(leaf.path().to_string(), "/user/a/b/c/d");
    leaf.tell(0_u64);
    let failure = timeout(T, system.when_terminated())
        .await
        .expect("the escalation terminates the system")
        .expect_err("with the failure");
    // Asked again, and through `terminate`, the same end.
    let again = timeout(T, system.when_terminated()).await.unwrap();
    assert_eq!(again.map_err(|f| f.to_string()), Err(failure.to_string()));
    timeout(T, system.terminate()).await.unwrap();
    assert_eq!(system.live_actors(), 0);
    let mut stops = probe.receive_messages(5, T).await;
    stops.sort();
    observer.terminate().await;
    (failure, stops)
}

const CLIMBED: [&str; 5] = [
    "/user/a/b/c/d",
    "/user/a/b/c",
    "/user/a/b",
    "/user/a",
    "/user",
];

/// S17, S9: an error escalated from depth four to the guardian terminates the
/// system; `when_terminated` returns the original error (of its own type, also when
/// it was boxed, and a panic as `Panicked` with its message) with every path it
/// climbed, bottom first and the guardian last; every actor, the bystander too, saw `PostStop`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s17_escalations_from_depth_four_reach_the_guardian_with_the_original_error() {
    let all_stopped = [
        "a stopped",
        "b stopped",
        "bystander stopped",
        "c stopped",
        "d stopped",
    ];

    let (failure, stops) = escalate_from_depth_four("deep-error", || Err(Box::new(Boom))).await;
    assert!(failure.is::<Boom>(), "{failure}");
    assert_eq!(failure.downcast_ref::<Boom>(), Some(&Boom));
    assert_eq!(climbed(&failure), CLIMBED);
    assert_eq!(stops, all_stopped);

    let (failure, stops) = escalate_from_depth_four("deep-io", || {
        Err(Box::new(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "pipe",
        )))
    })
    .await;
    let io = failure
        .downcast_ref::<std::io::Error>()
        .expect("the io::Error inside the box");
    assert_eq!(io.kind(), std::io::ErrorKind::BrokenPipe);
    assert_eq!(climbed(&failure), CLIMBED);
    assert_eq!(stops, all_stopped);

    let (failure, stops) =
        escalate_from_depth_four("deep-panic", || panic!("deep down it broke")).await;
    let panicked = failure.downcast_ref::<Panicked>().expect("a panic");
    assert!(
        panicked.message.contains("deep down it broke"),
        "{panicked:?}"
    );
    assert_eq!(climbed(&failure), CLIMBED);
    assert_eq!(stops, all_stopped);
}

/// S7, S9, S11: a setup that fails when run again by a restart (a panic on its second
/// run) is supervised like a handler's failure: the restart is tried again, the
/// third run succeeds, and the actor goes on, its ref unchanged.
#[tapio::test(start_paused = true)]
async fn s7_s11_a_setup_failing_on_a_restart_is_restarted_again(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let runs = Arc::new(AtomicU64::new(0));
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
                let run = runs.fetch_add(1, SeqCst) + 1;
                assert!(run != 2, "the second setup fails");
                to.tell(format!("setup {run}"));
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| {
                    if n == 0 {
                        Err(Boom)
                    } else {
                        to.tell(format!("run {run} handles {n}"));
                        Ok(())
                    }
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart())
            .on_failure::<Panicked>(SupervisorStrategy::restart()),
            "phoenix",
        )
        .unwrap();
    probe.watch(&actor);
    expect_lines(&mut probe, &["setup 1"]).await;
    actor.tell(0_u64);
    actor.tell(7_u64);
    expect_lines(&mut probe, &["setup 3", "run 3 handles 7"]).await;
    probe.expect_no_termination(ms(50)).await;
}

/// S9, S15, S19: a `PostStop` that panics, in a child, during `terminate`: the parent
/// still sees its own `PostStop` after it, a sibling too, and the system terminates
/// with nothing left running and no failure reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s9_s15_a_post_stop_that_panics_does_not_wedge_terminate() {
    let system = ActorSystem::new("panicky-stop").unwrap();
    let observer = ActorSystem::new("panicky-stop-observer").unwrap();
    let mut probe = TestProbe::<String>::new(&observer);
    let to = probe.actor_ref().clone();
    system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let to_bad = to.clone();
                ctx.spawn(
                    Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                        if *signal == Signal::PostStop {
                            to_bad.tell("bad stopping".to_string());
                            panic!("a panic in PostStop");
                        }
                    }),
                    "bad",
                )
                .unwrap();
                ctx.spawn(post_stop_reporter("good", to.clone()), "good")
                    .unwrap();
                post_stop_reporter("parent", to.clone())
            }),
            "parent",
        )
        .unwrap();
    timeout(T, system.terminate())
        .await
        .expect("terminate ends");
    assert!(timeout(T, system.when_terminated()).await.unwrap().is_ok());
    assert_eq!(system.live_actors(), 0);
    let lines = probe.receive_messages(3, T).await;
    assert_eq!(
        lines.last().map(String::as_str),
        Some("parent stopped"),
        "{lines:?}"
    );
    position(&lines, "bad stopping");
    position(&lines, "good stopped");
    observer.terminate().await;
}

/// S6, S18, S10: a watcher whose signal handler answers `unhandled` to `Terminated`
/// has left it unhandled: it fails with `DeathPact`, which a clause can match and
/// resume, keeping its state.
#[tapio::test(start_paused = true)]
async fn s6_s18_an_explicit_unhandled_for_terminated_is_a_death_pact(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let watched = target.clone();
    let watcher = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&watched);
                let to = to.clone();
                let count = AtomicU64::new(0);
                Behaviors::receive_message(move |n: u64| {
                    let c = count.fetch_add(n, SeqCst) + n;
                    to.tell(format!("sum {c}"));
                })
                .on_signal(|_ctx, signal| match signal {
                    Signal::Terminated(_) => Behaviors::unhandled(),
                    _ => Behaviors::same(),
                })
            }))
            .on_failure::<tapio::DeathPact>(SupervisorStrategy::resume())
            .on_any_failure(SupervisorStrategy::stop()),
            "watcher",
        )
        .unwrap();
    let mut outside = TestProbe::<String>::new(&system);
    outside.watch(&watcher);
    watcher.tell(2_u64);
    expect_lines(&mut probe, &["sum 2"]).await;
    system.stop(&target).unwrap();
    watcher.tell(3_u64);
    expect_lines(&mut probe, &["sum 5"]).await;
    outside.expect_no_termination(ms(50)).await;

    // Without a clause for it, the same answer stops the watcher.
    let target = system
        .spawn(Behaviors::ignore::<u64>(), "target-2")
        .unwrap();
    let watched = target.clone();
    let plain = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&watched);
                Behaviors::receive_message(|_: u64| ()).on_signal(|_ctx, signal| match signal {
                    Signal::Terminated(_) => Behaviors::unhandled(),
                    _ => Behaviors::same(),
                })
            }),
            "plain-watcher",
        )
        .unwrap();
    outside.watch(&plain);
    system.stop(&target).unwrap();
    outside.expect_terminated(&plain, T).await;
}

/// Logs "dropped: <what>" when dropped.
struct Guard {
    what: &'static str,
    to: ActorRef<String>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.to.tell(format!("dropped: {}", self.what));
    }
}

/// S16, S11 (crate docs, "Cancel safety of handlers"): a child's escalation reaches
/// a parent whose async handler is awaiting for ever: the handler is dropped where it
/// awaits (its guard runs), then the parent's `restart` clause rebuilds it, and it
/// takes the next message.
#[tapio::test(start_paused = true)]
async fn s16_s11_an_escalation_drops_the_parents_awaiting_handler_then_restarts_it(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let runs = Arc::new(AtomicU64::new(0));
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let run = runs.fetch_add(1, SeqCst) + 1;
                let kid = ctx
                    .spawn(
                        Behaviors::supervise(Behaviors::receive_message(|_: u64| {
                            Err::<(), Boom>(Boom)
                        }))
                        .on_failure::<Boom>(SupervisorStrategy::escalate()),
                        "kid",
                    )
                    .unwrap();
                let _ = kid_tx.send(kid);
                let to = to.clone();
                to.tell(format!("run {run}"));
                Behaviors::receive_async(async move |_ctx: &mut ActorContext<u64>, n: u64| {
                    if n == 0 {
                        let _guard = Guard {
                            what: "waiting handler",
                            to: to.clone(),
                        };
                        to.tell("waiting".to_string());
                        std::future::pending::<()>().await;
                    }
                    to.tell(format!("run {run} handles {n}"));
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "parent",
        )
        .unwrap();
    expect_lines(&mut probe, &["run 1"]).await;
    let kid = next(&mut kid_rx).await;
    parent.tell(0_u64);
    expect_lines(&mut probe, &["waiting"]).await;
    kid.tell(1_u64);
    parent.tell(5_u64);
    expect_lines(
        &mut probe,
        &["dropped: waiting handler", "run 2", "run 2 handles 5"],
    )
    .await;
}

/// S17: two top-level subtrees escalate to the guardian at the same moment: the
/// system terminates once, `when_terminated` returns one of the two failures (each
/// of its own type, with its own climbed path), and asking again gives the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s17_two_escalations_racing_to_the_guardian_end_the_system_once() {
    for round in 0..10 {
        let system = ActorSystem::new("racing").unwrap();
        let mut refs = Vec::new();
        for (name, boom) in [("left", true), ("right", false)] {
            let kid: Behavior<u64> = Behaviors::supervise(Behaviors::receive_message(
                move |_: u64| -> Result<(), BoxError> {
                    if boom {
                        Err(Box::new(Boom))
                    } else {
                        Err(Box::new(Other))
                    }
                },
            ))
            .on_any_failure(SupervisorStrategy::escalate())
            .into();
            let top = Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let kid = ctx.spawn(kid.clone(), "kid").unwrap();
                Behaviors::receive_message(move |n: u64| kid.tell(n))
            }))
            .on_any_failure(SupervisorStrategy::escalate());
            refs.push(system.spawn(top, name).unwrap());
        }
        for r in &refs {
            r.tell(1_u64);
        }
        let failure = timeout(T, system.when_terminated())
            .await
            .expect("terminated")
            .expect_err("by an escalation");
        let path = climbed(&failure);
        if failure.is::<Boom>() {
            assert!(
                path.starts_with(&["/user/left/kid".to_string(), "/user/left".to_string()]),
                "round {round}: {path:?}"
            );
        } else {
            assert!(failure.is::<Other>(), "round {round}: {failure}");
            assert!(
                path.starts_with(&["/user/right/kid".to_string(), "/user/right".to_string()]),
                "round {round}: {path:?}"
            );
        }
        let again = timeout(T, system.when_terminated()).await.unwrap();
        assert_eq!(again.unwrap_err().to_string(), failure.to_string());
        assert_eq!(system.live_actors(), 0, "round {round}");
    }
}

/// S10, S12, S11: a restart limit used up in an inner `supervise` stops the actor;
/// the outer clause for the same error (resume) is not asked, as the supervision
/// docs say.
#[tapio::test(start_paused = true)]
async fn s10_s12_a_used_up_inner_restart_limit_does_not_fall_through_to_the_outer_clause(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let runs = Arc::new(AtomicU64::new(0));
    let inner = Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
        let run = runs.fetch_add(1, SeqCst) + 1;
        to.tell(format!("setup {run}"));
        Behaviors::receive_message(|n: u64| if n == 0 { Err(Boom) } else { Ok(()) })
    }))
    .on_failure::<Boom>(
        SupervisorStrategy::restart()
            .with_limit(2, Duration::from_secs(60))
            .unwrap(),
    );
    let actor = system
        .spawn(
            Behaviors::supervise(inner).on_failure::<Boom>(SupervisorStrategy::resume()),
            "limited",
        )
        .unwrap();
    probe.watch(&actor);
    expect_lines(&mut probe, &["setup 1"]).await;
    actor.tell(0_u64);
    actor.tell(0_u64);
    expect_lines(&mut probe, &["setup 2", "setup 3"]).await;
    probe.expect_no_termination(ms(20)).await;
    actor.tell(0_u64);
    probe.expect_terminated(&actor, T).await;
    probe.expect_no_message(ms(20)).await;
}

/// S7, S15: a setup that spawns a child and then answers `same` (no behavior to
/// start as) fails with `InvalidBehavior`; by default that stops the actor, and the
/// child spawned in the setup stops before it (its `PostStop` comes first).
#[tapio::test]
async fn s7_a_setup_answering_same_fails_and_takes_its_child_down(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.spawn(post_stop_reporter("kid", to.clone()), "kid")
                    .unwrap();
                Behaviors::same::<u64>()
            }),
            "confused",
        )
        .unwrap();
    probe.watch(&actor);
    expect_lines(&mut probe, &["kid stopped"]).await;
    probe.expect_terminated(&actor, T).await;

    let to = probe.actor_ref().clone();
    let supervised = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
                to.tell("setup".to_string());
                Behaviors::same::<u64>()
            }))
            .on_failure::<tapio::InvalidBehavior>(SupervisorStrategy::stop())
            .on_any_failure(SupervisorStrategy::resume()),
            "confused-too",
        )
        .unwrap();
    probe.watch(&supervised);
    expect_lines(&mut probe, &["setup"]).await;
    probe.expect_terminated(&supervised, T).await;
}

/// S17, S16: a parent's `ChildFailed` handler that itself fails makes its own
/// failure the one decided on (the `Signal::ChildFailed` docs); escalated on to the
/// guardian, that failure is what `when_terminated` returns, climbed from the
/// parent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s17_a_child_failed_handler_that_fails_sends_its_own_failure_to_the_guardian() {
    let system = ActorSystem::new("failing-mourner").unwrap();
    let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let parent = Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        let kid = ctx
            .spawn(
                Behaviors::supervise(Behaviors::receive_message(|_: u64| Err::<(), Boom>(Boom)))
                    .on_any_failure(SupervisorStrategy::escalate()),
                "kid",
            )
            .unwrap();
        let _ = kid_tx.send(kid);
        Behaviors::receive_message(|_: u64| ()).on_signal(|_ctx, signal| match signal {
            Signal::ChildFailed(_) => Err(Other),
            _ => Ok(Behaviors::same()),
        })
    }))
    .on_any_failure(SupervisorStrategy::escalate());
    system.spawn(parent, "parent").unwrap();
    let kid = next(&mut kid_rx).await;
    kid.tell(1_u64);
    let failure = timeout(T, system.when_terminated())
        .await
        .unwrap()
        .expect_err("an escalation");
    assert!(failure.is::<Other>(), "{failure}");
    assert_eq!(climbed(&failure), ["/user/parent", "/user"]);
}

/// S15, S9: a parent that fails (no clause: stop) while its children are inside async
/// handlers that await: each child's handler is dropped where it awaits (its guard
/// runs), each child sees `PostStop`, and only then does the parent.
#[tapio::test(start_paused = true)]
async fn s15_a_failing_parent_stops_awaiting_children_before_its_own_post_stop(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let mut kids = Vec::new();
                for name in ["k1", "k2"] {
                    let to = to.clone();
                    let on_signal = to.clone();
                    let kid = Behaviors::receive_async(
                        async move |_ctx: &mut ActorContext<u64>, _: u64| {
                            let _guard = Guard {
                                what: name,
                                to: to.clone(),
                            };
                            to.tell(format!("{name} waits"));
                            std::future::pending::<()>().await;
                        },
                    )
                    .on_signal(move |_ctx, signal| {
                        if *signal == Signal::PostStop {
                            on_signal.tell(format!("{name} stopped"));
                        }
                    });
                    kids.push(ctx.spawn(kid, name).unwrap());
                }
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| {
                    if n == 0 {
                        for kid in &kids {
                            kid.tell(0_u64);
                        }
                        Ok(())
                    } else {
                        Err(Boom)
                    }
                })
                .on_signal(move |_ctx, signal| {
                    if *signal == Signal::PostStop {
                        to.tell("parent stopped".to_string());
                    }
                })
            }),
            "parent",
        )
        .unwrap();
    parent.tell(0_u64);
    let mut waiting = probe.receive_messages(2, T).await;
    waiting.sort();
    assert_eq!(waiting, ["k1 waits", "k2 waits"]);
    probe.watch(&parent);
    parent.tell(1_u64);
    let lines = probe.receive_messages(5, T).await;
    assert_eq!(
        lines.last().map(String::as_str),
        Some("parent stopped"),
        "{lines:?}"
    );
    for name in ["k1", "k2"] {
        assert!(
            position(&lines, &format!("dropped: {name}"))
                < position(&lines, &format!("{name} stopped")),
            "{lines:?}"
        );
    }
    probe.expect_terminated(&parent, T).await;
}

/// S15, S13, S18: a child between incarnations (a restart with a 10 s backoff) when
/// its parent is stopped: the parent does not wait for the backoff, it sees its
/// `PostStop` and its watcher hears `Terminated` at once, after the child's
/// `Terminated`; no incarnation of the child starts afterwards.
#[tapio::test(start_paused = true)]
async fn s15_s13_a_parent_stopped_while_its_child_backs_off_stops_at_once(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let to_kid = to.clone();
                let runs = Arc::new(AtomicU64::new(0));
                let kid =
                    Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
                        let run = runs.fetch_add(1, SeqCst) + 1;
                        to_kid.tell(format!("kid setup {run}"));
                        Behaviors::receive_message(|_: u64| Err::<(), Boom>(Boom))
                    }))
                    .on_failure::<Boom>(
                        SupervisorStrategy::restart().with_backoff(
                            Backoff::new(Duration::from_secs(10), Duration::from_secs(10), 0.0)
                                .unwrap(),
                        ),
                    );
                let _ = kid_tx.send(ctx.spawn(kid, "kid").unwrap());
                post_stop_reporter("parent", to.clone())
            }),
            "parent",
        )
        .unwrap();
    expect_lines(&mut probe, &["kid setup 1"]).await;
    let kid = next(&mut kid_rx).await;
    let mut watcher = TestProbe::<String>::new(&system);
    watcher.watch(&parent);
    watcher.watch(&kid);
    kid.tell(1_u64);
    kid.tell(2_u64);
    // Under the paused clock: the kid fails before any time passes, so after these
    // 100 ms it is inside its 10 s backoff, with a message waiting.
    tokio::time::sleep(ms(100)).await;
    let started = Instant::now();
    system.stop(&parent).unwrap();
    // Bottom-up: the kid's end is heard first.
    watcher.expect_terminated(&kid, T).await;
    watcher.expect_terminated(&parent, T).await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "the parent waited {:?}",
        started.elapsed()
    );
    expect_lines(&mut probe, &["parent stopped"]).await;
    probe.expect_no_message(Duration::from_secs(30)).await;
}

/// A restartable actor whose `PreRestart` awaits before it ends.
#[derive(Clone)]
pub struct Mulling {
    log: ActorRef<String>,
}

#[actor]
impl Mulling {
    fn fail(&mut self, n: u64) -> Result<(), Boom> {
        if n == 0 {
            return Err(Boom);
        }
        self.log.tell(format!("handles {n}"));
        Ok(())
    }

    #[signal]
    async fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PreRestart {
            self.log.tell("pre-restart begins".to_string());
            tokio::time::sleep(ms(200)).await;
            self.log.tell("pre-restart ends".to_string());
        }
    }
}

/// S15, S11 (crate docs: `PreRestart` handlers run to their end): an async
/// `PreRestart` that awaits is finished before the new incarnation's setup runs and
/// before the next message is handled, and a child made in setup stops in between.
#[tapio::test(start_paused = true)]
async fn s15_an_async_pre_restart_ends_before_the_next_incarnation_begins(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let runs = Arc::new(AtomicU64::new(0));
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(
                move |ctx: &mut ActorContext<MullingMsg>| {
                    let run = runs.fetch_add(1, SeqCst) + 1;
                    to.tell(format!("setup {run}"));
                    ctx.spawn(post_stop_reporter("kid", to.clone()), "kid")
                        .unwrap();
                    Mulling { log: to.clone() }.into_behavior()
                },
            ))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "mulling",
        )
        .unwrap();
    expect_lines(&mut probe, &["setup 1"]).await;
    actor.tell(0_u64);
    actor.tell(5_u64);
    let lines = probe.receive_messages(5, T).await;
    let begins = position(&lines, "pre-restart begins");
    let ends = position(&lines, "pre-restart ends");
    let kid = position(&lines, "kid stopped");
    let setup = position(&lines, "setup 2");
    let handles = position(&lines, "handles 5");
    assert!(
        begins < ends && ends < setup && kid < setup && setup < handles,
        "{lines:?}"
    );
    assert!(
        begins < kid,
        "PreRestart reaches the failing incarnation first: {lines:?}"
    );
}

/// S8: what an actor's state logs when the actor drops it (a guard held by the
/// behavior, let go as the actor stops or restarts) is a record of that actor's.
#[test]
fn s8_state_dropped_by_a_stop_or_a_restart_logs_with_the_actor_path() {
    let (captured, _default) = scoped_capture();
    TestConfig::new("s8_state_drop").run(|system: ActorSystem| async move {
        let mut probe = TestProbe::<String>::new(&system);
        let to = probe.actor_ref().clone();
        let runs = Arc::new(AtomicU64::new(0));
        let actor = system
            .spawn(
                Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
                    let run = runs.fetch_add(1, SeqCst) + 1;
                    let guard = LoggingGuard(if run == 1 {
                        "state of run 1"
                    } else {
                        "state of run 2"
                    });
                    let to = to.clone();
                    Behaviors::receive_message(move |n: u64| {
                        let _held = &guard;
                        if n == 0 {
                            return Err(Boom);
                        }
                        to.tell(format!("run {run}"));
                        Ok(())
                    })
                }))
                .on_failure::<Boom>(SupervisorStrategy::restart()),
                "stateful",
            )
            .unwrap();
        probe.watch(&actor);
        actor.tell(0_u64);
        actor.tell(1_u64);
        expect_lines(&mut probe, &["run 2"]).await;
        system.stop(&actor).unwrap();
        probe.expect_terminated(&actor, T).await;
    });
    let text = captured.text();
    for mark in ["state of run 1", "state of run 2"] {
        let said = format!("s8d-mark {mark}");
        let line = text
            .lines()
            .find(|l| l.ends_with(&said))
            .unwrap_or_else(|| panic!("no record {said:?} in:\n{text}"));
        assert!(
            line.contains("path=/user/stateful"),
            "{said:?} untagged: {line}"
        );
    }
}

/// S13, S11, S5: four tasks tell an actor that fails on every 37th item and is
/// restarted each time: every item is handled exactly once (the failing ones
/// included, they fail while handled), each sender's in order, and nothing is
/// lettered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s13_s5_tells_racing_restarts_are_all_handled_in_each_senders_order() {
    let system = ActorSystem::new("racing-restarts").unwrap();
    let mut sub = letters(&system);
    let seen: Arc<std::sync::Mutex<Vec<u64>>> = Arc::default();
    let log = seen.clone();
    let restarts = Arc::new(AtomicU64::new(0));
    let counted = restarts.clone();
    let (all_tx, mut all_rx) = mpsc::unbounded_channel::<()>();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<Item>| {
                counted.fetch_add(1, SeqCst);
                let log = log.clone();
                let all_tx = all_tx.clone();
                Behaviors::receive_message(move |item: Item| {
                    let mut log = log.lock().unwrap();
                    log.push(item.sender * 1_000_000 + item.seq);
                    if log.len() == 1_600 {
                        let _ = all_tx.send(());
                    }
                    if item.seq % 37 == 36 {
                        Err(Boom)
                    } else {
                        Ok(())
                    }
                })
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart()
                    .with_limit(1_000, Duration::from_secs(60))
                    .unwrap(),
            ),
            "phoenix",
        )
        .unwrap();
    let mut tasks = Vec::new();
    for sender in 1..=4_u64 {
        let actor = actor.clone();
        tasks.push(tokio::spawn(async move {
            for seq in 0..400 {
                actor.tell(Item { sender, seq });
                if seq % 50 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    for task in tasks {
        timeout(T, task).await.unwrap().unwrap();
    }
    next(&mut all_rx).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1_600);
    for (sender, seqs) in per_sender(&seen) {
        assert_eq!(seqs, (0..400).collect::<Vec<u64>>(), "sender {sender}");
    }
    assert_eq!(restarts.load(SeqCst), 1 + 4 * (400 / 37));
    no_letter_for(&mut sub, actor.path(), ms(20)).await;
    system.terminate().await;
}
