//! A twelfth outside-in sweep, written from the promises (S1..S49 in SEMANTICS.md),
//! README.md and docs/testing.md only. It goes after the promises the earlier sweeps
//! tested least, past their happy paths:
//!
//! 1. Systems (S1, S3, S20): forty systems in a row on one name; a `scope` dropped
//!    mid-block or panicking; tells and offers from many tasks to a stopped actor,
//!    each a dead letter; one SIGINT for two systems, recorded before anyone waits.
//! 2. Order and exclusion (S4, S5): senders mixing tells and offers on a bounded
//!    drop-new mailbox, tasks and actors telling one unbounded actor; a reply and
//!    the effects of the handler that sent it; a reply sent mid-way through an async
//!    handler does not let the next message in.
//! 3. Behaviors (S6): `unhandled` from six shapes of behavior; a thousand switches
//!    between an `#[actor]` value and a functional behavior.
//! 4. Setup and supervision (S7, S9, S10, S11, S15, S16, S17): setups counted at two
//!    levels of nested `supervise`; resume after a failure past an await; restart
//!    with grandchildren and the order of their signals; async `PostStop` in a
//!    stopping tree; boxed errors and panics of several payloads against stacked
//!    clauses; an escalation over three levels; escalations reaching the guardian
//!    from depth four, as an error, a boxed error and a panic.
//! 5. Logging (S8): records from setup, handlers, after an await, a timer's tick, a
//!    blocking call, an adapter, `PreRestart`, `PostStop` and an instrumented task.
//! 6. Timers (S24): ticks due during an awaiting handler queue behind earlier tells;
//!    a cancel or a restart of a key drops the tick it had queued; a tick meeting a
//!    full bounded mailbox queues beyond the bound and takes room.
//! 7. More edges: fixed-delay ticks behind a stall; ticks that fail or go unhandled;
//!    a setup failing on a restart; a panicking `PostStop` at `terminate`; an
//!    explicit `unhandled` for `Terminated`; an escalation dropping an awaiting
//!    parent handler; two escalations racing to the guardian; tells from plain
//!    threads and after the runtime is gone; an inner restart limit used up; a setup
//!    answering `same`; a drop-oldest mailbox under mixed senders; records on a
//!    multi-thread runtime with a global subscriber.
//! 8. Further edges: an ask in line with its sender's tells; a failing `ChildFailed`
//!    handler; a failing parent with awaiting children; a panicking adapter
//!    translation; `stopped` after an await; guards and state dropped by a stop or a
//!    restart, logging; a parent stopped while its child backs off; an async
//!    `PreRestart`; tells racing a stop and racing restarts; a fixed-delay key
//!    replaced or cancelled from its own tick; switching to deferred behaviors;
//!    `Terminated` waiting for an awaiting handler.
//!
//! Every wait is bounded; timing is asserted only under tokio's paused clock.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/outside.rs"]
mod outside;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{TestConfig, TestProbe};
use tapio::{
    AskError, BoxError, DeadLetter, DeadLetterReason, IntoBehavior, MailboxConfig,
    OverflowStrategy, ShutdownSignal, Subscription,
};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

use outside::{
    Boom, Other, T, describe, expect_lines, letters, letters_for, ms, next, no_letter_for,
};

// =================================================================================
// helpers
// =================================================================================

static GLOBAL_LOG: std::sync::OnceLock<common::Captured> = std::sync::OnceLock::new();

/// The global subscriber of this binary, installed on first use.
fn global_capture() -> &'static common::Captured {
    GLOBAL_LOG.get_or_init(|| {
        let (captured, subscriber) = common::capturing(tracing::Level::INFO);
        tracing::subscriber::set_global_default(subscriber).unwrap();
        captured
    })
}

/// A subscriber for this thread only, and what it captures.
///
/// The global one is installed first, on purpose: while a scoped subscriber is the
/// only one in the process, `tracing-core` 0.1 computes a callsite's interest from
/// the default of whichever thread reaches the callsite first
/// (tokio-rs/tracing#3611), so an actor spawned by another test on a thread without
/// a subscriber can switch the actor span off for this one too. With two
/// subscribers registered, every registered one is asked. The failure this avoids
/// is kept in `sweep12-findings.rs`.
fn scoped_capture() -> (common::Captured, tracing::subscriber::DefaultGuard) {
    global_capture();
    let (captured, subscriber) = common::capturing(tracing::Level::INFO);
    (captured, tracing::subscriber::set_default(subscriber))
}

/// Takes messages from `probe` until `line` comes, within `T`.
async fn skip_to(probe: &mut TestProbe<String>, line: &str) {
    let deadline = Instant::now() + T;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match probe.receive_message(left).await {
            Some(got) if got == line => return,
            Some(_) => {}
            None => panic!("{line:?} did not come within {T:?}"),
        }
    }
}

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

/// An actor that logs "<name> stopped" to `to` on `PostStop`, and nothing else.
fn post_stop_reporter(name: &'static str, to: ActorRef<String>) -> Behavior<u64> {
    Behaviors::receive_message(|_: u64| ())
        .on_signal(move |_ctx, signal| {
            if *signal == Signal::PostStop {
                to.tell(format!("{name} stopped"));
            }
        })
        .into()
}

// =================================================================================
// 1. Systems (S1, S3, S20)
// =================================================================================

#[message]
pub struct Ping {
    pub reply_to: ActorRef<u64>,
}

/// S1, S3: forty systems, made and terminated one after the other under one name,
/// each start clean (`/user` for what is spawned, `/system` for a probe, the same
/// top-level name free again); once one has terminated, a tell to its actor neither
/// fails nor blocks, an ask fails at once rather than at its deadline, and spawning
/// is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s1_s3_forty_systems_in_a_row_start_clean_and_take_late_tells() {
    for round in 0..40_u64 {
        let system = ActorSystem::new("cycle").unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        let probe_path = probe.actor_ref().path().to_string();
        assert!(probe_path.starts_with("/system/"), "{probe_path}");
        let echo = system
            .spawn(
                Behaviors::receive_message(move |ping: Ping| ping.reply_to.tell(round)),
                "echo",
            )
            .unwrap();
        assert_eq!(echo.path().to_string(), "/user/echo");
        echo.tell(Ping {
            reply_to: probe.actor_ref().clone(),
        });
        assert_eq!(probe.expect_message(T).await, round);
        let answer = echo.ask_with(|reply_to| Ping { reply_to }).timeout(T).await;
        assert_eq!(answer.unwrap(), round);

        timeout(T, system.terminate()).await.expect("terminates");
        assert!(system.is_terminating());
        assert_eq!(system.live_actors(), 0, "round {round}");
        assert!(timeout(T, system.when_terminated()).await.unwrap().is_ok());

        echo.tell(Ping {
            reply_to: probe.actor_ref().clone(),
        });
        let started = Instant::now();
        let late = timeout(
            T,
            echo.ask_with(|reply_to| Ping { reply_to })
                .timeout(Duration::from_secs(60)),
        )
        .await
        .expect("an ask to a terminated system ends at once");
        assert!(late.is_err(), "round {round}: {late:?}");
        assert!(
            !matches!(late, Err(AskError::Timeout { .. })),
            "round {round}: {late:?}"
        );
        assert!(started.elapsed() < T);
        assert!(system.spawn(Behaviors::ignore::<u64>(), "late").is_err());
    }
}

/// S1: the owner of a `scope` system is its block. Dropped mid-block (a `select!`
/// that took another branch), the system terminates on its own, its actor seeing
/// `PostStop`; a block that panics has terminated the system by the time the panic
/// reaches the caller; a block that returns has its actors stopped before the value
/// comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s1_a_scope_dropped_panicking_or_returning_ends_its_system_first() {
    // Dropped.
    let (sys_tx, mut sys_rx) = mpsc::unbounded_channel::<ActorSystem>();
    let (log_tx, mut log_rx) = mpsc::unbounded_channel::<String>();
    let log = log_tx.clone();
    let body_tx = sys_tx.clone();
    let scoped = ActorSystem::scope("scope-dropped", move |system| async move {
        let sink = system
            .spawn(
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                    if *signal == Signal::PostStop {
                        let _ = log.send("dropped: worker stopped".to_string());
                    }
                }),
                "worker",
            )
            .unwrap();
        sink.tell(1_u64);
        body_tx.send(system.clone()).unwrap();
        std::future::pending::<()>().await;
    });
    let system = tokio::select! {
        _ = scoped => panic!("the body never ends"),
        system = sys_rx.recv() => system.unwrap(),
    };
    // The scope future is dropped here, at the end of the select.
    timeout(T, system.when_terminated())
        .await
        .expect("a dropped scope terminates its system")
        .unwrap();
    assert_eq!(next(&mut log_rx).await, "dropped: worker stopped");
    assert_eq!(system.live_actors(), 0);

    // Panicking.
    let log = log_tx.clone();
    let body_tx = sys_tx.clone();
    let joined = tokio::spawn(ActorSystem::scope(
        "scope-panics",
        move |system| async move {
            system
                .spawn(
                    Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                        if *signal == Signal::PostStop {
                            let _ = log.send("panics: worker stopped".to_string());
                        }
                    }),
                    "worker",
                )
                .unwrap();
            body_tx.send(system.clone()).unwrap();
            tokio::task::yield_now().await;
            panic!("the block fails");
        },
    ));
    let outcome = timeout(T, joined).await.expect("the task ends");
    assert!(outcome.unwrap_err().is_panic());
    let system = next(&mut sys_rx).await;
    assert!(system.is_terminating());
    assert_eq!(
        system.live_actors(),
        0,
        "terminated before the panic went on"
    );
    assert_eq!(
        log_rx.try_recv().ok().as_deref(),
        Some("panics: worker stopped")
    );

    // Returning.
    let log = log_tx.clone();
    let value = timeout(
        T,
        ActorSystem::scope("scope-returns", move |system| async move {
            system
                .spawn(
                    Behaviors::receive_message(|_: u64| ()).on_signal(move |_ctx, signal| {
                        if *signal == Signal::PostStop {
                            let _ = log.send("returns: worker stopped".to_string());
                        }
                    }),
                    "worker",
                )
                .unwrap();
            (system, 7_u64)
        }),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(value.1, 7);
    assert_eq!(value.0.live_actors(), 0);
    assert_eq!(
        log_rx.try_recv().ok().as_deref(),
        Some("returns: worker stopped"),
        "the actor had stopped before the value came back"
    );
}

/// S3, S31: four tasks on a multi-thread runtime tell and offer to an actor that has
/// stopped; no tell fails or blocks, every offer resolves `false`, and each of the
/// 1 200 messages becomes its own dead letter (`RecipientStopped`) with its value.
/// A tell to itself from its own `PostStop` is a letter too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_s31_tells_and_offers_from_many_tasks_to_a_stopped_actor_each_become_a_letter() {
    let system = ActorSystem::new("late-tells").unwrap();
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let target = system
        .spawn(
            Behaviors::receive_message(|_: u64| Behaviors::stopped::<u64>()).on_signal(
                |ctx: &mut ActorContext<u64>, signal| {
                    if *signal == Signal::PostStop {
                        ctx.self_ref().tell(999_999_u64);
                    }
                },
            ),
            "gone",
        )
        .unwrap();
    probe.watch(&target);
    target.tell(0_u64);
    probe.expect_terminated(&target, T).await;
    let first = letters_for(&mut sub, target.path(), 1).await;
    assert_eq!(first[0].take_message::<u64>(), Some(999_999));

    let mut tasks = Vec::new();
    for sender in 0..4_u64 {
        let target = target.clone();
        tasks.push(tokio::spawn(async move {
            for seq in 0..250 {
                target.tell(sender * 1_000 + seq);
            }
            let mut refused = 0;
            for seq in 250..300 {
                if !target.offer(sender * 1_000 + seq).await {
                    refused += 1;
                }
            }
            refused
        }));
    }
    for task in tasks {
        assert_eq!(timeout(T, task).await.unwrap().unwrap(), 50);
    }
    let got = letters_for(&mut sub, target.path(), 1_200).await;
    let mut values = HashSet::new();
    for letter in &got {
        assert!(
            matches!(letter.reason(), DeadLetterReason::RecipientStopped),
            "{}",
            describe(letter)
        );
        values.insert(letter.take_message::<u64>().expect("the value is kept"));
    }
    let sent: HashSet<u64> = (0..4)
        .flat_map(|s| (0..300).map(move |q| s * 1_000 + q))
        .collect();
    assert_eq!(values, sent);
    no_letter_for(&mut sub, target.path(), ms(50)).await;
    system.terminate().await;
}

/// S20: one SIGINT reaches every system wired to the signals, and a signal that
/// arrives before anyone waits is recorded: both waits, begun after it, return
/// `Interrupt` and leave their systems terminated. (The only test of this binary
/// that raises a signal.)
#[tokio::test(flavor = "current_thread")]
async fn s20_one_sigint_before_anyone_waits_terminates_two_wired_systems() {
    let first = ActorSystem::new("wired-one").unwrap();
    let second = ActorSystem::new("wired-two").unwrap();
    let observer = ActorSystem::new("observer").unwrap();
    let mut log = TestProbe::<String>::new(&observer);
    for (system, name) in [(&first, "one"), (&second, "two")] {
        system
            .spawn(post_stop_reporter(name, log.actor_ref().clone()), "worker")
            .unwrap();
    }
    let one = first.shutdown_on_signals().unwrap();
    let two = second.shutdown_on_signals().unwrap();
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("kill -INT {}", std::process::id())])
        .status()
        .expect("sh runs");
    assert!(status.success());
    let (a, b) = timeout(T, async { tokio::join!(one.wait(), two.wait()) })
        .await
        .expect("both systems terminated");
    assert_eq!(
        (a, b),
        (ShutdownSignal::Interrupt, ShutdownSignal::Interrupt)
    );
    assert_eq!(first.live_actors(), 0);
    assert_eq!(second.live_actors(), 0);
    let mut lines = log.receive_messages(2, T).await;
    lines.sort();
    assert_eq!(lines, ["one stopped", "two stopped"]);
    assert!(!observer.is_terminating());
    observer.terminate().await;
}

// =================================================================================
// 2. Order and exclusion (S4, S5)
// =================================================================================

#[message]
pub struct Item {
    pub sender: u64,
    pub seq: u64,
}

#[message]
pub struct ReportTo {
    pub reply_to: ActorRef<Vec<u64>>,
}

/// Keeps what it handled, as `sender * 1_000_000 + seq`, and counts handlers that
/// found another one running.
#[derive(Clone)]
pub struct Collector {
    seen: Vec<u64>,
    inside: Arc<AtomicU64>,
    overlaps: Arc<AtomicU64>,
}

#[actor]
impl Collector {
    async fn item(&mut self, item: Item) {
        if self.inside.fetch_add(1, SeqCst) != 0 {
            self.overlaps.fetch_add(1, SeqCst);
        }
        if item.seq.is_multiple_of(5) {
            tokio::task::yield_now().await;
        }
        self.seen.push(item.sender * 1_000_000 + item.seq);
        self.inside.fetch_sub(1, SeqCst);
    }

    fn report(&mut self, report: ReportTo) {
        report.reply_to.tell(self.seen.clone());
    }
}

fn collector() -> (Collector, Arc<AtomicU64>) {
    let overlaps = Arc::new(AtomicU64::new(0));
    (
        Collector {
            seen: Vec::new(),
            inside: Arc::new(AtomicU64::new(0)),
            overlaps: overlaps.clone(),
        },
        overlaps,
    )
}

/// Each sender's sequence numbers, in the order handled.
fn per_sender(seen: &[u64]) -> BTreeMap<u64, Vec<u64>> {
    let mut map: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for code in seen {
        map.entry(code / 1_000_000)
            .or_default()
            .push(code % 1_000_000);
    }
    map
}

/// A [`Collector`] on `system` named `"collector"` with a bounded mailbox of 8 that
/// overflows by `overflow`, and its count of overlapping handlers.
fn bounded_collector(
    system: &ActorSystem,
    overflow: OverflowStrategy,
) -> (ActorRef<CollectorMsg>, Arc<AtomicU64>) {
    let (value, overlaps) = collector();
    let actor = system
        .spawn_with(
            value,
            "collector",
            MailboxConfig::bounded(8, overflow).unwrap(),
        )
        .unwrap();
    (actor, overlaps)
}

/// Four tasks, senders 1 to 4, each sending 400 items to `actor`: every third by
/// `tell`, the rest by `offer`, each of which must be accepted. Each task returns
/// the sequence numbers it offered.
fn mix_tells_and_offers(actor: &ActorRef<CollectorMsg>) -> Vec<tokio::task::JoinHandle<Vec<u64>>> {
    let mut tasks = Vec::new();
    for sender in 1..=4_u64 {
        let actor = actor.clone();
        tasks.push(tokio::spawn(async move {
            let mut offered = Vec::new();
            for seq in 0..400 {
                if seq % 3 == 0 {
                    actor.tell(Item { sender, seq });
                } else {
                    assert!(actor.offer(Item { sender, seq }).await, "offer {seq}");
                    offered.push(seq);
                }
            }
            offered
        }));
    }
    tasks
}

/// What `actor` has handled, asked for by a `ReportTo` it must accept within `T`.
async fn offered_report(system: &ActorSystem, actor: &ActorRef<CollectorMsg>) -> Vec<u64> {
    let mut probe = TestProbe::<Vec<u64>>::new(system);
    assert!(
        timeout(
            T,
            actor.offer(ReportTo {
                reply_to: probe.actor_ref().clone()
            })
        )
        .await
        .unwrap()
    );
    probe.expect_message(T).await
}

/// Asserts that `seqs`, what was handled from `sender`, rise strictly.
fn assert_in_order(sender: u64, seqs: &[u64]) {
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "sender {sender} out of order: {seqs:?}"
    );
}

/// S5, S4, S29, S30: four tasks on a multi-thread runtime each send 400 items to one
/// actor with a bounded drop-new mailbox of 8, every third by `tell` (which may be
/// dropped), the rest by `offer` (which waits and must be accepted). What arrives
/// from each sender is in the order sent, every offered item arrives, what was
/// dropped is lettered, and no two handlers overlap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_s4_senders_mixing_tells_and_offers_on_a_bounded_mailbox_keep_their_order() {
    let system = ActorSystem::new("mixed-senders").unwrap();
    let mut sub = letters(&system);
    let (actor, overlaps) = bounded_collector(&system, OverflowStrategy::DropNew);
    let tasks = mix_tells_and_offers(&actor);
    let mut offered = BTreeMap::new();
    for (i, task) in tasks.into_iter().enumerate() {
        offered.insert(i as u64 + 1, timeout(T, task).await.unwrap().unwrap());
    }
    let seen = offered_report(&system, &actor).await;
    let map = per_sender(&seen);
    for (sender, seqs) in &map {
        assert_in_order(*sender, seqs);
        let got: HashSet<u64> = seqs.iter().copied().collect();
        for seq in &offered[sender] {
            assert!(got.contains(seq), "offered {sender}/{seq} is missing");
        }
    }
    let dropped = 1_600 - seen.len();
    let lost = letters_for(&mut sub, actor.path(), dropped).await;
    for letter in &lost {
        assert!(
            matches!(letter.reason(), DeadLetterReason::MailboxFull),
            "{}",
            describe(letter)
        );
    }
    no_letter_for(&mut sub, actor.path(), ms(50)).await;
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

#[message]
pub struct Go {
    pub to: ActorRef<CollectorMsg>,
    pub sender: u64,
}

/// S5, S4: on an unbounded mailbox, three tasks and three actors (each sending its
/// whole batch from one handler) tell 500 items each, all at once: every item
/// arrives, each sender's in order, one handler at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_s4_tasks_and_actors_telling_one_actor_all_arrive_in_each_senders_order() {
    let system = ActorSystem::new("many-senders").unwrap();
    let (value, overlaps) = collector();
    let actor = system.spawn(value, "collector").unwrap();
    let mut actors = Vec::new();
    for n in 0..3 {
        actors.push(
            system
                .spawn(
                    Behaviors::receive_message(|go: Go| {
                        for seq in 0..500 {
                            go.to.tell(Item {
                                sender: go.sender,
                                seq,
                            });
                        }
                    }),
                    &format!("sender-{n}"),
                )
                .unwrap(),
        );
    }
    for (n, sender) in actors.iter().enumerate() {
        sender.tell(Go {
            to: actor.clone(),
            sender: 10 + n as u64,
        });
    }
    let mut tasks = Vec::new();
    for sender in 1..=3_u64 {
        let actor = actor.clone();
        tasks.push(tokio::spawn(async move {
            for seq in 0..500 {
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
    let mut probe = TestProbe::<Vec<u64>>::new(&system);
    let deadline = Instant::now() + T;
    let seen = loop {
        actor.tell(ReportTo {
            reply_to: probe.actor_ref().clone(),
        });
        let seen = probe.expect_message(T).await;
        if seen.len() == 3_000 || Instant::now() > deadline {
            break seen;
        }
        // The actor senders may still be sending: ask again once the probe answered.
    };
    let map = per_sender(&seen);
    assert_eq!(map.len(), 6, "{:?}", map.keys().collect::<Vec<_>>());
    for (sender, seqs) in &map {
        assert_eq!(
            seqs,
            &(0..500).collect::<Vec<u64>>(),
            "sender {sender} lost or reordered items"
        );
    }
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

#[message]
pub struct Step {
    pub n: u64,
    pub reply_to: ActorRef<u64>,
}

/// S4: a reply cannot overtake its handler. 200 rounds on a multi-thread runtime: the
/// handler tells a recorder "h<n>", then replies; the asker, on the reply, tells the
/// recorder "a<n>". The recorder sees every "h" before its "a". The same with a
/// request handler of an `#[actor]` that awaits between its effect and its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s4_what_a_handler_did_before_replying_is_seen_before_what_the_reply_caused() {
    let system = ActorSystem::new("no-overtaking").unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    let out = probe.actor_ref().clone();
    let recorder = system
        .spawn(
            Behaviors::receive_message(move |line: String| out.tell(line)),
            "recorder",
        )
        .unwrap();
    let to = recorder.clone();
    let worker = system
        .spawn(
            Behaviors::receive_message(move |step: Step| {
                to.tell(format!("h{}", step.n));
                step.reply_to.tell(step.n);
            }),
            "worker",
        )
        .unwrap();
    let mut expected = Vec::new();
    for n in 0..200_u64 {
        let got = worker
            .ask_with(|reply_to| Step { n, reply_to })
            .timeout(T)
            .await
            .unwrap();
        recorder.tell(format!("a{got}"));
        expected.push(format!("h{n}"));
        expected.push(format!("a{n}"));
    }
    let got = probe.receive_messages(400, T).await;
    assert_eq!(got, expected);

    let answering = system
        .spawn(
            Answering {
                recorder: recorder.clone(),
            },
            "answering",
        )
        .unwrap();
    let mut expected = Vec::new();
    for n in 0..100_u64 {
        let got = answering.ask(Question(n)).timeout(T).await.unwrap();
        recorder.tell(format!("a{got}"));
        expected.extend([format!("h{n}"), format!("h{n}'"), format!("a{n}")]);
    }
    let got = probe.receive_messages(300, T).await;
    assert_eq!(got, expected);
    system.terminate().await;
}

#[message(reply = u64)]
pub struct Question(pub u64);

#[derive(Clone)]
pub struct Answering {
    recorder: ActorRef<String>,
}

#[actor]
impl Answering {
    async fn question(&mut self, Question(n): Question) -> u64 {
        self.recorder.tell(format!("h{n}"));
        tokio::task::yield_now().await;
        self.recorder.tell(format!("h{n}'"));
        n
    }
}

/// S4: an async handler that replies first and goes on awaiting: the asker acts on
/// the reply at once, sending the next request, which is not taken before the first
/// handler has ended ("end n" always comes before "start n+1").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s4_a_reply_sent_mid_handler_does_not_let_the_next_message_in_early() {
    let system = ActorSystem::new("early-reply").unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    let out = probe.actor_ref().clone();
    let worker = system
        .spawn(
            Behaviors::receive_async(async move |_ctx: &mut ActorContext<Step>, step: Step| {
                out.tell(format!("start {}", step.n));
                step.reply_to.tell(step.n);
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                out.tell(format!("end {}", step.n));
            }),
            "worker",
        )
        .unwrap();
    for n in 0..100_u64 {
        let got = worker
            .ask_with(|reply_to| Step { n, reply_to })
            .timeout(T)
            .await
            .unwrap();
        assert_eq!(got, n);
    }
    let lines = probe.receive_messages(200, T).await;
    let expected: Vec<String> = (0..100)
        .flat_map(|n| [format!("start {n}"), format!("end {n}")])
        .collect();
    assert_eq!(lines, expected);
    system.terminate().await;
}

// =================================================================================
// 3. Behaviors (S6)
// =================================================================================

#[message]
pub struct Even(pub u64);

#[message]
pub struct Odd(pub u64);

#[message]
pub struct Show;

#[derive(Clone)]
pub struct Parity {
    count: u64,
    to: ActorRef<String>,
}

#[actor]
impl Parity {
    fn even(&mut self, _: Even) {
        self.count += 1;
    }

    fn odd(&mut self, _: Odd) -> Behavior<ParityMsg> {
        Behaviors::unhandled()
    }

    fn show(&mut self, _: Show) {
        self.to.tell(format!("count {}", self.count));
    }
}

/// S6, S31: `unhandled` from six shapes of behavior (functional, async after an
/// await, inside `supervise`, inside a stash, inside `setup`, an `#[actor]` handler)
/// letters the message as `Unhandled`, naming its type (for the `#[actor]`, the
/// message's own type) and the recipient, without the value; the actor stays as it
/// was and goes on with its state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s6_unhandled_from_six_shapes_letters_the_type_and_keeps_the_behavior() {
    let system = ActorSystem::new("unhandled-shapes").unwrap();
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);

    fn functional(name: &'static str, to: ActorRef<String>) -> Behavior<u64> {
        let count = Arc::new(AtomicU64::new(0));
        Behaviors::receive_message(move |n: u64| {
            if n % 2 == 1 {
                return Behaviors::unhandled();
            }
            let c = count.fetch_add(1, SeqCst) + 1;
            to.tell(format!("{name} {c}"));
            Behaviors::same()
        })
        .into()
    }

    let to = probe.actor_ref().clone();
    let count = Arc::new(AtomicU64::new(0));
    let shapes: Vec<(&'static str, Behavior<u64>)> = vec![
        ("plain", functional("plain", to.clone())),
        ("async", {
            let to = to.clone();
            Behaviors::receive_async(async move |_ctx: &mut ActorContext<u64>, n: u64| {
                tokio::task::yield_now().await;
                if n % 2 == 1 {
                    return Behaviors::unhandled();
                }
                let c = count.fetch_add(1, SeqCst) + 1;
                to.tell(format!("async {c}"));
                Behaviors::same()
            })
            .into()
        }),
        (
            "supervised",
            Behaviors::supervise(functional("supervised", to.clone()))
                .on_any_failure(SupervisorStrategy::restart())
                .into(),
        ),
        (
            "stashing",
            Behaviors::with_stash(4, {
                let to = to.clone();
                move |_stash: tapio::StashBuffer<u64>| functional("stashing", to.clone())
            })
            .unwrap(),
        ),
        ("setup", {
            let to = to.clone();
            Behaviors::setup(move |_ctx: &mut ActorContext<u64>| functional("setup", to.clone()))
        }),
    ];
    for (name, behavior) in shapes {
        let actor = system.spawn(behavior, name).unwrap();
        for n in [2_u64, 1, 4, 3, 6] {
            actor.tell(n);
        }
        expect_lines(
            &mut probe,
            &[
                &format!("{name} 1"),
                &format!("{name} 2"),
                &format!("{name} 3"),
            ],
        )
        .await;
        let lost = letters_for(&mut sub, actor.path(), 2).await;
        for letter in &lost {
            assert!(
                matches!(letter.reason(), DeadLetterReason::Unhandled),
                "{name}: {}",
                describe(letter)
            );
            assert_eq!(letter.short_message_type(), "u64", "{name}");
            assert_eq!(letter.take_message::<u64>(), None, "{name}: no value");
        }
        no_letter_for(&mut sub, actor.path(), ms(30)).await;
    }

    let parity = system
        .spawn(
            Parity {
                count: 0,
                to: to.clone(),
            },
            "parity",
        )
        .unwrap();
    parity.tell(Even(0));
    parity.tell(Odd(1));
    parity.tell(Even(2));
    parity.tell(Odd(3));
    parity.tell(Show);
    expect_lines(&mut probe, &["count 2"]).await;
    let lost = letters_for(&mut sub, parity.path(), 2).await;
    for letter in &lost {
        assert!(matches!(letter.reason(), DeadLetterReason::Unhandled));
        assert_eq!(letter.short_message_type(), "Odd", "{}", describe(letter));
        assert!(!letter.is::<ParityMsg>(), "{}", describe(letter));
    }
    system.terminate().await;
}

#[message]
pub struct Bump;

#[message]
pub struct Peek;

/// An `#[actor]` value that switches to a functional behavior on each `Bump`, which
/// switches back to a fresh value on the next.
#[derive(Clone)]
pub struct Flip {
    count: u64,
    to: ActorRef<String>,
}

fn flop(count: u64, to: ActorRef<String>) -> Behavior<FlipMsg> {
    Behaviors::receive_message(move |message: FlipMsg| match message {
        FlipMsg::Bump(..) => Flip {
            count: count + 1,
            to: to.clone(),
        }
        .into_behavior(),
        FlipMsg::Peek(..) => {
            to.tell(format!("flop {count}"));
            Behaviors::same()
        }
    })
    .into()
}

#[actor]
impl Flip {
    fn bump(&mut self, _: Bump) -> Behavior<FlipMsg> {
        flop(self.count + 1, self.to.clone())
    }

    fn peek(&mut self, _: Peek) {
        self.to.tell(format!("flip {}", self.count));
    }
}

/// S6: a thousand and one switches between an `#[actor]` value and a functional
/// behavior, with a look between each hundred: each switch takes effect for the very
/// next message, and the count carried across the shapes is exact.
#[tapio::test]
async fn s6_a_thousand_switches_between_a_struct_and_a_function_keep_count(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let actor = system
        .spawn(
            Flip {
                count: 0,
                to: probe.actor_ref().clone(),
            },
            "flip",
        )
        .unwrap();
    let mut expected = Vec::new();
    for n in 1..=1_001_u64 {
        actor.tell(Bump);
        if n % 100 == 0 || n == 1_001 {
            actor.tell(Peek);
            let shape = if n % 2 == 1 { "flop" } else { "flip" };
            expected.push(format!("{shape} {n}"));
        }
    }
    let got = probe.receive_messages(expected.len(), T).await;
    assert_eq!(got, expected);
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

fn climbed(failure: &tapio::Failure) -> Vec<String> {
    failure.climbed().iter().map(|p| p.to_string()).collect()
}

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

// =================================================================================
// 5. Logging (S8)
// =================================================================================

#[message]
pub enum Scribe {
    Say(&'static str),
    AfterAwait,
    Arm,
    Tick,
    Block,
    Fail,
    Spawned,
    Noted(String),
}

/// S8, S28, S33: an actor below a parent logs from its setup, a handler, an async
/// handler after an await, a timer's tick, a blocking call, a message adapter's
/// translation, `PreRestart`, `PostStop` and a task it instruments with its span;
/// every one of those records carries its path.
#[test]
fn s8_records_from_everywhere_an_actor_runs_code_carry_its_path() {
    let (captured, _default) = scoped_capture();
    TestConfig::new("s8_everywhere").run(|system: ActorSystem| async move {
        let mut probe = TestProbe::<String>::new(&system);
        let to = probe.actor_ref().clone();
        let (refs_tx, mut refs_rx) =
            mpsc::unbounded_channel::<(ActorRef<Scribe>, ActorRef<String>)>();
        let scribe =
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<Scribe>| {
                tracing::info!("s8-mark setup");
                let adapter = ctx.message_adapter(|text: String| {
                    tracing::info!("s8-mark adapter");
                    Scribe::Noted(text)
                });
                let _ = refs_tx.send((ctx.self_ref().clone(), adapter));
                let to = to.clone();
                let on_signal = to.clone();
                Behaviors::receive_async(async move |ctx: &mut ActorContext<Scribe>, m: Scribe| {
                    match m {
                        Scribe::Say(what) => tracing::info!("s8-mark {what}"),
                        Scribe::AfterAwait => {
                            tokio::task::yield_now().await;
                            tokio::time::sleep(ms(1)).await;
                            tracing::info!("s8-mark after-await");
                        }
                        Scribe::Arm => ctx.timers().start_single_timer("t", Scribe::Tick, ms(5)),
                        Scribe::Tick => tracing::info!("s8-mark tick"),
                        Scribe::Block => {
                            ctx.run_blocking(|| tracing::info!("s8-mark blocking"))
                                .await
                                .unwrap();
                        }
                        Scribe::Fail => return Err(Boom),
                        Scribe::Spawned => {
                            use tracing::Instrument;
                            let span = ctx.log();
                            tokio::spawn(
                                async { tracing::info!("s8-mark instrumented") }.instrument(span),
                            )
                            .await
                            .unwrap();
                        }
                        Scribe::Noted(text) => tracing::info!("s8-mark noted {text}"),
                    }
                    to.tell("done".to_string());
                    Ok(())
                })
                .on_signal(move |_ctx, signal| match signal {
                    Signal::PreRestart => tracing::info!("s8-mark pre-restart"),
                    Signal::PostStop => {
                        tracing::info!("s8-mark post-stop");
                        on_signal.tell("stopped".to_string());
                    }
                    _ => {}
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart());
        let parent = system
            .spawn(
                Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                    ctx.spawn(scribe.clone(), "scribe").unwrap();
                    Behaviors::ignore::<u64>()
                }),
                "desk",
            )
            .unwrap();
        let (scribe_ref, adapter) = next(&mut refs_rx).await;
        assert_eq!(scribe_ref.path().to_string(), "/user/desk/scribe");
        for m in [
            Scribe::Say("handler"),
            Scribe::AfterAwait,
            Scribe::Arm,
            Scribe::Block,
            Scribe::Spawned,
        ] {
            scribe_ref.tell(m);
        }
        adapter.tell("via-adapter".to_string());
        // Say, AfterAwait, Arm, Block, Spawned, the adapted note and the tick.
        let dones = probe.receive_messages(7, T).await;
        assert!(dones.iter().all(|d| d == "done"), "{dones:?}");
        scribe_ref.tell(Scribe::Fail);
        let _ = next(&mut refs_rx).await; // the setup ran again
        system.stop(&parent).unwrap();
        assert_eq!(probe.expect_message(T).await, "stopped");
    });
    let text = captured.text();
    for mark in [
        "setup",
        "handler",
        "after-await",
        "tick",
        "blocking",
        "adapter",
        "noted via-adapter",
        "instrumented",
        "pre-restart",
        "post-stop",
    ] {
        let said = format!("s8-mark {mark}");
        let lines: Vec<&str> = text.lines().filter(|l| l.ends_with(&said)).collect();
        assert!(!lines.is_empty(), "no record {said:?} in:\n{text}");
        for line in lines {
            assert!(
                line.contains("path=/user/desk/scribe"),
                "{said:?} untagged: {line}"
            );
        }
    }
}

// =================================================================================
// 6. Timers (S24)
// =================================================================================

#[message]
#[derive(Clone)]
pub enum Clocked {
    Hold(u64),
    Line(&'static str),
    Tick,
    Cancel(&'static str),
    Restart,
    Tock,
}

/// An actor whose `Hold(ms)` awaits that long under the paused clock, and which
/// counts handlers that found another one running.
fn clocked(to: ActorRef<String>, overlaps: Arc<AtomicU64>) -> Behavior<Clocked> {
    Behaviors::with_timers(move |timers| {
        timers
            .start_fixed_rate("rate", Clocked::Tick, Duration::from_secs(1))
            .unwrap();
        let to = to.clone();
        let overlaps = overlaps.clone();
        let inside = Arc::new(AtomicU64::new(0));
        let started = Instant::now();
        Behaviors::receive_async(async move |ctx: &mut ActorContext<Clocked>, m: Clocked| {
            if inside.fetch_add(1, SeqCst) != 0 {
                overlaps.fetch_add(1, SeqCst);
            }
            match m {
                Clocked::Hold(n) => {
                    to.tell("hold start".to_string());
                    tokio::time::sleep(ms(n)).await;
                    to.tell("hold end".to_string());
                }
                Clocked::Line(line) => to.tell(line.to_string()),
                Clocked::Tick => {
                    let at = started.elapsed().as_millis() / 100 * 100;
                    to.tell(format!("tick at {at}ms"));
                }
                Clocked::Cancel(key) => ctx.timers().cancel(key),
                Clocked::Restart => ctx
                    .timers()
                    .start_single_timer("rate", Clocked::Tock, ms(500)),
                Clocked::Tock => to.tell("tock".to_string()),
            }
            inside.fetch_sub(1, SeqCst);
        })
    })
}

/// A [`clocked`] actor on `system` named `name`, telling `probe` and counting
/// overlaps in `overlaps`.
fn spawn_clocked(
    system: &ActorSystem,
    probe: &TestProbe<String>,
    overlaps: &Arc<AtomicU64>,
    name: &str,
    mailbox: MailboxConfig,
) -> ActorRef<Clocked> {
    system
        .spawn_with(
            clocked(probe.actor_ref().clone(), overlaps.clone()),
            name,
            mailbox,
        )
        .unwrap()
}

/// A system named `name`, a probe on it, and a [`clocked`] actor named `"clock"`
/// with `mailbox` that tells the probe, with its count of overlapping handlers.
fn clock_system(
    name: &str,
    mailbox: MailboxConfig,
) -> (
    ActorSystem,
    TestProbe<String>,
    ActorRef<Clocked>,
    Arc<AtomicU64>,
) {
    let system = ActorSystem::new(name).unwrap();
    let probe = TestProbe::<String>::new(&system);
    let overlaps = Arc::new(AtomicU64::new(0));
    let actor = spawn_clocked(&system, &probe, &overlaps, "clock", mailbox);
    (system, probe, actor, overlaps)
}

/// S24, S25: ticks of a 1 s fixed-rate timer fall due while a handler awaits for
/// 3.5 s: none enters it; they queue behind the tells sent before they were due and
/// ahead of one sent between the first and the second; afterwards the rate goes on.
#[tokio::test(start_paused = true)]
async fn s24_ticks_due_during_an_awaiting_handler_queue_behind_earlier_tells() {
    let (system, mut probe, actor, overlaps) =
        clock_system("queued-ticks", MailboxConfig::unbounded());
    actor.tell(Clocked::Hold(3_500));
    actor.tell(Clocked::Line("A"));
    actor.tell(Clocked::Line("B"));
    assert_eq!(probe.expect_message(T).await, "hold start");
    tokio::time::sleep(ms(1_500)).await;
    actor.tell(Clocked::Line("C"));
    let lines = probe.receive_messages(7, T).await;
    assert_eq!(
        lines,
        [
            "hold end",
            "A",
            "B",
            "tick at 3500ms",
            "C",
            "tick at 3500ms",
            "tick at 3500ms"
        ]
    );
    assert_eq!(probe.expect_message(T).await, "tick at 4000ms");
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

/// S24, S25: a `Cancel` told before the ticks fell due is handled before them, and
/// the two ticks that queued behind it while the actor awaited never arrive; a key started again with another message drops the tick its old
/// timer had queued, and only the new message comes.
#[tokio::test(start_paused = true)]
async fn s24_s25_a_cancel_or_restart_of_a_key_drops_the_ticks_it_had_queued() {
    let (system, mut probe, actor, overlaps) =
        clock_system("dropped-ticks", MailboxConfig::unbounded());
    actor.tell(Clocked::Hold(2_500));
    actor.tell(Clocked::Cancel("rate"));
    actor.tell(Clocked::Line("after"));
    expect_lines(&mut probe, &["hold start", "hold end", "after"]).await;
    probe.expect_no_message(Duration::from_secs(5)).await;

    let actor = spawn_clocked(
        &system,
        &probe,
        &overlaps,
        "clock-2",
        MailboxConfig::unbounded(),
    );
    actor.tell(Clocked::Hold(1_500));
    actor.tell(Clocked::Restart);
    actor.tell(Clocked::Line("after"));
    expect_lines(&mut probe, &["hold start", "hold end", "after", "tock"]).await;
    probe.expect_no_message(Duration::from_secs(5)).await;
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

/// S24, S29, S31: on a bounded drop-new mailbox already full, a tick that falls due
/// is not refused (the `MailboxConfig` docs: timer ticks are never refused by the
/// bound) but takes room while queued: a tell sent after it is refused as
/// `MailboxFull`, and the tick is handled in its place in line, after the tells
/// queued before it.
#[tokio::test(start_paused = true)]
async fn s24_s29_a_tick_due_on_a_full_bounded_mailbox_queues_and_takes_room() {
    let (system, mut probe, actor, overlaps) = clock_system(
        "full-ticks",
        MailboxConfig::bounded(2, OverflowStrategy::DropNew).unwrap(),
    );
    let mut sub = letters(&system);
    actor.tell(Clocked::Hold(1_500));
    assert_eq!(probe.expect_message(T).await, "hold start");
    actor.tell(Clocked::Line("A"));
    actor.tell(Clocked::Line("B"));
    tokio::time::sleep(ms(1_200)).await;
    actor.tell(Clocked::Line("C"));
    let lost = letters_for(&mut sub, actor.path(), 1).await;
    assert!(
        matches!(lost[0].reason(), DeadLetterReason::MailboxFull),
        "{}",
        describe(&lost[0])
    );
    assert!(matches!(
        lost[0].take_message::<Clocked>(),
        Some(Clocked::Line("C"))
    ));
    expect_lines(
        &mut probe,
        &["hold end", "A", "B", "tick at 1500ms", "tick at 2000ms"],
    )
    .await;
    no_letter_for(&mut sub, actor.path(), ms(10)).await;
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

// =================================================================================
// 7. More edges: fixed-delay ticks, failing ticks, failing setups and signals,
//    escalations into an awaiting parent and racing to the guardian (S7, S9, S11,
//    S15, S17, S24, S25, S6)
// =================================================================================

#[message]
#[derive(Clone)]
pub enum Delayed {
    Hold(u64),
    Tick,
}

/// S24, S25: a fixed-delay timer of 1 s meets a handler that awaits 3.5 s: one tick
/// waits in the mailbox, the next is sent the moment that one is taken (so both are
/// handled at 3.5 s), and the one after comes a full delay later, at 4.5 s.
#[tokio::test(start_paused = true)]
async fn s24_s25_a_fixed_delay_timer_behind_a_stall_sends_the_next_tick_when_one_is_taken() {
    let system = ActorSystem::new("fixed-delay").unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers
                    .start_fixed_delay("delay", Delayed::Tick, Duration::from_secs(1))
                    .unwrap();
                let to = to.clone();
                let started = Instant::now();
                Behaviors::receive_async(async move |_ctx: &mut ActorContext<Delayed>, m| match m {
                    Delayed::Hold(n) => tokio::time::sleep(ms(n)).await,
                    Delayed::Tick => {
                        let at = started.elapsed().as_millis() / 100 * 100;
                        to.tell(format!("tick at {at}ms"));
                    }
                })
            }),
            "delayed",
        )
        .unwrap();
    actor.tell(Delayed::Hold(3_500));
    // Paused time: the bound is for the clock tokio advances, not for real time.
    let lines = probe.receive_messages(4, Duration::from_secs(30)).await;
    assert_eq!(
        lines,
        [
            "tick at 3500ms",
            "tick at 3500ms",
            "tick at 4500ms",
            "tick at 5500ms"
        ]
    );
    system.terminate().await;
}

/// S24, S25, S9, S11, S6: a fixed-delay timer goes on when its tick's handler fails
/// (under `resume`) or leaves the tick `unhandled` (a dead letter): the next tick is
/// sent all the same. The same for a fixed-rate timer.
#[tokio::test(start_paused = true)]
async fn s24_s25_ticks_that_fail_or_go_unhandled_do_not_stop_their_timer() {
    for fixed_rate in [false, true] {
        let system = ActorSystem::new("failing-ticks").unwrap();
        let mut sub = letters(&system);
        let mut probe = TestProbe::<String>::new(&system);
        let to = probe.actor_ref().clone();
        let behavior = Behaviors::with_timers(move |timers| {
            if fixed_rate {
                timers
                    .start_fixed_rate("t", Delayed::Tick, ms(100))
                    .unwrap();
            } else {
                timers
                    .start_fixed_delay("t", Delayed::Tick, ms(100))
                    .unwrap();
            }
            let to = to.clone();
            let count = AtomicU64::new(0);
            Behaviors::receive_message(move |_m: Delayed| -> Result<Behavior<Delayed>, Boom> {
                let n = count.fetch_add(1, SeqCst) + 1;
                match n % 3 {
                    1 => Err(Boom),
                    2 => Ok(Behaviors::unhandled()),
                    _ => {
                        to.tell(format!("tick {n}"));
                        Ok(Behaviors::same())
                    }
                }
            })
        });
        let actor = system
            .spawn(
                Behaviors::supervise(behavior).on_failure::<Boom>(SupervisorStrategy::resume()),
                "ticking",
            )
            .unwrap();
        expect_lines(&mut probe, &["tick 3", "tick 6", "tick 9", "tick 12"]).await;
        let unhandled = letters_for(&mut sub, actor.path(), 4).await;
        for letter in &unhandled {
            assert!(
                matches!(letter.reason(), DeadLetterReason::Unhandled),
                "fixed_rate={fixed_rate}: {}",
                describe(letter)
            );
        }
        system.terminate().await;
    }
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

/// S3, S5: tells from plain OS threads (no tokio context) reach the actor, each
/// thread's in order; once the tokio runtime the system ran on has been shut down
/// without `terminate`, a tell from a plain thread still neither panics nor blocks.
#[test]
fn s3_s5_tells_from_plain_threads_and_after_the_runtime_is_gone_never_fail() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (actor, seen) = runtime.block_on(async {
        let system = ActorSystem::new("plain-threads").unwrap();
        let (value, _overlaps) = collector();
        let actor = system.spawn(value, "collector").unwrap();
        let threads: Vec<_> = (1..=3_u64)
            .map(|sender| {
                let actor = actor.clone();
                std::thread::spawn(move || {
                    for seq in 0..300 {
                        actor.tell(Item { sender, seq });
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let mut probe = TestProbe::<Vec<u64>>::new(&system);
        actor.tell(ReportTo {
            reply_to: probe.actor_ref().clone(),
        });
        (actor, probe.expect_message(T).await)
    });
    for (sender, seqs) in per_sender(&seen) {
        assert_eq!(seqs, (0..300).collect::<Vec<u64>>(), "sender {sender}");
    }
    drop(runtime);
    let late = std::thread::spawn(move || {
        for seq in 0..100 {
            actor.tell(Item { sender: 9, seq });
        }
    });
    late.join()
        .expect("a tell after the runtime is gone does not panic");
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

/// S5, S29, S30: the mixed senders again, on a bounded drop-oldest mailbox: what is
/// handled from each sender is still in the order sent, and everything missing was
/// pushed out, each as a `PushedOut` letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_senders_mixing_tells_and_offers_on_a_drop_oldest_mailbox_keep_their_order() {
    let system = ActorSystem::new("mixed-drop-oldest").unwrap();
    let mut sub = letters(&system);
    let (actor, overlaps) = bounded_collector(&system, OverflowStrategy::DropOldest);
    let tasks = mix_tells_and_offers(&actor);
    for task in tasks {
        timeout(T, task).await.unwrap().unwrap();
    }
    let seen = offered_report(&system, &actor).await;
    for (sender, seqs) in per_sender(&seen) {
        assert_in_order(sender, &seqs);
    }
    let missing = 1_600 - seen.len();
    let lost = letters_for(&mut sub, actor.path(), missing).await;
    let seen: HashSet<u64> = seen.into_iter().collect();
    for letter in &lost {
        assert!(
            matches!(letter.reason(), DeadLetterReason::PushedOut),
            "{}",
            describe(letter)
        );
        let item = letter
            .take_message::<Item>()
            .unwrap_or_else(|| panic!("a letter without its item: {}", describe(letter)));
        assert!(!seen.contains(&(item.sender * 1_000_000 + item.seq)));
    }
    no_letter_for(&mut sub, actor.path(), ms(50)).await;
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

#[message]
#[derive(Clone)]
pub enum Voice {
    Say(u64),
    Tick,
    Fail,
}

/// S8 on a multi-thread runtime with a global subscriber: an actor spawned in a
/// handler (not a setup) logs after many awaits (its future free to move between
/// worker threads), in timer ticks, in a blocking call, in a setup run again by a
/// restart, in `PreRestart`, and in the `PostStop` that `terminate` brings: each
/// record carries its path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s8_records_on_a_multi_thread_runtime_carry_the_path_across_awaits_and_restarts() {
    let captured = global_capture();
    let system = ActorSystem::new("s8-global").unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (stopped_tx, mut stopped_rx) = mpsc::unbounded_channel::<()>();
    let runs = Arc::new(AtomicU64::new(0));
    let voice = Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<Voice>| {
        let run = runs.fetch_add(1, SeqCst) + 1;
        tracing::info!("s8g-mark setup {run}");
        ctx.timers()
            .start_fixed_rate("tick", Voice::Tick, ms(2))
            .unwrap();
        let to = to.clone();
        let on_signal = stopped_tx.clone();
        let ticks = Arc::new(AtomicU64::new(0));
        Behaviors::receive_async(async move |ctx: &mut ActorContext<Voice>, m: Voice| {
            match m {
                Voice::Say(n) => {
                    for _ in 0..20 {
                        tokio::task::yield_now().await;
                    }
                    tracing::info!("s8g-mark after awaits {n}");
                    ctx.run_blocking(move || tracing::info!("s8g-mark blocking {n}"))
                        .await
                        .unwrap();
                    tokio::time::sleep(ms(1)).await;
                    tracing::info!("s8g-mark after blocking {n}");
                    to.tell(format!("said {n}"));
                }
                Voice::Tick => {
                    let t = ticks.fetch_add(1, SeqCst) + 1;
                    if t <= 3 {
                        tracing::info!("s8g-mark tick {run}.{t}");
                        to.tell(format!("tick {run}.{t}"));
                    }
                }
                Voice::Fail => return Err(Boom),
            }
            Ok(())
        })
        .on_signal(move |_ctx, signal| match signal {
            Signal::PreRestart => tracing::info!("s8g-mark pre-restart"),
            Signal::PostStop => {
                tracing::info!("s8g-mark post-stop");
                let _ = on_signal.send(());
            }
            _ => {}
        })
    }))
    .on_failure::<Boom>(SupervisorStrategy::restart());
    let (voice_tx, mut voice_rx) = mpsc::unbounded_channel::<ActorRef<Voice>>();
    let room = system
        .spawn(
            Behaviors::receive(move |ctx: &mut ActorContext<u64>, _: u64| {
                let _ = voice_tx.send(ctx.spawn(voice.clone(), "voice").unwrap());
            }),
            "room",
        )
        .unwrap();
    room.tell(0_u64);
    let voice = next(&mut voice_rx).await;
    for n in 0..4 {
        voice.tell(Voice::Say(n));
    }
    let mut said = Vec::new();
    let mut ticks = Vec::new();
    while said.len() < 4 || ticks.len() < 3 {
        let line = probe.expect_message(T).await;
        if line.starts_with("said") {
            said.push(line);
        } else {
            ticks.push(line);
        }
    }
    assert_eq!(said, ["said 0", "said 1", "said 2", "said 3"]);
    assert_eq!(ticks, ["tick 1.1", "tick 1.2", "tick 1.3"]);
    voice.tell(Voice::Fail);
    skip_to(&mut probe, "tick 2.3").await;
    timeout(T, system.terminate()).await.unwrap();
    // The probe stops with its system: the end of `PostStop` comes by a channel.
    next(&mut stopped_rx).await;
    let text = captured.text();
    let mut marks = vec![
        "setup 1".to_string(),
        "setup 2".to_string(),
        "pre-restart".to_string(),
        "post-stop".to_string(),
    ];
    for n in 0..4 {
        marks.push(format!("after awaits {n}"));
        marks.push(format!("blocking {n}"));
        marks.push(format!("after blocking {n}"));
    }
    for t in 1..=3 {
        marks.push(format!("tick 1.{t}"));
        marks.push(format!("tick 2.{t}"));
    }
    for mark in marks {
        let said = format!("s8g-mark {mark}");
        let lines: Vec<&str> = text.lines().filter(|l| l.ends_with(&said)).collect();
        assert!(!lines.is_empty(), "no record {said:?}");
        for line in lines {
            assert!(
                line.contains("path=/user/room/voice"),
                "{said:?} untagged: {line}"
            );
        }
    }
}

// =================================================================================
// 8. Further edges (S5, S6, S9, S15, S17, S28)
// =================================================================================

#[message(reply = u64)]
pub struct SeenFrom(pub u64);

/// Counts the items from each sender.
#[derive(Clone, Default)]
pub struct Tally2 {
    from: BTreeMap<u64, u64>,
}

#[actor]
impl Tally2 {
    async fn item(&mut self, item: Item) {
        if item.seq.is_multiple_of(4) {
            tokio::task::yield_now().await;
        }
        *self.from.entry(item.sender).or_default() += 1;
    }

    fn seen_from(&mut self, SeenFrom(sender): SeenFrom) -> u64 {
        self.from.get(&sender).copied().unwrap_or(0)
    }
}

/// S5, S21: an ask travels in order with its sender's tells and offers: four tasks
/// on a multi-thread runtime each tell, offer and ask in turn, and every answer
/// counts exactly the items that sender sent before asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_an_ask_keeps_its_place_among_its_senders_tells_and_offers() {
    let system = ActorSystem::new("ask-in-line").unwrap();
    let actor = system.spawn(Tally2::default(), "tally").unwrap();
    let mut tasks = Vec::new();
    for sender in 1..=4_u64 {
        let actor = actor.clone();
        tasks.push(tokio::spawn(async move {
            let mut sent = 0;
            for seq in 0..300 {
                if seq % 2 == 0 {
                    actor.tell(Item { sender, seq });
                } else {
                    assert!(actor.offer(Item { sender, seq }).await);
                }
                sent += 1;
                if seq % 25 == 24 {
                    let counted = actor.ask(SeenFrom(sender)).timeout(T).await.unwrap();
                    assert_eq!(counted, sent, "sender {sender} after {sent} items");
                }
            }
        }));
    }
    for task in tasks {
        timeout(T, task).await.unwrap().unwrap();
    }
    system.terminate().await;
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

/// S28, S9, S11, S3: a translation that panics is its owner's failure (resumed here,
/// the owner's count kept), never the adapter's sender's; once the owner has stopped,
/// a tell through the adapter neither fails nor panics, and is a dead letter.
#[tapio::test]
async fn s28_s9_a_panicking_translation_is_the_owners_failure_and_a_dead_adapter_letters(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel::<ActorRef<String>>();
    let owner = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let adapter = ctx.message_adapter(|text: String| {
                    text.parse::<u64>()
                        .unwrap_or_else(|_| panic!("not a number: {text}"))
                });
                let _ = adapter_tx.send(adapter);
                let to = to.clone();
                let sum = AtomicU64::new(0);
                Behaviors::receive_message(move |n: u64| {
                    if n == 0 {
                        return Behaviors::stopped();
                    }
                    let s = sum.fetch_add(n, SeqCst) + n;
                    to.tell(format!("sum {s}"));
                    Behaviors::same()
                })
            }))
            .on_failure::<Panicked>(SupervisorStrategy::resume()),
            "owner",
        )
        .unwrap();
    let adapter = next(&mut adapter_rx).await;
    for text in ["2", "two", "3", "x", "5"] {
        adapter.tell(text.to_string());
    }
    expect_lines(&mut probe, &["sum 2", "sum 5", "sum 10"]).await;
    let mut sub = letters(&system);
    probe.watch(&owner);
    owner.tell(0_u64);
    probe.expect_terminated(&owner, T).await;
    adapter.tell("7".to_string());
    let lost = letter_for_any(&mut sub).await;
    assert!(
        matches!(lost.reason(), DeadLetterReason::RecipientStopped),
        "{}",
        describe(&lost)
    );
    probe.expect_no_message(ms(20)).await;
}

/// The next dead letter, within `T`.
async fn letter_for_any(sub: &mut Subscription<DeadLetter>) -> DeadLetter {
    timeout(T, sub.recv())
        .await
        .expect("a dead letter within the bound")
        .expect("the stream is open")
}

/// S6, S23, S31: an async handler that answers `stopped` after awaiting: what was
/// queued behind it becomes dead letters (`RecipientStopped`) and a queued ask fails
/// at once with `TargetTerminated`.
#[tapio::test(start_paused = true)]
async fn s6_s23_stopped_after_an_await_letters_the_queue_and_fails_queued_asks(
    system: ActorSystem,
) {
    let mut sub = letters(&system);
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |_ctx: &mut ActorContext<Step>, step: Step| {
                tokio::time::sleep(ms(100)).await;
                if step.n == 0 {
                    Behaviors::stopped()
                } else {
                    step.reply_to.tell(step.n);
                    Behaviors::same()
                }
            }),
            "quitter",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    actor.tell(Step {
        n: 0,
        reply_to: probe.actor_ref().clone(),
    });
    actor.tell(Step {
        n: 1,
        reply_to: probe.actor_ref().clone(),
    });
    let asked = actor
        .ask_with(|reply_to| Step { n: 2, reply_to })
        .timeout(Duration::from_secs(60));
    let started = Instant::now();
    let failed = timeout(T, asked).await.expect("not at the deadline");
    assert!(
        matches!(failed, Err(AskError::TargetTerminated { .. })),
        "{failed:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    let lost = letters_for(&mut sub, actor.path(), 1).await;
    assert!(matches!(
        lost[0].reason(),
        DeadLetterReason::RecipientStopped
    ));
    probe.expect_no_message(ms(20)).await;
}

/// Logs "s8d-mark <what>" when dropped.
struct LoggingGuard(&'static str);

impl Drop for LoggingGuard {
    fn drop(&mut self) {
        tracing::info!("s8d-mark {}", self.0);
    }
}

/// S8 (and the crate docs, "Cancel safety of handlers": a drop guard runs): an async
/// handler stopped where it awaits runs its guard, and what the guard logs is a
/// record of the actor's, tagged with its path, as is its `PostStop`'s.
#[test]
fn s8_a_guard_dropped_with_a_stopped_handler_logs_with_the_actor_path() {
    let (captured, _default) = scoped_capture();
    TestConfig::new("s8_guard").run(|system: ActorSystem| async move {
        let mut probe = TestProbe::<String>::new(&system);
        let to = probe.actor_ref().clone();
        let on_signal = to.clone();
        let actor = system
            .spawn(
                Behaviors::receive_async(async move |_ctx: &mut ActorContext<u64>, _: u64| {
                    let _guard = LoggingGuard("handler guard");
                    to.tell("waiting".to_string());
                    std::future::pending::<()>().await;
                })
                .on_signal(move |_ctx, signal| {
                    if *signal == Signal::PostStop {
                        tracing::info!("s8d-mark post-stop");
                        on_signal.tell("stopped".to_string());
                    }
                }),
                "guarded",
            )
            .unwrap();
        actor.tell(0_u64);
        expect_lines(&mut probe, &["waiting"]).await;
        system.stop(&actor).unwrap();
        expect_lines(&mut probe, &["stopped"]).await;
    });
    let text = captured.text();
    let untagged: Vec<String> = ["handler guard", "post-stop"]
        .iter()
        .map(|mark| {
            let said = format!("s8d-mark {mark}");
            text.lines()
                .find(|l| l.ends_with(&said))
                .unwrap_or_else(|| panic!("no record {said:?} in:\n{text}"))
                .to_string()
        })
        .filter(|line| !line.contains("path=/user/guarded"))
        .collect();
    assert!(untagged.is_empty(), "untagged: {untagged:#?}\nall:\n{text}");
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

/// S3, S31, S30: four tasks tell and offer to an actor on a bounded mailbox while it
/// is stopped under them, twenty times: no tell fails, every message is either
/// handled or a dead letter, exactly once, and nothing more is lettered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_s31_tells_racing_a_stop_are_each_handled_or_lettered_exactly_once() {
    let system = ActorSystem::new("racing-stop").unwrap();
    let mut sub = letters(&system);
    for round in 0..20_u64 {
        let handled = Arc::new(AtomicU64::new(0));
        let counter = handled.clone();
        let actor = system
            .spawn_with(
                Behaviors::receive_message(move |_: Item| {
                    counter.fetch_add(1, SeqCst);
                }),
                &format!("target-{round}"),
                MailboxConfig::bounded(64, OverflowStrategy::DropNew).unwrap(),
            )
            .unwrap();
        let mut tasks = Vec::new();
        for sender in 0..4_u64 {
            let actor = actor.clone();
            tasks.push(tokio::spawn(async move {
                for seq in 0..500 {
                    if seq % 2 == 0 {
                        actor.tell(Item { sender, seq });
                    } else {
                        let _ = actor.offer(Item { sender, seq }).await;
                    }
                    if seq % 64 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            }));
        }
        let mut watcher = TestProbe::<String>::new(&system);
        watcher.watch(&actor);
        tokio::task::yield_now().await;
        system.stop(&actor).unwrap();
        for task in tasks {
            timeout(T, task).await.unwrap().unwrap();
        }
        watcher.expect_terminated(&actor, T).await;
        let handled = handled.load(SeqCst) as usize;
        let lost = letters_for(&mut sub, actor.path(), 2_000 - handled).await;
        let mut keys = HashSet::new();
        for letter in &lost {
            let item = letter
                .take_message::<Item>()
                .unwrap_or_else(|| panic!("round {round}: {}", describe(letter)));
            assert!(
                keys.insert((item.sender, item.seq)),
                "round {round}: lettered twice: {}",
                describe(letter)
            );
        }
        no_letter_for(&mut sub, actor.path(), ms(20)).await;
    }
    system.terminate().await;
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

/// S24, S25: a fixed-delay timer whose own tick handler cancels its key and starts
/// it again, slower: from then on exactly one tick a second (not the old rate, not
/// two timers); one that only cancels gets no tick ever again.
#[tokio::test(start_paused = true)]
async fn s24_s25_a_fixed_delay_key_restarted_or_cancelled_from_its_own_tick() {
    for restart in [true, false] {
        let system = ActorSystem::new("self-replacing").unwrap();
        let mut probe = TestProbe::<String>::new(&system);
        let to = probe.actor_ref().clone();
        system
            .spawn(
                Behaviors::with_timers(move |timers| {
                    timers
                        .start_fixed_delay("t", Delayed::Tick, ms(100))
                        .unwrap();
                    let to = to.clone();
                    let started = Instant::now();
                    let count = AtomicU64::new(0);
                    Behaviors::receive(move |ctx: &mut ActorContext<Delayed>, _m: Delayed| {
                        let n = count.fetch_add(1, SeqCst) + 1;
                        let at = started.elapsed().as_millis() / 10 * 10;
                        to.tell(format!("tick {n} at {at}ms"));
                        if n == 3 {
                            ctx.timers().cancel("t");
                            if restart {
                                ctx.timers()
                                    .start_fixed_delay("t", Delayed::Tick, Duration::from_secs(1))
                                    .unwrap();
                            }
                        }
                    })
                }),
                "ticker",
            )
            .unwrap();
        let first = probe.receive_messages(3, Duration::from_secs(30)).await;
        assert_eq!(
            first,
            ["tick 1 at 100ms", "tick 2 at 200ms", "tick 3 at 300ms"]
        );
        if restart {
            let more = probe.receive_messages(3, Duration::from_secs(30)).await;
            assert_eq!(
                more,
                ["tick 4 at 1300ms", "tick 5 at 2300ms", "tick 6 at 3300ms"]
            );
        } else {
            probe.expect_no_message(Duration::from_secs(10)).await;
        }
        system.terminate().await;
    }
}

/// S6, S7, S10: a handler that switches to a deferred behavior: a `setup` runs when
/// switched to (once, before the next message); switching to a `supervise` brings its
/// clauses along (a `Boom` then resumed, though the actor had no clause before); and
/// switching to `with_timers` starts its timers.
#[tapio::test(start_paused = true)]
async fn s6_s7_switching_to_a_setup_a_supervise_or_with_timers_takes_effect(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();

    fn third(to: ActorRef<String>) -> Behavior<u64> {
        Behaviors::with_timers(move |timers| {
            timers.start_single_timer("wake", 77_u64, ms(500));
            let to = to.clone();
            Behaviors::receive_message(move |n: u64| to.tell(format!("third {n}")))
        })
    }

    fn second(to: ActorRef<String>) -> Behavior<u64> {
        Behaviors::supervise(Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                return Err(Boom);
            }
            to.tell(format!("second {n}"));
            if n == 3 {
                return Ok(third(to.clone()));
            }
            Ok(Behaviors::same())
        }))
        .on_failure::<Boom>(SupervisorStrategy::resume())
        .into()
    }

    let first = Behaviors::receive_message(move |n: u64| {
        to.tell(format!("first {n}"));
        let to = to.clone();
        Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
            to.tell("setup ran".to_string());
            second(to.clone())
        })
    });
    let actor = system.spawn(first, "shifting").unwrap();
    probe.watch(&actor);
    for n in [1_u64, 2, 0, 3, 4] {
        actor.tell(n);
    }
    expect_lines(
        &mut probe,
        &[
            "first 1",
            "setup ran",
            "second 2",
            "second 3",
            "third 4",
            "third 77",
        ],
    )
    .await;
    probe.expect_no_termination(ms(20)).await;
}

/// S4, S18 (`Behaviors::receive_async` docs: other signals wait until the handler is
/// done): a watched actor stops while the watcher's async handler awaits; its
/// `Terminated` is handled only after that handler has ended, never inside it.
#[tapio::test]
async fn s4_s18_terminated_waits_for_the_awaiting_handler_to_end(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let gate = Arc::new(tokio::sync::Notify::new());
    let opened = gate.clone();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let watched = target.clone();
    let watcher = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&watched);
                let to = to.clone();
                let on_signal = to.clone();
                let gate = opened.clone();
                Behaviors::receive_async(async move |_ctx: &mut ActorContext<u64>, _: u64| {
                    to.tell("handler waits".to_string());
                    gate.notified().await;
                    to.tell("handler ends".to_string());
                })
                .on_signal(move |_ctx, signal| {
                    if let Signal::Terminated(_) = signal {
                        on_signal.tell("terminated".to_string());
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    watcher.tell(0_u64);
    expect_lines(&mut probe, &["handler waits"]).await;
    let mut outside = TestProbe::<String>::new(&system);
    outside.watch(&target);
    system.stop(&target).unwrap();
    outside.expect_terminated(&target, T).await;
    probe.expect_no_message(ms(50)).await;
    gate.notify_one();
    expect_lines(&mut probe, &["handler ends", "terminated"]).await;
}
