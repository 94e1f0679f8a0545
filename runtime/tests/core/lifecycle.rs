//! Stopping: `PostStop` after every child has stopped (S15), and `terminate()`
//! draining the tree bottom-up against one deadline (S19).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;

const SECOND: Duration = Duration::from_secs(1);

/// A node that spawns `children` children named `{name}-{i}` (which spawn their own,
/// down to `depth`), and reports its `PostStop` to `log`.
fn node(name: String, depth: u32, children: u32, log: ActorRef<String>) -> Behavior<u64> {
    Behaviors::setup(move |ctx| {
        if depth > 0 {
            for i in 0..children {
                let child = format!("{name}-{i}");
                let _ = ctx.spawn(
                    node(child.clone(), depth - 1, children, log.clone()),
                    &child,
                );
            }
        }
        let (name, log) = (name.clone(), log.clone());
        Behaviors::receive_message(|n: u64| {
            if n == 0 {
                Behaviors::stopped()
            } else {
                Behaviors::same()
            }
        })
        .on_signal(move |_, signal| {
            if *signal == Signal::PostStop {
                log.tell(name.clone());
            }
        })
    })
}

/// Check that every name in `order` comes after all names that extend it.
fn assert_children_first(order: &[String]) {
    for (at, name) in order.iter().enumerate() {
        let prefix = format!("{name}-");
        for later in &order[at + 1..] {
            assert!(
                !later.starts_with(&prefix),
                "{later} saw PostStop after its ancestor {name}: {order:?}"
            );
        }
    }
}

// S15: an actor that stops sees `PostStop` only after all its children have.
#[tapio::test(start_paused = true)]
async fn post_stop_comes_after_every_child_has_stopped(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let root = system
        .spawn(node("root".into(), 2, 3, probe.actor_ref().clone()), "root")
        .unwrap();
    root.tell(0_u64);
    let order = probe.receive_messages(13, SECOND).await;
    assert_eq!(order.last().map(String::as_str), Some("root"));
    assert_children_first(&order);
    probe.expect_no_message(Duration::from_millis(50)).await;
}

// S19: `terminate()` stops the whole tree bottom-up, and returns once it is done.
#[tapio::test(start_paused = true)]
async fn terminate_drains_the_tree_bottom_up(system: ActorSystem) {
    let log = TestProbe::<String>::new(&ActorSystem::new("observer").unwrap());
    let mut log = log;
    for name in ["a", "b"] {
        system
            .spawn(node(name.into(), 2, 2, log.actor_ref().clone()), name)
            .unwrap();
    }
    system.terminate().await;
    let order = log.receive_messages(14, SECOND).await;
    assert_children_first(&order);
    assert_eq!(system.live_actors(), 0);
}

/// An actor that, told anything, stays in its handler forever.
#[derive(Clone)]
struct Wedged {
    log: ActorRef<String>,
    name: &'static str,
}

#[message]
pub struct Wedge(pub ActorRef<&'static str>);

#[actor]
impl Wedged {
    fn wedge(&mut self, Wedge(entered): Wedge) {
        entered.tell(self.name);
    }

    /// A stop interrupts an `async` message handler, but `PostStop` runs to its end:
    /// only the shutdown deadline cuts it short.
    #[signal]
    async fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            if self.name == "idle" {
                self.log.tell(format!("{} closed", self.name));
            } else {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// A chain of wedged actors `depth` levels deep: each spawns the next in its setup and
/// wedges it.
fn wedged_chain(
    depth: u32,
    log: ActorRef<String>,
    entered: ActorRef<&'static str>,
) -> Behavior<WedgedMsg> {
    const NAMES: [&str; 3] = ["bottom", "middle", "top"];
    Behaviors::setup(move |ctx| {
        if depth > 0 {
            let below = wedged_chain(depth - 1, log.clone(), entered.clone());
            let child: ActorRef<WedgedMsg> = ctx.spawn(below, NAMES[depth as usize - 1]).unwrap();
            child.tell(Wedge(entered.clone()));
        }
        Wedged {
            log: log.clone(),
            name: NAMES[depth as usize],
        }
    })
}

// S19: the whole tree races one deadline, not one per level: three nested actors
// whose `PostStop` never ends cost one `shutdown_timeout`, not three. The wedged ones
// are cancelled and miss the end of `PostStop`; an idle sibling still sees its own.
#[tokio::test(start_paused = true)]
async fn one_deadline_for_the_whole_tree() {
    let observer = ActorSystem::new("observer").unwrap();
    let mut entered = TestProbe::<&'static str>::new(&observer);
    let mut log = TestProbe::<String>::new(&observer);
    let timeout = Duration::from_millis(500);
    let system = ActorSystem::builder("wedged")
        .shutdown_timeout(timeout)
        .build()
        .unwrap();
    let top = system
        .spawn(
            wedged_chain(2, log.actor_ref().clone(), entered.actor_ref().clone()),
            "top",
        )
        .unwrap();
    top.tell(Wedge(entered.actor_ref().clone()));
    let idle = Wedged {
        log: log.actor_ref().clone(),
        name: "idle",
    };
    system.spawn(idle, "idle").unwrap();
    let mut seen = entered.receive_messages(3, SECOND).await;
    seen.sort();
    assert_eq!(seen, ["bottom", "middle", "top"]);

    let started = tokio::time::Instant::now();
    system.terminate().await;
    let took = started.elapsed();
    assert!(took >= timeout, "finished before the deadline: {took:?}");
    assert!(took < timeout * 2, "one deadline per level? took {took:?}");
    assert_eq!(log.expect_message(SECOND).await, "idle closed");
    log.expect_no_message(Duration::from_millis(100)).await;
    observer.terminate().await;
}

// Stopping a child from its parent: the child and its subtree stop, the parent goes on.
#[tapio::test(start_paused = true)]
async fn a_parent_stops_its_child(system: ActorSystem) {
    #[message]
    pub struct StopChild;

    let mut probe = TestProbe::<String>::new(&system);
    let log = probe.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let child = ctx
                    .spawn(node("child".into(), 1, 1, log.clone()), "child")
                    .unwrap();
                let log = log.clone();
                Behaviors::receive(move |ctx, _: StopChild| {
                    ctx.stop(&child).unwrap();
                    log.tell("asked".into());
                })
            }),
            "parent",
        )
        .unwrap();
    parent.tell(StopChild);
    let order = probe.receive_messages(3, SECOND).await;
    assert_eq!(order, ["asked", "child-0", "child"]);
}

// Bad input: `ctx.stop` of an actor that is not a child is a typed error.
#[tapio::test(start_paused = true)]
async fn stopping_an_actor_that_is_not_a_child_is_refused(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let stranger = system
        .spawn(Behaviors::ignore::<u64>(), "stranger")
        .unwrap();
    let report = probe.actor_ref().clone();
    let meddler = system
        .spawn(
            Behaviors::receive(move |ctx, _: u64| {
                let refused = ctx
                    .stop(&stranger)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default();
                report.tell(refused);
            }),
            "meddler",
        )
        .unwrap();
    meddler.tell(1_u64);
    assert_eq!(
        probe.expect_message(SECOND).await,
        "/user/stranger is not a child of /user/meddler: an actor can stop only its own \
         children; send the target a message that makes it stop itself instead"
    );
}

// The system stops a top-level actor from outside the tree, typed or untyped, as its
// parent would: children first, then its `PostStop`; a second stop does nothing.
#[tapio::test(start_paused = true)]
async fn the_system_stops_a_top_level_actor(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let top = system
        .spawn(node("top".into(), 1, 2, log.actor_ref().clone()), "top")
        .unwrap();
    log.watch(&top);
    system.stop(&top).unwrap();
    let order = log.receive_messages(3, SECOND).await;
    assert_eq!(order.last().map(String::as_str), Some("top"));
    assert_children_first(&order);
    log.expect_terminated(&top, SECOND).await;
    // Stopped already: nothing to do, and no error.
    system.stop(&top).unwrap();
    let untyped = system
        .spawn(node("other".into(), 0, 0, log.actor_ref().clone()), "other")
        .unwrap()
        .erase();
    system.stop(&untyped).unwrap();
    assert_eq!(log.expect_message(SECOND).await, "other");
}

// Bad input: the system refuses to stop what is not one of its top-level actors,
// with a typed error that says what to do instead.
#[tapio::test(start_paused = true)]
async fn the_system_refuses_to_stop_what_is_not_top_level(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let (report, mut children) = tokio::sync::mpsc::unbounded_channel::<AnyActorRef>();
    system
        .spawn(
            Behaviors::setup(move |ctx| {
                ctx.spawn(Behaviors::ignore::<u64>(), "deep").unwrap();
                for child in ctx.children() {
                    report.send(child).unwrap();
                }
                Behaviors::ignore::<u64>()
            }),
            "parent",
        )
        .unwrap();
    let deep = children.recv().await.unwrap();
    let refused = system.stop(&deep).unwrap_err();
    assert_eq!(refused.target.to_string(), "/user/parent/deep");
    assert_eq!(
        refused.to_string(),
        "/user/parent/deep is not a top-level actor of the system \
         \"the_system_refuses_to_stop_what_is_not_top_level\": the system stops only \
         children of /user; stop a deeper actor from its parent (`ctx.stop`), or \
         send it a message that makes it stop itself"
    );
    // A probe lives under `/system`.
    assert!(system.stop(log.actor_ref()).is_err());
    // An actor of another system.
    let other = ActorSystem::new("other").unwrap();
    let stranger = other.spawn(Behaviors::ignore::<u64>(), "stranger").unwrap();
    assert!(system.stop(&stranger).is_err());
    other.terminate().await;
    log.expect_no_message(Duration::from_millis(10)).await;
}

// A parent stops a child it found by name: `ctx.child` gives an untyped ref, and
// `ctx.stop` takes it.
#[tapio::test(start_paused = true)]
async fn a_parent_stops_a_child_found_by_name(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let log_ref = log.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                ctx.spawn(node("found".into(), 0, 0, log_ref.clone()), "found")
                    .unwrap();
                let log = log_ref.clone();
                Behaviors::receive(move |ctx, name: String| {
                    let child = ctx.child(&name).unwrap();
                    ctx.stop(&child).unwrap();
                    log.tell(format!("stopping {}", child.path()));
                })
            }),
            "parent",
        )
        .unwrap();
    parent.tell(String::from("found"));
    assert_eq!(
        log.receive_messages(2, SECOND).await,
        ["stopping /user/parent/found", "found"]
    );
}

// Synchronous code starts termination: `terminate()` begins when called, so dropping
// its future unawaited still terminates the system.
#[tokio::test(start_paused = true)]
async fn terminate_begins_when_called_not_when_awaited() {
    let observer = ActorSystem::new("observer").unwrap();
    let mut log = TestProbe::<String>::new(&observer);
    let system = ActorSystem::new("dropped-future").unwrap();
    system
        .spawn(node("only".into(), 0, 0, log.actor_ref().clone()), "only")
        .unwrap();
    drop(system.terminate());
    assert!(system.is_terminating());
    assert_eq!(log.expect_message(SECOND).await, "only");
    system.when_terminated().await.unwrap();
    assert_eq!(system.live_actors(), 0);
    observer.terminate().await;
}
