//! Outside-in scenarios for features in combination (S13-S34, S48-S49), written from
//! `SEMANTICS.md` and the public docs, the way a demanding new user would try them:
//! bounded mailboxes and `offer` together with the stash, message adapters, timers,
//! state machines and restarts; routers whose routees are bounded, stash, restart or
//! block; asks through routers, into stashes and into full mailboxes; and, for each
//! way a message can be dropped on the way, its dead letter, counted exactly.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, TestInbox, TestProbe};
use tapio::{
    AskError, DeadLetter, DeadLetterReason, MailboxConfig, MailboxOverflow, OverflowStrategy,
    StashOverflow, Subscription, TimerMode,
};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::{Instant, timeout};

const T: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("boom: a test failure")]
struct Boom;

// ---------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------

fn bounded(capacity: usize, overflow: OverflowStrategy) -> MailboxConfig {
    MailboxConfig::bounded(capacity, overflow).unwrap()
}

/// The next dead letter, in bounded time.
async fn next_letter(letters: &mut Subscription<DeadLetter>) -> DeadLetter {
    timeout(T, letters.recv())
        .await
        .expect("a dead letter in time")
        .expect("the event stream is open")
}

/// Every dead letter published within `within` from now.
async fn letters_within(
    letters: &mut Subscription<DeadLetter>,
    within: Duration,
) -> Vec<DeadLetter> {
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    while let Ok(Some(letter)) = tokio::time::timeout_at(deadline, letters.recv()).await {
        out.push(letter);
    }
    out
}

/// Asserts that an ask that began at `started` failed, within a second, with an
/// error for which `expected` holds.
fn assert_fails_at_once<R: std::fmt::Debug>(
    outcome: &Result<R, AskError>,
    started: Instant,
    expected: impl Fn(&AskError) -> bool,
) {
    assert!(
        matches!(outcome, Err(error) if expected(error)),
        "{outcome:?} after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

/// Poll a future once with a waker that does nothing.
fn poll_once<F: std::future::Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    std::pin::Pin::new(future).poll(&mut cx)
}

/// Wait (in bounded time) until `done` holds.
async fn eventually(mut done: impl FnMut() -> bool) {
    timeout(T, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("the condition came true in time");
}

/// Everything a probe receives from now until `within` has passed (for a stream that
/// may never go quiet, such as a repeating timer's).
async fn receive_for<M: Message>(probe: &mut TestProbe<M>, within: Duration) -> Vec<M> {
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return out;
        }
        match probe.receive_message(left).await {
            Some(message) => out.push(message),
            None => return out,
        }
    }
}

/// The next value on a std channel, waited for without blocking the runtime.
async fn recv_std<V>(rx: &std::sync::mpsc::Receiver<V>) -> V {
    timeout(T, async {
        loop {
            if let Ok(value) = rx.try_recv() {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("a value in time")
}

/// Drain what a probe receives until it has been quiet for `quiet`.
async fn drain<M: Message>(probe: &mut TestProbe<M>, quiet: Duration) -> Vec<M> {
    let mut out = Vec::new();
    while let Some(message) = probe.receive_message(quiet).await {
        out.push(message);
    }
    out
}

// ---------------------------------------------------------------------------------
// Bounded mailboxes and the stash (S26, S27, S29, S30)
// ---------------------------------------------------------------------------------

#[message]
enum Item {
    N(u64),
    Open,
}

/// After the replay: reports each number; on `block_on` reports `0` first and waits
/// for a permit of `gate`.
fn gated_items(report: ActorRef<u64>, gate: Arc<Semaphore>, block_on: u64) -> Behavior<Item> {
    Behaviors::receive_message_async(async move |item: Item| {
        if let Item::N(n) = item {
            if n == block_on {
                report.tell(0);
                gate.acquire().await.unwrap().forget();
            }
            report.tell(n);
        }
    })
    .into()
}

/// Stashes every number until `Open`, then replays them into `gated_items`.
fn stash_then_report(
    capacity: usize,
    report: ActorRef<u64>,
    gate: Arc<Semaphore>,
    block_on: u64,
) -> Behavior<Item> {
    Behaviors::with_stash(capacity, move |stash| {
        let (report, gate) = (report.clone(), gate.clone());
        Behaviors::receive_message(move |item: Item| -> Result<Behavior<Item>, StashOverflow> {
            match item {
                Item::N(n) => {
                    stash.stash(Item::N(n))?;
                    Ok(Behaviors::same())
                }
                Item::Open => {
                    Ok(stash.unstash_all(gated_items(report.clone(), gate.clone(), block_on)))
                }
            }
        })
    })
    .unwrap()
}

/// Eight numbers stashed through a mailbox of two (fed by `offer`), then replayed; the
/// first replayed one blocks while `newer` is told. Returns what was handled after the
/// replay and the dead letters for the actor, as `(n, reason)`.
async fn replay_against_the_bound(
    system: &ActorSystem,
    overflow: OverflowStrategy,
    newer: std::ops::RangeInclusive<u64>,
) -> (Vec<u64>, Vec<(u64, DeadLetterReason)>) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(system);
    let gate = Arc::new(Semaphore::new(0));
    let actor = system
        .spawn_with(
            stash_then_report(16, probe.actor_ref().clone(), gate.clone(), 1),
            "replayer",
            bounded(2, overflow),
        )
        .unwrap();
    for n in 1..=8 {
        assert!(
            timeout(T, actor.offer(Item::N(n))).await.unwrap(),
            "offer {n}"
        );
    }
    assert!(timeout(T, actor.offer(Item::Open)).await.unwrap());
    assert_eq!(
        probe.expect_message(T).await,
        0,
        "the replay started, and blocks"
    );
    for n in newer.clone() {
        actor.tell(Item::N(n));
    }
    gate.add_permits(1);
    assert_eq!(
        probe.receive_messages(8, T).await,
        [1, 2, 3, 4, 5, 6, 7, 8],
        "the whole replay, in arrival order, first"
    );
    let after = drain(&mut probe, Duration::from_millis(100)).await;
    let mut dead = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(50)).await {
        assert_eq!(letter.recipient(), actor.path(), "{letter}");
        let Some(Item::N(n)) = letter.take_message::<Item>() else {
            panic!("a letter without its number: {letter}");
        };
        dead.push((n, letter.reason().clone()));
    }
    // Every newer message was handled or dead-lettered, exactly once.
    let mut all: Vec<u64> = after
        .iter()
        .copied()
        .chain(dead.iter().map(|(n, _)| *n))
        .collect();
    all.sort_unstable();
    assert_eq!(
        all,
        newer.collect::<Vec<_>>(),
        "handled {after:?}, dead {dead:?}"
    );
    (after, dead)
}

// S27 + S29 + S30: a stash may hold more than the mailbox's bound; `unstash_all`
// replays all of it, none refused by the bound (DropNew), ahead of newer traffic;
// newer traffic still meets the bound, and what it refuses is a dead letter.
#[tapio::test(start_paused = true)]
async fn s27_s29_a_replay_is_never_refused_by_a_drop_new_bound(system: ActorSystem) {
    let (after, dead) = replay_against_the_bound(&system, OverflowStrategy::DropNew, 9..=11).await;
    assert!(after.windows(2).all(|w| w[0] < w[1]), "in order: {after:?}");
    assert!(
        !dead.is_empty(),
        "a bound of 2 cannot take three newer messages"
    );
    for (n, reason) in &dead {
        assert_eq!(reason, &DeadLetterReason::MailboxFull, "{n}");
    }
}

// S27 + S29: with drop-oldest, newer traffic told during a replay pushes out only
// newer traffic: the replayed messages are all handled, in order, first.
#[tapio::test(start_paused = true)]
async fn s27_s29_drop_oldest_never_pushes_out_a_replayed_message(system: ActorSystem) {
    let (after, dead) =
        replay_against_the_bound(&system, OverflowStrategy::DropOldest, 9..=12).await;
    assert!(after.windows(2).all(|w| w[0] < w[1]), "in order: {after:?}");
    assert!(
        after.contains(&12),
        "the newest survives drop-oldest: {after:?}"
    );
    for (n, reason) in &dead {
        assert_eq!(reason, &DeadLetterReason::PushedOut, "{n}");
    }
}

#[message]
enum Load {
    N(u64),
    Block,
    Open,
}

/// Stashes numbers; `Block` reports `0` and waits for `gate`; `Open` replays into a
/// handler that reports each number. Counts its setups.
fn loader(report: ActorRef<u64>, gate: Arc<Semaphore>, setups: Arc<AtomicUsize>) -> Behavior<Load> {
    Behaviors::with_stash(16, move |stash| {
        setups.fetch_add(1, Ordering::SeqCst);
        let (report, gate) = (report.clone(), gate.clone());
        Behaviors::receive_message_async(
            async move |load: Load| -> Result<Behavior<Load>, StashOverflow> {
                match load {
                    Load::N(n) => {
                        stash.stash(Load::N(n))?;
                        Ok(Behaviors::same())
                    }
                    Load::Block => {
                        report.tell(0);
                        gate.acquire().await.unwrap().forget();
                        Ok(Behaviors::same())
                    }
                    Load::Open => {
                        let report = report.clone();
                        Ok(
                            stash.unstash_all(Behaviors::receive_message(move |load: Load| {
                                if let Load::N(n) = load {
                                    report.tell(n);
                                }
                            })),
                        )
                    }
                }
            },
        )
    })
    .unwrap()
}

/// The number in a letter for a `Load`.
fn load_number(letter: &DeadLetter) -> u64 {
    match letter.take_message::<Load>() {
        Some(Load::N(n)) => n,
        Some(Load::Block) => 100,
        Some(Load::Open) => 200,
        None => panic!("a letter without its message: {letter}"),
    }
}

// S26 + S29 + S14: `Fail` overflow on an actor whose stash holds messages: the
// refused message is `MailboxFull`, the restart turns the stash into `StashDiscarded`
// letters and keeps the queued messages for the next incarnation. Each message is
// handled or dead-lettered exactly once.
#[tapio::test(start_paused = true)]
async fn s26_s29_fail_overflow_discards_the_stash_and_keeps_the_queue(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let setups = Arc::new(AtomicUsize::new(0));
    let actor = system
        .spawn_with(
            Behaviors::supervise(loader(
                probe.actor_ref().clone(),
                gate.clone(),
                setups.clone(),
            ))
            .on_failure::<MailboxOverflow>(SupervisorStrategy::restart()),
            "loader",
            bounded(2, OverflowStrategy::Fail),
        )
        .unwrap();
    for n in 1..=3 {
        assert!(timeout(T, actor.offer(Load::N(n))).await.unwrap());
    }
    assert!(timeout(T, actor.offer(Load::Block)).await.unwrap());
    assert_eq!(probe.expect_message(T).await, 0);
    actor.tell(Load::N(4));
    actor.tell(Load::N(5));
    actor.tell(Load::N(6)); // full: refused, and the actor fails
    let refused = next_letter(&mut letters).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::MailboxFull,
        "{refused}"
    );
    assert_eq!(load_number(&refused), 6);
    gate.add_permits(1);
    eventually(|| setups.load(Ordering::SeqCst) == 2).await;
    // Room comes once the new incarnation has stashed 4 and 5 again.
    assert!(timeout(T, actor.offer(Load::Open)).await.unwrap());
    assert_eq!(probe.receive_messages(2, T).await, [4, 5]);
    let mut discarded = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(100)).await {
        assert_eq!(letter.recipient(), actor.path(), "{letter}");
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::StashDiscarded,
            "{letter}"
        );
        discarded.push(load_number(&letter));
    }
    discarded.sort_unstable();
    assert_eq!(discarded, [1, 2, 3], "the old stash, each once");
    assert_eq!(setups.load(Ordering::SeqCst), 2);
}

/// Stop an actor that holds messages in three places (its stash, its full bounded
/// mailbox, and offers waiting for room) while its handler awaits: every one of them
/// is a `RecipientStopped` dead letter, exactly once, and the offers resolve `false`.
async fn stop_with_everything_held(system: &ActorSystem) {
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(1_000)
        .unwrap();
    let mut probe = TestProbe::<u64>::new(system);
    let gate = Arc::new(Semaphore::new(0));
    let setups = Arc::new(AtomicUsize::new(0));
    let actor = system
        .spawn_with(
            loader(probe.actor_ref().clone(), gate.clone(), setups),
            "holder",
            bounded(2, OverflowStrategy::DropNew),
        )
        .unwrap();
    probe.watch(&actor);
    for n in 1..=3 {
        assert!(timeout(T, actor.offer(Load::N(n))).await.unwrap());
    }
    assert!(timeout(T, actor.offer(Load::Block)).await.unwrap());
    assert_eq!(probe.expect_message(T).await, 0);
    actor.tell(Load::N(4));
    actor.tell(Load::N(5));
    let mut o6 = actor.offer(Load::N(6));
    let mut o7 = actor.offer(Load::N(7));
    assert!(poll_once(&mut o6).is_pending(), "the mailbox is full");
    assert!(poll_once(&mut o7).is_pending());
    system.stop(&actor).unwrap();
    assert!(!timeout(T, o6).await.unwrap(), "its actor stopped");
    assert!(!timeout(T, o7).await.unwrap(), "its actor stopped");
    probe.expect_terminated(&actor, T).await;
    let mut seen = BTreeMap::<u64, usize>::new();
    while seen.keys().filter(|n| **n < 100).count() < 7 {
        let letter = next_letter(&mut letters).await;
        assert_eq!(letter.recipient(), actor.path(), "{letter}");
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::RecipientStopped,
            "{letter}"
        );
        *seen.entry(load_number(&letter)).or_default() += 1;
    }
    for letter in letters_within(&mut letters, Duration::from_millis(100)).await {
        *seen.entry(load_number(&letter)).or_default() += 1;
    }
    let numbers: BTreeMap<u64, usize> = seen
        .iter()
        .filter(|(n, _)| **n < 100)
        .map(|(n, c)| (*n, *c))
        .collect();
    assert_eq!(
        numbers,
        (1..=7).map(|n| (n, 1)).collect::<BTreeMap<_, _>>(),
        "stashed 1-3, queued 4-5, offered 6-7: one letter each ({seen:?})"
    );
    assert!(
        seen.get(&100).copied().unwrap_or(0) <= 1,
        "the message in hand: {seen:?}"
    );
    gate.add_permits(1);
}

// S31 + S30 + S26 + S19 (current thread): see `stop_with_everything_held`.
#[tapio::test(start_paused = true)]
async fn s31_stop_dead_letters_stash_queue_and_offers_once_each(system: ActorSystem) {
    stop_with_everything_held(&system).await;
}

// S31 + S30 + S26 + S19 (two workers): the same, with real time.
#[tapio::test(worker_threads = 2)]
async fn s31_stop_dead_letters_stash_queue_and_offers_once_each_on_two_workers(
    system: ActorSystem,
) {
    stop_with_everything_held(&system).await;
}

// S19 + S30: offers waiting on a full mailbox when the system terminates resolve
// `false` (they do not hang), and their messages are dead letters.
#[tapio::test(start_paused = true)]
async fn s19_s30_terminate_settles_the_waiting_offers(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let actor = system
        .spawn_with(
            gated_items(probe.actor_ref().clone(), gate.clone(), 1),
            "slow",
            bounded(1, OverflowStrategy::DropNew),
        )
        .unwrap();
    actor.tell(Item::N(1));
    assert_eq!(probe.expect_message(T).await, 0);
    actor.tell(Item::N(2));
    let offers = tokio::spawn({
        let actor = actor.clone();
        async move { tokio::join!(actor.offer(Item::N(3)), actor.offer(Item::N(4))) }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    let ending = system.terminate();
    let (three, four) = timeout(T, offers).await.expect("the offers ended").unwrap();
    assert!(
        !three && !four,
        "refused by a stopped actor: {three} {four}"
    );
    timeout(T, ending).await.expect("termination ends");
    let mut numbers = Vec::new();
    while let Some(letter) = letters.try_recv() {
        if let Some(Item::N(n)) = letter.take_message::<Item>() {
            numbers.push(n);
        }
    }
    numbers.sort_unstable();
    assert_eq!(numbers, [2, 3, 4], "the queued one and both offers");
}

#[message]
enum Work {
    Block,
    Crash,
    N(u64),
}

// S13 + S29 + S30: offers waiting on a bounded mailbox while its actor fails and
// backs off are all accepted, in the order they began to wait, and handled by the
// next incarnation; a tell beyond the bound during the backoff is a dead letter.
#[tapio::test(start_paused = true)]
async fn s13_s30_waiting_offers_cross_a_restart_with_backoff_in_order(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let setups = Arc::new(AtomicUsize::new(0));
    let (report, in_gate, counted) = (probe.actor_ref().clone(), gate.clone(), setups.clone());
    let actor = system
        .spawn_with(
            Behaviors::supervise(Behaviors::setup(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                let (report, gate) = (report.clone(), in_gate.clone());
                Behaviors::receive_message_async(async move |work: Work| -> Result<(), Boom> {
                    match work {
                        Work::Block => {
                            report.tell(0);
                            gate.acquire().await.unwrap().forget();
                        }
                        Work::Crash => return Err(Boom),
                        Work::N(n) => report.tell(n),
                    }
                    Ok(())
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart().with_backoff(
                Backoff::new(Duration::from_secs(1), Duration::from_secs(1), 0.0).unwrap(),
            )),
            "restarting",
            bounded(1, OverflowStrategy::DropNew),
        )
        .unwrap();
    actor.tell(Work::Block);
    assert_eq!(probe.expect_message(T).await, 0);
    actor.tell(Work::Crash); // the mailbox is full
    let mut o2 = actor.offer(Work::N(2));
    let mut o3 = actor.offer(Work::N(3));
    let mut o4 = actor.offer(Work::N(4));
    for offer in [&mut o2, &mut o3, &mut o4] {
        assert!(poll_once(offer).is_pending());
    }
    let started = Instant::now();
    gate.add_permits(1);
    // The crash frees the room, and o2 takes it while the actor backs off.
    assert!(timeout(T, &mut o2).await.unwrap());
    actor.tell(Work::N(99)); // no room during the backoff: a dead letter
    let refused = next_letter(&mut letters).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::MailboxFull,
        "{refused}"
    );
    assert!(matches!(refused.take_message::<Work>(), Some(Work::N(99))));
    assert!(timeout(T, o3).await.unwrap());
    assert!(timeout(T, o4).await.unwrap());
    assert_eq!(probe.receive_messages(3, T).await, [2, 3, 4]);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "the backoff was waited out"
    );
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    probe.expect_no_message(Duration::from_millis(50)).await;
}

// ---------------------------------------------------------------------------------
// Bounded mailboxes with message adapters and timers (S24, S25, S28, S29, S30)
// ---------------------------------------------------------------------------------

#[message]
pub struct Foreign(pub u64);

#[message]
enum Own {
    Block,
    Direct(u64),
    Adapted(u64),
}

/// An owner that hands out an adapter of `Foreign` (through `adapters`) and reports
/// what it handles as `d{n}` / `a{n}`; `Block` reports `blocked` and waits for `gate`.
/// An [`adapter_owner`] on `system` named `name`, reporting to `probe` and blocking
/// on `gate`, and the adapter it handed out.
async fn spawn_adapter_owner(
    system: &ActorSystem,
    probe: &TestProbe<String>,
    gate: &Arc<Semaphore>,
    name: &str,
    mailbox: MailboxConfig,
) -> (ActorRef<Own>, ActorRef<Foreign>) {
    let (adapters_tx, mut adapters) = mpsc::unbounded_channel();
    let owner = system
        .spawn_with(
            adapter_owner(probe.actor_ref().clone(), gate.clone(), adapters_tx),
            name,
            mailbox,
        )
        .unwrap();
    let adapter = timeout(T, adapters.recv()).await.unwrap().unwrap();
    (owner, adapter)
}

fn adapter_owner(
    report: ActorRef<String>,
    gate: Arc<Semaphore>,
    adapters: mpsc::UnboundedSender<ActorRef<Foreign>>,
) -> Behavior<Own> {
    Behaviors::setup(move |ctx| {
        let adapter: ActorRef<Foreign> = ctx.message_adapter(|Foreign(n)| Own::Adapted(n));
        let _ = adapters.send(adapter);
        let (report, gate) = (report.clone(), gate.clone());
        Behaviors::receive_message_async(async move |own: Own| match own {
            Own::Block => {
                report.tell("blocked".to_owned());
                gate.acquire().await.unwrap().forget();
            }
            Own::Direct(n) => report.tell(format!("d{n}")),
            Own::Adapted(n) => report.tell(format!("a{n}")),
        })
    })
}

/// What a dead letter of an owner's traffic held, as `d{n}` / `a{n}`.
fn own_key(letter: &DeadLetter) -> String {
    if let Some(Foreign(n)) = letter.take_message::<Foreign>() {
        return format!("a{n}");
    }
    match letter.take_message::<Own>() {
        Some(Own::Direct(n)) => format!("d{n}"),
        Some(Own::Adapted(n)) => format!("a{n}"),
        Some(Own::Block) => "blocked".to_owned(),
        None => panic!(
            "a letter whose message is neither `Foreign` nor `Own`: {letter} ({})",
            letter.message_type()
        ),
    }
}

// S28 + S29 + S31: adapted messages queue in a drop-oldest mailbox beside direct ones;
// whatever the bound pushes out (adapted or direct) is a `PushedOut` dead letter that
// still holds its message, and everything else is handled, in order. Nothing is lost.
#[tapio::test(start_paused = true)]
async fn s28_s29_drop_oldest_accounts_for_adapted_and_direct_messages(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (owner, adapter) = spawn_adapter_owner(
        &system,
        &probe,
        &gate,
        "owner",
        bounded(2, OverflowStrategy::DropOldest),
    )
    .await;
    owner.tell(Own::Block);
    assert_eq!(probe.expect_message(T).await, "blocked");
    adapter.tell(Foreign(1));
    adapter.tell(Foreign(2));
    owner.tell(Own::Direct(3));
    owner.tell(Own::Direct(4));
    adapter.tell(Foreign(5));
    gate.add_permits(1);
    let handled = drain(&mut probe, Duration::from_millis(100)).await;
    let mut dead = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(50)).await {
        assert_eq!(letter.reason(), &DeadLetterReason::PushedOut, "{letter}");
        dead.push(own_key(&letter));
    }
    let sent = ["a1", "a2", "d3", "d4", "a5"];
    let mut all: Vec<&str> = handled
        .iter()
        .chain(dead.iter())
        .map(String::as_str)
        .collect();
    all.sort_unstable();
    let mut expected = sent.to_vec();
    expected.sort_unstable();
    assert_eq!(all, expected, "handled {handled:?}, dead {dead:?}");
    let order: Vec<usize> = handled
        .iter()
        .map(|h| sent.iter().position(|s| *s == h.as_str()).unwrap())
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "in order: {handled:?}"
    );
    assert!(
        handled.contains(&"a5".to_owned()),
        "the newest survives: {handled:?}"
    );
}

// S28 + S30: adapted messages are taken whatever the bound, and take room while
// queued: an `offer` waits behind them, and is accepted once they drain.
#[tapio::test(start_paused = true)]
async fn s28_s30_an_offer_waits_behind_adapted_messages_over_the_bound(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (owner, adapter) = spawn_adapter_owner(
        &system,
        &probe,
        &gate,
        "owner",
        bounded(2, OverflowStrategy::DropNew),
    )
    .await;
    owner.tell(Own::Block);
    assert_eq!(probe.expect_message(T).await, "blocked");
    for n in 1..=4 {
        adapter.tell(Foreign(n)); // beyond the bound of 2: never refused
    }
    let mut offer = owner.offer(Own::Direct(5));
    assert!(
        poll_once(&mut offer).is_pending(),
        "the mailbox is over its bound"
    );
    assert!(
        timeout(Duration::from_millis(100), &mut offer)
            .await
            .is_err(),
        "the offer waits"
    );
    gate.add_permits(1);
    assert!(timeout(T, offer).await.unwrap());
    assert_eq!(
        probe.receive_messages(5, T).await,
        ["a1", "a2", "a3", "a4", "d5"]
    );
    assert!(
        letters_within(&mut letters, Duration::from_millis(50))
            .await
            .is_empty(),
        "nothing refused"
    );
}

/// Two producers tell directly, two through the adapter, 500 messages each, to an
/// owner with a bounded mailbox of 8 and `overflow`, blocked until all are sent.
/// Returns what was handled (in order) and what was dead-lettered, by key.
async fn adapted_and_direct_producers(
    system: &ActorSystem,
    overflow: OverflowStrategy,
) -> (Vec<u64>, BTreeSet<u64>, BTreeSet<String>) {
    const EACH: u64 = 500;
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(10_000)
        .unwrap();
    let gate = Arc::new(Semaphore::new(0));
    let (started_tx, mut started) = mpsc::unbounded_channel::<()>();
    let (handled_tx, mut handled_rx) = mpsc::unbounded_channel::<u64>();
    let (adapters_tx, mut adapters) = mpsc::unbounded_channel::<ActorRef<Foreign>>();
    let in_gate = gate.clone();
    let owner = system
        .spawn_with(
            Behaviors::setup(move |ctx| {
                let adapter: ActorRef<Foreign> = ctx.message_adapter(|Foreign(n)| Own::Adapted(n));
                let _ = adapters_tx.send(adapter);
                let (gate, started, handled) =
                    (in_gate.clone(), started_tx.clone(), handled_tx.clone());
                Behaviors::receive_message_async(async move |own: Own| match own {
                    Own::Block => {
                        let _ = started.send(());
                        gate.acquire().await.unwrap().forget();
                    }
                    Own::Direct(n) | Own::Adapted(n) => {
                        let _ = handled.send(n);
                    }
                })
            }),
            "owner",
            bounded(8, overflow),
        )
        .unwrap();
    let adapter = timeout(T, adapters.recv()).await.unwrap().unwrap();
    owner.tell(Own::Block);
    timeout(T, started.recv()).await.unwrap().unwrap();
    let producers: Vec<_> = (0..4_u64)
        .map(|p| {
            let (owner, adapter) = (owner.clone(), adapter.clone());
            tokio::spawn(async move {
                for i in 0..EACH {
                    let n = p * EACH + i;
                    if p < 2 {
                        owner.tell(Own::Direct(n));
                    } else {
                        adapter.tell(Foreign(n));
                    }
                }
            })
        })
        .collect();
    for producer in producers {
        producer.await.unwrap();
    }
    gate.add_permits(1);
    let mut handled = Vec::new();
    let mut dead = BTreeSet::new();
    let mut reasons = BTreeSet::new();
    let total = (4 * EACH) as usize;
    let counted = timeout(Duration::from_secs(20), async {
        while handled.len() + dead.len() < total {
            tokio::select! {
                Some(n) = handled_rx.recv() => handled.push(n),
                Some(letter) = letters.recv() => {
                    let n = match letter.take_message::<Own>() {
                        Some(Own::Direct(n) | Own::Adapted(n)) => n,
                        _ => match letter.take_message::<Foreign>() {
                            Some(Foreign(n)) => n,
                            None => panic!("a letter without its number: {letter}"),
                        },
                    };
                    reasons.insert(format!("{:?}", letter.reason()));
                    assert!(dead.insert(n), "{n} dead-lettered twice");
                }
            }
        }
    })
    .await;
    assert!(
        counted.is_ok(),
        "only {} handled and {} dead of {total}: the rest went missing",
        handled.len(),
        dead.len()
    );
    assert_eq!(letters.lost(), 0);
    let unique: BTreeSet<u64> = handled.iter().copied().collect();
    assert_eq!(unique.len(), handled.len(), "something was handled twice");
    assert!(unique.is_disjoint(&dead), "handled and dead-lettered");
    // Per producer, what was handled came in the order it was sent (S5).
    for p in 0..4 {
        let mine: Vec<u64> = handled.iter().copied().filter(|n| n / EACH == p).collect();
        assert!(
            mine.windows(2).all(|w| w[0] < w[1]),
            "producer {p} out of order"
        );
    }
    (handled, dead, reasons)
}

// S28 + S29 + S31 (two workers): drop-new under four producers, two of them through
// an adapter: every adapted message is handled (never refused by the bound), each
// refused direct message is a dead letter, and all 2,000 are accounted for once.
#[tapio::test(worker_threads = 2)]
async fn s28_s29_drop_new_never_refuses_adapted_messages_under_contention(system: ActorSystem) {
    let (handled, dead, reasons) =
        adapted_and_direct_producers(&system, OverflowStrategy::DropNew).await;
    let adapted = handled.iter().filter(|n| **n >= 1_000).count();
    assert_eq!(adapted, 1_000, "every adapted message handled");
    assert!(
        dead.iter().all(|n| *n < 1_000),
        "only direct messages refused"
    );
    assert!(reasons.iter().all(|r| r == "MailboxFull"), "{reasons:?}");
}

// S28 + S29 + S31 (two workers): drop-oldest under the same four producers: every
// message pushed out is a `PushedOut` dead letter with its value, and all 2,000 are
// accounted for exactly once.
#[tapio::test(worker_threads = 2)]
async fn s28_s29_drop_oldest_accounts_for_everything_under_contention(system: ActorSystem) {
    let (handled, dead, reasons) =
        adapted_and_direct_producers(&system, OverflowStrategy::DropOldest).await;
    assert_eq!(handled.len() + dead.len(), 2_000);
    assert!(reasons.iter().all(|r| r == "PushedOut"), "{reasons:?}");
}

#[message]
#[derive(Clone)]
enum Pulse {
    Tick,
    Block,
    Direct(u64),
}

/// A behavior whose timers `start` sets up, reporting `tick`, `d{n}`, and `blocked`
/// (then waiting for `gate`) on `Block`.
/// A [`pulsing`] actor on `system` named `name`, reporting to `probe`, whose timers
/// `start` sets; and the gate its `Block` waits on, closed.
fn spawn_pulsing(
    system: &ActorSystem,
    probe: &TestProbe<String>,
    name: &str,
    mailbox: MailboxConfig,
    start: impl Fn(&tapio::TimerScheduler<Pulse>) + Send + Sync + 'static,
) -> (ActorRef<Pulse>, Arc<Semaphore>) {
    let gate = Arc::new(Semaphore::new(0));
    let actor = system
        .spawn_with(
            pulsing(probe.actor_ref().clone(), gate.clone(), start),
            name,
            mailbox,
        )
        .unwrap();
    (actor, gate)
}

fn pulsing(
    report: ActorRef<String>,
    gate: Arc<Semaphore>,
    start: impl Fn(&tapio::TimerScheduler<Pulse>) + Send + Sync + 'static,
) -> Behavior<Pulse> {
    Behaviors::with_timers(move |timers| {
        start(&timers);
        let (report, gate) = (report.clone(), gate.clone());
        Behaviors::receive_message_async(async move |pulse: Pulse| match pulse {
            Pulse::Tick => report.tell("tick".to_owned()),
            Pulse::Block => {
                report.tell("blocked".to_owned());
                gate.acquire().await.unwrap().forget();
            }
            Pulse::Direct(n) => report.tell(format!("d{n}")),
        })
    })
}

// S25 + S29 + S31: a fixed-delay timer's tick waits in a full drop-oldest mailbox
// when a newer message comes. A tick is never pushed out (the `MailboxConfig` docs):
// the newer message is taken beyond the bound, the tick is handled first, nothing is
// dead-lettered, and once the actor catches up, ticks come again.
#[tapio::test(start_paused = true)]
async fn s25_s29_a_drop_oldest_mailbox_keeps_a_waiting_tick(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let (actor, gate) = spawn_pulsing(
        &system,
        &probe,
        "beating",
        bounded(1, OverflowStrategy::DropOldest),
        |timers| {
            timers
                .start_fixed_delay("beat", Pulse::Tick, Duration::from_millis(10))
                .unwrap();
        },
    );
    assert_eq!(probe.expect_message(T).await, "tick");
    actor.tell(Pulse::Block);
    assert_eq!(probe.expect_message(T).await, "blocked");
    // The next tick comes due and waits in the mailbox, taking its one place.
    tokio::time::sleep(Duration::from_millis(50)).await;
    actor.tell(Pulse::Direct(7)); // taken beyond the bound: the tick stays
    gate.add_permits(1);
    let next = receive_for(&mut probe, Duration::from_millis(5)).await;
    assert!(next.contains(&"d7".to_owned()), "{next:?}");
    let later = receive_for(&mut probe, Duration::from_millis(200)).await;
    let ticks = later.iter().filter(|l| *l == "tick").count();
    assert!(
        ticks >= 5,
        "the fixed-delay timer stalled: {ticks} ticks in 200 ms ({next:?} then {later:?})"
    );
    let letters = letters_within(&mut letters, Duration::from_millis(10)).await;
    let pushed_out = letters
        .iter()
        .filter(|l| l.reason() == &DeadLetterReason::PushedOut)
        .count();
    assert_eq!(
        next.first().map(String::as_str),
        Some("tick"),
        "the waiting tick is handled first: {next:?}"
    );
    assert_eq!(pushed_out, 0, "nothing is pushed out: {letters:?}");
}

// S25 + S29 + S30: a single timer's tick takes the one place of a bounded mailbox
// while it waits ("while queued they take room like a message"): an offer waits
// behind it, and the tick is handled first.
#[tapio::test(start_paused = true)]
async fn s25_s30_an_offer_waits_behind_a_queued_tick(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let (actor, gate) = spawn_pulsing(
        &system,
        &probe,
        "ticking",
        bounded(1, OverflowStrategy::DropNew),
        |timers| {
            timers.start_single_timer("once", Pulse::Tick, Duration::from_millis(10));
        },
    );
    actor.tell(Pulse::Block);
    assert_eq!(probe.expect_message(T).await, "blocked");
    tokio::time::sleep(Duration::from_millis(50)).await; // the tick is queued
    let mut offer = actor.offer(Pulse::Direct(1));
    assert!(
        poll_once(&mut offer).is_pending(),
        "the tick holds the room"
    );
    actor.tell(Pulse::Direct(2)); // refused: the tick holds the room
    let refused = next_letter(&mut letters).await;
    assert_eq!(refused.reason(), &DeadLetterReason::MailboxFull);
    assert!(matches!(
        refused.take_message::<Pulse>(),
        Some(Pulse::Direct(2))
    ));
    gate.add_permits(1);
    assert!(timeout(T, offer).await.unwrap());
    assert_eq!(probe.receive_messages(2, T).await, ["tick", "d1"]);
}

// S25 + S29: a fixed-rate timer sends the ticks missed during a stall one after
// another; a bound of one does not refuse them (ticks are never refused by the
// bound), so the actor gets the catch-up, and nothing is dead-lettered.
#[tapio::test(start_paused = true)]
async fn s25_s29_fixed_rate_catch_up_is_not_refused_by_a_bound_of_one(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let (actor, gate) = spawn_pulsing(
        &system,
        &probe,
        "rating",
        bounded(1, OverflowStrategy::DropNew),
        |timers| {
            timers
                .start_fixed_rate("rate", Pulse::Tick, Duration::from_millis(10))
                .unwrap();
        },
    );
    assert_eq!(probe.expect_message(T).await, "tick");
    actor.tell(Pulse::Block);
    assert_eq!(probe.expect_message(T).await, "blocked");
    tokio::time::sleep(Duration::from_millis(100)).await; // about nine ticks missed
    gate.add_permits(1);
    let deadline = Instant::now() + Duration::from_millis(25);
    let mut ticks = 0;
    while let Some(line) = probe.receive_message(deadline - Instant::now()).await {
        assert_eq!(line, "tick");
        ticks += 1;
    }
    assert!(
        ticks >= 7,
        "fixed rate behind a bound of one: {ticks} ticks, expected the catch-up"
    );
    let refused = letters_within(&mut letters, Duration::from_millis(1)).await;
    assert!(refused.is_empty(), "ticks refused: {refused:?}");
}

// ---------------------------------------------------------------------------------
// State machines with bounds, stashes, adapters, timers and restarts (S24, S28, S34)
// ---------------------------------------------------------------------------------

#[message]
pub struct Fill(pub u64);
#[message]
pub struct Go;
#[message]
pub struct Refill;
#[message]
pub struct Kick;
#[message(reply = &'static str)]
pub struct Where;
#[message(reply = u64)]
pub struct Level;
#[message(reply = u64)]
pub struct Poured;

pub struct Vat {
    out: ActorRef<u64>,
    level: u64,
}

#[actor(
    stash_capacity = 3,
    messages(Fill, Go, Refill, Where, Level, Poured),
    states(Filling => Pouring, Pouring => Filling)
)]
impl Vat {}

pub struct Filling;

#[state(Vat, unhandled = stash)]
impl Filling {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Pouring)
    }

    fn locate(&mut self, _: Where) -> &'static str {
        "filling"
    }

    fn level(&mut self, vat: &mut Vat, _: Level) -> u64 {
        vat.level
    }
}

pub struct Pouring;

#[state(Vat)]
impl Pouring {
    fn fill(&mut self, vat: &mut Vat, Fill(n): Fill) {
        vat.level += n;
        vat.out.tell(n);
    }

    fn refill(self, _: Refill) -> Next<Self> {
        Next::to(Filling)
    }

    fn locate(&mut self, _: Where) -> &'static str {
        "pouring"
    }

    fn poured(&mut self, vat: &mut Vat, _: Poured) -> u64 {
        vat.level
    }
}

/// A vat, counting its setups.
fn vat(out: ActorRef<u64>, setups: Arc<AtomicUsize>) -> Behavior<VatMsg> {
    Behaviors::setup(move |_| {
        setups.fetch_add(1, Ordering::SeqCst);
        Machine::new(
            Vat {
                out: out.clone(),
                level: 0,
            },
            Filling,
        )
    })
}

/// The number in a letter for a `Fill`.
fn fill_number(letter: &DeadLetter) -> u64 {
    letter
        .take_message::<Fill>()
        .map(|Fill(n)| n)
        .unwrap_or_else(|| panic!("not a Fill: {letter} ({})", letter.message_type()))
}

// S34 + S26 + S27 + S29 + S14: a stashing state behind a mailbox bound of two holds
// three and replays them all at the switch; later an overflow of its stash (capacity
// 3) fails it, the restart returns to the initial state, and the letters say exactly
// what happened: the one that did not fit `StashFull`, the held ones `StashDiscarded`.
#[tapio::test(start_paused = true)]
async fn s34_s26_a_bounded_stashing_state_replays_then_overflows_into_a_restart(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let setups = Arc::new(AtomicUsize::new(0));
    let vat = system
        .spawn_with(
            Behaviors::supervise(vat(probe.actor_ref().clone(), setups.clone()))
                .on_failure::<StashOverflow>(SupervisorStrategy::restart()),
            "vat",
            bounded(2, OverflowStrategy::DropNew),
        )
        .unwrap();
    for n in 1..=3 {
        assert!(timeout(T, vat.offer(Fill(n))).await.unwrap());
    }
    assert!(timeout(T, vat.offer(Go)).await.unwrap());
    assert_eq!(probe.receive_messages(3, T).await, [1, 2, 3]);
    assert_eq!(vat.ask(Where).timeout(T).await.unwrap(), "pouring");
    vat.tell(Refill);
    for n in 4..=7 {
        assert!(timeout(T, vat.offer(Fill(n))).await.unwrap());
    }
    let full = next_letter(&mut letters).await;
    assert_eq!(full.reason(), &DeadLetterReason::StashFull, "{full}");
    assert_eq!(fill_number(&full), 7);
    eventually(|| setups.load(Ordering::SeqCst) == 2).await;
    assert_eq!(
        vat.ask(Where).timeout(T).await.unwrap(),
        "filling",
        "initial state"
    );
    assert_eq!(vat.ask(Level).timeout(T).await.unwrap(), 0, "fresh data");
    let mut discarded = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(100)).await {
        assert_eq!(letter.recipient(), vat.path(), "{letter}");
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::StashDiscarded,
            "{letter}"
        );
        discarded.push(fill_number(&letter));
    }
    discarded.sort_unstable();
    assert_eq!(discarded, [4, 5, 6]);
    probe.expect_no_message(Duration::from_millis(10)).await;
}

/// A vat with an adapter of `Kick` (translated to `Go`) handed out through
/// `adapters`, and a single timer that sends `Fill(99)` after 10 ms.
fn kicked_vat(
    out: ActorRef<u64>,
    adapters: std::sync::mpsc::Sender<ActorRef<Kick>>,
) -> Behavior<VatMsg> {
    let adapters = Mutex::new(adapters);
    Behaviors::setup(move |ctx| {
        let kick: ActorRef<Kick> = ctx.message_adapter(|_: Kick| Go);
        let _ = adapters.lock().unwrap().send(kick);
        ctx.timers()
            .start_single_timer("refill", Fill(99), Duration::from_millis(10));
        Machine::new(
            Vat {
                out: out.clone(),
                level: 0,
            },
            Filling,
        )
    })
}

// S34 + S28 + S24 + S31: in a state machine, a timer's tick that arrives in a
// stashing state is held and replayed at the switch, the switch can come through a
// message adapter, and an adapted message the current state does not handle is
// refused by that state: exactly one dead letter, naming the state and the owner.
#[tapio::test(start_paused = true)]
async fn s34_s28_ticks_and_adapted_messages_meet_the_current_state(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let (adapters_tx, adapters) = std::sync::mpsc::channel();
    let vat = system
        .spawn(kicked_vat(probe.actor_ref().clone(), adapters_tx), "vat")
        .unwrap();
    let kick = recv_std(&adapters).await;
    vat.tell(Fill(1));
    tokio::time::sleep(Duration::from_millis(50)).await; // the tick: Fill(99), stashed
    vat.tell(Fill(2));
    probe.expect_no_message(Duration::from_millis(10)).await;
    kick.tell(Kick); // -> Go: the switch replays 1, 99, 2
    assert_eq!(probe.receive_messages(3, T).await, [1, 99, 2]);
    kick.tell(Kick); // -> Go, which `Pouring` does not handle
    let refused = next_letter(&mut letters).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::NotHandledInState("Pouring")
    );
    assert_eq!(refused.recipient(), vat.path(), "{refused}");
    let more = letters_within(&mut letters, Duration::from_millis(100)).await;
    assert!(more.is_empty(), "one letter for one refusal: {more:?}");
    assert_eq!(
        vat.ask(Level).timeout(T).await.err().map(|e| matches!(
            e,
            AskError::NotHandled {
                state: "Pouring",
                ..
            }
        )),
        Some(true)
    );
}

// ---------------------------------------------------------------------------------
// Routers in combination (S21, S23, S29, S32, S33, S34)
// ---------------------------------------------------------------------------------

#[message]
#[derive(Clone)]
enum Cast {
    N(u64, ActorRef<(String, u64)>),
}

// S32 + S29 + S31: a broadcast pool whose routees have a bound of one: the routee
// that is busy refuses the copies that do not fit (each one dead letter naming that
// routee); the others get every copy.
#[tapio::test(start_paused = true)]
async fn s32_s29_broadcast_into_bounded_routees_counts_each_copy(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let in_gate = gate.clone();
    let pool = Routers::pool(3, move || {
        let gate = in_gate.clone();
        Behaviors::receive_async(async move |ctx, Cast::N(n, to)| {
            let me = ctx.path().name().to_owned();
            if me == "routee-2" && n == 1 {
                to.tell(("blocked".to_owned(), 0));
                gate.acquire().await.unwrap().forget();
            }
            to.tell((me, n));
        })
    })
    .unwrap()
    .broadcast()
    .routee_mailbox(bounded(1, OverflowStrategy::DropNew));
    let handle = pool.handle();
    let router = system.spawn(pool, "casts").unwrap();
    let me = probe.actor_ref().clone();
    let mut seen: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for n in 1..=4 {
        router.tell(Cast::N(n, me.clone()));
        // Paced: the two free routees report each copy before the next is sent.
        let expected = if n == 1 { 3 } else { 2 };
        for (who, m) in probe.receive_messages(expected, T).await {
            seen.entry(who).or_default().push(m);
        }
    }
    let routee2 = handle.routees()[1].clone();
    let mut refused = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(50)).await {
        assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull, "{letter}");
        assert_eq!(letter.recipient(), routee2.path(), "{letter}");
        let Some(Cast::N(n, _)) = letter.take_message::<Cast>() else {
            panic!("{letter}");
        };
        refused.push(n);
    }
    assert_eq!(refused, [3, 4], "routee-2 holds 2 and refuses 3 and 4");
    gate.add_permits(1);
    for (who, m) in probe.receive_messages(2, T).await {
        seen.entry(who).or_default().push(m);
    }
    assert_eq!(seen["routee-1"], [1, 2, 3, 4]);
    assert_eq!(seen["routee-3"], [1, 2, 3, 4]);
    assert_eq!(seen["routee-2"], [1, 2]);
    assert_eq!(seen["blocked"], [0]);
    probe.expect_no_message(Duration::from_millis(50)).await;
}

// S32 + S31: shrinking a pool whose routees have work queued: each message the
// removed routees had queued is one `RecipientStopped` letter naming its routee; the
// routee that stays does all that comes after.
#[tapio::test(start_paused = true)]
async fn s32_s31_shrinking_dead_letters_queued_work_once(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let in_gate = gate.clone();
    let pool = Routers::pool(3, move || {
        let gate = in_gate.clone();
        Behaviors::receive_async(async move |ctx, Cast::N(n, to)| {
            if n <= 3 {
                to.tell(("started".to_owned(), n));
                gate.acquire().await.unwrap().forget();
            }
            to.tell((ctx.path().name().to_owned(), n));
        })
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "shrinking").unwrap();
    let me = probe.actor_ref().clone();
    for n in 1..=9 {
        router.tell(Cast::N(n, me.clone()));
    }
    assert_eq!(
        probe.receive_messages(3, T).await.len(),
        3,
        "each routee blocks"
    );
    let routees = handle.routees();
    assert_eq!(routees.len(), 3);
    ends.watch(&routees[1]);
    ends.watch(&routees[2]);
    handle.resize(1).unwrap();
    ends.expect_terminated(&routees[1], T).await;
    ends.expect_terminated(&routees[2], T).await;
    router.tell(Cast::N(10, me.clone()));
    router.tell(Cast::N(11, me.clone()));
    gate.add_permits(10);
    let done = probe.receive_messages(5, T).await;
    assert_eq!(
        done,
        [1, 4, 7, 10, 11].map(|n| ("routee-1".to_owned(), n)),
        "the one left does the rest"
    );
    let mut dead: Vec<(String, u64)> = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(100)).await {
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::RecipientStopped,
            "{letter}"
        );
        let Some(Cast::N(n, _)) = letter.take_message::<Cast>() else {
            panic!("{letter}");
        };
        dead.push((letter.recipient().name().to_owned(), n));
    }
    dead.sort();
    assert_eq!(
        dead,
        [
            ("routee-2".to_owned(), 5),
            ("routee-2".to_owned(), 8),
            ("routee-3".to_owned(), 6),
            ("routee-3".to_owned(), 9)
        ],
        "queued work of the removed routees, once each"
    );
    probe.expect_no_message(Duration::from_millis(50)).await;
}

#[message]
enum Quest {
    Ask(u64, ActorRef<u64>),
}

// S32 + S21 + S23: asks through a router are answered by the routee that gets them;
// when that routee fails (stops) with one request in hand and another queued, both
// asks fail at once, not at their deadline; the pool goes on with the other routee.
#[tapio::test(start_paused = true)]
async fn s32_s23_asks_through_a_router_fail_fast_when_their_routee_stops(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (report, in_gate) = (probe.actor_ref().clone(), gate.clone());
    let pool = Routers::pool(2, move || {
        let (gate, report) = (in_gate.clone(), report.clone());
        Behaviors::receive_message_async(async move |Quest::Ask(n, to)| -> Result<(), Boom> {
            if n == 1 {
                report.tell(0);
                gate.acquire().await.unwrap().forget();
                return Err(Boom);
            }
            to.tell(n * 10);
            Ok(())
        })
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "askers").unwrap();
    let deadline = Duration::from_secs(10);
    let a1 = router.ask_with(|to| Quest::Ask(1, to)).timeout(deadline); // routee-1, held
    let a2 = router.ask_with(|to| Quest::Ask(2, to)).timeout(deadline); // routee-2
    let a3 = router.ask_with(|to| Quest::Ask(3, to)).timeout(deadline); // routee-1, queued
    assert_eq!(a2.await.unwrap(), 20);
    assert_eq!(probe.expect_message(T).await, 0);
    let started = Instant::now();
    gate.add_permits(1); // routee-1 fails and stops
    let r1 = a1.await;
    let r3 = a3.await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "the asks waited {:?}: {r1:?} {r3:?}",
        started.elapsed()
    );
    for result in [&r1, &r3] {
        assert!(
            matches!(
                result,
                Err(AskError::TargetTerminated { .. } | AskError::Unanswered { .. })
            ),
            "{result:?}"
        );
    }
    eventually(|| handle.routees().len() == 1).await;
    let a4 = router.ask_with(|to| Quest::Ask(4, to)).timeout(deadline);
    assert_eq!(timeout(T, a4).await.unwrap().unwrap(), 40);
    drop(gate);
}

// S32 + S34 + S21 + S27: asks through a pool of state machines: a request that the
// current state stashes is answered after the routee switches (its reply slot kept
// through the stash); a request that the current state does not handle fails at once
// with `NotHandled`, naming the state.
#[tapio::test(start_paused = true)]
async fn s32_s34_asks_through_a_pool_of_state_machines(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let out = probe.actor_ref().clone();
    let setups = Arc::new(AtomicUsize::new(0));
    let pool = Routers::pool(2, move || vat(out.clone(), setups.clone())).unwrap();
    let router = system.spawn(pool, "vats").unwrap();
    // Strict rotation: odd sends go to routee-1, even ones to routee-2.
    assert_eq!(router.ask(Level).timeout(T).await.unwrap(), 0); // 1: routee-1 (filling)
    router.tell(Go); // 2: routee-2 -> pouring
    router.tell(Fill(5)); // 3: routee-1, stashed
    router.tell(Refill); // 4: routee-2 -> filling
    let poured = router.ask(Poured).timeout(T); // 5: routee-1, stashed with its reply slot
    router.tell(Go); // 6: routee-2 -> pouring
    router.tell(Go); // 7: routee-1 -> pouring: replays Fill(5), then Poured
    assert_eq!(
        poured.await.unwrap(),
        5,
        "the stashed ask answered after the switch"
    );
    assert_eq!(probe.expect_message(T).await, 5);
    // 8: routee-2 pours: `Level` is refused at once, naming the state.
    let started = Instant::now();
    let refused = router.ask(Level).timeout(Duration::from_secs(10)).await;
    assert!(
        matches!(
            refused,
            Err(AskError::NotHandled {
                state: "Pouring",
                ..
            })
        ),
        "{refused:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(router.ask(Where).timeout(T).await.unwrap(), "pouring"); // 9: routee-1
    router.tell(Refill); // 10: routee-2 -> filling
    assert_eq!(router.ask(Where).timeout(T).await.unwrap(), "pouring"); // 11: routee-1
    assert_eq!(router.ask(Level).timeout(T).await.unwrap(), 0); // 12: routee-2 filling
}

#[message]
enum Chore {
    Block(ActorRef<String>),
    Ping(u64, ActorRef<String>),
}

/// A pool of two whose routees run `Block` as a blocking call (on a std channel) and
/// answer `Ping` with their name: a blocked routee does not hold up its sibling, and
/// stopping the router while one routee is inside its blocking call is prompt; the
/// ping that waited behind the call is one dead letter.
async fn blocking_routee(system: &ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(system);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let pool = Routers::pool(2, move || {
        let released = released.clone();
        Behaviors::receive_async(
            async move |ctx, chore: Chore| -> Result<(), tapio::Failure> {
                match chore {
                    Chore::Block(to) => {
                        let waiting = released.lock().unwrap().take();
                        if let Some(waiting) = waiting {
                            to.tell("blocking".to_owned());
                            let _ = ctx
                                .run_blocking(move || waiting.recv_timeout(Duration::from_secs(10)))
                                .await?;
                            to.tell("unblocked".to_owned());
                        }
                    }
                    Chore::Ping(n, to) => to.tell(format!("{} {n}", ctx.path().name())),
                }
                Ok(())
            },
        )
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "blockers").unwrap();
    probe.watch(&router);
    let me = probe.actor_ref().clone();
    router.tell(Chore::Block(me.clone())); // routee-1
    assert_eq!(probe.expect_message(T).await, "blocking");
    router.tell(Chore::Ping(1, me.clone())); // routee-2
    assert_eq!(probe.expect_message(T).await, "routee-2 1");
    router.tell(Chore::Ping(2, me.clone())); // routee-1: waits behind the call
    router.tell(Chore::Ping(3, me.clone())); // routee-2
    assert_eq!(probe.expect_message(T).await, "routee-2 3");
    let routee1 = handle.routees()[0].clone();
    let started = std::time::Instant::now();
    system.stop(&router).unwrap();
    probe.expect_terminated(&router, T).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the stop waited for the blocking call: {:?}",
        started.elapsed()
    );
    let _ = release.send(());
    let letter = loop {
        let letter = next_letter(&mut letters).await;
        if letter.recipient() == routee1.path() {
            break letter;
        }
    };
    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
    assert!(matches!(
        letter.take_message::<Chore>(),
        Some(Chore::Ping(2, _))
    ));
    let more: Vec<_> = letters_within(&mut letters, Duration::from_millis(100))
        .await
        .into_iter()
        .filter(|l| l.recipient() == routee1.path())
        .collect();
    assert!(more.is_empty(), "one letter: {more:?}");
    probe.expect_no_message(Duration::from_millis(10)).await;
}

// S32 + S33 + S19 (current thread).
#[tapio::test]
async fn s32_s33_a_blocking_routee_holds_up_neither_siblings_nor_a_stop(system: ActorSystem) {
    blocking_routee(&system).await;
}

// S32 + S33 + S19 (two workers).
#[tapio::test(worker_threads = 2)]
async fn s32_s33_a_blocking_routee_holds_up_neither_siblings_nor_a_stop_on_two_workers(
    system: ActorSystem,
) {
    blocking_routee(&system).await;
}

// Failed before the router watched an adapter's owner: a dead owner's adapter stayed
// in the rotation and the router never stopped.
// S32 + S28 + S18: a group router over message adapters. An adapter stops with its
// owner; the router watches its routees, so an adapter whose owner stopped leaves the
// group, and when the last one has, the router stops.
#[tapio::test(start_paused = true)]
async fn s32_s28_a_group_of_adapters_follows_their_owners(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(1_000));
    let (owner1, adapter1) = spawn_adapter_owner(
        &system,
        &probe,
        &gate,
        "owner-1",
        MailboxConfig::unbounded(),
    )
    .await;
    let (owner2, adapter2) = spawn_adapter_owner(
        &system,
        &probe,
        &gate,
        "owner-2",
        MailboxConfig::unbounded(),
    )
    .await;
    let router = system
        .spawn(Routers::group([adapter1, adapter2]).unwrap(), "adapters")
        .unwrap();
    ends.watch(&router);
    for n in 1..=2 {
        router.tell(Foreign(n));
    }
    let mut got = probe.receive_messages(2, T).await;
    got.sort();
    assert_eq!(got, ["a1", "a2"]);
    ends.watch(&owner1);
    system.stop(&owner1).unwrap();
    ends.expect_terminated(&owner1, T).await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    for n in 3..=4 {
        router.tell(Foreign(n));
    }
    let got = drain(&mut probe, Duration::from_millis(100)).await;
    assert_eq!(
        got,
        ["a3", "a4"],
        "the adapter of the stopped owner left the group"
    );
    ends.watch(&owner2);
    system.stop(&owner2).unwrap();
    ends.expect_terminated(&owner2, T).await;
    ends.expect_terminated(&router, T).await;
}

#[message]
enum Paced {
    Job(u64, ActorRef<(String, u64)>),
}

// S32 + S29 + S14: a pool whose routees have a `Fail` bound of one and restart on
// `MailboxOverflow`: an overflow restarts that routee in place, the refused job is
// one `MailboxFull` letter, the job it had queued survives the restart, and the
// rotation goes on strictly over both.
#[tapio::test(start_paused = true)]
async fn s32_s29_a_failing_bounded_routee_restarts_in_place(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let mut ends = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let setups = Arc::new(AtomicUsize::new(0));
    let (in_gate, counted) = (gate.clone(), setups.clone());
    let pool = Routers::pool(2, move || {
        let (in_gate, counted) = (in_gate.clone(), counted.clone());
        Behaviors::supervise(Behaviors::setup(move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            let gate = in_gate.clone();
            Behaviors::receive_async(async move |ctx, Paced::Job(n, to)| {
                if n == 1 {
                    to.tell(("blocked".to_owned(), 1));
                    gate.acquire().await.unwrap().forget();
                }
                to.tell((ctx.path().name().to_owned(), n));
            })
        }))
        .on_failure::<MailboxOverflow>(SupervisorStrategy::restart())
    })
    .unwrap()
    .routee_mailbox(bounded(1, OverflowStrategy::Fail));
    let router = system.spawn(pool, "paced").unwrap();
    ends.watch(&router);
    let me = probe.actor_ref().clone();
    router.tell(Paced::Job(1, me.clone())); // routee-1 blocks
    assert_eq!(probe.expect_message(T).await, ("blocked".to_owned(), 1));
    router.tell(Paced::Job(2, me.clone())); // routee-2
    assert_eq!(probe.expect_message(T).await, ("routee-2".to_owned(), 2));
    router.tell(Paced::Job(3, me.clone())); // routee-1: queued, its mailbox is full
    router.tell(Paced::Job(4, me.clone())); // routee-2
    assert_eq!(probe.expect_message(T).await, ("routee-2".to_owned(), 4));
    router.tell(Paced::Job(5, me.clone())); // routee-1: refused, and it fails
    let refused = next_letter(&mut letters).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::MailboxFull,
        "{refused}"
    );
    assert_eq!(refused.recipient().name(), "routee-1");
    assert!(matches!(
        refused.take_message::<Paced>(),
        Some(Paced::Job(5, _))
    ));
    gate.add_permits(10);
    eventually(|| setups.load(Ordering::SeqCst) == 3).await;
    let mut rest = drain(&mut probe, Duration::from_millis(100)).await;
    rest.retain(|(who, n)| !(who == "routee-1" && *n == 1)); // the interrupted one, if it finished
    assert_eq!(
        rest,
        [("routee-1".to_owned(), 3)],
        "the queued job survived the restart"
    );
    router.tell(Paced::Job(6, me.clone())); // routee-2
    router.tell(Paced::Job(7, me.clone())); // routee-1
    let mut next = probe.receive_messages(2, T).await;
    next.sort_by_key(|(_, n)| *n);
    assert_eq!(
        next,
        [("routee-2".to_owned(), 6), ("routee-1".to_owned(), 7)],
        "the rotation goes on"
    );
    ends.expect_no_termination(Duration::from_millis(10)).await;
    assert!(
        letters_within(&mut letters, Duration::from_millis(10))
            .await
            .is_empty()
    );
}

// ---------------------------------------------------------------------------------
// Asks into stashes, blocking calls and full mailboxes (S21-S23, S26, S29, S33)
// ---------------------------------------------------------------------------------

#[message]
enum Desk {
    Get(ActorRef<u64>),
    Crash,
    Open,
}

/// Stashes every `Get` until `Open`, then answers them `7`; `Crash` fails with `Boom`.
fn desk() -> Behavior<Desk> {
    Behaviors::with_stash(8, |stash| {
        Behaviors::receive_message(move |desk: Desk| -> Result<Behavior<Desk>, BoomOrFull> {
            match desk {
                Desk::Get(to) => {
                    stash.stash(Desk::Get(to))?;
                    Ok(Behaviors::same())
                }
                Desk::Crash => Err(BoomOrFull::Boom(Boom)),
                Desk::Open => Ok(stash.unstash_all(Behaviors::receive_message(|desk: Desk| {
                    if let Desk::Get(to) = desk {
                        to.tell(7);
                    }
                }))),
            }
        })
    })
    .unwrap()
}

#[derive(Debug, thiserror::Error)]
enum BoomOrFull {
    #[error(transparent)]
    Boom(#[from] Boom),
    #[error(transparent)]
    Full(#[from] StashOverflow),
}

// S23 + S26 + S14: an ask whose request sits in a stash when a restart discards the
// stash gets no answer: it fails at once (the request was dropped), not at its
// deadline. The next incarnation's stash answers asks as usual.
#[tapio::test(start_paused = true)]
async fn s23_s14_an_ask_held_in_a_discarded_stash_fails_at_once(system: ActorSystem) {
    let actor = system
        .spawn(
            Behaviors::supervise(desk()).on_failure::<BoomOrFull>(SupervisorStrategy::restart()),
            "desk",
        )
        .unwrap();
    let held = actor.ask_with(Desk::Get).timeout(Duration::from_secs(10));
    actor.tell(Desk::Crash);
    let started = Instant::now();
    let outcome = held.await;
    assert_fails_at_once(&outcome, started, |e| {
        matches!(e, AskError::Unanswered { .. })
    });
    let asked = actor.ask_with(Desk::Get).timeout(T);
    actor.tell(Desk::Open);
    assert_eq!(asked.await.unwrap(), 7);
}

#[message]
enum Query {
    Compute(u64, ActorRef<u64>),
}

/// An actor whose handler awaits a blocking call: stopped while it waits, the ask
/// whose request it had in hand fails at once with `TargetTerminated`.
async fn ask_into_a_blocking_call(system: &ActorSystem) {
    let mut probe = TestProbe::<String>::new(system);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let report = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::receive_async(
                async move |ctx, Query::Compute(n, to)| -> Result<(), tapio::Failure> {
                    let waiting = released.lock().unwrap().take().unwrap();
                    report.tell("blocking".to_owned());
                    let _ = ctx
                        .run_blocking(move || waiting.recv_timeout(Duration::from_secs(10)))
                        .await?;
                    to.tell(n);
                    Ok(())
                },
            ),
            "computer",
        )
        .unwrap();
    probe.watch(&actor);
    let ask = actor
        .ask_with(|to| Query::Compute(1, to))
        .timeout(Duration::from_secs(10));
    let asked = tokio::spawn(async move { ask.await });
    assert_eq!(probe.expect_message(T).await, "blocking");
    let started = std::time::Instant::now();
    system.stop(&actor).unwrap();
    let outcome = timeout(T, asked).await.unwrap().unwrap();
    assert!(
        matches!(outcome, Err(AskError::TargetTerminated { .. })),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    probe.expect_terminated(&actor, T).await;
    let _ = release.send(());
}

// S23 + S33 (current thread).
#[tapio::test]
async fn s23_s33_an_ask_in_a_blocking_handler_fails_at_once_on_stop(system: ActorSystem) {
    ask_into_a_blocking_call(&system).await;
}

// S23 + S33 (two workers).
#[tapio::test(worker_threads = 2)]
async fn s23_s33_an_ask_in_a_blocking_handler_fails_at_once_on_stop_on_two_workers(
    system: ActorSystem,
) {
    ask_into_a_blocking_call(&system).await;
}

// Failed before `AskError::MailboxFull`: the ask failed at once, but as
// `TargetTerminated`.
// S21 + S29 + S31: an ask whose request a full drop-new mailbox refuses gets no
// answer and fails at once, not at its deadline, and not as `TargetTerminated`: the
// target is alive (`MailboxFull`: its mailbox refused the request); with a
// dead-letter subscriber, the refused request is one `MailboxFull` letter.
#[tapio::test(start_paused = true)]
async fn s21_s29_an_ask_refused_by_a_full_mailbox_fails_at_once(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let (report, in_gate) = (probe.actor_ref().clone(), gate.clone());
    let actor = system
        .spawn_with(
            Behaviors::receive_message_async(async move |desk: Desk| {
                if let Desk::Crash = desk {
                    report.tell(0);
                    in_gate.acquire().await.unwrap().forget();
                }
                if let Desk::Get(to) = desk {
                    to.tell(7);
                }
            }),
            "full",
            bounded(1, OverflowStrategy::DropNew),
        )
        .unwrap();
    actor.tell(Desk::Crash); // blocks (here `Crash` only blocks)
    assert_eq!(probe.expect_message(T).await, 0);
    actor.tell(Desk::Open); // the mailbox is full
    let started = Instant::now();
    let outcome = actor
        .ask_with(Desk::Get)
        .timeout(Duration::from_secs(10))
        .await;
    assert_fails_at_once(&outcome, started, |e| {
        matches!(e, AskError::MailboxFull { .. })
    });

    // With a subscriber: the refused request is one letter naming the actor, and the
    // ask still fails at once, for the same reason.
    let mut letters = system.events().subscribe::<DeadLetter>();
    let started = Instant::now();
    let outcome = actor
        .ask_with(Desk::Get)
        .timeout(Duration::from_secs(10))
        .await;
    assert_fails_at_once(&outcome, started, |e| {
        matches!(e, AskError::MailboxFull { .. })
    });
    let letter = next_letter(&mut letters).await;
    assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull);
    assert_eq!(letter.recipient(), actor.path());
    assert!(matches!(letter.take_message::<Desk>(), Some(Desk::Get(_))));
    let more = letters_within(&mut letters, Duration::from_millis(50)).await;
    assert!(more.is_empty(), "one letter: {more:?}");
    gate.add_permits(1);
}

// ---------------------------------------------------------------------------------
// The testkit on combinations (S48)
// ---------------------------------------------------------------------------------

// S48 + S32: the behavior test kit runs a pool router: it records the routees it
// spawns and watches, and what the router hands on waits in each routee's own kit,
// in strict rotation.
#[test]
fn s48_s32_the_behavior_kit_runs_a_pool_router() {
    let mut kit = BehaviorTestKit::new(Routers::pool(2, Behaviors::ignore::<u64>).unwrap());
    let effects = kit.effects();
    for name in ["routee-1", "routee-2"] {
        assert!(
            effects.contains(&Effect::Spawned { name: name.into() }),
            "{name} in {effects:?}"
        );
    }
    let watched = effects
        .iter()
        .filter(|e| matches!(e, Effect::Watched { .. }))
        .count();
    assert_eq!(watched, 2, "{effects:?}");
    for n in 1..=5_u64 {
        kit.run(n).unwrap();
    }
    let mut r1 = kit.child_kit::<u64>("routee-1").unwrap().unwrap();
    let mut r2 = kit.child_kit::<u64>("routee-2").unwrap().unwrap();
    assert_eq!(r1.take_queued(), [1, 3, 5]);
    assert_eq!(r2.take_queued(), [2, 4]);
}

// S48 + S34 + S28 + S25 + S27: the behavior test kit runs a state machine built in a
// setup with a message adapter and a timer: the timer is recorded, not run; the
// stashing state holds what it does not handle; the adapted message (queued on the
// kit) switches the state when run, and the replay comes first, in order.
#[test]
fn s48_s34_the_behavior_kit_runs_a_stashing_machine_with_adapter_and_timer() {
    let mut out = TestInbox::<u64>::new();
    let (adapters_tx, adapters) = std::sync::mpsc::channel();
    let mut kit = BehaviorTestKit::new(kicked_vat(out.actor_ref().clone(), adapters_tx));
    kit.expect_effect(Effect::TimerStarted {
        key: "refill".into(),
        mode: TimerMode::Single,
        delay: Duration::from_millis(10),
    });
    let kick = adapters.try_recv().unwrap();
    kit.run(Fill(1)).unwrap();
    kit.run(Fill(99)).unwrap(); // the test plays the timer
    assert!(!out.has_messages(), "stashed while filling");
    kick.tell(Kick);
    kit.run_queued().unwrap();
    assert_eq!(out.messages(), [1, 99], "the replay, in order");
    kit.run(Fill(2)).unwrap();
    assert_eq!(out.messages(), [2]);
    assert!(kit.is_alive());
}

// S48 + S32: probes as the routees of a consistent-hashing group: every key lands on
// one probe, each probe gets its messages in the order sent, and none is lost.
#[tapio::test(start_paused = true)]
async fn s48_s32_probes_as_group_routees(system: ActorSystem) {
    let mut p1 = TestProbe::<u64>::new(&system);
    let mut p2 = TestProbe::<u64>::new(&system);
    let router = system
        .spawn(
            Routers::group([p1.actor_ref().clone(), p2.actor_ref().clone()])
                .unwrap()
                .consistent_hash(|n: &u64| n % 3),
            "probes",
        )
        .unwrap();
    for n in 0..30_u64 {
        router.tell(n);
    }
    let mut by_key: BTreeMap<u64, BTreeSet<u8>> = BTreeMap::new();
    let got1 = drain(&mut p1, Duration::from_millis(50)).await;
    let got2 = drain(&mut p2, Duration::from_millis(50)).await;
    assert_eq!(got1.len() + got2.len(), 30);
    for n in &got1 {
        by_key.entry(n % 3).or_default().insert(1);
    }
    for n in &got2 {
        by_key.entry(n % 3).or_default().insert(2);
    }
    assert!(
        by_key.values().all(|probes| probes.len() == 1),
        "each key on one probe: {by_key:?}"
    );
    assert!(got1.windows(2).all(|w| w[0] < w[1]) && got2.windows(2).all(|w| w[0] < w[1]));
}

// ---------------------------------------------------------------------------------
// More combinations: a router's own bound, asks in a machine's stash, offers racing
// a stop (S23, S29-S32, S34)
// ---------------------------------------------------------------------------------

// S32 + S29 + S30 + S31: a router's own mailbox, bounded: tells that find it full
// are dead letters naming the router (not a routee), `offer` waits for room in it
// instead, and what gets in is routed in strict rotation, carrying on from where it
// was.
#[tapio::test(start_paused = true)]
async fn s32_s30_a_routers_own_bound_refuses_tells_and_paces_offers(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let pool = Routers::pool(2, || {
        Behaviors::receive(|ctx, Paced::Job(n, to)| to.tell((ctx.path().name().to_owned(), n)))
    })
    .unwrap();
    let router = system
        .spawn_with(
            pool,
            "bounded-router",
            bounded(2, OverflowStrategy::DropNew),
        )
        .unwrap();
    let me = probe.actor_ref().clone();
    // One turn of the scheduler: the router has started and is idle.
    tokio::time::sleep(Duration::from_millis(1)).await;
    // Told in one go, without yielding: the router cannot run in between.
    for n in 1..=5 {
        router.tell(Paced::Job(n, me.clone()));
    }
    let mut refused = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(50)).await {
        assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull, "{letter}");
        assert_eq!(letter.recipient(), router.path(), "{letter}");
        let Some(Paced::Job(n, _)) = letter.take_message::<Paced>() else {
            panic!("{letter}");
        };
        refused.push(n);
    }
    assert_eq!(refused, [3, 4, 5]);
    for n in 6..=11 {
        assert!(
            timeout(T, router.offer(Paced::Job(n, me.clone())))
                .await
                .unwrap()
        );
    }
    let mut done = probe.receive_messages(8, T).await;
    done.sort_by_key(|(_, n)| *n);
    let who: Vec<(&str, u64)> = done.iter().map(|(w, n)| (w.as_str(), *n)).collect();
    assert_eq!(
        who,
        [
            ("routee-1", 1),
            ("routee-2", 2),
            ("routee-1", 6),
            ("routee-2", 7),
            ("routee-1", 8),
            ("routee-2", 9),
            ("routee-1", 10),
            ("routee-2", 11)
        ]
    );
    assert!(
        letters_within(&mut letters, Duration::from_millis(10))
            .await
            .is_empty()
    );
}

// S34 + S23 + S14: an ask that a stashing state holds, when an overflow of that
// state's stash restarts the machine, gets no answer: it fails at once, not at its
// deadline, and the held `Fill`s are `StashDiscarded` letters.
#[tapio::test(start_paused = true)]
async fn s34_s23_an_ask_held_by_a_state_fails_at_once_when_a_restart_discards_it(
    system: ActorSystem,
) {
    let probe = TestProbe::<u64>::new(&system);
    let setups = Arc::new(AtomicUsize::new(0));
    let vat = system
        .spawn(
            Behaviors::supervise(vat(probe.actor_ref().clone(), setups.clone()))
                .on_failure::<StashOverflow>(SupervisorStrategy::restart()),
            "vat",
        )
        .unwrap();
    let held = vat.ask(Poured).timeout(Duration::from_secs(10)); // stashed by `Filling`
    vat.tell(Fill(1));
    vat.tell(Fill(2)); // the stash (3) is full
    vat.tell(Fill(3)); // overflow: restart
    let started = Instant::now();
    let outcome = held.await;
    assert_fails_at_once(&outcome, started, |e| {
        matches!(e, AskError::Unanswered { .. })
    });
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    assert_eq!(vat.ask(Where).timeout(T).await.unwrap(), "filling");
}

// S30 + S31 + S19 (two workers): four producers offer to a bounded actor while it is
// stopped midway. Every message is accounted for exactly once: handled, or a
// `RecipientStopped` dead letter; and every offer that said `false` is among the
// dead letters.
#[tapio::test(worker_threads = 2)]
async fn s30_s31_offers_racing_a_stop_are_each_accounted_once(system: ActorSystem) {
    const EACH: u64 = 300;
    let mut letters = system
        .events()
        .subscribe_with_capacity::<DeadLetter>(10_000)
        .unwrap();
    let (handled_tx, mut handled_rx) = mpsc::unbounded_channel::<u64>();
    // 201 messages are handled; the handler of the 201st then waits until the stop.
    let gate = Arc::new(Semaphore::new(200));
    let in_gate = gate.clone();
    let actor = system
        .spawn_with(
            Behaviors::receive_message_async(async move |n: u64| {
                let _ = handled_tx.send(n);
                in_gate.acquire().await.unwrap().forget();
            }),
            "consumer",
            bounded(4, OverflowStrategy::DropNew),
        )
        .unwrap();
    let producers: Vec<_> = (0..4_u64)
        .map(|p| {
            let actor = actor.clone();
            tokio::spawn(async move {
                let mut refused = Vec::new();
                for i in 0..EACH {
                    let n = p * EACH + i;
                    if !actor.offer(n).await {
                        refused.push(n);
                    }
                }
                refused
            })
        })
        .collect();
    let mut handled = BTreeSet::new();
    while handled.len() < 201 {
        let n = timeout(T, handled_rx.recv()).await.unwrap().unwrap();
        assert!(handled.insert(n), "{n} handled twice");
    }
    system.stop(&actor).unwrap();
    let mut refused = BTreeSet::new();
    for producer in producers {
        for n in timeout(T, producer).await.unwrap().unwrap() {
            refused.insert(n);
        }
    }
    let mut dead = BTreeSet::new();
    let total = (4 * EACH) as usize;
    let counted = timeout(T, async {
        while handled.len() + dead.len() < total {
            tokio::select! {
                Some(n) = handled_rx.recv() => assert!(handled.insert(n), "{n} handled twice"),
                Some(letter) = letters.recv() => {
                    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped, "{letter}");
                    let n = letter.take_message::<u64>().expect("its number");
                    assert!(dead.insert(n), "{n} dead-lettered twice");
                }
            }
        }
    })
    .await;
    assert!(
        counted.is_ok(),
        "{} handled, {} dead of {total}: the rest went missing",
        handled.len(),
        dead.len()
    );
    assert!(handled.is_disjoint(&dead));
    assert!(
        refused.is_subset(&dead),
        "a refused offer without its letter"
    );
    assert!(
        !refused.is_empty(),
        "the stop came before the producers were done"
    );
    assert!(
        letters_within(&mut letters, Duration::from_millis(50))
            .await
            .is_empty()
    );
    drop(gate);
}
