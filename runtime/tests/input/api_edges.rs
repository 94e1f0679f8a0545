//! Bad input and errors across the public API, held to `docs/semantics.md` and the
//! public docs: every entry point that takes user input at its edges (zero, empty, huge,
//! duplicates, names, paths and URIs that cannot be), calls after the system has
//! terminated or on an actor that has stopped, from inside an actor as well as from
//! outside, and a second call where one is expected. The standard held to: bad input
//! from a user gets a typed error whose message says what to do; nothing a caller
//! passes makes library code panic (unless its docs say `# Panics` for exactly that)
//! or hang.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::nodes::{closed_port, remote_error};
use crate::support::outside::letter_where;
use crate::support::outside::ms;
use crate::support::outside::{panic_text, pass_two_centuries};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::spawn::{RemoteSpawnError, SpawnFailure, Spawner};
use tapio::remote::{LinkError, RemoteError, RemoteSettings};
use tapio::router::RouterError;
use tapio::testkit::{BehaviorTestKit, LinkDirection, TestConfig, TestInbox, TestProbe, two_nodes};
use tapio::wire::WireLimits;
use tapio::{
    Address, AskError, DeadLetter, DeadLetterReason, IntoBehavior, InvalidMailbox, InvalidStrategy,
    MailboxConfig, NotAChild, NotTopLevel, OverflowStrategy, SpawnError, SystemError, ZeroInterval,
    remote_behavior,
};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::{Instant, timeout};

const T: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("boom: a test failure")]
struct Boom;

// ---------------------------------------------------------------------------------
// Shared protocols and behaviors
// ---------------------------------------------------------------------------------

/// A message registered for the wire, so that refs to it resolve.
#[message(remote = "outside-input.note.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note(pub u64);

/// A request registered for the wire, answered with a `Note`.
#[message(remote = "outside-input.ping.v1", reply = Note)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ping(pub u64);

#[derive(Clone, Default)]
pub struct Echo;

#[actor]
impl Echo {
    fn ping(&mut self, Ping(n): Ping) -> Note {
        Note(n)
    }
}

/// What a remote-spawned sink is built with.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct SinkArgs {
    pub tag: u64,
}

#[remote_behavior("outside-input.sink")]
pub fn sink_factory(_args: SinkArgs) -> Behavior<Note> {
    Behaviors::ignore()
}

/// The protocol of a plain echo: it sends the number back to the ref.
type EchoP = (u64, ActorRef<u64>);

fn echo() -> Behavior<EchoP> {
    Behaviors::receive_message(|(n, to): EchoP| to.tell(n)).into()
}

/// Checks that `actor` still answers: it echoes `n` to `probe`.
async fn answers(actor: &ActorRef<EchoP>, probe: &mut TestProbe<u64>, n: u64) {
    actor.tell((n, probe.actor_ref().clone()));
    assert_eq!(
        probe.expect_message(T).await,
        n,
        "{} did not answer",
        actor.path()
    );
}

#[message]
enum Cmd {
    /// Keep the reply ref, answer nothing yet.
    Hold(ActorRef<u64>),
    /// Answer every held reply ref with this number.
    Release(u64),
}

/// Holds reply refs until told to answer them; reports `0` to `held` on each hold.
fn holder(held_to: ActorRef<u64>) -> Behavior<Cmd> {
    Behaviors::setup(move |_| {
        let held: Mutex<Vec<ActorRef<u64>>> = Mutex::new(Vec::new());
        let held_to = held_to.clone();
        Behaviors::receive_message(move |cmd: Cmd| match cmd {
            Cmd::Hold(to) => {
                held.lock().unwrap().push(to);
                held_to.tell(0);
            }
            Cmd::Release(n) => {
                for to in held.lock().unwrap().drain(..) {
                    to.tell(n);
                }
            }
        })
    })
}

/// What a spawn call answered, as text comparable across entry points.
fn outcome<Q: Message>(result: Result<ActorRef<Q>, SpawnError>) -> String {
    match result {
        Ok(_) => "accepted".into(),
        Err(SpawnError::InvalidName(invalid)) => format!("invalid: {invalid}"),
        Err(SpawnError::NameTaken { .. }) => "taken".into(),
        Err(other) => format!("other: {other}"),
    }
}

static PANIC_HOOK: std::sync::Once = std::sync::Once::new();
static PANICS: Mutex<Vec<(std::thread::ThreadId, String)>> = Mutex::new(Vec::new());

/// From now on, record every panic raised on this thread (a current-thread runtime
/// runs every actor, timer and link task of the test here, where a panic in a
/// spawned task is otherwise swallowed), then report it as the default hook does.
fn record_panics_here() {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let location = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let text = format!("{} at {location}", panic_text(info.payload()));
            PANICS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((std::thread::current().id(), text));
            previous(info);
        }));
    });
    let here = std::thread::current().id();
    PANICS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .retain(|(thread, _)| *thread != here);
}

/// Fails if anything panicked on this thread since `record_panics_here`: in a task
/// of the runtime (an actor, a timer, a link), which the test would not see.
fn assert_no_panics_here() {
    let here = std::thread::current().id();
    let panics: Vec<String> = PANICS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .filter(|(thread, _)| *thread == here)
        .map(|(_, text)| text.clone())
        .collect();
    assert!(
        panics.is_empty(),
        "library code panicked in a task: {panics:#?}"
    );
}

/// Words of advice: an error caused by bad input should say what to do instead.
const ADVICE: &[&str] = &[
    "use ", "give ", "pick ", "set ", "ask ", "drop ", "watch ", "build ", "create ", "spawn ",
    "send ", "swap ", "add ", "keep ", "wait ", "call ", "check ", "handle ", "allow ", "choose ",
    "upgrade ", "instead", "at least", "at most", "must ",
];

fn says_what_to_do(message: &str) -> bool {
    let lower = message.to_lowercase();
    ADVICE.iter().any(|word| lower.contains(word))
}

// ---------------------------------------------------------------------------------
// Errors: types and messages
// ---------------------------------------------------------------------------------

/// Autoref specialization: `(&Check::<T>(..)).is_error()` is `true` exactly when `T`
/// is a `std::error::Error + Send + Sync + 'static`, and compiles either way.
struct Check<T>(PhantomData<T>);

trait IsError {
    fn is_error(&self) -> bool {
        true
    }
}
impl<T: std::error::Error + Send + Sync + 'static> IsError for Check<T> {}

trait NotError {
    fn is_error(&self) -> bool {
        false
    }
}
impl<T> NotError for &Check<T> {}

macro_rules! error_checks {
    ($($t:ty),* $(,)?) => {
        vec![$((stringify!($t), (&Check::<$t>(PhantomData)).is_error())),*]
    };
}

// The standard: every error a caller can get back is a `std::error::Error + Send +
// Sync + 'static`, so `?` carries it into a `Box<dyn Error + Send + Sync>`.
// Failed at bc5a14b, fixed since: `tapio::wire::WireProblem` (the error of `deliver_frame` and `encode_frame`) is not a `std::error::Error`.
#[test]
fn input_every_public_error_is_a_std_error_send_sync_static() {
    let checks: Vec<(&str, bool)> = error_checks!(
        tapio::InvalidName,
        tapio::InvalidNameReason,
        tapio::SpawnError,
        tapio::SystemError,
        tapio::NotTopLevel,
        tapio::NotAChild,
        tapio::AskError,
        tapio::BlockingError,
        tapio::Failure,
        tapio::Panicked,
        tapio::InvalidBehavior,
        tapio::RestartWithoutFactory,
        tapio::DeathPact,
        tapio::InvalidMailbox,
        tapio::MailboxOverflow,
        tapio::RouterError,
        tapio::InvalidStash,
        tapio::StashOverflow,
        tapio::InvalidStrategy,
        tapio::ZeroInterval,
        tapio::StateLost,
        tapio::events::CapacityError,
        tapio::remote::RemoteError,
        tapio::remote::LinkError,
        tapio::remote::HandshakeError,
        tapio::wire::ResolveError,
        tapio::wire::RegistryError,
        tapio::wire::WireProblem,
        tapio::remote::spawn::SpawnerError,
        tapio::remote::spawn::SpawnFailure,
        tapio::remote::spawn::RemoteSpawnError,
        tapio::testkit::TestKitError,
    );
    // A sanity check of the check itself (the borrow picks the method, by autoref).
    #[allow(clippy::needless_borrow)]
    let io_error = (&Check::<std::io::Error>(PhantomData)).is_error();
    assert!(io_error);
    assert!(!(&Check::<String>(PhantomData)).is_error());
    let missing: Vec<&str> = checks
        .iter()
        .filter(|(_, ok)| !ok)
        .map(|(name, _)| *name)
        .collect();
    assert!(
        missing.is_empty(),
        "returned as errors but not `std::error::Error + Send + Sync + 'static`: {missing:?}"
    );
}

// The standard: bad input gets a typed error whose message is not empty and says what
// to do. Each error here is what a caller gets back for input of its own.
// Failed at bc5a14b, fixed since: `SpawnError::ParentStopping` and `RemoteError::Unresolvable` say what is wrong, not what to do.
#[tapio::test]
async fn input_errors_for_bad_input_say_what_to_do(system: ActorSystem) {
    let someone = system.spawn(Behaviors::ignore::<u64>(), "someone").unwrap();
    let path = someone.path().clone();
    let mut messages: Vec<(&str, String)> = Vec::new();
    messages.push((
        "spawn, empty name",
        system
            .spawn(Behaviors::ignore::<u64>(), "")
            .unwrap_err()
            .to_string(),
    ));
    messages.push((
        "spawn, name taken",
        system
            .spawn(Behaviors::ignore::<u64>(), "someone")
            .unwrap_err()
            .to_string(),
    ));
    messages.push((
        "spawn, parent stopping",
        SpawnError::ParentStopping {
            parent: path.clone(),
        }
        .to_string(),
    ));
    messages.push((
        "system name",
        ActorSystem::new("a b").err().unwrap().to_string(),
    ));
    messages.push((
        "shutdown timeout",
        ActorSystem::builder("zero")
            .shutdown_timeout(Duration::ZERO)
            .build()
            .err()
            .unwrap()
            .to_string(),
    ));
    messages.push((
        "system.stop",
        NotTopLevel {
            target: path.clone(),
            system: "x".into(),
        }
        .to_string(),
    ));
    messages.push((
        "ctx.stop",
        NotAChild {
            target: path.clone(),
            caller: path.clone(),
        }
        .to_string(),
    ));
    messages.push((
        "mailbox 0",
        MailboxConfig::bounded(0, OverflowStrategy::Fail)
            .unwrap_err()
            .to_string(),
    ));
    messages.push((
        "mailbox huge",
        MailboxConfig::bounded(usize::MAX, OverflowStrategy::Fail)
            .unwrap_err()
            .to_string(),
    ));
    messages.push((
        "pool 0",
        Routers::pool(0, Behaviors::ignore::<u64>)
            .err()
            .unwrap()
            .to_string(),
    ));
    messages.push((
        "group empty",
        Routers::group(Vec::<ActorRef<u64>>::new())
            .err()
            .unwrap()
            .to_string(),
    ));
    messages.push((
        "stash 0",
        Behaviors::with_stash(0, |_| Behaviors::ignore::<u64>())
            .unwrap_err()
            .to_string(),
    ));
    messages.push((
        "restart limit 0",
        SupervisorStrategy::restart()
            .with_limit(0, Duration::from_secs(1))
            .unwrap_err()
            .to_string(),
    ));
    messages.push((
        "backoff min > max",
        Backoff::new(ms(2), ms(1), 0.0).unwrap_err().to_string(),
    ));
    messages.push((
        "subscription 0",
        system
            .events()
            .subscribe_with_capacity::<u64>(0)
            .err()
            .unwrap()
            .to_string(),
    ));
    messages.push((
        "subscription huge",
        system
            .events()
            .subscribe_with_capacity::<u64>(usize::MAX)
            .err()
            .unwrap()
            .to_string(),
    ));
    messages.push((
        "unresolvable host",
        ActorSystem::builder("nohost")
            .remote(RemoteSettings::bind("no-such-host.invalid", 0).secret(vec![7; 32]))
            .build()
            .err()
            .unwrap()
            .to_string(),
    ));
    messages.push((
        "ask an adapter",
        AskError::Adapter {
            target: path.clone(),
        }
        .to_string(),
    ));
    messages.push((
        "reconnect without remote",
        system
            .reconnect(&Address::local("elsewhere"))
            .await
            .unwrap_err()
            .to_string(),
    ));
    for (what, message) in &messages {
        assert!(!message.trim().is_empty(), "{what}: an empty message");
    }
    let silent: Vec<String> = messages
        .iter()
        .filter(|(_, message)| !says_what_to_do(message))
        .map(|(what, message)| format!("{what}: {message:?}"))
        .collect();
    assert!(
        silent.is_empty(),
        "bad input answered without saying what to do:\n{}",
        silent.join("\n")
    );
}

// ---------------------------------------------------------------------------------
// Names (S2)
// ---------------------------------------------------------------------------------

#[message]
struct TryNames {
    names: Vec<String>,
    report: ActorRef<Vec<String>>,
}

// S2: one naming rule, whichever call takes the name: `system.spawn`,
// `system.spawn_with`, `ctx.spawn`, `ctx.spawn_with`, the behavior kit's `ctx.spawn`,
// `TestInbox::named`, and a remote spawn request. Each refuses the same names with
// the same message, and takes the same edge names.
#[tapio::test]
async fn s2_every_entry_point_that_takes_a_name_applies_one_rule(system: ActorSystem) {
    record_panics_here();
    let too_long = "a".repeat(tapio::ActorPath::MAX_NAME_LEN + 1);
    let bad: Vec<String> = [
        "", ".", "..", "a/b", "a#b", "a?b", "a b", "a\tb", "a\u{7}b", "\u{e9}", "a%b", "a(b", "$x",
        "a\u{0}b",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain([too_long])
    .collect();
    let good: Vec<String> = ["a.b", "...", "x$", "-", "~"]
        .iter()
        .map(|s| (*s).to_owned())
        .chain(["b".repeat(tapio::ActorPath::MAX_NAME_LEN)])
        .collect();

    // The reference: what `system.spawn` says.
    let expected_bad: Vec<String> = bad
        .iter()
        .map(|name| outcome(system.spawn(Behaviors::ignore::<u64>(), name)))
        .collect();
    for (name, said) in bad.iter().zip(&expected_bad) {
        assert!(said.starts_with("invalid: "), "{name:?}: {said}");
    }
    let bounded = MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap();
    for (name, expected) in bad.iter().zip(&expected_bad) {
        let said = outcome(system.spawn_with(Behaviors::ignore::<u64>(), name, bounded));
        assert_eq!(&said, expected, "system.spawn_with({name:?})");
    }
    for name in &good {
        let said = outcome(system.spawn_with(Behaviors::ignore::<u64>(), name, bounded));
        assert_eq!(said, "accepted", "system.spawn_with({name:?})");
    }

    // Inside an actor: `ctx.spawn`, then `ctx.spawn_with` of the same name.
    let mut reports = TestProbe::<Vec<String>>::new(&system);
    let namer = system
        .spawn(
            Behaviors::receive(move |ctx, message: TryNames| {
                let said = message
                    .names
                    .iter()
                    .map(|name| {
                        let first = outcome(ctx.spawn(Behaviors::ignore::<u64>(), name));
                        let second = outcome(ctx.spawn_with(
                            Behaviors::ignore::<u64>(),
                            name,
                            MailboxConfig::bounded(1, OverflowStrategy::Fail).unwrap(),
                        ));
                        format!("{first} | {second}")
                    })
                    .collect();
                message.report.tell(said);
            }),
            "namer",
        )
        .unwrap();
    namer.tell(TryNames {
        names: bad.clone(),
        report: reports.actor_ref().clone(),
    });
    let said = reports.expect_message(T).await;
    for ((name, expected), said) in bad.iter().zip(&expected_bad).zip(&said) {
        assert_eq!(
            said,
            &format!("{expected} | {expected}"),
            "ctx.spawn({name:?})"
        );
    }
    namer.tell(TryNames {
        names: good.clone(),
        report: reports.actor_ref().clone(),
    });
    let said = reports.expect_message(T).await;
    for (name, said) in good.iter().zip(&said) {
        assert_eq!(said, "accepted | taken", "ctx.spawn({name:?})");
    }

    // The behavior kit's context.
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let (all, kept) = (
        bad.iter().chain(&good).cloned().collect::<Vec<_>>(),
        seen.clone(),
    );
    let _kit = BehaviorTestKit::<u64>::new(Behaviors::setup(move |ctx| {
        for name in &all {
            let said = outcome(ctx.spawn(Behaviors::ignore::<u64>(), name));
            kept.lock().unwrap().push(said);
        }
        Behaviors::ignore::<u64>()
    }));
    let kit_said = seen.lock().unwrap().clone();
    let expected_all: Vec<String> = expected_bad
        .iter()
        .cloned()
        .chain(good.iter().map(|_| "accepted".to_owned()))
        .collect();
    assert_eq!(kit_said, expected_all, "the behavior kit's ctx.spawn");

    // `TestInbox::named`.
    for (name, expected) in bad.iter().zip(&expected_bad) {
        match TestInbox::<u64>::named(name) {
            Err(invalid) => assert_eq!(&format!("invalid: {invalid}"), expected, "{name:?}"),
            Ok(_) => panic!("TestInbox::named({name:?}) was accepted"),
        }
    }
    for name in &good {
        assert!(
            TestInbox::<u64>::named(name).is_ok(),
            "TestInbox::named({name:?})"
        );
    }

    // A remote spawn request: the spawner answers `InvalidName` with the same text.
    let spawner = system
        .spawn(
            Spawner::offering::<sink_factory>().build().unwrap(),
            "spawner",
        )
        .unwrap();
    for (name, expected) in bad.iter().zip(&expected_bad) {
        let answer = timeout(
            T,
            spawner.spawn_remote::<sink_factory>(SinkArgs { tag: 1 }, name),
        )
        .await
        .expect("the spawner answered in time");
        match answer {
            Err(RemoteSpawnError::Refused(SpawnFailure::InvalidName { error, .. })) => {
                assert_eq!(&format!("invalid: {error}"), expected, "{name:?}");
            }
            other => panic!("remote spawn of {name:?}: {other:?}"),
        }
    }
    for name in &good {
        let answer = timeout(
            T,
            spawner.spawn_remote::<sink_factory>(SinkArgs { tag: 2 }, name),
        )
        .await
        .expect("the spawner answered in time");
        assert!(answer.is_ok(), "remote spawn of {name:?}: {answer:?}");
    }
    assert_no_panics_here();
}

// S2: a system's name is the authority of every URI it hands out: names that could
// not stand there are refused with the rule; the edge names that can are taken, and
// the address they give parses back to itself.
#[tokio::test(flavor = "current_thread")]
async fn input_system_names_at_the_edges() {
    for bad in [
        "\u{e4}",
        "a@b",
        "a:b",
        "tapio://x",
        "a\u{0}b",
        " ",
        "a.b",
        "a\nb",
        "\u{202e}x",
        "a/",
        "#",
    ] {
        match ActorSystem::new(bad) {
            Err(SystemError::InvalidName { name }) => assert_eq!(name, bad),
            Err(other) => panic!("{bad:?}: {other}"),
            Ok(system) => {
                system.terminate().await;
                panic!("{bad:?} was accepted as a system name");
            }
        }
        // The name is checked before a port is bound.
        let remote = ActorSystem::builder(bad)
            .remote(RemoteSettings::loopback())
            .build();
        assert!(
            matches!(remote, Err(SystemError::InvalidName { .. })),
            "{bad:?}: {:?}",
            remote.as_ref().err()
        );
    }
    let long = "n".repeat(4096);
    for good in ["-", "_", "0", "A-z_9", long.as_str()] {
        let system = ActorSystem::new(good).unwrap_or_else(|e| panic!("{good:?}: {e}"));
        let address = system.address().clone();
        assert_eq!(Address::parse(&address.to_string()), Some(address.clone()));
        assert_eq!(system.name(), good);
        system.terminate().await;
    }
}

// ---------------------------------------------------------------------------------
// The system: after termination, stop, terminate from inside
// ---------------------------------------------------------------------------------

// S1, S31: once a system has terminated (twice, and a third time while awaited),
// every call on it or on a ref it handed out answers at once: spawning says the
// system has terminated and what to do, stopping a stopped actor does nothing, an
// ask fails fast, an offer is refused, a tell is a dead letter, and no probe starts.
#[tokio::test(flavor = "current_thread")]
async fn input_every_call_after_termination_answers_at_once() {
    record_panics_here();
    let system = ActorSystem::new("after").unwrap();
    let echo = system.spawn(echo(), "echo").unwrap();
    let holder = system
        .spawn(
            holder(TestInbox::<u64>::new().actor_ref().clone()),
            "holder",
        )
        .unwrap();
    let (first, second) = (system.terminate(), system.terminate());
    timeout(T, async {
        first.await;
        second.await;
        system.terminate().await;
    })
    .await
    .expect("terminating twice, then once more, ends");
    assert!(timeout(T, system.when_terminated()).await.unwrap().is_ok());
    assert!(system.is_terminating());
    assert_eq!(system.live_actors(), 0);

    let started = Instant::now();
    match system.spawn(Behaviors::ignore::<u64>(), "late") {
        Err(error @ SpawnError::SystemTerminated { .. }) => {
            assert!(error.to_string().contains("create a new system"), "{error}");
        }
        other => panic!("spawn after termination: {}", outcome(other)),
    }
    assert!(matches!(
        system.spawn_anonymous(Behaviors::ignore::<u64>()),
        Err(SpawnError::SystemTerminated { .. })
    ));
    assert!(matches!(
        system.spawn_with(
            Behaviors::ignore::<u64>(),
            "late-bounded",
            MailboxConfig::bounded(4, OverflowStrategy::DropNew).unwrap()
        ),
        Err(SpawnError::SystemTerminated { .. })
    ));
    assert_eq!(
        system.stop(&echo),
        Ok(()),
        "stopping a stopped actor does nothing"
    );
    assert!(matches!(
        TestProbe::<u64>::try_new(&system),
        Err(SpawnError::SystemTerminated { .. })
    ));

    let mut letters = system.events().subscribe::<DeadLetter>();
    let inbox = TestInbox::<u64>::new();
    echo.tell((7, inbox.actor_ref().clone()));
    let letter = letter_where(&mut letters, T, |l| l.recipient() == echo.path()).await;
    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);

    let asked = timeout(T, holder.ask_with(Cmd::Hold).timeout(Duration::MAX))
        .await
        .expect("an ask of a stopped actor answered in time");
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    assert!(
        !timeout(T, echo.offer((8, inbox.actor_ref().clone())))
            .await
            .unwrap()
    );
    assert!(
        !timeout(
            T,
            echo.offer_within((9, inbox.actor_ref().clone()), Duration::MAX)
        )
        .await
        .unwrap()
    );
    let reconnect = timeout(T, system.reconnect(&Address::local("peer")))
        .await
        .expect("reconnect answered in time");
    assert!(
        matches!(
            reconnect,
            Err(LinkError::NotRemote | LinkError::Terminating)
        ),
        "{reconnect:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "calls after termination took {:?}",
        started.elapsed()
    );
    assert_no_panics_here();
}

// S19: `terminate()` called from inside a handler: started from a synchronous one
// without waiting, and awaited in an `async` one, whose future is dropped as its
// actor stops. Neither deadlocks; both actors see `PostStop`, and the awaiting
// handler never runs past its `.await`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_terminate_from_inside_a_handler_does_not_deadlock() {
    for awaited in [false, true] {
        let system = ActorSystem::new("inside").unwrap();
        let log = Arc::new(Mutex::new(Vec::<String>::new()));
        let seen = log.clone();
        let on_stop = move |_: &mut ActorContext<u64>, signal: &Signal| {
            if *signal == Signal::PostStop {
                seen.lock().unwrap().push("post-stop".into());
            }
        };
        let actor = if awaited {
            let after = log.clone();
            system
                .spawn(
                    Behaviors::receive_async(async move |ctx, _: u64| {
                        let done = ctx.system().terminate();
                        done.await;
                        after.lock().unwrap().push("after the await".into());
                    })
                    .on_signal(on_stop),
                    "awaiting",
                )
                .unwrap()
        } else {
            system
                .spawn(
                    Behaviors::receive(|ctx, _: u64| {
                        // Fire and forget: the termination begins when it is asked for.
                        drop(ctx.system().terminate());
                    })
                    .on_signal(on_stop),
                    "starting",
                )
                .unwrap()
        };
        actor.tell(1_u64);
        let ended = timeout(T, system.when_terminated()).await;
        assert!(
            ended.is_ok(),
            "awaited={awaited}: the system did not terminate"
        );
        assert_eq!(
            log.lock().unwrap().clone(),
            ["post-stop"],
            "awaited={awaited}"
        );
        assert_eq!(system.live_actors(), 0);
    }
}

// `system.stop` takes only top-level actors of its own system: a child, a
// grandchild, a message adapter, a probe under `/system`, and an actor of another
// system at the very same path `/user/twin` are refused with `NotTopLevel` (the
// message says to use `ctx.stop`), and each goes on running. A top-level actor may
// stop itself through the system from inside its handler.
#[tapio::test]
async fn input_system_stop_refuses_what_is_not_top_level(system: ActorSystem) {
    record_panics_here();
    let other = ActorSystem::new("elsewhere").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    let (kids_tx, mut kids_rx) = mpsc::unbounded_channel::<ActorRef<EchoP>>();
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel::<ActorRef<String>>();
    let forward = probe.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let grandkids = kids_tx.clone();
                let child = ctx
                    .spawn(
                        Behaviors::setup(move |ctx| {
                            let grandchild = ctx.spawn(echo(), "grandchild").unwrap();
                            let _ = grandkids.send(grandchild);
                            echo()
                        }),
                        "child",
                    )
                    .unwrap();
                let _ = kids_tx.send(child);
                let adapter: ActorRef<String> =
                    ctx.message_adapter(|text: String| text.len() as u64);
                let _ = adapter_tx.send(adapter);
                let forward = forward.clone();
                Behaviors::receive_message(move |n: u64| forward.tell(n))
            }),
            "parent",
        )
        .unwrap();
    let child = timeout(T, kids_rx.recv()).await.unwrap().unwrap();
    let grandchild = timeout(T, kids_rx.recv()).await.unwrap().unwrap();
    let adapter = timeout(T, adapter_rx.recv()).await.unwrap().unwrap();
    let here = system.spawn(echo(), "twin").unwrap();
    let there = other.spawn(echo(), "twin").unwrap();
    assert_eq!(here.path().to_string(), there.path().to_string());
    let stranger_probe = TestProbe::<u64>::new(&system);

    let targets: Vec<(&str, tapio::AnyActorRef)> = vec![
        ("child", child.erase()),
        ("grandchild", grandchild.erase()),
        ("adapter", adapter.erase()),
        ("probe", stranger_probe.actor_ref().erase()),
        ("another system's twin", there.erase()),
    ];
    for (what, target) in &targets {
        match system.stop(target) {
            Err(refusal) => {
                assert_eq!(&refusal.target, target.path(), "{what}");
                assert_eq!(refusal.system, system.name(), "{what}");
                assert!(
                    refusal.to_string().contains("ctx.stop"),
                    "{what}: {refusal}"
                );
            }
            Ok(()) => panic!("system.stop of the {what} ({}) was accepted", target.path()),
        }
    }
    // Everything refused still runs.
    let mut replies = TestProbe::<u64>::new(&system);
    answers(&child, &mut replies, 1).await;
    answers(&grandchild, &mut replies, 2).await;
    answers(&here, &mut replies, 3).await;
    answers(&there, &mut TestProbe::<u64>::new(&other), 4).await;
    adapter.tell("abcde".to_owned());
    assert_eq!(probe.expect_message(T).await, 5);
    probe.watch(&parent);
    probe.expect_no_termination(ms(20)).await;

    // From inside: a top-level actor stops itself through its system.
    let quitter = system
        .spawn(
            Behaviors::receive(|ctx, _: u64| {
                let me = ctx.self_ref().clone();
                ctx.system().stop(&me).unwrap();
            }),
            "quitter",
        )
        .unwrap();
    probe.watch(&quitter);
    quitter.tell(1_u64);
    probe.expect_terminated(&quitter, T).await;
    assert_eq!(system.stop(&quitter), Ok(()), "a second stop does nothing");
    timeout(T, other.terminate()).await.unwrap();
    assert_no_panics_here();
}

#[message]
enum StopWho {
    /// Stop yourself.
    Me(ActorRef<String>),
    /// Stop your child `kid`.
    Kid(ActorRef<String>),
    /// Stop this one.
    This(tapio::AnyActorRef, ActorRef<String>),
}

// `ctx.stop` stops only a live child: itself, its parent, a sibling, a grandchild
// and a child already stopped are refused with `NotAChild` (naming the caller and
// saying what to do instead), and nothing stops.
#[tapio::test]
async fn input_ctx_stop_refuses_self_parent_sibling_grandchild_and_the_dead(system: ActorSystem) {
    record_panics_here();
    let mut probe = TestProbe::<String>::new(&system);
    let mut watcher = TestProbe::<u64>::new(&system);
    let peer = system.spawn(Behaviors::ignore::<u64>(), "peer").unwrap();
    let (boss_tx, mut boss_rx) = mpsc::unbounded_channel::<ActorRef<StopWho>>();
    let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let (grandkid_tx, mut grandkid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let top = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let (boss_tx, kid_tx, grandkid_tx) =
                    (boss_tx.clone(), kid_tx.clone(), grandkid_tx.clone());
                ctx.spawn(
                    Behaviors::setup(move |ctx| {
                        let grandkid_tx = grandkid_tx.clone();
                        let kid = ctx
                            .spawn(
                                Behaviors::setup(move |ctx| {
                                    let grandkid =
                                        ctx.spawn(Behaviors::ignore::<u64>(), "grandkid").unwrap();
                                    let _ = grandkid_tx.send(grandkid);
                                    Behaviors::ignore::<u64>()
                                }),
                                "kid",
                            )
                            .unwrap();
                        let _ = kid_tx.send(kid.clone());
                        let _ = boss_tx.send(ctx.self_ref().clone());
                        Behaviors::receive(move |ctx, who: StopWho| {
                            let (outcome, report) = match who {
                                StopWho::Me(report) => {
                                    let me = ctx.self_ref().clone();
                                    (ctx.stop(&me), report)
                                }
                                StopWho::Kid(report) => (ctx.stop(&kid), report),
                                StopWho::This(target, report) => (ctx.stop(&target), report),
                            };
                            report.tell(match outcome {
                                Ok(()) => "ok".to_owned(),
                                Err(refusal) => format!("refused: {refusal}"),
                            });
                        })
                    }),
                    "boss",
                )
                .unwrap();
                Behaviors::ignore::<u64>()
            }),
            "top",
        )
        .unwrap();
    let boss = timeout(T, boss_rx.recv()).await.unwrap().unwrap();
    let kid = timeout(T, kid_rx.recv()).await.unwrap().unwrap();
    let grandkid = timeout(T, grandkid_rx.recv()).await.unwrap().unwrap();
    for actor in [&top, &peer, &kid, &grandkid] {
        watcher.watch(actor);
    }
    watcher.watch(&boss);
    let to = probe.actor_ref().clone();
    let attempts = vec![
        ("itself", StopWho::Me(to.clone())),
        ("its parent", StopWho::This(top.erase(), to.clone())),
        (
            "a top-level sibling",
            StopWho::This(peer.erase(), to.clone()),
        ),
        (
            "its grandchild",
            StopWho::This(grandkid.erase(), to.clone()),
        ),
    ];
    for (who, attempt) in attempts {
        boss.tell(attempt);
        let said = probe.expect_message(T).await;
        assert!(said.starts_with("refused: "), "ctx.stop of {who}: {said}");
        assert!(
            said.contains("/user/top/boss"),
            "ctx.stop of {who} names the caller: {said}"
        );
        assert!(
            said.contains("send the target a message"),
            "ctx.stop of {who} says what to do: {said}"
        );
    }
    watcher.expect_no_termination(ms(20)).await;
    boss.tell(StopWho::Kid(to.clone()));
    assert_eq!(probe.expect_message(T).await, "ok");
    // The kid stops after its own child: two ends, grandkid first.
    watcher.expect_terminated(&grandkid, T).await;
    watcher.expect_terminated(&kid, T).await;
    boss.tell(StopWho::Kid(to.clone()));
    let again = probe.expect_message(T).await;
    assert!(
        again.starts_with("refused: "),
        "a second stop of a stopped child: {again}"
    );
    watcher.expect_no_termination(ms(20)).await;
    assert_no_panics_here();
}

#[message]
enum Watcher {
    /// Watch it twice, then unwatch it once; unwatch a stranger; watch yourself.
    Fiddle(ActorRef<u64>, ActorRef<u64>),
    Quit,
}

// S18: odd watch calls are harmless: watching twice and unwatching once leaves no
// watch (so no `Terminated`), unwatching an actor never watched does nothing, and an
// actor that watches itself stops cleanly (its `PostStop` runs, its name frees up).
#[tapio::test]
async fn s18_odd_watch_calls_are_harmless(system: ActorSystem) {
    record_panics_here();
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let spawn_watcher = |system: &ActorSystem| {
        let report = report.clone();
        system
            .spawn(
                Behaviors::receive(move |ctx, message: Watcher| match message {
                    Watcher::Fiddle(target, stranger) => {
                        ctx.watch(&target);
                        ctx.watch(&target);
                        ctx.unwatch(&target);
                        ctx.unwatch(&stranger);
                        let me = ctx.self_ref().clone();
                        ctx.watch(&me);
                        Behaviors::same()
                    }
                    Watcher::Quit => Behaviors::stopped(),
                })
                .on_signal(move |_, signal| {
                    report.tell(match signal {
                        Signal::Terminated(end) => format!("terminated {}", end.actor().path()),
                        Signal::PostStop => "post-stop".to_owned(),
                        other => format!("{other:?}"),
                    });
                    Behaviors::same()
                }),
                "watcher",
            )
            .unwrap()
    };
    let watcher = spawn_watcher(&system);
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let stranger = system
        .spawn(Behaviors::ignore::<u64>(), "stranger")
        .unwrap();
    ends.watch(&target);
    ends.watch(&watcher);
    watcher.tell(Watcher::Fiddle(target.clone(), stranger.clone()));
    system.stop(&target).unwrap();
    ends.expect_terminated(&target, T).await;
    probe.expect_no_message(ms(50)).await;
    watcher.tell(Watcher::Quit);
    assert_eq!(probe.expect_message(T).await, "post-stop");
    ends.expect_terminated(&watcher, T).await;
    probe.expect_no_message(ms(50)).await;
    let again = spawn_watcher(&system);
    assert_eq!(again.path(), watcher.path());
    assert_no_panics_here();
}

// From inside a stopping actor: in its `PostStop`, spawning is refused
// (`ParentStopping`, not a panic), timers it starts never fire and are not left
// running (the test's leak check counts them), a watch of itself is harmless, and an
// adapter it makes dead-letters what it is told.
#[tapio::test]
async fn input_calls_from_inside_post_stop_are_refused_or_harmless(system: ActorSystem) {
    record_panics_here();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel::<ActorRef<String>>();
    let actor = system
        .spawn(
            Behaviors::receive_message(|_: u64| ()).on_signal(move |ctx, signal| {
                if *signal == Signal::PostStop {
                    let named = outcome(ctx.spawn(Behaviors::ignore::<u64>(), "late-child"));
                    let anonymous = ctx.spawn_anonymous(Behaviors::ignore::<u64>()).is_err();
                    ctx.timers().start_single_timer("late", 1_u64, ms(1));
                    let rate = ctx.timers().start_fixed_rate("late-rate", 2_u64, ms(1));
                    let adapter: ActorRef<String> =
                        ctx.message_adapter(|text: String| text.len() as u64);
                    let _ = adapter_tx.send(adapter);
                    let me = ctx.self_ref().clone();
                    ctx.watch(&me);
                    report.tell(format!(
                        "{named} | anonymous refused: {anonymous} | rate: {}",
                        rate.is_ok()
                    ));
                }
            }),
            "leaving",
        )
        .unwrap();
    probe.watch(&actor);
    system.stop(&actor).unwrap();
    let said = probe.expect_message(T).await;
    assert!(
        said.starts_with("other: ") && said.contains("is stopping"),
        "spawning from PostStop: {said}"
    );
    assert!(said.contains("anonymous refused: true"), "{said}");
    probe.expect_terminated(&actor, T).await;
    let adapter = timeout(T, adapter_rx.recv()).await.unwrap().unwrap();
    adapter.tell("abc".to_owned());
    let letter = letter_where(&mut letters, T, |l| l.recipient() == adapter.path()).await;
    assert_eq!(letter.take_message::<String>().as_deref(), Some("abc"));
    TestProbe::<u64>::new(&system)
        .expect_no_message(ms(50))
        .await;
    while let Some(letter) = letters.try_recv() {
        assert_ne!(
            letter.recipient(),
            actor.path(),
            "a tick after the stop: {letter}"
        );
    }
    assert_no_panics_here();
}

// ---------------------------------------------------------------------------------
// Mailboxes and offer (S29, S30)
// ---------------------------------------------------------------------------------

// S29: a bound of 0 and bounds above `MAX_CAPACITY` are refused with advice; the
// largest bound is accepted, and an actor spawned with it works (nothing is reserved
// up front).
#[tapio::test]
async fn s29_mailbox_bounds_at_the_edges(system: ActorSystem) {
    record_panics_here();
    let zero = MailboxConfig::bounded(0, OverflowStrategy::DropNew);
    assert_eq!(zero, Err(InvalidMailbox::ZeroCapacity));
    assert!(
        zero.unwrap_err()
            .to_string()
            .contains("MailboxConfig::unbounded()")
    );
    let huge = MailboxConfig::bounded(usize::MAX, OverflowStrategy::DropOldest);
    assert_eq!(
        huge,
        Err(InvalidMailbox::TooLarge {
            capacity: usize::MAX
        })
    );
    assert!(
        huge.unwrap_err()
            .to_string()
            .contains("MailboxConfig::unbounded()")
    );
    if let Some(above) = MailboxConfig::MAX_CAPACITY.checked_add(1) {
        assert_eq!(
            MailboxConfig::bounded(above, OverflowStrategy::Fail),
            Err(InvalidMailbox::TooLarge { capacity: above })
        );
    }
    let largest =
        MailboxConfig::bounded(MailboxConfig::MAX_CAPACITY, OverflowStrategy::Fail).unwrap();
    assert_eq!(largest.capacity(), Some(MailboxConfig::MAX_CAPACITY));
    assert_eq!(MailboxConfig::unbounded().capacity(), None);
    assert_eq!(MailboxConfig::default(), MailboxConfig::unbounded());
    let roomy = system.spawn_with(echo(), "roomy", largest).unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    answers(&roomy, &mut probe, 1).await;
    assert!(
        timeout(T, roomy.offer((2, probe.actor_ref().clone())))
            .await
            .unwrap()
    );
    assert_eq!(probe.expect_message(T).await, 2);
    let one = system
        .spawn_with(
            echo(),
            "one",
            MailboxConfig::bounded(1, OverflowStrategy::DropOldest).unwrap(),
        )
        .unwrap();
    answers(&one, &mut probe, 3).await;
    assert_no_panics_here();
}

/// A sink with a bounded mailbox of one that reports each number, and on `1` first
/// reports `0` and waits for a permit of `gate`.
fn gated(system: &ActorSystem, probe: &TestProbe<u64>, gate: &Arc<Semaphore>) -> ActorRef<u64> {
    let (report, gate) = (probe.actor_ref().clone(), gate.clone());
    system
        .spawn_with(
            Behaviors::receive_message_async(async move |n: u64| {
                if n == 1 {
                    report.tell(0);
                    gate.acquire().await.unwrap().forget();
                }
                report.tell(n);
            }),
            "gated",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap()
}

// S30: `offer_within` a zero deadline into a full mailbox is refused at once (the
// message a dead letter, `OfferTimedOut`); a zero deadline with room is accepted; a
// deadline of `Duration::MAX` waits for room and is accepted; offers to a stopped
// actor are refused at once whatever the deadline.
#[tapio::test]
async fn s30_offer_within_zero_and_duration_max(system: ActorSystem) {
    record_panics_here();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let sink = gated(&system, &probe, &gate);
    sink.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, 0, "the sink holds 1");
    sink.tell(2_u64); // fills the one place
    let started = Instant::now();
    assert!(!sink.offer_within(3_u64, Duration::ZERO).await);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let letter = letter_where(&mut letters, T, |l| l.recipient() == sink.path()).await;
    assert_eq!(letter.reason(), &DeadLetterReason::OfferTimedOut);
    assert_eq!(letter.take_message::<u64>(), Some(3));
    let waiting = {
        let sink = sink.clone();
        tokio::spawn(async move { sink.offer_within(4_u64, Duration::MAX).await })
    };
    gate.add_permits(10);
    assert!(
        timeout(T, waiting)
            .await
            .expect("the offer ended")
            .expect("no panic")
    );
    assert_eq!(probe.receive_messages(3, T).await, [1, 2, 4]);
    assert!(
        timeout(T, sink.offer_within(5_u64, Duration::ZERO))
            .await
            .unwrap()
    );
    assert_eq!(probe.expect_message(T).await, 5);

    probe.watch(&sink);
    system.stop(&sink).unwrap();
    probe.expect_terminated(&sink, T).await;
    let started = Instant::now();
    assert!(!timeout(T, sink.offer(6_u64)).await.unwrap());
    assert!(
        !timeout(T, sink.offer_within(7_u64, Duration::MAX))
            .await
            .unwrap()
    );
    assert!(
        !timeout(T, sink.offer_within(8_u64, Duration::ZERO))
            .await
            .unwrap()
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_no_panics_here();
}

// ---------------------------------------------------------------------------------
// Ask (S21-S23)
// ---------------------------------------------------------------------------------

// S22: an ask with a deadline of zero fails at once with `Timeout` (naming the
// target and the zero deadline), and the answer that comes later is a dead letter
// saying the ask ended.
#[tapio::test(start_paused = true)]
async fn s22_ask_with_a_zero_deadline_times_out_at_once(system: ActorSystem) {
    record_panics_here();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut held = TestProbe::<u64>::new(&system);
    let holder = system
        .spawn(holder(held.actor_ref().clone()), "holder")
        .unwrap();
    let started = Instant::now();
    let asked = timeout(T, holder.ask_with(Cmd::Hold).timeout(Duration::ZERO))
        .await
        .expect("a zero deadline ends the ask");
    match &asked {
        Err(error @ AskError::Timeout { target, after }) => {
            assert_eq!(target, holder.path());
            assert_eq!(*after, Duration::ZERO);
            assert!(error.to_string().contains("did not answer"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < ms(100), "{:?}", started.elapsed());
    assert_eq!(held.expect_message(T).await, 0, "the request arrived");
    holder.tell(Cmd::Release(9));
    let letter = letter_where(&mut letters, T, |l| {
        l.reason() == &DeadLetterReason::AskEnded
    })
    .await;
    assert_eq!(letter.take_message::<u64>(), Some(9));

    // An actor that answers at once, asked with a zero deadline: an answer or a
    // timeout, never a panic or a hang.
    let echo = system.spawn(echo(), "echo").unwrap();
    let quick = timeout(T, echo.ask_with(|to| (5_u64, to)).timeout(Duration::ZERO))
        .await
        .expect("no hang");
    assert!(
        matches!(quick, Ok(5) | Err(AskError::Timeout { .. })),
        "{quick:?}"
    );
    assert_no_panics_here();
}

// S22, S23: an ask with a deadline of `Duration::MAX` (past the end of the clock)
// waits as long as it takes: it gets the answer when it comes, and fails fast with
// `TargetTerminated` when the target stops first.
// Failed at bc5a14b, fixed since: `Ask::wait_slow` (ask.rs) resets its sleep to `start + timeout` unchecked: the awaiting task panics.
#[tapio::test(start_paused = true)]
async fn s22_s23_ask_with_duration_max_ends_by_answer_or_by_stop(system: ActorSystem) {
    let mut held = TestProbe::<u64>::new(&system);
    let holder = system
        .spawn(holder(held.actor_ref().clone()), "holder")
        .unwrap();
    let ask = holder.ask_with(Cmd::Hold).timeout(Duration::MAX);
    let waiting = tokio::spawn(async move { ask.await });
    assert_eq!(held.expect_message(T).await, 0);
    // Long enough (virtual time) for the ask to arm its deadline and watch its target.
    tokio::time::sleep(ms(50)).await;
    holder.tell(Cmd::Release(7));
    let answer = timeout(T, waiting)
        .await
        .expect("answered")
        .expect("no panic");
    assert_eq!(answer, Ok(7));

    let ask = holder.ask_with(Cmd::Hold).timeout(Duration::MAX);
    let waiting = tokio::spawn(async move { ask.await });
    assert_eq!(held.expect_message(T).await, 0);
    tokio::time::sleep(ms(50)).await;
    system.stop(&holder).unwrap();
    let answer = timeout(T, waiting).await.expect("ended").expect("no panic");
    assert!(
        matches!(answer, Err(AskError::TargetTerminated { .. })),
        "{answer:?}"
    );
}

#[message]
enum Selfish {
    Go(ActorRef<String>),
    Query(ActorRef<u64>),
}

// S21/S22 from inside: an `async` handler that asks its own actor cannot be answered
// while it waits; the ask ends at its deadline with `Timeout` (not a hang), the actor
// goes on, and the question, handled afterwards, answers into a dead letter.
#[tapio::test(start_paused = true)]
async fn s22_an_actor_asking_itself_times_out_and_goes_on(system: ActorSystem) {
    record_panics_here();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let narcissist = system
        .spawn(
            Behaviors::receive_async(async move |ctx, message: Selfish| match message {
                Selfish::Go(report) => {
                    let me = ctx.self_ref().clone();
                    let asked = me.ask_with(Selfish::Query).timeout(ms(100)).await;
                    report.tell(match asked {
                        Err(AskError::Timeout { .. }) => "timeout".to_owned(),
                        other => format!("{other:?}"),
                    });
                }
                Selfish::Query(to) => to.tell(42),
            }),
            "narcissist",
        )
        .unwrap();
    narcissist.tell(Selfish::Go(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(T).await, "timeout");
    let letter = letter_where(&mut letters, T, |l| {
        l.reason() == &DeadLetterReason::AskEnded
    })
    .await;
    assert_eq!(letter.take_message::<u64>(), Some(42));
    let asked = timeout(T, narcissist.ask_with(Selfish::Query).timeout(T))
        .await
        .unwrap();
    assert_eq!(asked, Ok(42));
    assert_no_panics_here();
}

// ---------------------------------------------------------------------------------

// Timers (S24, S25)
// ---------------------------------------------------------------------------------

#[message]
#[derive(Clone)]
enum Tick {
    Fire(&'static str),
    State(ActorRef<String>),
    Zero(ActorRef<String>),
}

// S25: timers of `Duration::MAX` (single, fixed-delay, fixed-rate) are accepted, run
// (`is_active`), never fire (two centuries of paused time on), and break nothing: the
// actor answers, and a stop ends them (the test's leak check counts running timers).
// Failed at bc5a14b, fixed since: `Timer::arm` (timer.rs) computes `Instant::now() + every` unchecked for fixed-rate and fixed-delay timers: their tasks panic, silently.
#[tapio::test(start_paused = true)]
async fn s25_timers_of_duration_max_never_fire_and_break_nothing(system: ActorSystem) {
    record_panics_here();
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_single_timer("single", Tick::Fire("single"), Duration::MAX);
                timers
                    .start_fixed_delay("delay", Tick::Fire("delay"), Duration::MAX)
                    .unwrap();
                timers
                    .start_fixed_rate("rate", Tick::Fire("rate"), Duration::MAX)
                    .unwrap();
                let (report, timers) = (report.clone(), timers.clone());
                Behaviors::receive_message(move |tick: Tick| match tick {
                    Tick::Fire(what) => report.tell(what.to_owned()),
                    Tick::State(to) | Tick::Zero(to) => to.tell(format!(
                        "{} {} {}",
                        timers.is_active("single"),
                        timers.is_active("delay"),
                        timers.is_active("rate")
                    )),
                })
            }),
            "patient",
        )
        .unwrap();
    let mut state = TestProbe::<String>::new(&system);
    actor.tell(Tick::State(state.actor_ref().clone()));
    assert_eq!(state.expect_message(T).await, "true true true");
    pass_two_centuries().await;
    probe.expect_no_message(ms(10)).await;
    actor.tell(Tick::State(state.actor_ref().clone()));
    assert_eq!(state.expect_message(T).await, "true true true");
    let mut ends = TestProbe::<u64>::new(&system);
    ends.watch(&actor);
    system.stop(&actor).unwrap();
    ends.expect_terminated(&actor, T).await;
    assert_no_panics_here();
}

// S25: a repeating timer refused for a zero interval starts nothing and leaves the
// timer already running under that key alone; the refusal names the key as the
// user wrote it.
// Failed at bc5a14b, fixed since: `ZeroInterval`'s message prints the key as `TimerKey("k")` (its Debug form).
#[tapio::test(start_paused = true)]
async fn s25_a_refused_zero_interval_leaves_the_running_timer_alone(system: ActorSystem) {
    let mut ticks = TestProbe::<String>::new(&system);
    let report = ticks.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers
                    .start_fixed_rate("k", Tick::Fire("rate"), ms(100))
                    .unwrap();
                let (report, timers) = (report.clone(), timers.clone());
                Behaviors::receive_message(move |tick: Tick| match tick {
                    Tick::Fire(what) => report.tell(what.to_owned()),
                    Tick::Zero(to) => {
                        let rate = timers.start_fixed_rate("k", Tick::Fire("zero"), Duration::ZERO);
                        let delay =
                            timers.start_fixed_delay("k", Tick::Fire("zero"), Duration::ZERO);
                        let said = |r: Result<(), ZeroInterval>| match r {
                            Ok(()) => "started".to_owned(),
                            Err(refusal) => refusal.to_string(),
                        };
                        to.tell(format!(
                            "{} | {} | {}",
                            said(rate),
                            said(delay),
                            timers.is_active("k")
                        ));
                    }
                    Tick::State(_) => {}
                })
            }),
            "ticking",
        )
        .unwrap();
    assert_eq!(ticks.expect_message(T).await, "rate");
    let mut state = TestProbe::<String>::new(&system);
    actor.tell(Tick::Zero(state.actor_ref().clone()));
    let said = state.expect_message(T).await;
    let parts: Vec<&str> = said.split(" | ").collect();
    assert_eq!(parts.len(), 3, "{said}");
    for refusal in &parts[..2] {
        assert!(refusal.contains("non-zero interval"), "{said}");
        assert!(
            refusal.contains("timer \"k\"") && !refusal.contains("TimerKey("),
            "the refusal names the key as written: {refusal}"
        );
    }
    assert_eq!(parts[2], "true", "the running timer is still active");
    for _ in 0..3 {
        assert_eq!(ticks.expect_message(T).await, "rate");
    }
}

// S25: a single timer of zero fires once, soon; keys may be empty or long, and a key
// of one timer is free again once it has fired.
#[tapio::test(start_paused = true)]
async fn s25_a_zero_single_timer_fires_once_and_any_key_works(system: ActorSystem) {
    record_panics_here();
    let mut ticks = TestProbe::<String>::new(&system);
    let report = ticks.actor_ref().clone();
    let long_key = "k".repeat(10_000);
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_single_timer("", Tick::Fire("empty"), Duration::ZERO);
                timers.start_single_timer(long_key.clone(), Tick::Fire("long"), ms(1));
                let (report, timers, long_key) = (report.clone(), timers.clone(), long_key.clone());
                Behaviors::receive_message(move |tick: Tick| match tick {
                    Tick::Fire(what) => report.tell(what.to_owned()),
                    Tick::State(to) | Tick::Zero(to) => to.tell(format!(
                        "{} {}",
                        timers.is_active(""),
                        timers.is_active(long_key.clone())
                    )),
                })
            }),
            "keys",
        )
        .unwrap();
    let mut got = ticks.receive_messages(2, T).await;
    got.sort();
    assert_eq!(got, ["empty", "long"]);
    ticks.expect_no_message(Duration::from_secs(1)).await;
    let mut state = TestProbe::<String>::new(&system);
    actor.tell(Tick::State(state.actor_ref().clone()));
    assert_eq!(state.expect_message(T).await, "false false");
    assert_no_panics_here();
}

// S25: the scheduler is cheap to clone and every clone reaches the same timers: one
// taken out of the actor starts and cancels its timers from the test's task, and
// from a plain thread outside any runtime, without panicking.
#[tapio::test(worker_threads = 2)]
async fn s25_a_scheduler_used_from_outside_the_actor_reaches_it(system: ActorSystem) {
    let mut ticks = TestProbe::<String>::new(&system);
    let report = ticks.actor_ref().clone();
    let (tx, mut rx) = mpsc::unbounded_channel::<tapio::TimerScheduler<Tick>>();
    let _actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                let _ = tx.send(timers.clone());
                let report = report.clone();
                Behaviors::receive_message(move |tick: Tick| {
                    if let Tick::Fire(what) = tick {
                        report.tell(what.to_owned());
                    }
                })
            }),
            "remote-controlled",
        )
        .unwrap();
    let timers = timeout(T, rx.recv()).await.unwrap().unwrap();
    timers.start_single_timer("task", Tick::Fire("from the task"), ms(5));
    assert_eq!(ticks.expect_message(T).await, "from the task");
    timers
        .start_fixed_rate("rate", Tick::Fire("rate"), ms(5))
        .unwrap();
    assert_eq!(ticks.expect_message(T).await, "rate");
    timers.cancel("rate");
    assert!(!timers.is_active("rate"));
    // Drain what was queued before the cancel (a cancelled timer's queued tick is
    // dropped unseen, so nothing more should come).
    ticks.expect_no_message(ms(100)).await;
    let from_thread = timers.clone();
    let joined = std::thread::spawn(move || {
        from_thread.start_single_timer("thread", Tick::Fire("from a thread"), ms(5));
    })
    .join();
    assert!(
        joined.is_ok(),
        "starting a timer from a thread outside the runtime panicked: {}",
        joined
            .map_err(|p| panic_text(&*p))
            .err()
            .unwrap_or_default()
    );
    assert_eq!(ticks.expect_message(T).await, "from a thread");
}

// ---------------------------------------------------------------------------------
// Stash (S26, S27, S31)
// ---------------------------------------------------------------------------------

// S26: a stash capacity of `usize::MAX` is not refused, and nothing is reserved for
// it: the actor stashes and replays as with any capacity.
#[tapio::test]
async fn s26_a_huge_stash_capacity_reserves_nothing(system: ActorSystem) {
    record_panics_here();
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let gate = Behaviors::with_stash(usize::MAX, move |stash| {
        let report = report.clone();
        Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                let report = report.clone();
                report.tell(u64::from(stash.is_full()));
                return Ok(stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                    report.tell(n);
                })));
            }
            stash.stash(n).map(|()| Behaviors::same())
        })
    })
    .unwrap();
    let actor = system.spawn(gate, "huge-stash").unwrap();
    for n in 1..=3_u64 {
        actor.tell(n);
    }
    actor.tell(0_u64);
    assert_eq!(probe.receive_messages(4, T).await, [0, 1, 2, 3]);
    assert_no_panics_here();
}

// S31: a stash kept after its actor stopped (a clone taken out of the actor) never
// swallows a message: what is stashed into it then ends as a dead letter naming the
// actor, at the latest when the clone is dropped.
#[tapio::test]
async fn s31_a_stash_kept_after_its_actor_stopped_loses_nothing_silently(system: ActorSystem) {
    record_panics_here();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let (tx, mut rx) = mpsc::unbounded_channel::<tapio::StashBuffer<u64>>();
    let actor = system
        .spawn(
            Behaviors::with_stash(4, move |stash| {
                let _ = tx.send(stash.clone());
                Behaviors::ignore::<u64>()
            })
            .unwrap(),
            "stasher",
        )
        .unwrap();
    let stash = timeout(T, rx.recv()).await.unwrap().unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&actor);
    system.stop(&actor).unwrap();
    probe.expect_terminated(&actor, T).await;
    let _ = stash.stash(5_u64);
    drop(stash);
    let letter = letter_where(&mut letters, T, |l| l.recipient() == actor.path()).await;
    assert_eq!(letter.take_message::<u64>(), Some(5), "{letter}");
    assert_no_panics_here();
}

// ---------------------------------------------------------------------------------
// Routers (S32)
// ---------------------------------------------------------------------------------

/// A routee that reports `"{its name} {n}"`.
fn named_routee(report: ActorRef<String>) -> Behavior<u64> {
    Behaviors::receive(move |ctx, n: u64| report.tell(format!("{} {n}", ctx.path().name()))).into()
}

// S32: a pool of `usize::MAX` routees (or a resize to it) would spawn until memory
// runs out: bad input, refused with a typed error before anything is spawned, as a
// pool of 0 is.
// Failed at bc5a14b, fixed since: `Routers::pool` and `PoolHandle::resize` take any size but 0; no upper bound.
#[test]
fn s32_a_pool_of_absurd_size_is_refused_before_anything_spawns() {
    let pool = Routers::pool(usize::MAX, Behaviors::ignore::<u64>);
    assert!(
        pool.is_err(),
        "Routers::pool(usize::MAX, ..) was accepted: spawning it would start routees until memory runs out"
    );
    // Before its router starts, a resize sets the size it starts with.
    let pool = Routers::pool(1, Behaviors::ignore::<u64>).unwrap();
    let handle = pool.handle();
    let resized = handle.resize(usize::MAX);
    assert!(
        resized.is_err(),
        "PoolHandle::resize(usize::MAX) was accepted: the router would start that many routees"
    );
    drop(pool); // never spawned
}

// S32: a resize to 0 is refused with advice, and the pool runs on unchanged.
#[tapio::test]
async fn s32_a_resize_to_zero_is_refused_and_the_pool_runs_on(system: ActorSystem) {
    record_panics_here();
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let pool = Routers::pool(2, move || named_routee(report.clone())).unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "workers").unwrap();
    let refusal = handle.resize(0).unwrap_err();
    assert_eq!(refusal, RouterError::EmptyPool);
    assert!(refusal.to_string().contains("stop the router"), "{refusal}");
    for n in 1..=4_u64 {
        router.tell(n);
    }
    let mut got = probe.receive_messages(4, T).await;
    got.sort();
    assert_eq!(
        got,
        ["routee-1 1", "routee-1 3", "routee-2 2", "routee-2 4"]
    );
    assert_eq!(handle.routees().len(), 2);
    assert_eq!(handle.router(), Some(router));
    assert_no_panics_here();
}

// S32: one pool recipe spawned a second time while its first router runs: the second
// router fails to start (`PoolAlreadyRunning`) and stops; the first is untouched.
#[tapio::test]
async fn s32_one_pool_recipe_spawned_twice_fails_only_the_second(system: ActorSystem) {
    record_panics_here();
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let pool = Routers::pool(1, move || named_routee(report.clone())).unwrap();
    let handle = pool.handle();
    let recipe: Behavior<u64> = pool.into_behavior();
    let first = system.spawn(recipe.clone(), "first").unwrap();
    first.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, "routee-1 1");
    let second = system.spawn(recipe, "second").unwrap();
    ends.watch(&second);
    ends.watch(&first);
    ends.expect_terminated(&second, T).await;
    first.tell(2_u64);
    assert_eq!(probe.expect_message(T).await, "routee-1 2");
    ends.expect_no_termination(ms(20)).await;
    assert_eq!(handle.router(), Some(first));
    assert_eq!(handle.routees().len(), 1);
    assert_no_panics_here();
}

// S32: a group given the same ref twice counts it once; a group of refs that have
// all stopped stops at once, and what it is told afterwards is a dead letter.
#[tapio::test]
async fn s32_a_group_of_duplicates_and_of_the_dead(system: ActorSystem) {
    record_panics_here();
    let mut probe = TestProbe::<String>::new(&system);
    let a = system
        .spawn(named_routee(probe.actor_ref().clone()), "a")
        .unwrap();
    let b = system
        .spawn(named_routee(probe.actor_ref().clone()), "b")
        .unwrap();
    let group =
        Routers::group(vec![a.clone(), a.clone(), b.clone(), b.clone(), a.clone()]).unwrap();
    let router = system.spawn(group, "pair").unwrap();
    for n in 1..=4_u64 {
        router.tell(n);
    }
    let mut got = probe.receive_messages(4, T).await;
    got.sort();
    assert_eq!(got, ["a 1", "a 3", "b 2", "b 4"]);

    let mut ends = TestProbe::<u64>::new(&system);
    let dead = system.spawn(Behaviors::ignore::<u64>(), "dead").unwrap();
    ends.watch(&dead);
    system.stop(&dead).unwrap();
    ends.expect_terminated(&dead, T).await;
    let ghosts = system
        .spawn(
            Routers::group(vec![dead.clone(), dead.clone()]).unwrap(),
            "ghosts",
        )
        .unwrap();
    ends.watch(&ghosts);
    ends.expect_terminated(&ghosts, T).await;
    let mut letters = system.events().subscribe::<DeadLetter>();
    ghosts.tell(9_u64);
    let letter = letter_where(&mut letters, T, |l| l.recipient() == ghosts.path()).await;
    assert_eq!(letter.take_message::<u64>(), Some(9));
    assert_no_panics_here();
}

// S9, S32: a consistent-hash key function that panics fails the router (it stops,
// by default), never the caller of `tell`; the rest of the system runs on.
#[tapio::test]
async fn s32_a_panicking_hash_key_fails_the_router_not_the_sender(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let pool = Routers::pool(2, move || named_routee(report.clone()))
        .unwrap()
        .consistent_hash(|n: &u64| {
            assert!(*n != 13, "the key function refuses 13");
            *n
        });
    let router = system.spawn(pool, "hashed").unwrap();
    ends.watch(&router);
    router.tell(1_u64);
    assert!(probe.expect_message(T).await.ends_with(" 1"));
    router.tell(13_u64);
    ends.expect_terminated(&router, T).await;
    let after = system.spawn(echo(), "after").unwrap();
    answers(&after, &mut TestProbe::<u64>::new(&system), 1).await;
}

// ---------------------------------------------------------------------------------
// Supervision (S11-S13)
// ---------------------------------------------------------------------------------

// S12: strategy values out of range are refused with a message saying what to do;
// the edges that make sense are accepted, and a backoff's delay never panics.
#[test]
fn s12_strategy_values_out_of_range_are_refused() {
    let second = Duration::from_secs(1);
    let restart = SupervisorStrategy::restart();
    assert!(matches!(
        restart.clone().with_limit(0, second),
        Err(InvalidStrategy::NoRestarts)
    ));
    assert!(matches!(
        restart.clone().with_limit(1, Duration::ZERO),
        Err(InvalidStrategy::ZeroWindow)
    ));
    let widest = restart.clone().with_limit(u32::MAX, Duration::MAX).unwrap();
    assert_eq!(
        (widest.max_restarts(), widest.window()),
        (u32::MAX, Duration::MAX)
    );
    assert!(matches!(
        Backoff::new(Duration::ZERO, second, 0.0),
        Err(InvalidStrategy::ZeroMinBackoff)
    ));
    let swapped = Backoff::new(ms(2), ms(1), 0.0).unwrap_err();
    assert!(matches!(swapped, InvalidStrategy::MinAboveMax { .. }));
    assert!(swapped.to_string().contains("swap them"), "{swapped}");
    for factor in [
        f64::NAN,
        -0.5,
        1.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -f64::MIN_POSITIVE,
    ] {
        match Backoff::new(ms(1), second, factor) {
            Err(refusal @ InvalidStrategy::RandomFactorOutOfRange { .. }) => {
                assert!(refusal.to_string().contains("0.0"), "{refusal}");
            }
            other => panic!("random factor {factor}: {other:?}"),
        }
    }
    for factor in [0.0, -0.0, 1.0] {
        assert!(
            Backoff::new(ms(1), second, factor).is_ok(),
            "random factor {factor}"
        );
    }
    let longest = Backoff::new(Duration::MAX, Duration::MAX, 1.0).unwrap();
    for (attempt, random) in [
        (0, 0.0),
        (u32::MAX, 1.0),
        (7, f64::NAN),
        (1, -3.0),
        (2, 9.0),
    ] {
        assert!(longest.delay(attempt, random) >= Duration::MAX / 2);
    }
    let shortest = Backoff::new(Duration::from_nanos(1), Duration::MAX, 1.0).unwrap();
    assert!(shortest.delay(u32::MAX, 1.0) >= Duration::from_nanos(1));
}

// S12: a restart window of `Duration::MAX` counts every restart: two allowed, the
// third failure stops the actor.
#[tapio::test(start_paused = true)]
async fn s12_a_restart_window_of_duration_max_counts_every_restart(system: ActorSystem) {
    record_panics_here();
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let strategy = SupervisorStrategy::restart()
        .with_limit(2, Duration::MAX)
        .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| {
                report.tell(0);
                Behaviors::receive_message(|_: u64| Err::<(), _>(Boom))
            }))
            .on_failure::<Boom>(strategy),
            "forever-counted",
        )
        .unwrap();
    probe.watch(&actor);
    assert_eq!(probe.expect_message(T).await, 0);
    for _ in 0..2 {
        actor.tell(1_u64);
        assert_eq!(probe.expect_message(T).await, 0, "restarted");
    }
    actor.tell(1_u64);
    probe.expect_terminated(&actor, T).await;
    assert_no_panics_here();
}

// S13: a backoff of `Duration::MAX` (with the largest jitter) keeps the actor absent,
// not dead: tells are taken, no restart comes in two (virtual) centuries, nobody hears
// `Terminated`; a stop still ends it at once, and what it held becomes dead letters.
// Failed at bc5a14b, fixed since: `History::restart` (supervision.rs) adds the backoff to `Instant::now()` unchecked: the actor's task panics and it stops.
#[tapio::test(start_paused = true)]
async fn s13_a_backoff_of_duration_max_stays_absent_and_a_stop_is_prompt(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let strategy = SupervisorStrategy::restart()
        .with_backoff(Backoff::new(Duration::MAX, Duration::MAX, 1.0).unwrap());
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_| {
                report.tell(0);
                let report = report.clone();
                Behaviors::receive_message(move |n: u64| {
                    if n == 1 {
                        return Err(Boom);
                    }
                    report.tell(n);
                    Ok(Behaviors::same())
                })
            }))
            .on_failure::<Boom>(strategy),
            "sleeper",
        )
        .unwrap();
    probe.watch(&actor);
    assert_eq!(probe.expect_message(T).await, 0);
    actor.tell(1_u64);
    actor.tell(5_u64);
    pass_two_centuries().await;
    probe.expect_no_message(ms(10)).await;
    probe.expect_no_termination(ms(10)).await;
    assert!(
        letters.try_recv().is_none(),
        "a tell to a backing-off actor was refused"
    );
    system.stop(&actor).unwrap();
    probe.expect_terminated(&actor, T).await;
    let letter = letter_where(&mut letters, T, |l| l.recipient() == actor.path()).await;
    assert_eq!(letter.take_message::<u64>(), Some(5));
}

// ---------------------------------------------------------------------------------
// Remoting (S36, S38, S42, S43, S45)
// ---------------------------------------------------------------------------------

fn build_remote(settings: RemoteSettings) -> Result<ActorSystem, SystemError> {
    ActorSystem::builder("edges").remote(settings).build()
}

// S38: remote settings at their edges are refused when the system is built, each
// with its own error: a zero heartbeat, a heartbeat not under the failure window
// (equal, above, or a zero window), a zero handshake timeout, an empty or short
// secret, a host that does not resolve, a port already taken. A secret of exactly
// the minimum is taken.
#[tokio::test(flavor = "current_thread")]
async fn s38_remote_settings_at_their_edges_are_refused_when_built() {
    let second = Duration::from_secs(1);
    for (heartbeat, window) in [
        (Duration::ZERO, second),
        (second, second),
        (2 * second, second),
        (second, Duration::ZERO),
        (Duration::MAX, Duration::MAX),
    ] {
        let error = remote_error(build_remote(
            RemoteSettings::loopback()
                .heartbeat_interval(heartbeat)
                .unreachable_after(window),
        ));
        assert!(
            matches!(error, RemoteError::Timing { .. }),
            "heartbeat {heartbeat:?}, window {window:?}: {error}"
        );
        assert!(error.to_string().contains("unreachable_after"), "{error}");
    }
    let error = remote_error(build_remote(
        RemoteSettings::loopback().handshake_timeout(Duration::ZERO),
    ));
    assert_eq!(error, RemoteError::HandshakeTimeout);
    for len in [0, 1, tapio::remote::MIN_SECRET_LEN - 1] {
        let error = remote_error(build_remote(
            RemoteSettings::loopback().secret(vec![1; len]),
        ));
        assert_eq!(error, RemoteError::SecretTooShort { len });
    }
    let fine =
        build_remote(RemoteSettings::loopback().secret(vec![1; tapio::remote::MIN_SECRET_LEN]))
            .unwrap();
    fine.terminate().await;
    for host in [
        "",
        "no-such-host.invalid",
        "256.256.256.256",
        "127.0.0.1:80",
    ] {
        let error = remote_error(build_remote(
            RemoteSettings::bind(host, 0).secret(vec![1; 32]),
        ));
        assert!(
            matches!(error, RemoteError::Unresolvable { .. }),
            "host {host:?}: {error}"
        );
    }
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let error = remote_error(build_remote(RemoteSettings::bind("127.0.0.1", port)));
    assert!(matches!(error, RemoteError::Bind { .. }), "{error}");
    assert!(error.to_string().contains("pick another port"), "{error}");
    let error = remote_error(build_remote(RemoteSettings::bind("0.0.0.0", 0)));
    assert!(
        matches!(error, RemoteError::SecretRequired { .. }),
        "{error}"
    );
}

// S42, S44: a failure window and a handshake timeout of `Duration::MAX` (a peer is
// never given up on, a link may take forever) are valid settings: the link is made,
// heartbeats run, asks cross both ways, and both systems terminate.
#[tokio::test(flavor = "current_thread")]
async fn s42_timeouts_of_duration_max_still_link_and_ask() {
    record_panics_here();
    let settings = RemoteSettings::loopback()
        .heartbeat_interval(ms(20))
        .unreachable_after(Duration::MAX)
        .handshake_timeout(Duration::MAX);
    let nodes = two_nodes(settings).unwrap();
    nodes.b.spawn(Echo, "echo").unwrap();
    nodes.a.spawn(Echo, "echo").unwrap();
    let on_b = nodes
        .a
        .resolve::<EchoMsg>(&format!("{}/user/echo", nodes.b.address()))
        .unwrap();
    let on_a = nodes
        .b
        .resolve::<EchoMsg>(&format!("{}/user/echo", nodes.a.address()))
        .unwrap();
    assert_eq!(on_b.ask(Ping(1)).timeout(T).await, Ok(Note(1)));
    assert_eq!(on_a.ask(Ping(2)).timeout(T).await, Ok(Note(2)));
    // Several heartbeats later (each one checked against the window), still linked.
    let mut probe = TestProbe::<Note>::new(&nodes.a);
    probe.expect_no_message(ms(200)).await;
    assert_eq!(on_b.ask(Ping(3)).timeout(T).await, Ok(Note(3)));
    assert_eq!(on_a.ask(Ping(4)).timeout(T).await, Ok(Note(4)));
    timeout(T, nodes.terminate())
        .await
        .expect("both systems terminated");
    assert_no_panics_here();
}

// S37, S38: wire limits that let no frame through (a frame limit of 0, a nesting
// limit of 0) are bad settings, refused when the system is built like a zero
// shutdown timeout, rather than a system that turns every frame into a dead letter.
// Failed at bc5a14b, fixed since: `ActorSystemBuilder::build` does not check `WireLimits`.
#[tokio::test(flavor = "current_thread")]
async fn s37_wire_limits_of_zero_are_refused_when_built() {
    for limits in [
        WireLimits {
            max_frame: 0,
            max_depth: WireLimits::DEFAULT.max_depth,
        },
        WireLimits {
            max_frame: WireLimits::DEFAULT.max_frame,
            max_depth: 0,
        },
    ] {
        let built = ActorSystem::builder("limits").wire_limits(limits).build();
        match built {
            Err(SystemError::InvalidSetting { setting, reason }) => {
                assert!(
                    setting.contains("wire") || setting.contains("max"),
                    "{setting}"
                );
                assert!(!reason.is_empty());
            }
            Err(other) => panic!("{limits:?}: {other}"),
            Ok(system) => {
                // What such a system does with a good frame from a peer.
                let sink = system.spawn(Behaviors::ignore::<Note>(), "sink").unwrap();
                let header = tapio::wire::FrameHeader {
                    key: "outside-input.note.v1",
                    recipient: "/user/sink",
                    uid: sink.uid(),
                    reply_to: None,
                };
                let frame =
                    tapio::wire::encode_message_frame(&header, &Note(1), &WireLimits::DEFAULT)
                        .unwrap();
                let delivered = system.deliver_frame(&Address::local("peer"), &frame);
                system.terminate().await;
                panic!(
                    "{limits:?} was accepted; a good frame from a peer then gives {delivered:?}"
                );
            }
        }
    }
}

// S36: `resolve` refuses what is not the URI of an actor, with the URI and a reason:
// garbage, another scheme, a missing or empty system, a bad port or uid, path
// segments no actor can have (`..`, `.`, empty, a space, non-ASCII, a NUL, too long),
// a local actor that is not there, of another protocol, or of an older incarnation.
// Nothing panics, also from inside an actor; and `Address::parse` takes garbage too.
// Failed at bc5a14b, fixed since: `resolve_uri` (wire/refs.rs) checks another system's path segments only for emptiness.
#[tokio::test(flavor = "current_thread")]
async fn s36_resolve_refuses_what_is_not_an_actor_uri() {
    record_panics_here();
    let system = ActorSystem::builder("resolver")
        .remote(RemoteSettings::loopback())
        .build()
        .unwrap();
    let sink = system.spawn(Behaviors::ignore::<Note>(), "sink").unwrap();
    system.spawn(Echo, "echo").unwrap();
    let here = system.address().to_string();
    let peer = "tapio://peer@127.0.0.1:1";
    let huge = format!("{peer}/user/{}", "x".repeat(1 << 20));
    let mut uris: Vec<String> = [
        "",
        "garbage",
        "http://peer@127.0.0.1:1/user/a",
        "tapio://",
        "tapio:///user/a",
        "tapio://@127.0.0.1:1/user/a",
        "tapio://peer@127.0.0.1:99999/user/a",
        "tapio://peer@127.0.0.1:/user/a",
        "tapio://peer@:1/user/a",
        "tapio://sp ace@127.0.0.1:1/user/a",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    for path in [
        "/user/a#x",
        "/user/a#18446744073709551616",
        "/user/a#-1",
        "/user/../system",
        "/user/./a",
        "/user//a",
        "/user/a b",
        "/user/\u{e9}",
        "/user/a\u{0}",
        "/user/a?q=1",
    ] {
        uris.push(format!("{peer}{path}"));
    }
    uris.push(format!(
        "{peer}/user/{}",
        "a".repeat(tapio::ActorPath::MAX_NAME_LEN + 1)
    ));
    uris.push(huge);
    uris.push(format!("{here}/user/nobody"));
    uris.push(format!("{here}/user/echo")); // another protocol
    uris.push(format!("{here}/user/sink#{}", sink.uid() + 1)); // another incarnation
    let mut accepted = Vec::new();
    for uri in &uris {
        match system.resolve::<Note>(uri) {
            Err(refusal) => {
                assert_eq!(&refusal.uri, uri);
                assert!(!refusal.reason.trim().is_empty(), "{uri:?}");
            }
            Ok(actor) => accepted.push(format!(
                "{:?} resolved to a ref at {:?}",
                uri.chars().take(60).collect::<String>(),
                actor
                    .path()
                    .to_string()
                    .chars()
                    .take(60)
                    .collect::<String>()
            )),
        }
    }
    // What is fine: this system's sink, and an actor of a peer.
    assert_eq!(system.resolve::<Note>(&sink.path().to_uri()).unwrap(), sink);
    assert!(system.resolve::<Note>(&format!("{peer}/user/a")).is_ok());
    assert!(
        system.resolve::<Note>(&format!("{peer}/user/$a")).is_ok(),
        "a generated name"
    );

    // From inside an actor: `ctx.resolve` of garbage is an error too.
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let resolver = system
        .spawn(
            Behaviors::receive(move |ctx, uri: String| {
                report.tell(match ctx.resolve::<Note>(&uri) {
                    Ok(_) => "resolved".to_owned(),
                    Err(refusal) => format!("refused: {}", refusal.reason),
                });
            }),
            "resolver",
        )
        .unwrap();
    resolver.tell(String::new());
    assert!(probe.expect_message(T).await.starts_with("refused: "));

    for text in [
        "",
        "tapio://",
        "tapio://a@",
        "tapio://a@h",
        "tapio://a@h:x",
        "tapio://a@:1",
        "a@h:1",
    ] {
        assert_eq!(Address::parse(text), None, "{text:?}");
    }
    let parsed = Address::parse("tapio://x@127.0.0.1:1").unwrap();
    assert_eq!(parsed.host_port(), Some(("127.0.0.1", 1)));
    timeout(T, system.terminate()).await.unwrap();
    assert!(
        accepted.is_empty(),
        "resolved though no actor can have that URI:\n{}",
        accepted.join("\n")
    );
    assert_no_panics_here();
}

// S43: `reconnect` and the quarantine calls with odd addresses answer with a typed
// error in bounded time: a system with no remote settings, an address with no host,
// a closed port, itself, a terminated system; nothing unknown is quarantined.
#[tokio::test(flavor = "current_thread")]
async fn s43_reconnect_and_quarantine_calls_with_odd_addresses() {
    record_panics_here();
    let plain = ActorSystem::new("plain").unwrap();
    let nowhere = Address::local("nowhere");
    let refused = timeout(T, plain.reconnect(&nowhere)).await.unwrap();
    assert_eq!(refused, Err(LinkError::NotRemote));
    assert!(!plain.is_quarantined(&nowhere));
    assert!(!plain.clear_quarantine(&nowhere));
    plain.terminate().await;

    let node = ActorSystem::builder("node")
        .remote(RemoteSettings::loopback().handshake_timeout(ms(500)))
        .build()
        .unwrap();
    let hostless = timeout(T, node.reconnect(&nowhere))
        .await
        .expect("answered in time");
    assert!(
        hostless.is_err(),
        "reconnect to an address with no host: {hostless:?}"
    );
    let closed = Address::parse(&format!("tapio://ghost@127.0.0.1:{}", closed_port())).unwrap();
    let dialled = timeout(T, node.reconnect(&closed))
        .await
        .expect("answered in time");
    assert!(
        matches!(dialled, Err(LinkError::Failed { .. })),
        "{dialled:?}"
    );
    assert!(!node.is_quarantined(&closed));
    assert!(!node.clear_quarantine(&closed));
    let own = node.address().clone();
    let _ = timeout(T, node.reconnect(&own))
        .await
        .expect("a reconnect to itself answered in time");
    timeout(T, node.terminate()).await.unwrap();
    let late = timeout(T, node.reconnect(&closed)).await.unwrap();
    assert_eq!(late, Err(LinkError::Terminating));
    assert_no_panics_here();
}

// S45: link faults with odd values never break the link or panic: a drop ratio that
// is not a number or below 0 drops nothing, one above 1 drops everything; a delay
// of `Duration::MAX` holds frames, and clearing the faults lets traffic go again. A
// fault set between a system without links and an address is a no-op.
// Failed at bc5a14b, fixed since: `LinkFaults::verdict` (remote/link.rs) adds the delay to the queue time unchecked: the link's writer panics on every frame.
#[tokio::test(flavor = "current_thread")]
async fn s45_link_faults_with_odd_values_never_break_the_link() {
    record_panics_here();
    let settings = RemoteSettings::loopback()
        .heartbeat_interval(ms(100))
        .unreachable_after(Duration::from_secs(60));
    let nodes = two_nodes(settings).unwrap();
    nodes.b.spawn(Echo, "echo").unwrap();
    let on_b = nodes
        .a
        .resolve::<EchoMsg>(&format!("{}/user/echo", nodes.b.address()))
        .unwrap();
    assert_eq!(on_b.ask(Ping(1)).timeout(T).await, Ok(Note(1)));
    for ratio in [f64::NAN, -1.0, f64::NEG_INFINITY] {
        nodes.a_to_b().drop_ratio(ratio, 7);
        assert_eq!(
            on_b.ask(Ping(2)).timeout(T).await,
            Ok(Note(2)),
            "ratio {ratio}"
        );
    }
    nodes.a_to_b().drop_ratio(2.0, 7);
    let lost = on_b.ask(Ping(3)).timeout(ms(300)).await;
    assert!(
        matches!(lost, Err(AskError::Timeout { .. })),
        "ratio 2.0: {lost:?}"
    );
    nodes.a_to_b().clear();
    assert_eq!(on_b.ask(Ping(4)).timeout(T).await, Ok(Note(4)));

    // A delay of `Duration::MAX` holds the request (and the heartbeats) until the
    // faults are cleared; then what was held goes, in order, and the link carries on.
    nodes.a_to_b().delay(Duration::MAX);
    let ask = on_b.ask(Ping(5)).timeout(T);
    let held = tokio::spawn(async move { ask.await });
    // Time for the link to take the frame (and a heartbeat) and apply the delay.
    TestProbe::<Note>::new(&nodes.a)
        .expect_no_message(ms(300))
        .await;
    assert!(
        !held.is_finished(),
        "a frame delayed by Duration::MAX crossed at once"
    );
    nodes.a_to_b().clear();
    let answer = timeout(T + T, held)
        .await
        .expect("the held ask ended")
        .expect("no panic");
    assert_eq!(
        answer,
        Ok(Note(5)),
        "the request held by a delay of Duration::MAX goes once the faults are cleared"
    );
    assert_eq!(
        on_b.ask(Ping(6)).timeout(T).await,
        Ok(Note(6)),
        "after clearing a delay of Duration::MAX"
    );

    let plain = ActorSystem::new("plain").unwrap();
    LinkDirection::between(&plain, nodes.b.address())
        .partition()
        .drop_next(u64::MAX)
        .drop_ratio(f64::NAN, 0)
        .delay(Duration::MAX)
        .heal()
        .clear();
    plain.terminate().await;
    timeout(T, nodes.terminate())
        .await
        .expect("both systems terminated");
    assert_no_panics_here();
}

// ---------------------------------------------------------------------------------
// Testkit (S48)
// ---------------------------------------------------------------------------------

// S48: a probe's bounds at their edges: zero messages take no time, a cap of zero
// makes even an absurd wait look once, and an expectation of more messages than can
// ever come fails with the documented message (how many came), not some other panic.
// Failed at bc5a14b, fixed since: `TestProbe::receive_messages` reserves `n` up front: `usize::MAX` panics with "capacity overflow" (and a large `n` aborts).
#[tapio::test]
async fn s48_probe_bounds_at_their_edges(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let started = Instant::now();
    assert!(probe.receive_messages(0, Duration::ZERO).await.is_empty());
    assert!(probe.receive_messages(0, Duration::MAX).await.is_empty());
    let mut quick = TestProbe::<u64>::new(&system).with_max_wait(Duration::ZERO);
    assert_eq!(quick.max_wait(), Duration::ZERO);
    quick.expect_no_message(Duration::MAX).await;
    quick.expect_no_termination(Duration::MAX).await;
    assert_eq!(quick.receive_message(Duration::MAX).await, None);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    probe.actor_ref().tell(1_u64);
    let many = tokio::spawn(async move { probe.receive_messages(usize::MAX, ms(20)).await });
    let failed = timeout(T, many).await.expect("the expectation ended");
    let payload = failed
        .expect_err("usize::MAX messages never come")
        .into_panic();
    let text = panic_text(&*payload);
    assert!(
        text.contains("got 1 of them"),
        "the panic should say how many came, as documented: {text:?}"
    );
}

// S48: `TestConfig` with odd input: a name that is no system name is made into one,
// zero worker threads mean one; a name with nothing usable, a zero shutdown timeout,
// and a paused clock on a multi-thread runtime panic as documented, saying why.
#[test]
fn s48_test_config_with_odd_input() {
    let ran = Arc::new(Mutex::new(None::<String>));
    let seen = ran.clone();
    TestConfig::new("odd name / with $ymbols!")
        .worker_threads(0)
        .run(move |system| async move {
            *seen.lock().unwrap() = Some(system.name().to_owned());
            let echo = system.spawn(echo(), "echo")?;
            let mut probe = TestProbe::<u64>::new(&system);
            answers(&echo, &mut probe, 1).await;
            Ok::<(), SpawnError>(())
        });
    let name = ran.lock().unwrap().clone().expect("the body ran");
    assert!(
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        "{name:?}"
    );

    let cases: Vec<(&str, TestConfig, &str)> = vec![
        ("an empty name", TestConfig::new(""), "invalid system name"),
        (
            "a zero shutdown timeout",
            TestConfig::new("zero").shutdown_timeout(Duration::ZERO),
            "shutdown_timeout",
        ),
        (
            "a paused clock on two workers",
            TestConfig::new("paused")
                .start_paused(true)
                .worker_threads(2),
            "current",
        ),
    ];
    for (what, config, says) in cases {
        let outcome = std::panic::catch_unwind(move || {
            config.run(|_system| async move {});
        });
        let text = panic_text(&*outcome.expect_err(what));
        assert!(text.contains(says), "{what}: {text:?}");
    }
}
