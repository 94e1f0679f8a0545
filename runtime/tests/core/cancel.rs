//! Handlers that can be stopped: while an `async` handler awaits, its actor still
//! reads its system lane, so a stop, a parent's restart or an escalation drops the
//! handler's future where it awaits (S15, S16, S19); and the shutdown deadline gives
//! up only on actors still in a handler, every idle one sees `PostStop` (S19).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{LeakReport, TestProbe};

const SECOND: Duration = Duration::from_secs(1);

/// Reports `"{name} dropped"` when the handler future holding it is dropped.
struct DropGuard {
    name: String,
    log: ActorRef<String>,
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.log.tell(format!("{} dropped", self.name));
    }
}

/// An actor that, told `Hang`, awaits forever (holding a drop guard), and logs its
/// `PostStop`. In setup it spawns the children its spec lists.
#[derive(Clone)]
struct Hanger {
    name: String,
    log: ActorRef<String>,
}

#[message]
pub struct Hang;

#[actor]
impl Hanger {
    async fn hang(&mut self, _: Hang) {
        let _guard = DropGuard {
            name: self.name.clone(),
            log: self.log.clone(),
        };
        self.log.tell(format!("{} hangs", self.name));
        std::future::pending::<()>().await;
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            self.log.tell(format!("{} stopped", self.name));
        }
    }
}

/// A node of a test tree: spawns `children` (name, whether it hangs, its own
/// children) in setup, then behaves as a [`Hanger`].
#[derive(Clone)]
struct Node {
    name: &'static str,
    hangs: bool,
    children: Vec<Node>,
}

fn node(spec: Node, log: ActorRef<String>) -> Behavior<HangerMsg> {
    Behaviors::setup(move |ctx| {
        for child in &spec.children {
            let r = ctx
                .spawn(node(child.clone(), log.clone()), child.name)
                .unwrap();
            if child.hangs {
                r.tell(Hang);
            }
        }
        Hanger {
            name: spec.name.to_owned(),
            log: log.clone(),
        }
    })
}

fn leaf(name: &'static str, hangs: bool) -> Node {
    Node {
        name,
        hangs,
        children: Vec::new(),
    }
}

/// The tree of the report behind issue 7: `top` and its child `mid` hang in `async`
/// handlers; `top` also has an idle child `mid-sib`, and `mid` an idle `leaf-sib`.
fn stuck_tree() -> Node {
    Node {
        name: "top",
        hangs: true,
        children: vec![
            Node {
                name: "mid",
                hangs: true,
                children: vec![leaf("leaf-sib", false)],
            },
            leaf("mid-sib", false),
        ],
    }
}

/// The position of `line` in `log`, failing the test if it is not there.
fn at(log: &[String], line: &str) -> usize {
    log.iter()
        .position(|l| l == line)
        .unwrap_or_else(|| panic!("{line:?} missing from {log:?}"))
}

// S19: two actors hang in `async` handlers, each above an idle one. `terminate()`
// interrupts the hanging handlers (their drop guards run) instead of waiting for the
// deadline, and every actor sees `PostStop`, children before parents.
#[tokio::test(start_paused = true)]
async fn s19_terminate_interrupts_async_handlers_and_every_actor_sees_post_stop() {
    let observer = ActorSystem::new("observer").unwrap();
    let mut log = TestProbe::<String>::new(&observer);
    let timeout = SECOND;
    let system = ActorSystem::builder("stuck")
        .shutdown_timeout(timeout)
        .build()
        .unwrap();
    let top = system
        .spawn(node(stuck_tree(), log.actor_ref().clone()), "top")
        .unwrap();
    top.tell(Hang);
    let mut hanging = log.receive_messages(2, SECOND).await;
    hanging.sort();
    assert_eq!(hanging, ["mid hangs", "top hangs"]);

    let started = tokio::time::Instant::now();
    let report = LeakReport::after_terminating(&system).await;
    // On the paused clock, any wait for the deadline would have advanced it.
    assert!(
        started.elapsed() < timeout,
        "waited for the deadline: {:?}",
        started.elapsed()
    );
    assert!(report.is_clean(), "{report}");
    let seen = log.receive_messages(6, SECOND).await;
    for line in [
        "top dropped",
        "mid dropped",
        "top stopped",
        "mid stopped",
        "mid-sib stopped",
        "leaf-sib stopped",
    ] {
        at(&seen, line);
    }
    assert!(at(&seen, "leaf-sib stopped") < at(&seen, "mid stopped"));
    assert!(at(&seen, "mid stopped") < at(&seen, "top stopped"));
    assert!(at(&seen, "mid-sib stopped") < at(&seen, "top stopped"));
    // A handler is dropped before its actor's `PostStop`.
    assert!(at(&seen, "mid dropped") < at(&seen, "mid stopped"));
    log.expect_no_message(Duration::from_millis(100)).await;
    observer.terminate().await;
}

/// An actor whose handler blocks its thread until the test lets it go: a
/// synchronous handler nothing can interrupt.
#[derive(Clone)]
struct Blocker {
    release: Arc<Mutex<std::sync::mpsc::Receiver<()>>>,
    /// Told when the handler blocks. Not a probe: an actor woken from a thread about
    /// to block waits in that worker's LIFO slot until the block ends.
    blocks: Arc<Mutex<Option<tokio::sync::oneshot::Sender<()>>>>,
    log: ActorRef<String>,
    name: &'static str,
}

#[message]
pub struct Block;

#[actor]
impl Blocker {
    fn block(&mut self, _: Block) {
        if let Some(blocks) = self.blocks.lock().unwrap().take() {
            let _ = blocks.send(());
        }
        let release = self.release.lock().unwrap();
        // Bounded, so a broken test ends instead of hanging the suite.
        let _ = release.recv_timeout(Duration::from_secs(30));
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            self.log.tell(format!("{} stopped", self.name));
        }
    }
}

/// [`node`], which first reports `"{name} ready"`.
fn ready(spec: Node, log: ActorRef<String>) -> Behavior<HangerMsg> {
    Behaviors::setup(move |_| {
        log.tell(format!("{} ready", spec.name));
        node(spec.clone(), log.clone())
    })
}

/// The test's side of a [`Blocker`]: learn that it blocks, then let it go.
struct BlockControl {
    blocked: tokio::sync::oneshot::Receiver<()>,
    release: std::sync::mpsc::Sender<()>,
}

impl BlockControl {
    async fn wait_until_blocked(&mut self) {
        tokio::time::timeout(SECOND, &mut self.blocked)
            .await
            .unwrap()
            .unwrap();
    }

    fn release(&self) {
        self.release.send(()).unwrap();
    }
}

/// A [`Blocker`] named `name` (cloned into every incarnation) and its control.
fn blocker(name: &'static str, log: ActorRef<String>) -> (Blocker, BlockControl) {
    let (release, released) = std::sync::mpsc::channel();
    let (blocks, blocked) = tokio::sync::oneshot::channel();
    let blocker = Blocker {
        release: Arc::new(Mutex::new(released)),
        blocks: Arc::new(Mutex::new(Some(blocks))),
        log,
        name,
    };
    (blocker, BlockControl { blocked, release })
}

/// The leak report names exactly `path` as stuck in a handler, and nothing else as
/// left unstopped.
fn assert_only_stuck(report: &LeakReport, path: &str) {
    let stuck: Vec<_> = report
        .stuck_in_handler
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(stuck, [path], "{report}");
    assert!(report.not_stopped.is_empty(), "{report}");
}

// S19: the deadline gives up only on an actor still running a handler. `mid` blocks
// its thread in a synchronous handler; its idle child `leaf-sib`, its idle sibling
// `mid-sib` and their idle parent `top` all still see `PostStop`, children before
// parents, and the leak report names `mid` alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_the_deadline_cancels_only_the_actor_still_in_a_handler() {
    let observer = ActorSystem::new("observer").unwrap();
    let mut log = TestProbe::<String>::new(&observer);
    let timeout = Duration::from_millis(300);
    let system = ActorSystem::builder("blocked")
        .shutdown_timeout(timeout)
        .build()
        .unwrap();
    let log_ref = log.actor_ref().clone();
    let (mid_blocker, mut control) = blocker("mid", log_ref.clone());
    let (found, mid) = tokio::sync::oneshot::channel::<ActorRef<BlockerMsg>>();
    let found = Mutex::new(Some(found));
    system
        .spawn(
            Behaviors::setup(move |ctx| {
                let mid = ctx
                    .spawn(
                        Behaviors::setup({
                            let log = log_ref.clone();
                            let mid_blocker = mid_blocker.clone();
                            move |ctx| {
                                ctx.spawn(ready(leaf("leaf-sib", false), log.clone()), "leaf-sib")
                                    .unwrap();
                                mid_blocker.clone()
                            }
                        }),
                        "mid",
                    )
                    .unwrap();
                if let Some(found) = found.lock().unwrap().take() {
                    let _ = found.send(mid);
                }
                ctx.spawn(ready(leaf("mid-sib", false), log_ref.clone()), "mid-sib")
                    .unwrap();
                node(leaf("top", false), log_ref.clone())
            }),
            "top",
        )
        .unwrap();
    // Both idle actors have run before `mid` blocks: a task spawned from a thread that
    // then blocks waits in that worker's LIFO slot, which nothing else can run.
    let mut ready_ones = log.receive_messages(2, SECOND).await;
    ready_ones.sort();
    assert_eq!(ready_ones, ["leaf-sib ready", "mid-sib ready"]);
    let mid = tokio::time::timeout(SECOND, mid).await.unwrap().unwrap();
    mid.tell(Block);
    control.wait_until_blocked().await;

    let started = std::time::Instant::now();
    system.terminate().await;
    let took = started.elapsed();
    assert!(took >= timeout, "returned before the deadline: {took:?}");
    // Bounded well below the 30 s the blocked handler would take.
    assert!(
        took < timeout + 5 * SECOND,
        "waited for the blocked handler: {took:?}"
    );
    let seen = log.receive_messages(3, SECOND).await;
    assert!(at(&seen, "leaf-sib stopped") < at(&seen, "top stopped"));
    assert!(at(&seen, "mid-sib stopped") < at(&seen, "top stopped"));

    control.release();
    let report = LeakReport::after_terminating(&system).await;
    assert_only_stuck(&report, "/user/top/mid");
    log.expect_no_message(Duration::from_millis(100)).await;
    observer.terminate().await;
}

// S19: the live count is settled when `terminate` returns, on a multi-thread
// runtime, for many small systems and for one large one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_no_live_actor_is_counted_once_terminate_returns() {
    for round in 0..200 {
        let system = ActorSystem::new("small").unwrap();
        let actor = system.spawn(Behaviors::ignore::<u64>(), "one").unwrap();
        actor.tell(round);
        system.terminate().await;
        assert_eq!(system.live_actors(), 0, "round {round}");
    }
    let system = ActorSystem::new("large").unwrap();
    for _ in 0..50_000 {
        system.spawn_anonymous(Behaviors::ignore::<u64>()).unwrap();
    }
    system.terminate().await;
    assert_eq!(system.live_actors(), 0);
}

// S15: a parent stops a child that awaits forever: the handler is dropped, the child
// sees `PostStop`, and the parent hears `Terminated`, without any time passing.
#[tapio::test(start_paused = true)]
async fn s15_stopping_a_child_interrupts_its_async_handler(system: ActorSystem) {
    #[message]
    pub struct StopIt;

    let mut log = TestProbe::<String>::new(&system);
    let log_ref = log.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let child = ctx
                    .spawn(node(leaf("child", true), log_ref.clone()), "child")
                    .unwrap();
                child.tell(Hang);
                ctx.watch(&child);
                let log = log_ref.clone();
                Behaviors::receive(move |ctx, _: StopIt| {
                    ctx.stop(&child).unwrap();
                })
                .on_signal(move |_, signal| {
                    if let Signal::Terminated(t) = signal {
                        log.tell(format!("{} terminated", t.actor().path()));
                    }
                })
            }),
            "parent",
        )
        .unwrap();
    assert_eq!(log.expect_message(SECOND).await, "child hangs");
    let started = tokio::time::Instant::now();
    parent.tell(StopIt);
    let seen = log.receive_messages(3, SECOND).await;
    assert_eq!(
        seen,
        [
            "child dropped",
            "child stopped",
            "/user/parent/child terminated"
        ]
    );
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[derive(Debug, thiserror::Error)]
#[error("the parent broke")]
pub struct ParentBroke;

// S12: a parent restarts while its child awaits forever: the restart stops the
// child (its handler dropped, its `PostStop` seen) and the parent starts again.
#[tapio::test(start_paused = true)]
async fn s12_a_parent_restarts_past_a_child_in_an_async_handler(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let log_ref = log.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                log_ref.tell("parent started".into());
                let child = ctx
                    .spawn(node(leaf("child", true), log_ref.clone()), "child")
                    .unwrap();
                child.tell(Hang);
                Behaviors::receive_message(|_: u64| Err::<(), _>(ParentBroke))
            }))
            .on_failure::<ParentBroke>(SupervisorStrategy::restart()),
            "parent",
        )
        .unwrap();
    assert_eq!(
        log.receive_messages(2, SECOND).await,
        ["parent started", "child hangs"]
    );
    parent.tell(1_u64);
    assert_eq!(
        log.receive_messages(4, SECOND).await,
        [
            "child dropped",
            "child stopped",
            "parent started",
            "child hangs"
        ]
    );
}

#[derive(Debug, thiserror::Error)]
#[error("the leaf broke")]
pub struct LeafBroke;

/// An actor between the top and a failing leaf: told to, it makes the leaf fail and
/// then awaits forever.
#[derive(Clone)]
struct Middle {
    leaf: ActorRef<u64>,
    log: ActorRef<String>,
}

#[actor]
impl Middle {
    async fn hang(&mut self, _: Hang) {
        let _guard = DropGuard {
            name: "middle".into(),
            log: self.log.clone(),
        };
        self.leaf.tell(1_u64);
        std::future::pending::<()>().await;
    }
}

// S16: an escalation passes an actor that awaits forever: its handler is interrupted,
// its own supervision escalates further, and the top sees the failure with the path
// it climbed.
#[tapio::test(start_paused = true)]
async fn s16_an_escalation_interrupts_an_async_handler_on_its_way(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let log_ref = log.actor_ref().clone();
    let middle = Behaviors::supervise(Behaviors::setup({
        let log = log_ref.clone();
        move |ctx| {
            let failing =
                Behaviors::supervise(Behaviors::receive_message(|_: u64| Err::<(), _>(LeafBroke)))
                    .on_failure::<LeafBroke>(SupervisorStrategy::escalate());
            Middle {
                leaf: ctx.spawn(failing, "leaf").unwrap(),
                log: log.clone(),
            }
        }
    }))
    .on_failure::<LeafBroke>(SupervisorStrategy::escalate());
    system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let middle: ActorRef<MiddleMsg> = ctx.spawn(middle.clone(), "middle").unwrap();
                middle.tell(Hang);
                let log = log_ref.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                    if let Signal::ChildFailed(failed) = signal {
                        let climbed: Vec<String> = failed
                            .failure()
                            .climbed()
                            .iter()
                            .map(ToString::to_string)
                            .collect();
                        log.tell(format!(
                            "top saw {:?} from {} via {}",
                            failed.failure().to_string(),
                            failed.child().path(),
                            climbed.join(" ")
                        ));
                    }
                })
            }))
            .on_failure::<LeafBroke>(SupervisorStrategy::resume()),
            "top",
        )
        .unwrap();
    let seen = log.receive_messages(2, SECOND).await;
    assert_eq!(seen[0], "middle dropped");
    assert!(
        seen[1].starts_with("top saw ") && seen[1].contains("from /user/top/middle via"),
        "{seen:?}"
    );
    assert!(seen[1].contains("/user/top/middle/leaf"), "{seen:?}");
}

#[message(reply = u64)]
pub struct Slow;

/// Answers `Slow` only after an await that never ends; says when it has begun.
#[derive(Clone)]
struct NeverAnswers {
    log: ActorRef<String>,
}

#[actor]
impl NeverAnswers {
    async fn slow(&mut self, _: Slow) -> u64 {
        self.log.tell("answering".into());
        std::future::pending::<u64>().await
    }
}

// S23: stopping an actor whose `async` handler holds a request drops the handler and
// its reply ref with it: the ask fails at once, not at its deadline.
#[tapio::test(start_paused = true)]
async fn s23_an_ask_fails_at_once_when_its_handler_is_interrupted(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let never = NeverAnswers {
        log: log.actor_ref().clone(),
    };
    let slow = system.spawn(never, "slow").unwrap();
    let asking = {
        let slow = slow.clone();
        tokio::spawn(async move { slow.ask(Slow).timeout(Duration::from_secs(3600)).await })
    };
    // The request is in the handler when the stop comes.
    assert_eq!(log.expect_message(SECOND).await, "answering");
    let started = tokio::time::Instant::now();
    system.stop(&slow).unwrap();
    let failed = asking.await.unwrap().unwrap_err();
    assert!(
        !matches!(failed, tapio::AskError::Timeout { .. }),
        "the ask waited for its deadline: {failed}"
    );
    assert!(started.elapsed() < SECOND, "took {:?}", started.elapsed());
}

/// Watches the child it spawns; its `Terminated` handler awaits forever.
#[derive(Clone)]
struct Mourner {
    log: ActorRef<String>,
}

#[actor]
impl Mourner {
    fn start(&mut self, ctx: &mut Ctx<Self>, _: Hang) {
        let child = ctx.spawn(Behaviors::ignore::<u64>(), "child").unwrap();
        ctx.watch(&child);
        ctx.stop(&child).unwrap();
    }

    #[signal]
    async fn on_signal(&mut self, signal: &Signal) {
        match signal {
            Signal::Terminated(_) => {
                let _guard = DropGuard {
                    name: "mourning".into(),
                    log: self.log.clone(),
                };
                self.log.tell("mourns".into());
                std::future::pending::<()>().await;
            }
            Signal::PostStop => self.log.tell("mourner stopped".into()),
            _ => {}
        }
    }
}

// S15: a stop interrupts a `Terminated` signal handler that awaits, as it does a
// message handler: the handler is dropped, then `PostStop` runs.
#[tapio::test(start_paused = true)]
async fn s15_a_stop_interrupts_an_awaiting_terminated_handler(system: ActorSystem) {
    let mut log = TestProbe::<String>::new(&system);
    let mourner = system
        .spawn(
            Mourner {
                log: log.actor_ref().clone(),
            },
            "mourner",
        )
        .unwrap();
    mourner.tell(Hang);
    assert_eq!(log.expect_message(SECOND).await, "mourns");
    system.stop(&mourner).unwrap();
    assert_eq!(
        log.receive_messages(2, SECOND).await,
        ["mourning dropped", "mourner stopped"]
    );
}

/// Counts `PostStop`s, and hangs in an `async` handler when told to.
#[derive(Clone)]
struct Counted {
    stopped: Arc<std::sync::atomic::AtomicUsize>,
}

#[actor]
impl Counted {
    async fn hang(&mut self, _: Hang) {
        std::future::pending::<()>().await;
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            self.stopped
                .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        }
    }
}

// S19 at scale: 20 parents with 50 children each, half of the children awaiting
// forever, and one actor deep in the tree blocking its thread past the deadline. Every
// actor but the blocked one sees `PostStop`, and termination ends near the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_a_large_tree_with_one_blocked_actor_stops_everything_else() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let timeout = Duration::from_millis(300);
    let system = ActorSystem::builder("large-tree")
        .shutdown_timeout(timeout)
        .build()
        .unwrap();
    let stopped = Arc::new(AtomicUsize::new(0));
    let observer = ActorSystem::new("observer").unwrap();
    let log = TestProbe::<String>::new(&observer);
    let (the_blocker, mut control) = blocker("blocker", log.actor_ref().clone());
    let (ready, mut all_ready) = tokio::sync::mpsc::unbounded_channel::<ActorRef<BlockerMsg>>();
    for p in 0..20 {
        let counted = Counted {
            stopped: stopped.clone(),
        };
        let (the_blocker, ready) = (the_blocker.clone(), ready.clone());
        system
            .spawn(
                Behaviors::setup(move |ctx| {
                    for c in 0..50 {
                        let child = ctx.spawn(counted.clone(), &format!("c{c}")).unwrap();
                        if c % 2 == 0 {
                            child.tell(Hang);
                        }
                    }
                    if p == 7 {
                        let blocker = ctx.spawn(the_blocker.clone(), "blocker").unwrap();
                        let _ = ready.send(blocker);
                    }
                    counted.clone()
                }),
                &format!("p{p}"),
            )
            .unwrap();
    }
    let blocker = all_ready.recv().await.unwrap();
    blocker.tell(Block);
    control.wait_until_blocked().await;

    let started = std::time::Instant::now();
    system.terminate().await;
    let took = started.elapsed();
    assert!(took < timeout + 5 * SECOND, "took {took:?}");
    // 20 parents and 1,000 children; the blocker is not counted.
    assert_eq!(stopped.load(Ordering::Acquire), 1_020);
    control.release();
    let report = LeakReport::after_terminating(&system).await;
    assert_only_stuck(&report, "/user/p7/blocker");
    observer.terminate().await;
}
