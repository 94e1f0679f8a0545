//! Claims of README.md, docs/remoting.md and the crate docs (runtime/src/lib.rs),
//! checked one test per claim, as a new user would read them. Each test quotes its
//! claim. Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::{RemoteError, RemoteSettings, TlsSettings};
use tapio::testkit::{TestProbe, two_nodes};
use tapio::{
    AskError, Backoff, BoxError, DeadLetter, DeadLetterReason, IntoBehavior, MailboxConfig,
    OverflowStrategy, Subscription, SystemError,
};
use tokio::sync::{Notify, mpsc, oneshot};

const SECOND: Duration = Duration::from_secs(1);
const WAIT: Duration = Duration::from_secs(3);

fn workspace_file(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

async fn within<T>(what: &str, future: impl std::future::IntoFuture<Output = T>) -> T {
    tokio::time::timeout(WAIT, future)
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {WAIT:?}"))
}

async fn next_letter(letters: &mut Subscription<DeadLetter>) -> DeadLetter {
    within("a dead letter", letters.recv())
        .await
        .expect("the stream is open")
}

async fn recv<T>(rx: &mut mpsc::UnboundedReceiver<T>) -> T {
    within("a report", rx.recv())
        .await
        .expect("the sender is alive")
}

#[message(reply = u64)]
pub struct Get;

#[derive(Clone)]
pub struct Seven;

#[actor]
impl Seven {
    fn get(&mut self, _: Get) -> u64 {
        7
    }
}

#[message]
pub enum Job {
    Block,
    Fill(u64),
    Ask(ActorRef<u64>),
}

/// An actor with a bounded mailbox that reports when it is stuck in `Block`.
fn blocker(started: mpsc::UnboundedSender<()>, gate: Arc<Notify>) -> Behavior<Job> {
    Behaviors::receive_message_async(async move |job: Job| match job {
        Job::Block => {
            let _ = started.send(());
            gate.notified().await;
        }
        Job::Fill(_) => {}
        Job::Ask(reply_to) => reply_to.tell(1),
    })
    .into_behavior()
}

// ---------------------------------------------------------------- the repository

// README.md, "The two commands" / "Two processes" / remoting.md: "`cargo run
// --example NAME` runs one example"; named examples: `tour`, `stash_on_startup`,
// `state_machine`, `state_machine_without_macros`, `remote_spawn`,
// `worker_pool_remote`, `blocking_calls`, `adapters`, `worker_pool`, `two_nodes`,
// `node_failure`, `partition`, `remote_ask`, `node`.
#[test]
fn every_example_the_docs_name_is_declared_and_has_its_file() {
    let manifest = workspace_file("examples/Cargo.toml");
    for name in [
        "tour",
        "stash_on_startup",
        "state_machine",
        "state_machine_without_macros",
        "remote_spawn",
        "worker_pool_remote",
        "blocking_calls",
        "adapters",
        "worker_pool",
        "two_nodes",
        "node_failure",
        "partition",
        "remote_ask",
        "node",
    ] {
        assert!(
            manifest.contains(&format!("name = \"{name}\"\npath = \"{name}.rs\"")),
            "examples/Cargo.toml declares no example `{name}`"
        );
        let _ = workspace_file(&format!("examples/{name}.rs"));
    }
}

// README.md, "Toolchain: Rust 1.95 (pinned in `rust-toolchain.toml`), edition 2024."
#[test]
fn the_toolchain_is_pinned_to_1_95_and_the_edition_is_2024() {
    let toolchain = workspace_file("rust-toolchain.toml");
    assert!(toolchain.contains("\"1.95"), "{toolchain}");
    assert!(workspace_file("Cargo.toml").contains("edition = \"2024\""));
}

// README.md, Layout: "`bench/` | a separate workspace".
#[test]
fn bench_is_a_separate_workspace() {
    assert!(workspace_file("bench/Cargo.toml").contains("[workspace]"));
    assert!(workspace_file("Cargo.toml").contains("exclude = [\"bench\"]"));
}

// ---------------------------------------------------------------- supervision

// README.md, Supervision: "Defaults: 10 restarts per minute, no backoff unless asked".
#[test]
fn restart_defaults_to_ten_per_minute_without_backoff() {
    let restart = SupervisorStrategy::restart();
    assert_eq!(restart.max_restarts(), 10);
    assert_eq!(restart.window(), Duration::from_secs(60));
    assert!(restart.backoff().is_none());
}

// README.md, Supervision: "`Backoff::default()` is 100 ms doubling to 10 s, each delay
// then stretched by up to 20 % at random (so at the cap, 10 to 12 s)."
#[test]
fn default_backoff_is_100ms_doubling_to_10s_stretched_up_to_20_percent() {
    let backoff = Backoff::default();
    assert_eq!(backoff.delay(0, 0.0), Duration::from_millis(100));
    assert_eq!(backoff.delay(1, 0.0), Duration::from_millis(200));
    assert_eq!(backoff.delay(2, 0.0), Duration::from_millis(400));
    assert_eq!(backoff.delay(30, 0.0), Duration::from_secs(10));
    let top = backoff.delay(30, 0.999_999);
    assert!(
        top > Duration::from_millis(11_990) && top <= Duration::from_secs(12),
        "{top:?}"
    );
}

// README.md, Behaviors: "`setup_once` (an `FnOnce` that can move a one-shot value in;
// a restart cannot re-run it)". (failure.rs: the actor stops, whatever the restart
// strategy said.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_of_setup_once_stops_the_actor() {
    let system = ActorSystem::new("once").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    let once = Behaviors::setup_once(|_ctx| {
        Behaviors::receive_message(|_: u64| -> Result<Behavior<u64>, std::io::Error> {
            Err(std::io::Error::other("boom"))
        })
    });
    let actor = system
        .spawn(
            Behaviors::supervise(once).on_failure::<std::io::Error>(SupervisorStrategy::restart()),
            "once",
        )
        .unwrap();
    probe.watch(&actor);
    actor.tell(1);
    probe.expect_terminated(&actor, WAIT).await;
    within("terminate", system.terminate()).await;
}

// README.md, Supervision: "a `tapio::BoxError` so that `?` works on several error
// types in one handler; a clause still matches the error inside the box by its own
// type."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clause_matches_the_error_inside_a_box_error() {
    let system = ActorSystem::new("boxed").unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let behavior = Behaviors::receive_message(move |n: u64| -> Result<(), BoxError> {
        if n == 0 {
            Err(std::io::Error::other("boxed io"))?;
        }
        let _ = tx.send(n);
        Ok(())
    });
    let actor = system
        .spawn(
            Behaviors::supervise(behavior)
                .on_failure::<std::io::Error>(SupervisorStrategy::resume()),
            "boxed",
        )
        .unwrap();
    actor.tell(0u64);
    actor.tell(5u64);
    assert_eq!(recv(&mut rx).await, 5, "resumed after the boxed io::Error");
    within("terminate", system.terminate()).await;
}

// README.md, Blocking calls: "`?` makes a panic in the call the actor's failure
// (`Panicked`)."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_run_blocking_is_a_panicked_failure() {
    let system = ActorSystem::new("blocking").unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let behavior = Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, n: u64| {
        if n == 0 {
            ctx.run_blocking(|| -> u64 { panic!("in the blocking call") })
                .await?;
        }
        let _ = tx.send(n);
        Ok::<_, tapio::Failure>(())
    });
    let actor = system
        .spawn(
            Behaviors::supervise(behavior).on_failure::<Panicked>(SupervisorStrategy::resume()),
            "blocking",
        )
        .unwrap();
    actor.tell(0u64);
    actor.tell(9u64);
    assert_eq!(
        recv(&mut rx).await,
        9,
        "a `Panicked` clause resumed the actor"
    );
    within("terminate", system.terminate()).await;
}

// ---------------------------------------------------------------- systems

// README.md, Shutdown: "`system.terminate()` begins when called (so
// `drop(system.terminate());` works from sync code)".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_begins_when_called_without_being_awaited() {
    let system = ActorSystem::new("sync-stop").unwrap();
    let _actor = system.spawn(Seven, "seven").unwrap();
    fn from_sync_code(system: &ActorSystem) {
        drop(system.terminate());
    }
    from_sync_code(&system);
    assert!(system.is_terminating());
    within("when_terminated", system.when_terminated())
        .await
        .unwrap();
}

// runtime/src/system/mod.rs (`live_actors`), as the brief asks: "How many actor tasks
// are running, guardians included: zero once the system has terminated".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_actors_counts_guardians_and_is_zero_after_terminate() {
    let system = ActorSystem::new("live").unwrap();
    let before = system.live_actors();
    assert!(before >= 1, "guardians included: {before}");
    let seven = system.spawn(Seven, "seven").unwrap();
    assert_eq!(within("ask", seven.ask(Get)).await.unwrap(), 7);
    assert_eq!(system.live_actors(), before + 1);
    within("terminate", system.terminate()).await;
    assert_eq!(system.live_actors(), 0);
}

// README.md, Systems: "Dropping the handles stops nothing: Rust has no async drop."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_every_system_handle_stops_nothing() {
    let system = ActorSystem::new("dropped").unwrap();
    let seven = system.spawn(Seven, "seven").unwrap();
    drop(system);
    tokio::task::yield_now().await;
    assert_eq!(
        within("ask", seven.ask(Get).timeout(SECOND)).await.unwrap(),
        7
    );
}

// README.md, Systems: "`ActorSystem::scope(name, |system| async move { .. })` for a
// system that ends with its block (also when the block panics)."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_system_ends_when_its_block_panics() {
    let (tx, rx) = oneshot::channel();
    let scoped = tokio::spawn(ActorSystem::scope("scoped", move |system| async move {
        let _ = system.spawn(Seven, "seven").unwrap();
        tx.send(system).unwrap();
        panic!("the block panics");
    }));
    let joined = within("the scope", scoped).await;
    assert!(joined.unwrap_err().is_panic());
    let kept = within("the system", rx).await.unwrap();
    within("when_terminated", kept.when_terminated())
        .await
        .unwrap();
    assert_eq!(kept.live_actors(), 0);
    assert!(kept.spawn(Seven, "late").is_err());
}

// ---------------------------------------------------------------- watching

// README.md, Watching: "`ctx.watch(&r)` delivers `Signal::Terminated` exactly once"
// (here: watched twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watching_twice_delivers_terminated_once() {
    let system = ActorSystem::new("twice").unwrap();
    let target = system.spawn(Seven, "target").unwrap();
    let mut probe = TestProbe::<&'static str>::new(&system);
    let report = probe.actor_ref().clone();
    let (ready_tx, mut ready) = mpsc::unbounded_channel();
    let t = target.clone();
    let _watcher = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&t);
                ctx.watch(&t);
                let _ = ready_tx.send(());
                let report = report.clone();
                Behaviors::receive_message(|_: u64| {}).on_signal(move |_, signal| {
                    if let Signal::Terminated(_) = signal {
                        report.tell("terminated");
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    recv(&mut ready).await;
    system.stop(&target).unwrap();
    assert_eq!(probe.expect_message(WAIT).await, "terminated");
    probe.expect_no_message(Duration::from_millis(300)).await;
    within("terminate", system.terminate()).await;
}

// README.md, Watching: "delivers `Signal::Terminated` exactly once, also for an actor
// that had already stopped."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watching_an_actor_already_stopped_delivers_terminated() {
    let system = ActorSystem::new("late-watch").unwrap();
    let target = system.spawn(Seven, "target").unwrap();
    let mut first = TestProbe::<u64>::new(&system);
    first.watch(&target);
    system.stop(&target).unwrap();
    first.expect_terminated(&target, WAIT).await;
    let mut late = TestProbe::<u64>::new(&system);
    late.watch(&target);
    late.expect_terminated(&target, WAIT).await;
    within("terminate", system.terminate()).await;
}

// README.md, Watching: "A watcher that leaves it unhandled fails with `DeathPact`
// (stopped by default; supervision can match the type)."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_that_leaves_terminated_unhandled_fails_with_death_pact() {
    let system = ActorSystem::new("pact").unwrap();
    let target = system.spawn(Seven, "target").unwrap();
    let t = target.clone();
    let (ready_tx, mut ready) = mpsc::unbounded_channel();
    let plain = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&t);
                let _ = ready_tx.send(());
                Behaviors::receive_message(|_: u64| {})
            }),
            "plain",
        )
        .unwrap();
    let t = target.clone();
    let (ready_tx2, mut ready2) = mpsc::unbounded_channel();
    let (alive_tx, mut alive) = mpsc::unbounded_channel();
    let resumed = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&t);
                let _ = ready_tx2.send(());
                let alive_tx = alive_tx.clone();
                Behaviors::receive_message(move |n: u64| {
                    let _ = alive_tx.send(n);
                })
            }))
            .on_failure::<tapio::DeathPact>(SupervisorStrategy::resume()),
            "resumed",
        )
        .unwrap();
    recv(&mut ready).await;
    recv(&mut ready2).await;
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&plain);
    system.stop(&target).unwrap();
    probe.expect_terminated(&plain, WAIT).await;
    resumed.tell(4);
    assert_eq!(recv(&mut alive).await, 4);
    within("terminate", system.terminate()).await;
}

// ---------------------------------------------------------------- ask, mailboxes

// README.md, Ask: "a fast failure when ... its full bounded mailbox refuses the
// request (`AskError::MailboxFull`)".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_to_a_full_bounded_mailbox_fails_at_once_with_mailbox_full() {
    let system = ActorSystem::new("full").unwrap();
    let gate = Arc::new(Notify::new());
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let actor = system
        .spawn_with(
            blocker(started_tx, gate.clone()),
            "full",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    actor.tell(Job::Block);
    recv(&mut started).await;
    actor.tell(Job::Fill(1));
    let answer = tokio::time::timeout(
        SECOND,
        actor.ask_with(Job::Ask).timeout(Duration::from_secs(30)),
    )
    .await
    .expect("refused at once, not after the ask's deadline");
    assert!(
        matches!(answer, Err(AskError::MailboxFull { .. })),
        "{answer:?}"
    );
    gate.notify_one();
    within("terminate", system.terminate()).await;
}

// README.md, Mailboxes: "`DropNew` or `DropOldest` decides what goes, as a dead
// letter" (DropOldest: the oldest goes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_oldest_dead_letters_the_oldest_message() {
    let system = ActorSystem::new("oldest").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let gate = Arc::new(Notify::new());
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let actor = system
        .spawn_with(
            blocker(started_tx, gate.clone()),
            "oldest",
            MailboxConfig::bounded(2, OverflowStrategy::DropOldest).unwrap(),
        )
        .unwrap();
    actor.tell(Job::Block);
    recv(&mut started).await;
    actor.tell(Job::Fill(1));
    actor.tell(Job::Fill(2));
    actor.tell(Job::Fill(3));
    let letter = next_letter(&mut letters).await;
    assert_eq!(letter.reason(), &DeadLetterReason::PushedOut);
    assert!(matches!(letter.take_message::<Job>(), Some(Job::Fill(1))));
    gate.notify_one();
    within("terminate", system.terminate()).await;
}

// README.md, Message adapters: "An adapter stops with its owner and cannot be watched
// or asked." (remoting.md: an adapter asked is refused `Adapter`, at once.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_an_adapter_is_refused_at_once() {
    let system = ActorSystem::new("adapter").unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let _owner = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let adapter: ActorRef<SevenMsg> = ctx.message_adapter(|_: SevenMsg| 1u64);
                let _ = tx.send(adapter);
                Behaviors::receive_message(|_: u64| {})
            }),
            "owner",
        )
        .unwrap();
    let adapter = recv(&mut rx).await;
    let answer = tokio::time::timeout(SECOND, adapter.ask(Get).timeout(Duration::from_secs(30)))
        .await
        .expect("refused at once");
    assert!(
        matches!(answer, Err(AskError::Adapter { .. })),
        "{answer:?}"
    );
    within("terminate", system.terminate()).await;
}

// ---------------------------------------------------------------- stash

// README.md, Stash: "`stash.unstash_all(next)` switches to `next` and replays the held
// messages at the front of the mailbox, in arrival order, ahead of whatever arrived
// meanwhile".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unstash_all_replays_in_arrival_order_ahead_of_later_messages() {
    let system = ActorSystem::new("stash").unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let behavior = Behaviors::with_stash(16, move |stash| {
        let tx = tx.clone();
        Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                let tx = tx.clone();
                Ok(stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                    let _ = tx.send(n);
                })))
            } else {
                stash.stash(n).map(|()| Behaviors::same())
            }
        })
    })
    .unwrap();
    let actor = system.spawn(behavior, "stash").unwrap();
    for n in [1u64, 2, 3, 0, 4, 5] {
        actor.tell(n);
    }
    let mut got = Vec::new();
    for _ in 0..5 {
        got.push(recv(&mut rx).await);
    }
    assert_eq!(got, [1, 2, 3, 4, 5]);
    within("terminate", system.terminate()).await;
}

// README.md, Stash: "A restart turns what the stash held into dead letters".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_dead_letters_what_the_stash_held() {
    let system = ActorSystem::new("stash-restart").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let behavior = Behaviors::with_stash(16, move |stash| {
        Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, BoxError> {
            if n == 0 {
                Err(std::io::Error::other("restart me"))?;
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(behavior)
                .on_failure::<std::io::Error>(SupervisorStrategy::restart()),
            "stash",
        )
        .unwrap();
    actor.tell(1u64);
    actor.tell(2u64);
    actor.tell(0u64);
    for expected in [1u64, 2] {
        let letter = next_letter(&mut letters).await;
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::StashDiscarded,
            "{letter}"
        );
        assert_eq!(letter.take_message::<u64>(), Some(expected));
    }
    within("terminate", system.terminate()).await;
}

// ---------------------------------------------------------------- routers

// README.md, Routers: "The router watches its routees: one that stops leaves, and the
// router stops with the last."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_router_stops_with_its_last_routee() {
    let system = ActorSystem::new("router").unwrap();
    let router = system
        .spawn(
            Routers::pool(2, || {
                Behaviors::receive_message(|_: u64| -> Behavior<u64> { Behaviors::stopped() })
            })
            .unwrap(),
            "pool",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&router);
    router.tell(1);
    probe
        .expect_no_termination(Duration::from_millis(200))
        .await;
    router.tell(2);
    probe.expect_terminated(&router, WAIT).await;
    within("terminate", system.terminate()).await;
}

// ---------------------------------------------------------------- remoting

// remoting.md, Security: "Listening on anything but loopback without a secret refuses
// to start. The secret must be at least 16 bytes".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_loopback_a_secret_of_at_least_16_bytes_is_required() {
    let none = ActorSystem::builder("open")
        .remote(RemoteSettings::bind("0.0.0.0", 0))
        .build();
    assert!(
        matches!(
            none,
            Err(SystemError::Remote(RemoteError::SecretRequired { .. }))
        ),
        "{none:?}"
    );
    let short = ActorSystem::builder("short")
        .remote(RemoteSettings::bind("0.0.0.0", 0).secret(vec![7u8; 15]))
        .build();
    assert!(
        matches!(
            short,
            Err(SystemError::Remote(RemoteError::SecretTooShort { len: 15 }))
        ),
        "{short:?}"
    );
    let ok = ActorSystem::builder("long")
        .remote(RemoteSettings::bind("0.0.0.0", 0).secret(vec![7u8; 16]))
        .build()
        .unwrap();
    within("terminate", ok.terminate()).await;
}

// remoting.md, Failure model: "`heartbeat_interval` (1 s by default)", "`unreachable_after`
// (10 s by default)"; TLS: "Neither `TlsSettings` nor `RemoteSettings` prints key
// material in its `Debug`."
#[test]
fn remote_settings_defaults_and_debug_without_the_secret() {
    let settings = RemoteSettings::loopback().secret("correct-horse-battery-staple");
    let debug = format!("{settings:?}");
    assert!(!debug.contains("correct-horse"), "{debug}");
    assert!(debug.contains("heartbeat_interval: 1s"), "{debug}");
    assert!(debug.contains("unreachable_after: 10s"), "{debug}");
}

// remoting.md, TLS: "`TlsSettings::from_pem(..)` ... each part must parse ...
// Otherwise they return `RemoteError::Tls`, whose message says what to fix."
#[test]
fn tls_settings_from_garbage_pem_is_a_tls_error() {
    let error = TlsSettings::from_pem(b"not pem", b"not pem", b"not pem").unwrap_err();
    assert!(matches!(error, RemoteError::Tls { .. }), "{error:?}");
    assert!(error.to_string().contains("PEM"), "{error}");
}

#[message(remote = "docs8.note.v1")]
pub struct Note(pub u64);

#[message(remote = "docs8.pong.v1")]
#[derive(Debug)]
pub struct Pong(pub u64);

#[message(remote = "docs8.ping.v1", reply = Pong)]
pub struct Ping;

#[derive(Clone)]
pub struct Echo;

#[actor]
impl Echo {
    fn ping(&mut self, _: Ping) -> Pong {
        Pong(1)
    }
    fn note(&mut self, _: Note) {}
}

// remoting.md, Security: "a port nobody listens on fails at once" (the dead letter is
// `Unreachable`; not after the 5 s handshake timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tell_to_a_port_nobody_listens_on_is_dead_lettered_unreachable_at_once() {
    let system = ActorSystem::builder("dialer")
        .remote(RemoteSettings::loopback())
        .build()
        .unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let uri = format!("tapio://nobody@127.0.0.1:{port}/user/sink");
    let remote = system.resolve::<Note>(&uri).unwrap();
    remote.tell(Note(1));
    let letter = tokio::time::timeout(Duration::from_secs(2), letters.recv())
        .await
        .expect("at once, not after the handshake timeout")
        .unwrap();
    assert!(
        matches!(letter.reason(), DeadLetterReason::Unreachable { .. }),
        "{letter}"
    );
    within("terminate", system.terminate()).await;
}

// remoting.md, Failure model: "A system that stops tells its peers. Their watchers
// hear `Terminated` at once, not after the detector's window"; table: an ask to an
// actor that is gone: "`Unreachable`, at once, once its system was ... stopped"; "refs
// resolved before then dead-letter (`SessionEnded`)".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_peer_is_heard_at_once_and_its_refs_refuse() {
    let nodes = two_nodes(RemoteSettings::loopback()).unwrap();
    let echo = nodes.b.spawn(Echo, "echo").unwrap();
    let remote = nodes.a.resolve::<EchoMsg>(&echo.path().to_uri()).unwrap();
    let pong = within("remote ask", remote.ask(Ping).timeout(WAIT))
        .await
        .unwrap();
    assert_eq!(pong.0, 1);
    let mut probe = TestProbe::<u64>::new(&nodes.a);
    probe.watch(&remote);
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    within("terminate b", nodes.b.terminate()).await;
    probe
        .expect_terminated(&remote, Duration::from_secs(3))
        .await;

    let answer = tokio::time::timeout(SECOND, remote.ask(Ping).timeout(Duration::from_secs(30)))
        .await
        .expect("refused at once");
    assert!(
        matches!(answer, Err(AskError::Unreachable { .. })),
        "{answer:?}"
    );

    remote.tell(Note(2));
    let letter = loop {
        let letter = next_letter(&mut letters).await;
        if letter.short_message_type() == "Note" {
            break letter;
        }
    };
    assert!(
        matches!(letter.reason(), DeadLetterReason::SessionEnded { .. }),
        "{letter}"
    );
    within("terminate", nodes.terminate()).await;
}
