//! Remote spawn (S46): a spawner on one system starts the factories it offers, on
//! request from another; the requester gets a typed ref and watches it; the new
//! actor is the spawner's child, supervised on its own node.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio::remote::spawn::{
    RemoteSpawnError, Spawn, SpawnFailure, SpawnReply, Spawner, SpawnerMsg,
};
use tapio::testkit::{TestProbe, TwoNodes, two_nodes};
use tapio::{SupervisorStrategy, remote_behavior};

const WAIT: Duration = Duration::from_secs(10);

/// What a doubler is built with.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct DoublerArgs {
    pub factor: u64,
}

#[message(remote = "spawn-test.double.v1", reply = Doubled)]
pub struct Double(pub u64);

#[message(remote = "spawn-test.doubled.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Doubled {
    pub n: u64,
    pub handled: u64,
}

#[message(remote = "spawn-test.crash.v1")]
pub struct Crash;

#[message(remote = "spawn-test.retire.v1")]
pub struct Retire;

#[derive(Debug, thiserror::Error)]
#[error("the doubler fell over")]
pub struct Fell;

pub struct Doubler {
    factor: u64,
    handled: u64,
}

#[actor]
impl Doubler {
    fn double(&mut self, Double(n): Double) -> Doubled {
        self.handled += 1;
        Doubled {
            n: n * self.factor,
            handled: self.handled,
        }
    }

    fn crash(&mut self, _: Crash) -> Result<(), Fell> {
        Err(Fell)
    }

    fn retire(&mut self, _: Retire) -> Behavior<DoublerMsg> {
        Behaviors::stopped()
    }
}

/// How many actors the factories below built (constructors run); each factory is
/// asked for by one test only.
static STRICT_BUILT: AtomicUsize = AtomicUsize::new(0);
static TRIPLERS_BUILT: AtomicUsize = AtomicUsize::new(0);
static COUNTED_BUILT: AtomicUsize = AtomicUsize::new(0);

/// The factory the spawner offers; it declares the doubler's supervision.
#[remote_behavior("spawn-test.doubler")]
pub fn doubler(args: DoublerArgs) -> Behavior<DoublerMsg> {
    let factor = args.factor;
    Behaviors::supervise(Behaviors::setup(move |_| Doubler { factor, handled: 0 }))
        .on_failure::<Fell>(SupervisorStrategy::restart())
        .into()
}

/// Offered too; only ever asked with arguments that do not decode.
#[remote_behavior("spawn-test.strict")]
pub fn strict(args: DoublerArgs) -> Behavior<DoublerMsg> {
    STRICT_BUILT.fetch_add(1, Ordering::SeqCst);
    let factor = args.factor;
    Behaviors::setup(move |_| Doubler { factor, handled: 0 })
}

/// Offered; counts its constructor's runs, for the test of names checked first.
#[remote_behavior("spawn-test.counted")]
pub fn counted(args: DoublerArgs) -> Behavior<DoublerMsg> {
    COUNTED_BUILT.fetch_add(1, Ordering::SeqCst);
    let factor = args.factor;
    Behaviors::setup(move |_| Doubler { factor, handled: 0 })
}

/// A factory linked into the binary that the spawner does not offer.
#[remote_behavior("spawn-test.tripler")]
pub fn tripler(args: DoublerArgs) -> Behavior<DoublerMsg> {
    TRIPLERS_BUILT.fetch_add(1, Ordering::SeqCst);
    let factor = args.factor * 3;
    Behaviors::setup(move |_| Doubler { factor, handled: 0 })
}

/// Arguments whose ref the startup probe cannot see (a `NonZeroU32` refuses the
/// made-up zero before the ref is reached): refused when encoded instead.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Guarded {
    pub threads: std::num::NonZeroU32,
    pub boss: ActorRef<Doubled>,
}

#[remote_behavior("spawn-test.guarded")]
pub fn guarded(_args: Guarded) -> Behavior<Doubled> {
    Behaviors::ignore()
}

/// Two nodes with a spawner offering `doubler` on `b`, and `a`'s ref to it.
fn spawner_on_b() -> (TwoNodes, ActorRef<SpawnerMsg>) {
    let settings = RemoteSettings::loopback()
        .heartbeat_interval(Duration::from_millis(100))
        .unreachable_after(Duration::from_secs(30));
    let nodes = two_nodes(settings).unwrap();
    let spawner = Spawner::offering::<doubler>()
        .and::<strict>()
        .and::<counted>()
        .build()
        .unwrap();
    nodes.b.spawn(spawner, "spawner").unwrap();
    let remote = nodes
        .a
        .resolve::<SpawnerMsg>(&format!("{}/user/spawner", nodes.b.address()))
        .unwrap();
    (nodes, remote)
}

// S46: the requester gets a typed ref to an actor started on the other node, as
// the spawner's child; a crash there is supervised there (the same ref keeps
// working, the job count starts again); the requester watches it and hears when
// it retires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_a_spawner_starts_an_offered_factory_for_another_node() {
    let (nodes, spawner) = spawner_on_b();
    let spawned = spawner
        .spawn_remote::<doubler>(DoublerArgs { factor: 2 }, "doubler-1")
        .await
        .unwrap();
    assert_eq!(spawned.name, "doubler-1");
    let worker = spawned.actor;
    assert_eq!(worker.path().to_string(), "/user/spawner/doubler-1");
    assert_eq!(worker.path().address(), nodes.b.address());
    let mut watcher = TestProbe::<Doubled>::new(&nodes.a);
    watcher.watch(&worker);

    assert_eq!(
        worker.ask(Double(6)).timeout(WAIT).await,
        Ok(Doubled { n: 12, handled: 1 })
    );
    worker.tell(Crash);
    assert_eq!(
        worker.ask(Double(7)).timeout(WAIT).await,
        Ok(Doubled { n: 14, handled: 1 })
    );
    watcher
        .expect_no_termination(Duration::from_millis(50))
        .await;
    worker.tell(Retire);
    watcher.expect_terminated(&worker, WAIT).await;
    nodes.terminate().await;
}

// S46: refusals name their reason and run no constructor: a key nobody
// registered, a factory that exists but is not offered, arguments that do not
// decode, a name already taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_refused_requests_run_no_constructor() {
    let (nodes, spawner) = spawner_on_b();
    let ask = |factory: &str, args: Vec<u8>, name: &str| {
        spawner
            .ask(Spawn {
                factory: factory.into(),
                args,
                name: name.into(),
            })
            .timeout(WAIT)
    };
    let unknown = ask("spawn-test.nobody", vec![], "x").await.unwrap();
    assert_eq!(
        unknown,
        SpawnReply::SpawnFailed {
            reason: SpawnFailure::UnknownFactory {
                factory: "spawn-test.nobody".into()
            }
        }
    );

    let not_offered = spawner
        .spawn_remote::<tripler>(DoublerArgs { factor: 1 }, "tripler-1")
        .await;
    assert_eq!(
        not_offered,
        Err(RemoteSpawnError::Refused(SpawnFailure::NotOffered {
            factory: "spawn-test.tripler".into()
        }))
    );
    assert_eq!(TRIPLERS_BUILT.load(Ordering::SeqCst), 0);

    // A varint that never ends is not a `u64`.
    let garbled = ask("spawn-test.strict", vec![0xff; 11], "garbled")
        .await
        .unwrap();
    assert!(
        matches!(
            &garbled,
            SpawnReply::SpawnFailed {
                reason: SpawnFailure::BadArguments { factory, .. }
            } if factory == "spawn-test.strict"
        ),
        "{garbled:?}"
    );
    assert_eq!(STRICT_BUILT.load(Ordering::SeqCst), 0);

    spawner
        .spawn_remote::<doubler>(DoublerArgs { factor: 2 }, "twin")
        .await
        .unwrap();
    let taken = spawner
        .spawn_remote::<doubler>(DoublerArgs { factor: 2 }, "twin")
        .await;
    assert_eq!(
        taken,
        Err(RemoteSpawnError::Refused(SpawnFailure::NameTaken {
            name: "twin".into()
        }))
    );
    nodes.terminate().await;
}

// S46: a ref in the arguments that the startup check could not see is refused
// on the requesting side, when the arguments are encoded, before anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_arguments_with_a_ref_are_refused_before_sending() {
    let (nodes, spawner) = spawner_on_b();
    let boss = TestProbe::<Doubled>::new(&nodes.a);
    let refused = spawner
        .spawn_remote::<guarded>(
            Guarded {
                threads: std::num::NonZeroU32::MIN,
                boss: boss.actor_ref().clone(),
            },
            "guarded",
        )
        .await;
    let Err(RemoteSpawnError::Arguments(why)) = refused else {
        panic!("expected the arguments refused, got {refused:?}");
    };
    assert!(why.contains("ActorRef"), "{why}");
    nodes.terminate().await;
}

/// What the requesting actor below reports.
#[message]
#[derive(Debug, Clone, PartialEq)]
pub enum Heard {
    Started(String),
    Ended(String),
}

#[message]
pub struct StartOne(pub ActorRef<SpawnerMsg>);

/// An actor that starts a doubler on another node with `ctx.spawn_remote`, retires
/// it, and reports its end: it never calls `watch` itself.
#[derive(Clone)]
pub struct Requester {
    report: ActorRef<Heard>,
}

#[actor]
impl Requester {
    async fn start_one(
        &mut self,
        ctx: &mut ActorContext<RequesterMsg>,
        StartOne(spawner): StartOne,
    ) {
        let spawned = ctx
            .spawn_remote::<doubler>(&spawner, DoublerArgs { factor: 3 }, "doubler-w")
            .await
            .expect("spawned");
        self.report.tell(Heard::Started(spawned.name.clone()));
        spawned.actor.tell(Retire);
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        if let Signal::Terminated(terminated) = signal {
            self.report
                .tell(Heard::Ended(terminated.actor().path().name().to_owned()));
        }
    }
}

// S46: "the requester watches it": an actor that starts one with `ctx.spawn_remote`
// hears `Terminated` when it ends, without a watch of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_an_actor_that_spawns_remotely_watches_what_it_started() {
    let (nodes, spawner) = spawner_on_b();
    let mut probe = TestProbe::<Heard>::new(&nodes.a);
    let requester = nodes
        .a
        .spawn(
            Requester {
                report: probe.actor_ref().clone(),
            },
            "requester",
        )
        .unwrap();
    requester.tell(StartOne(spawner));
    assert_eq!(
        probe.expect_message(WAIT).await,
        Heard::Started("doubler-w".into())
    );
    assert_eq!(
        probe.expect_message(WAIT).await,
        Heard::Ended("doubler-w".into())
    );
    nodes.terminate().await;
}

// S46 (issue 30, item 4): the spawner checks the name before it builds: 50 racing
// requests for one name run the factory once (one is spawned, 49 are refused as
// `NameTaken`), and a request with an invalid name runs it not at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_a_factory_runs_once_per_accepted_request_and_never_for_a_refused_name() {
    let (nodes, spawner) = spawner_on_b();
    let mut racing = tokio::task::JoinSet::new();
    for _ in 0..50 {
        let spawner = spawner.clone();
        racing.spawn(async move {
            spawner
                .spawn_remote::<counted>(DoublerArgs { factor: 1 }, "once")
                .await
        });
    }
    let (mut spawned, mut taken) = (0, 0);
    while let Some(outcome) = racing.join_next().await {
        match outcome.unwrap() {
            Ok(_) => spawned += 1,
            Err(RemoteSpawnError::Refused(SpawnFailure::NameTaken { name })) if name == "once" => {
                taken += 1
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!((spawned, taken), (1, 49));
    assert_eq!(COUNTED_BUILT.load(Ordering::SeqCst), 1);
    let invalid = spawner
        .spawn_remote::<counted>(DoublerArgs { factor: 1 }, "two words")
        .await;
    assert!(
        matches!(
            &invalid,
            Err(RemoteSpawnError::Refused(SpawnFailure::InvalidName { name, .. })) if name == "two words"
        ),
        "{invalid:?}"
    );
    assert_eq!(COUNTED_BUILT.load(Ordering::SeqCst), 1);
    nodes.terminate().await;
}
