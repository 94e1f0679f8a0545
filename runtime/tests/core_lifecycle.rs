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
    async fn wedge(&mut self, Wedge(entered): Wedge) {
        entered.tell(self.name);
        std::future::pending::<()>().await;
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            self.log.tell(format!("{} closed", self.name));
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

// S19: the whole tree races one deadline, not one per level: three nested wedged
// actors cost one `shutdown_timeout`, not three. The wedged ones are cancelled and
// miss `PostStop`; an idle sibling still sees its own.
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
