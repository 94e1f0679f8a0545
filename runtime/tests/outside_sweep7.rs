//! A seventh outside-in sweep, written from the promises (S1..S49 in SEMANTICS.md),
//! the README and the public API docs only, about CONCURRENCY on a multi-thread tokio
//! runtime. Every racy scenario runs in a bounded loop; an iteration that goes wrong
//! is recorded, and a test reports how many of the iterations it ran failed (it stops
//! after three failures to stay quick).
//!
//! 1. No silent loss (S31, S13, S29, S30): many producers telling an actor while it
//!    restarts (with backoff), is stopped (from outside, or by itself), or while the
//!    system terminates; bounded mailboxes under drop-new, drop-oldest and fail;
//!    `offer` from many producers, racing a stop, and `offer_within` timing out.
//!    Every message must be handled or published as a dead letter, exactly once.
//! 2. Ordering (S5, S4, S27, S14): per-sender FIFO across restarts and under stash /
//!    unstash cycles; a restart that discards the stash; one message at a time with
//!    `async` handlers and signals; replies that cannot overtake their handler.
//! 3. Watch and terminate races (S18, S19, S23): watch racing a stop (`Terminated`
//!    exactly once), unwatch racing a stop, an ask racing its target's stop (fails at
//!    once, never at the deadline), terminate while actors spawn children in a loop
//!    (`live_actors()` is 0, every started actor saw `PostStop`), `PostStop` child
//!    before parent under load.
//! 4. Routers (S32): routees leaving (resize) while messages are routed, the last
//!    routee stopping, strict round-robin on a multi-thread runtime.
//! 5. Timers (S24, S25): ticks never re-enter a busy handler, fixed-delay gives a
//!    stalled actor no backlog while fixed-rate catches up, a restart's old ticks
//!    never reach the new incarnation, a cancelled key is never seen again, a single
//!    timer fires once under load.
//!
//! 6. More races: asks during a restart backoff, a stop and a terminate during
//!    backoff, asks at a full drop-new / drop-oldest mailbox (with and without a
//!    dead-letter subscriber), a stop during a stash replay, asks racing terminate or
//!    queued behind `ReplyThen::stop`, group routers, message adapters, watchers of a
//!    restarting actor, offers racing terminate and served in the order they began
//!    to wait, a stale ref after its name is reused, answers racing the ask deadline,
//!    broadcast pools, terminate dropping awaiting handlers, and a leak report
//!    (S48) after terminating a system busy with all of it.
//!
//! Every wait is bounded. Timing is never asserted exactly: the timer scenarios on the
//! real clock assert counts with wide margins.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{
    AskError, BoxError, DeadLetter, DeadLetterReason, MailboxConfig, MailboxOverflow,
    OverflowStrategy, Receive, ReplyThen, SpawnError, StashBuffer, StashOverflow, Subscription,
    Terminated,
};
use tokio::sync::Notify;
use tokio::task::{JoinSet, yield_now};
use tokio::time::{Instant, sleep, timeout};

/// The bound on any single wait that should succeed.
const T: Duration = Duration::from_secs(10);
/// How long accounting waits for the last letters to come in.
const SETTLE: Duration = Duration::from_secs(3);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("boom: a test failure")]
struct Boom;

type Shared = Arc<Mutex<Vec<u64>>>;

fn shared() -> Shared {
    Arc::new(Mutex::new(Vec::new()))
}

fn len(s: &Shared) -> usize {
    s.lock().unwrap().len()
}

fn snapshot(s: &Shared) -> Vec<u64> {
    s.lock().unwrap().clone()
}

/// Message `seq` of producer `p`.
fn enc(p: u64, seq: u64) -> u64 {
    (p << 32) | seq
}

fn producer_of(v: u64) -> u64 {
    v >> 32
}

fn seq_of(v: u64) -> u64 {
    v & 0xffff_ffff
}

fn show(v: u64) -> String {
    format!("p{}#{}", producer_of(v), seq_of(v))
}

/// Every message `producers` producers send, `per` each.
fn all(producers: u64, per: u64) -> Vec<u64> {
    (0..producers)
        .flat_map(|p| (0..per).map(move |s| enc(p, s)))
        .collect()
}

/// `producers` tasks, each sending `per` messages through `send` in order, yielding
/// every 16 so that they interleave with each other and with the actors.
async fn produce(producers: u64, per: u64, send: impl Fn(u64) + Send + Sync + Clone + 'static) {
    let mut tasks = JoinSet::new();
    for p in 0..producers {
        let send = send.clone();
        tasks.spawn(async move {
            for s in 0..per {
                send(enc(p, s));
                if s % 16 == 15 {
                    yield_now().await;
                }
            }
        });
    }
    timeout(T, async {
        while let Some(done) = tasks.join_next().await {
            done.unwrap();
        }
    })
    .await
    .expect("the producers finish");
}

/// A dead-letter subscription big enough never to lose a letter in these tests.
fn dead_letters(system: &ActorSystem) -> Subscription<DeadLetter> {
    system
        .events()
        .subscribe_with_capacity::<DeadLetter>(1 << 16)
        .unwrap()
}

/// A letter's `u64` message, if it was meant for an actor whose path starts with
/// `prefix`.
fn u64_under(prefix: &'static str) -> impl Fn(&DeadLetter) -> Option<u64> {
    move |letter| {
        if letter.recipient().to_string().starts_with(prefix) {
            letter.take_message::<u64>()
        } else {
            None
        }
    }
}

/// Collect dead letters (those `keep` turns into a value) until what was handled and
/// what was lettered add up to `total`, or `SETTLE` passes; then a short grace period
/// catches anything published twice.
async fn settle(
    letters: &mut Subscription<DeadLetter>,
    handled: &Shared,
    total: usize,
    keep: impl Fn(&DeadLetter) -> Option<u64>,
) -> Vec<(u64, DeadLetterReason)> {
    let deadline = Instant::now() + SETTLE;
    let mut found = Vec::new();
    let take = |letter: DeadLetter, found: &mut Vec<(u64, DeadLetterReason)>| {
        if let Some(v) = keep(&letter) {
            found.push((v, letter.reason().clone()));
        }
    };
    loop {
        if len(handled) + found.len() >= total {
            let grace = Instant::now() + ms(30);
            while Instant::now() < grace {
                match timeout(ms(10), letters.recv()).await {
                    Ok(Some(letter)) => take(letter, &mut found),
                    Ok(None) => break,
                    Err(_) => {}
                }
            }
            break;
        }
        if Instant::now() >= deadline {
            break;
        }
        match timeout(ms(10), letters.recv()).await {
            Ok(Some(letter)) => take(letter, &mut found),
            Ok(None) => sleep(ms(5)).await,
            Err(_) => {}
        }
    }
    found
}

/// Each of `expected` was handled or lettered exactly once, and nothing else was.
fn account(expected: &[u64], handled: &[u64], lettered: &[u64]) -> Result<(), String> {
    let mut seen: HashMap<u64, (u32, u32)> = HashMap::new();
    for v in handled {
        seen.entry(*v).or_default().0 += 1;
    }
    for v in lettered {
        seen.entry(*v).or_default().1 += 1;
    }
    let expected_set: HashSet<u64> = expected.iter().copied().collect();
    let missing: Vec<String> = expected
        .iter()
        .filter(|v| !seen.contains_key(v))
        .map(|v| show(*v))
        .collect();
    let twice: Vec<String> = seen
        .iter()
        .filter(|(_, (h, l))| h + l > 1)
        .map(|(v, (h, l))| format!("{} (handled {h}, lettered {l})", show(*v)))
        .collect();
    let stray: Vec<String> = seen
        .keys()
        .filter(|v| !expected_set.contains(v))
        .map(|v| show(*v))
        .collect();
    if missing.is_empty() && twice.is_empty() && stray.is_empty() {
        return Ok(());
    }
    Err(format!(
        "of {} messages: {} neither handled nor dead-lettered (e.g. {:?}); {} seen more than once (e.g. {:?}); {} unexpected (e.g. {:?}); handled {}, lettered {}",
        expected.len(),
        missing.len(),
        &missing[..missing.len().min(5)],
        twice.len(),
        &twice[..twice.len().min(5)],
        stray.len(),
        &stray[..stray.len().min(5)],
        handled.len(),
        lettered.len()
    ))
}

/// Per producer, what was handled came in the order it was sent (gaps allowed).
fn fifo(handled: &[u64]) -> Result<(), String> {
    let mut last: HashMap<u64, u64> = HashMap::new();
    for v in handled {
        let (p, s) = (producer_of(*v), seq_of(*v));
        if let Some(prev) = last.get(&p)
            && s <= *prev
        {
            return Err(format!(
                "producer {p}: message #{s} handled after #{prev} (per-sender FIFO broken)"
            ));
        }
        last.insert(p, s);
    }
    Ok(())
}

/// Every letter has `reason`.
fn reasons(found: &[(u64, DeadLetterReason)], reason: &DeadLetterReason) -> Result<(), String> {
    let other: Vec<String> = found
        .iter()
        .filter(|(_, r)| r != reason)
        .map(|(v, r)| format!("{} {r:?}", show(*v)))
        .collect();
    if other.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} letters with another reason than {reason:?}: {:?}",
            other.len(),
            &other[..other.len().min(5)]
        ))
    }
}

fn values(found: &[(u64, DeadLetterReason)]) -> Vec<u64> {
    found.iter().map(|(v, _)| *v).collect()
}

/// In `log` (paths, in `PostStop` order), every parent comes after its children.
fn post_stop_order(log: &[String]) -> Result<(), String> {
    let at: HashMap<&str, usize> = log
        .iter()
        .enumerate()
        .map(|(k, p)| (p.as_str(), k))
        .collect();
    for (k, path) in log.iter().enumerate() {
        if let Some((parent, _)) = path.rsplit_once('/')
            && let Some(&pk) = at.get(parent)
            && pk < k
        {
            return Err(format!(
                "{parent} saw PostStop (#{pk}) before its child {path} (#{k})"
            ));
        }
    }
    Ok(())
}

/// Yield to the scheduler `n` times.
async fn turns(n: usize) {
    for _ in 0..n {
        yield_now().await;
    }
}

/// Wait until `cond` holds, polling with yields, at most `T`.
async fn wait_for(what: &str, cond: impl Fn() -> bool) -> Result<(), String> {
    let deadline = Instant::now() + T;
    while !cond() {
        if Instant::now() >= deadline {
            return Err(format!("timed out waiting for {what}"));
        }
        yield_now().await;
    }
    Ok(())
}

/// Run `iteration` `n` times; fail with how many of the iterations run failed (and
/// what each said), stopping after three failures.
async fn repeat<F, Fut>(what: &str, n: usize, mut iteration: F)
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let mut failures = Vec::new();
    let mut ran = 0;
    for i in 0..n {
        ran += 1;
        if let Err(why) = iteration(i).await {
            failures.push(format!("  iteration {i}: {why}"));
            if failures.len() >= 3 {
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{what}: {} of {ran} iterations failed (of {n} planned; stops after 3):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Terminate `system` (bounded) after `body`, whatever `body` answered.
async fn finish(system: &ActorSystem, outcome: Result<(), String>) -> Result<(), String> {
    if timeout(T, system.terminate()).await.is_err() {
        return outcome.and(Err("terminate did not finish in time".into()));
    }
    outcome
}

/// [`repeat`] `body` `n` times, each in a fresh system `{name}-{i}`, terminated after.
async fn in_systems<F, Fut>(what: &str, n: usize, name: &str, body: F)
where
    F: FnMut(usize, ActorSystem) -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    in_built_systems(
        what,
        n,
        |i| ActorSystem::new(&format!("{name}-{i}")).unwrap(),
        body,
    )
    .await;
}

/// [`in_systems`] with the system of iteration `i` made by `build(i)`.
async fn in_built_systems<B, F, Fut>(what: &str, n: usize, build: B, mut body: F)
where
    B: Fn(usize) -> ActorSystem,
    F: FnMut(usize, ActorSystem) -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    repeat(what, n, |i| {
        let system = build(i);
        let run = body(i, system.clone());
        async move { finish(&system, run.await).await }
    })
    .await;
}

/// [`settle`] then [`account`] for `expected`; answers what was handled and the letters.
async fn accounted(
    letters: &mut Subscription<DeadLetter>,
    handled: &Shared,
    expected: &[u64],
    keep: impl Fn(&DeadLetter) -> Option<u64>,
) -> Result<(Vec<u64>, Vec<(u64, DeadLetterReason)>), String> {
    let found = settle(letters, handled, expected.len(), keep).await;
    let got = snapshot(handled);
    account(expected, &got, &values(&found))?;
    Ok((got, found))
}

/// Fails unless `found` holds one letter for each value of `counted` (`said`, then `what`).
fn one_letter_each(
    found: &[(u64, DeadLetterReason)],
    counted: &Shared,
    said: &str,
    what: &str,
) -> Result<(), String> {
    if found.len() == len(counted) {
        return Ok(());
    }
    Err(format!("{} {said}, {} {what}", len(counted), found.len()))
}

/// Fails unless `items` is empty, saying how many `what` and showing the first `shown`.
fn none<X: std::fmt::Debug>(items: &[X], what: &str, shown: usize) -> Result<(), String> {
    if items.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} {what}: {:?}",
        items.len(),
        &items[..items.len().min(shown)]
    ))
}

/// Fails unless no handler run overlapped another (saying so, then `why`).
fn no_overlaps(overlaps: &AtomicU64, why: &str) -> Result<(), String> {
    match overlaps.load(SeqCst) {
        0 => Ok(()),
        n => Err(format!("{n} handler runs overlapped another{why}")),
    }
}

/// Fails unless the subscription lost nothing.
fn lost_nothing(letters: &Subscription<DeadLetter>) -> Result<(), String> {
    match letters.lost() {
        0 => Ok(()),
        lost => Err(format!("the subscription lost {lost}")),
    }
}

/// Fails unless the system has no live actor left (saying so, then `when`).
fn no_live_actors(system: &ActorSystem, when: &str) -> Result<(), String> {
    match system.live_actors() {
        0 => Ok(()),
        live => Err(format!("live_actors() is {live}{when}")),
    }
}

/// Terminate `system` within `T`, failing with `hung` if it does not.
async fn terminate_within(system: &ActorSystem, hung: &str) -> Result<(), String> {
    timeout(T, system.terminate())
        .await
        .map_err(|_| hung.to_string())
}

/// A recorder failing on each producer's every `every`th message, restarted after `backoff`.
fn failing_recorder(handled: &Shared, every: u64, backoff: Backoff) -> Behavior<u64> {
    let h = handled.clone();
    Behaviors::supervise(Behaviors::receive_message(
        move |v: u64| -> Result<(), Boom> {
            h.lock().unwrap().push(v);
            if seq_of(v) % every == every - 1 {
                return Err(Boom);
            }
            Ok(())
        },
    ))
    .on_failure::<Boom>(
        SupervisorStrategy::restart()
            .with_limit(10_000, Duration::from_secs(60))
            .unwrap()
            .with_backoff(backoff),
    )
    .into()
}

/// A task that stops `actor` once `handled` holds `k` messages (answers how the wait went).
fn stop_when_handled<M: Message>(
    system: &ActorSystem,
    actor: &ActorRef<M>,
    handled: &Shared,
    k: usize,
) -> tokio::task::JoinHandle<Result<(), String>> {
    let (system, actor, handled) = (system.clone(), actor.clone(), handled.clone());
    tokio::spawn(async move {
        let ok = wait_for("k handled", || len(&handled) >= k).await;
        system.stop(&actor).unwrap();
        ok
    })
}

/// A [`slow_recorder`] named `sink` with a drop-new mailbox of `capacity`.
fn slow_sink(system: &ActorSystem, handled: &Shared, capacity: usize) -> ActorRef<u64> {
    system
        .spawn_with(
            slow_recorder(handled),
            "sink",
            MailboxConfig::bounded(capacity, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap()
}

/// `producers` tasks offering `per` messages each to `sink`; answers them, the refused, the hung.
fn offerers(
    sink: &ActorRef<u64>,
    producers: u64,
    per: u64,
    within: Duration,
) -> (JoinSet<()>, Shared, Shared) {
    let (refused, hung) = (shared(), shared());
    let mut tasks = JoinSet::new();
    for p in 0..producers {
        let (sink, refused, hung) = (sink.clone(), refused.clone(), hung.clone());
        tasks.spawn(async move {
            for s in 0..per {
                match timeout(within, sink.offer(enc(p, s))).await {
                    Ok(true) => {}
                    Ok(false) => refused.lock().unwrap().push(enc(p, s)),
                    Err(_) => hung.lock().unwrap().push(enc(p, s)),
                }
            }
        });
    }
    (tasks, refused, hung)
}

/// Fails unless no offer in `hung` is still waiting (saying how many `what`).
fn none_hung(hung: &Shared, what: &str) -> Result<(), String> {
    match len(hung) {
        0 => Ok(()),
        n => Err(format!("{n} offers {what}")),
    }
}

/// `n` tasks, task `k` running `body(k, target)` after `k % stagger` turns of the scheduler.
fn staggered<M, X, F, Fut>(target: &ActorRef<M>, n: usize, stagger: usize, body: F) -> JoinSet<X>
where
    M: Message,
    X: Send + 'static,
    F: Fn(usize, ActorRef<M>) -> Fut,
    Fut: Future<Output = X> + Send + 'static,
{
    let mut tasks = JoinSet::new();
    for k in 0..n {
        let run = body(k, target.clone());
        tasks.spawn(async move {
            turns(k % stagger).await;
            run.await
        });
    }
    tasks
}

/// Wait for every task of `tasks` (none may panic); answers what the failed ones said.
async fn failures(tasks: &mut JoinSet<Option<String>>) -> Vec<String> {
    let mut bad = Vec::new();
    while let Some(done) = tasks.join_next().await {
        if let Some(why) = done.unwrap() {
            bad.push(why);
        }
    }
    bad
}

/// Wait for every task of `tasks` (each must not panic).
async fn join_all<X: 'static>(tasks: &mut JoinSet<X>) {
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
}

/// The values of `refused` that are not among the letters `found`.
fn refused_are_letters(refused: &Shared, found: &[(u64, DeadLetterReason)]) -> Vec<u64> {
    let lettered: HashSet<u64> = values(found).into_iter().collect();
    snapshot(refused)
        .into_iter()
        .filter(|v| !lettered.contains(v))
        .collect()
}

/// A log of strings that several actors append to.
type Log = Arc<Mutex<Vec<String>>>;

/// An empty [`Log`].
fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

/// An actor that watches `target` and logs `label(ended)` in `heard` for each `Terminated`.
fn terminated_recorder<M: Message>(
    target: ActorRef<M>,
    heard: Log,
    label: impl Fn(&Terminated) -> String + Send + Sync + Clone + 'static,
) -> Behavior<u64> {
    Behaviors::setup(move |ctx| {
        ctx.watch(&target);
        let (heard, label) = (heard.clone(), label.clone());
        Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
            if let Signal::Terminated(ended) = signal {
                heard.lock().unwrap().push(label(ended));
            }
        })
    })
}

/// What each routee of a pool handled, by routee name.
type ByRoutee = Arc<Mutex<HashMap<String, Vec<u64>>>>;

/// A routee that records every number under its own name in `seen`.
fn name_recorder(seen: &ByRoutee) -> Receive<u64> {
    let s = seen.clone();
    Behaviors::receive(move |ctx, n: u64| {
        s.lock()
            .unwrap()
            .entry(ctx.path().name().to_string())
            .or_default()
            .push(n);
    })
}

/// Wait until the routees of `seen` handled `total` numbers; answers what each handled.
async fn all_routed(seen: &ByRoutee, total: usize) -> Result<HashMap<String, Vec<u64>>, String> {
    wait_for(&format!("{total} handled"), || {
        seen.lock().unwrap().values().map(Vec::len).sum::<usize>() >= total
    })
    .await?;
    Ok(seen.lock().unwrap().clone())
}

/// Two roots named `root0` and `root1`, each made by `node`.
fn two_roots(system: &ActorSystem, node: impl Fn() -> Behavior<u64>) -> Vec<ActorRef<u64>> {
    (0..2)
        .map(|r| system.spawn(node(), &format!("root{r}")).unwrap())
        .collect()
}

/// `log` holds one `PostStop` for each of 80 actors, each child's before its parent's.
fn eighty_post_stops(log: &Log, why: &str) -> Result<(), String> {
    let log = log.lock().unwrap().clone();
    if log.len() != 80 || log.iter().collect::<HashSet<_>>().len() != 80 {
        return Err(format!("{} PostStop for 80 actors{why}", log.len()));
    }
    post_stop_order(&log)
}

/// A channel whose receiving task keeps every ref sent to it (and answers how many).
fn keeper() -> (
    tokio::sync::mpsc::UnboundedSender<ActorRef<u64>>,
    tokio::task::JoinHandle<usize>,
) {
    let (keep, mut kept) = tokio::sync::mpsc::unbounded_channel::<ActorRef<u64>>();
    let keeper = tokio::spawn(async move {
        let mut refs = Vec::new();
        while let Some(r) = kept.recv().await {
            refs.push(r);
        }
        refs.len()
    });
    (keep, keeper)
}

/// On every number, spawns a grandparent [`counted_leaf`] and tells itself the next one.
fn spawn_loop(spawned: Arc<AtomicU64>, stopped: Arc<AtomicU64>) -> Receive<u64> {
    Behaviors::receive(move |ctx, n: u64| {
        if ctx
            .spawn_anonymous(counted_leaf(spawned.clone(), stopped.clone(), true))
            .map(|_: ActorRef<u64>| ())
            .is_ok()
        {
            spawned.fetch_add(1, SeqCst);
        }
        ctx.self_ref().tell(n + 1);
    })
}

/// A sink that records every `u64` it handles.
fn recorder(handled: &Shared) -> Behavior<u64> {
    let h = handled.clone();
    Behaviors::receive_message(move |v: u64| h.lock().unwrap().push(v)).into()
}

/// A sink that records every `u64` and then yields once inside its handler: slower
/// than its producers, so a bounded mailbox fills.
fn slow_recorder(handled: &Shared) -> Behavior<u64> {
    let h = handled.clone();
    Behaviors::receive_message_async(async move |v: u64| {
        h.lock().unwrap().push(v);
        yield_now().await;
    })
    .into()
}

// =================================================================================
// 1. No silent loss
// =================================================================================

// S13 + S5 + S31: four producers tell an actor that fails on every 50th message of
// each producer and restarts with a (short) backoff. "While an actor is backing off
// it is absent, not dead: `tell` still succeeds, its mailbox keeps filling, and that
// work is handled by the next incarnation. Nothing is lost." Every message is
// handled exactly once (the failing one by the incarnation that failed on it), none
// is a dead letter, and each producer's messages are handled in the order sent (S5).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s5_s13_s31_producers_across_restarts_lose_nothing_and_keep_order() {
    let what = "restarts under producers";
    in_systems(what, 25, "restarts", |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let backoff = Backoff::new(ms(1), ms(4), 0.2).unwrap();
        let actor: ActorRef<u64> = system
            .spawn(failing_recorder(&handled, 50, backoff), "worker")
            .unwrap();
        let a = actor.clone();
        produce(4, 400, move |v| a.tell(v)).await;
        let expected = all(4, 400);
        let (got, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/worker")).await?;
        if !found.is_empty() {
            return Err(format!(
                "{} dead letters for an actor that only restarted",
                found.len()
            ));
        }
        fifo(&got)?;
        lost_nothing(&letters)
    })
    .await;
}

// S31 + S18: four producers tell an actor while it is stopped, from outside
// (`system.stop`) or by itself (`Behaviors::stopped()` on one message), at a point
// that moves from iteration to iteration. Every message is handled or is a
// `RecipientStopped` dead letter, exactly once; a tell after the stop is a letter too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s31_producers_racing_a_stop_handle_or_letter_each_message_once() {
    let what = "stop under producers";
    in_systems(what, 100, "stop-race", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let self_stop = i % 2 == 1;
        let k = (i as u64 * 37) % 300;
        let trigger = enc(i as u64 % 4, k);
        let actor: ActorRef<u64> = system
            .spawn(
                Behaviors::receive_message(move |v: u64| {
                    h.lock().unwrap().push(v);
                    if self_stop && v == trigger {
                        Behaviors::stopped()
                    } else {
                        Behaviors::same()
                    }
                }),
                "target",
            )
            .unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&actor);
        let stopper =
            (!self_stop).then(|| stop_when_handled(&system, &actor, &handled, k as usize));
        let a = actor.clone();
        produce(4, 300, move |v| a.tell(v)).await;
        if let Some(stopper) = stopper {
            stopper.await.unwrap()?;
        }
        probe.expect_terminated(&actor, T).await;
        actor.tell(enc(9, 0));
        let mut expected = all(4, 300);
        expected.push(enc(9, 0));
        let (got, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/target")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        fifo(&got)
    })
    .await;
}

// S19 + S31: producers tell three actors while the system terminates (started from
// another task once some messages were handled). `terminate` returns with
// `live_actors() == 0`; every message is handled or a `RecipientStopped` dead letter,
// exactly once, including tells made after the system has terminated.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_s31_producers_racing_terminate_handle_or_letter_each_message_once() {
    let what = "terminate under producers";
    in_systems(what, 60, "term-race", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let targets: Vec<ActorRef<u64>> = (0..3)
            .map(|j| system.spawn(recorder(&handled), &format!("t{j}")).unwrap())
            .collect();
        let k = (i * 53) % 600;
        let terminator = {
            let (system, handled) = (system.clone(), handled.clone());
            tokio::spawn(async move {
                let ok = wait_for("k handled", || len(&handled) >= k).await;
                terminate_within(&system, "terminate hung").await?;
                ok
            })
        };
        let ts = targets.clone();
        produce(3, 300, move |v| ts[(seq_of(v) % 3) as usize].tell(v)).await;
        terminator.await.unwrap()?;
        no_live_actors(&system, " after terminate returned")?;
        for (j, t) in targets.iter().enumerate() {
            t.tell(enc(9, j as u64));
        }
        let mut expected = all(3, 300);
        expected.extend((0..3).map(|j| enc(9, j)));
        let (_, found) = accounted(&mut letters, &handled, &expected, u64_under("/user/t")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)
    })
    .await;
}

/// `n` times: four producers tell a sink of capacity 8 under `strategy`; what was
/// handled and what the strategy dropped (each with `reason`) add up, exactly once,
/// and what was handled kept each producer's order.
async fn bounded_run(
    what: &str,
    n: usize,
    name: &str,
    strategy: OverflowStrategy,
    reason: DeadLetterReason,
) {
    in_systems(what, n, name, |_, system| {
        let reason = reason.clone();
        async move {
            let (mut letters, handled) = (dead_letters(&system), shared());
            let mailbox = MailboxConfig::bounded(8, strategy).unwrap();
            let behavior: Behavior<u64> = if strategy == OverflowStrategy::Fail {
                Behaviors::supervise(slow_recorder(&handled))
                    .on_failure::<MailboxOverflow>(
                        SupervisorStrategy::restart()
                            .with_limit(100_000, Duration::from_secs(60))
                            .unwrap(),
                    )
                    .into()
            } else {
                slow_recorder(&handled)
            };
            let sink = system.spawn_with(behavior, "sink", mailbox).unwrap();
            let s = sink.clone();
            produce(4, 500, move |v| s.tell(v)).await;
            let expected = all(4, 500);
            let (got, found) =
                accounted(&mut letters, &handled, &expected, u64_under("/user/sink")).await?;
            reasons(&found, &reason)?;
            fifo(&got)?;
            if got.is_empty() {
                return Err("nothing was handled".into());
            }
            lost_nothing(&letters)
        }
    })
    .await;
}

// S29 + S31: drop-new under four producers: "Refuse the new message: it becomes a
// dead letter (MailboxFull); what is queued stays."
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_s31_drop_new_under_producers_accounts_every_message() {
    let (strategy, reason) = (OverflowStrategy::DropNew, DeadLetterReason::MailboxFull);
    bounded_run("drop-new", 10, "drop-new", strategy, reason).await;
}

// S29 + S31: drop-oldest under four producers: the oldest queued message is pushed
// out as a `PushedOut` dead letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_s31_drop_oldest_under_producers_accounts_every_message() {
    let (strategy, reason) = (OverflowStrategy::DropOldest, DeadLetterReason::PushedOut);
    bounded_run("drop-oldest", 10, "drop-oldest", strategy, reason).await;
}

// S29 + S31 + S14: fail under four producers, restarted by supervision: "Refuse the
// new message (MailboxFull), and fail the actor with MailboxOverflow, under its
// supervision: a restart keeps what is queued". So only `MailboxFull` letters, and
// everything else handled.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_s31_fail_with_restart_under_producers_accounts_every_message() {
    let (strategy, reason) = (OverflowStrategy::Fail, DeadLetterReason::MailboxFull);
    bounded_run("fail+restart", 10, "fail-restart", strategy, reason).await;
}

// S30 + S5: four producers `offer` into a mailbox of capacity 4: each offer resolves
// (none hangs) to `true`, everything is handled, nothing is a dead letter, and each
// producer's order holds ("Waiting offers are served in the order they began to
// wait").
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s30_s5_offers_from_many_producers_all_arrive_in_order() {
    in_systems("offers", 10, "offers", |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let sink = slow_sink(&system, &handled, 4);
        let (mut tasks, refused, hung) = offerers(&sink, 4, 300, T);
        join_all(&mut tasks).await;
        let not_true = len(&refused) + len(&hung);
        if not_true != 0 {
            return Err(format!("{not_true} offers refused or hung"));
        }
        let expected = all(4, 300);
        let (got, _) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/sink")).await?;
        fifo(&got)
    })
    .await;
}

// S30 + S31: producers `offer` into a full mailbox of capacity 2 while the actor is
// stopped. Every offer resolves promptly ("`false` once the actor has stopped (the
// message is then a dead letter), at once if it had stopped already"); a `true` is
// handled or a `RecipientStopped` letter, a `false` is a letter; exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s30_s31_offers_racing_a_stop_resolve_and_account_every_message() {
    in_systems("offers vs stop", 60, "offer-stop", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let sink = slow_sink(&system, &handled, 2);
        let k = (i * 29) % 400;
        let (mut tasks, refused, hung) = offerers(&sink, 4, 200, T);
        wait_for("k handled", || len(&handled) >= k).await?;
        system.stop(&sink).unwrap();
        join_all(&mut tasks).await;
        none_hung(&hung, &format!("did not resolve within {T:?}"))?;
        let expected = all(4, 200);
        let (_, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/sink")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        let unlettered: Vec<String> = refused_are_letters(&refused, &found)
            .into_iter()
            .map(show)
            .collect();
        if !unlettered.is_empty() {
            return Err(format!(
                "refused offers that are not dead letters: {unlettered:?}"
            ));
        }
        Ok(())
    })
    .await;
}

// S30 + S31: `offer_within` with tiny deadlines against a slow sink of capacity 1:
// "`false` if there was none by then, and the message is a dead letter
// (OfferTimedOut)". A `true` is handled, a `false` is one `OfferTimedOut` letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s30_s31_offer_within_timeouts_are_lettered_exactly_once() {
    in_systems("offer_within", 6, "offer-within", |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let sink = slow_sink(&system, &handled, 1);
        let refused = shared();
        let mut tasks = JoinSet::new();
        for p in 0..4 {
            let (sink, refused) = (sink.clone(), refused.clone());
            tasks.spawn(async move {
                for s in 0..150_u64 {
                    let within = Duration::from_micros((s * 37 + p * 11) % 1500);
                    if !sink.offer_within(enc(p, s), within).await {
                        refused.lock().unwrap().push(enc(p, s));
                    }
                }
            });
        }
        timeout(T, join_all(&mut tasks))
            .await
            .map_err(|_| "the offers did not finish".to_string())?;
        let expected = all(4, 150);
        let (got, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/sink")).await?;
        reasons(&found, &DeadLetterReason::OfferTimedOut)?;
        one_letter_each(&found, &refused, "offers said false", "letters")?;
        fifo(&got)
    })
    .await;
}

// =================================================================================
// 2. Ordering
// =================================================================================

#[message]
#[derive(Debug, Clone, PartialEq, Eq)]
enum Work {
    Item(u64),
    Toggle,
    Fail,
}

fn work_item(letter: &DeadLetter) -> Option<u64> {
    match letter.take_message::<Work>() {
        Some(Work::Item(v)) => Some(v),
        _ => None,
    }
}

/// Stashes every item; `Toggle` replays them and switches to `ready`; `Fail` fails.
fn loading(stash: StashBuffer<Work>, handled: Shared) -> Behavior<Work> {
    Behaviors::receive_message(move |w: Work| -> Result<Behavior<Work>, BoxError> {
        match w {
            Work::Toggle => Ok(stash.unstash_all(ready(stash.clone(), handled.clone()))),
            Work::Fail => Err(Boom.into()),
            item => {
                stash.stash(item)?;
                Ok(Behaviors::same())
            }
        }
    })
    .into()
}

/// [`loading`] with a stash of 4096, recording in `handled`.
fn stashing(handled: &Shared) -> Behavior<Work> {
    let h = handled.clone();
    Behaviors::with_stash(4096, move |stash| loading(stash, h.clone())).unwrap()
}

/// Handles items; `Toggle` goes back to `loading`.
fn ready(stash: StashBuffer<Work>, handled: Shared) -> Behavior<Work> {
    Behaviors::receive_message(move |w: Work| match w {
        Work::Toggle => loading(stash.clone(), handled.clone()),
        Work::Item(v) => {
            handled.lock().unwrap().push(v);
            Behaviors::same()
        }
        Work::Fail => Behaviors::same(),
    })
    .into()
}

// S27 + S5: four producers tell an actor that a fifth sender switches 21 times
// between stashing everything and handling it (`unstash_all` replays "at the front of
// the mailbox, in arrival order, ahead of anything that arrived meanwhile"). The last
// switch leaves it handling, so everything is handled, exactly once, and each
// producer's messages in the order sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s27_s5_stash_cycles_under_producers_keep_per_sender_order() {
    in_systems("stash cycles", 30, "stash-cycles", |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let actor: ActorRef<Work> = system.spawn(stashing(&handled), "cycler").unwrap();
        let toggler = {
            let actor = actor.clone();
            tokio::spawn(async move {
                for t in 0..21 {
                    actor.tell(Work::Toggle);
                    turns((t % 7) * 5).await;
                }
            })
        };
        let a = actor.clone();
        produce(4, 400, move |v| a.tell(Work::Item(v))).await;
        toggler.await.unwrap();
        let expected = all(4, 400);
        let (got, found) = accounted(&mut letters, &handled, &expected, work_item).await?;
        none(&found, "dead letters", 5)?;
        fifo(&got)
    })
    .await;
}

// S14 + S27 + S31 + S5: an actor stashing under four producers restarts (a `Fail`
// from a fifth sender): "the stash is emptied (its messages become dead letters)"
// with `StashDiscarded`, while what was still in the mailbox is kept by the restart
// and stashed again by the new incarnation, then replayed on `Toggle`. Every item is
// handled or a `StashDiscarded` letter, exactly once; the handled ones in each
// producer's order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s14_s27_s31_a_restart_discards_the_stash_under_producers_and_loses_nothing_else() {
    let what = "restart discards stash";
    in_systems(what, 40, "stash-restart", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let actor: ActorRef<Work> = system
            .spawn(
                Behaviors::supervise(stashing(&handled))
                    .on_failure::<Boom>(SupervisorStrategy::restart()),
                "stasher",
            )
            .unwrap();
        let controller = {
            let actor = actor.clone();
            tokio::spawn(async move {
                turns((i % 5) * 20).await;
                actor.tell(Work::Fail);
                turns((i % 3) * 20).await;
                actor.tell(Work::Toggle);
            })
        };
        let a = actor.clone();
        produce(4, 300, move |v| a.tell(Work::Item(v))).await;
        controller.await.unwrap();
        let expected = all(4, 300);
        let (got, found) = accounted(&mut letters, &handled, &expected, work_item).await?;
        reasons(&found, &DeadLetterReason::StashDiscarded)?;
        fifo(&got)
    })
    .await;
}

#[message]
enum Busy {
    Item(u64),
    Watch(ActorRef<u64>),
}

// S4 + S18 + crate docs ("while one awaits, its actor takes no other message, but
// still reads its system lane"; "A watch, or a watched actor's `Terminated`, waits
// until the handler is done"): an actor whose `async` handler yields twice in the
// middle, flooded by four producers, watching 40 actors that another task stops
// meanwhile. No handler or signal handler ever overlaps another; every item is
// handled once; each watched actor's `Terminated` comes exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s4_s18_one_message_at_a_time_with_async_handlers_and_terminations() {
    let what = "one at a time";
    in_systems(what, 15, "one-at-a-time", |_, system| async move {
        let handled = shared();
        let inside = Arc::new(AtomicBool::new(false));
        let overlaps = Arc::new(AtomicU64::new(0));
        let ended = log();
        let (h, ins, ov) = (handled.clone(), inside.clone(), overlaps.clone());
        let (ins2, ov2, e2) = (inside.clone(), overlaps.clone(), ended.clone());
        let busy: ActorRef<Busy> = system
            .spawn(
                Behaviors::receive_async(async move |ctx, m: Busy| {
                    if ins.swap(true, SeqCst) {
                        ov.fetch_add(1, SeqCst);
                    }
                    match m {
                        Busy::Item(v) => h.lock().unwrap().push(v),
                        Busy::Watch(target) => ctx.watch(&target),
                    }
                    yield_now().await;
                    yield_now().await;
                    ins.store(false, SeqCst);
                })
                .on_signal(move |_, signal| {
                    if ins2.load(SeqCst) {
                        ov2.fetch_add(1, SeqCst);
                    }
                    if let Signal::Terminated(t) = signal {
                        e2.lock().unwrap().push(t.actor().path().to_string());
                    }
                }),
                "busy",
            )
            .unwrap();
        let targets: Vec<ActorRef<u64>> = (0..40)
            .map(|j| {
                system
                    .spawn(Behaviors::ignore::<u64>(), &format!("w{j}"))
                    .unwrap()
            })
            .collect();
        let stopper = {
            let (system, targets, busy) = (system.clone(), targets.clone(), busy.clone());
            tokio::spawn(async move {
                for (j, t) in targets.iter().enumerate() {
                    busy.tell(Busy::Watch(t.clone()));
                    turns(j % 4).await;
                    system.stop(t).unwrap();
                }
            })
        };
        let b = busy.clone();
        produce(4, 250, move |v| b.tell(Busy::Item(v))).await;
        stopper.await.unwrap();
        wait_for("every item handled", || len(&handled) >= 1000).await?;
        wait_for("every Terminated", || ended.lock().unwrap().len() >= 40).await?;
        sleep(ms(30)).await; // a window for a duplicate to show
        let got = snapshot(&handled);
        account(&all(4, 250), &got, &[])?;
        fifo(&got)?;
        let ended = ended.lock().unwrap().clone();
        let distinct: HashSet<&String> = ended.iter().collect();
        if ended.len() != 40 || distinct.len() != 40 {
            return Err(format!(
                "{} Terminated for 40 watched actors ({} distinct)",
                ended.len(),
                distinct.len()
            ));
        }
        no_overlaps(&overlaps, "")
    })
    .await;
}

#[message(reply = u64)]
pub struct Take;

#[message(reply = u64)]
pub struct Seal;

#[message]
pub struct Bump;

#[derive(Clone, Default)]
pub struct Ticket {
    n: u64,
}

#[actor]
impl Ticket {
    fn take(&mut self, _: Take) -> u64 {
        self.n += 1;
        self.n
    }
    fn seal(&mut self, _: Seal) -> ReplyThen<u64, TicketMsg> {
        ReplyThen::stop(self.n)
    }
    fn bump(&mut self, _: Bump) {
        self.n += 1;
    }
}

/// Eight tasks, each asking `ticket` `per` times through `ask`; each answers its outcomes.
fn take_askers<X, F, Fut>(ticket: &ActorRef<TicketMsg>, per: usize, ask: F) -> JoinSet<Vec<X>>
where
    X: Send + 'static,
    F: Fn(ActorRef<TicketMsg>) -> Fut + Send + Copy + 'static,
    Fut: Future<Output = X> + Send,
{
    let mut tasks = JoinSet::new();
    for _ in 0..8 {
        let ticket = ticket.clone();
        tasks.spawn(async move {
            let mut out = Vec::new();
            for _ in 0..per {
                out.push(ask(ticket.clone()).await);
            }
            out
        });
    }
    tasks
}

// S4 + S21: eight tasks ask one actor 100 times each, concurrently: its state needs no
// lock, so the answers are exactly 1..=800, each once. Then `Seal` answers with
// `ReplyThen::stop`: once the asker has the answer, the handler that sent it is over
// and its decision (stop) taken, so a `Bump` told right after the answer is never
// handled: it is one `RecipientStopped` dead letter, and the actor is terminated.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s4_replies_are_serial_and_a_reply_then_stop_cannot_be_overtaken() {
    let system = ActorSystem::new("tickets").unwrap();
    repeat("tickets", 30, |i| {
        let system = system.clone();
        async move {
            let mut letters = dead_letters(&system);
            let name = format!("ticket-{i}");
            let ticket = system.spawn(Ticket::default(), &name).unwrap();
            let mut tasks = take_askers(
                &ticket,
                100,
                |t| async move { t.ask(Take).timeout(T).await },
            );
            let mut answers = Vec::new();
            while let Some(done) = tasks.join_next().await {
                for answer in done.unwrap() {
                    answers.push(answer.map_err(|e| format!("an ask failed: {e}"))?);
                }
            }
            answers.sort_unstable();
            if answers != (1..=800).collect::<Vec<u64>>() {
                return Err(format!(
                    "answers are not 1..=800 once each: {} answers, first {:?}",
                    answers.len(),
                    &answers[..answers.len().min(10)]
                ));
            }
            let sealed = ticket
                .ask(Seal)
                .timeout(T)
                .await
                .map_err(|e| format!("seal: {e}"))?;
            ticket.tell(Bump);
            if sealed != 800 {
                return Err(format!("sealed at {sealed}"));
            }
            let mut probe = TestProbe::<u64>::new(&system);
            probe.watch(&ticket);
            probe.expect_terminated(&ticket, T).await;
            let path = format!("/user/{name}");
            let letter = timeout(T, async {
                loop {
                    let l = letters.recv().await.expect("the stream is open");
                    if l.recipient().to_string() == path {
                        return l;
                    }
                }
            })
            .await
            .map_err(|_| "no dead letter for the Bump told after ReplyThen::stop".to_string())?;
            if letter.reason() != &DeadLetterReason::RecipientStopped {
                return Err(format!("the Bump's letter says {:?}", letter.reason()));
            }
            Ok(())
        }
    })
    .await;
    timeout(T, system.terminate()).await.unwrap();
}

// =================================================================================
// 3. Watch and terminate races
// =================================================================================

// S18: ten watchers each watch a target in their setup while another task stops the
// targets (half from outside, half by telling them a message that makes them stop
// themselves), so the watch races the stop. Each watcher hears `Terminated` exactly
// once ("even if it stopped before the watch").
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s18_a_watch_racing_a_stop_hears_terminated_exactly_once() {
    in_systems("watch vs stop", 150, "watch-race", |i, system| async move {
        let heard = log();
        let targets: Vec<ActorRef<u64>> = (0..10)
            .map(|j| {
                system
                    .spawn(
                        Behaviors::receive_message(|_: u64| Behaviors::stopped()),
                        &format!("t{j}"),
                    )
                    .unwrap()
            })
            .collect();
        let stopper = {
            let (system, targets) = (system.clone(), targets.clone());
            tokio::spawn(async move {
                for (j, t) in targets.iter().enumerate() {
                    turns((i + j) % 3).await;
                    if j % 2 == 0 {
                        system.stop(t).unwrap();
                    } else {
                        t.tell(0_u64);
                    }
                }
            })
        };
        for (j, t) in targets.iter().enumerate() {
            let named = |ended: &Terminated| ended.actor().path().name().to_string();
            let watcher = terminated_recorder(t.clone(), heard.clone(), named);
            system.spawn(watcher, &format!("w{j}")).unwrap();
        }
        stopper.await.unwrap();
        wait_for("ten Terminated", || heard.lock().unwrap().len() >= 10).await?;
        sleep(ms(20)).await; // a window for a duplicate to show
        let mut got = heard.lock().unwrap().clone();
        got.sort();
        let want: Vec<String> = {
            let mut w: Vec<String> = (0..10).map(|j| format!("t{j}")).collect();
            w.sort();
            w
        };
        if got != want {
            return Err(format!("Terminated heard: {got:?}"));
        }
        Ok(())
    })
    .await;
}

#[message]
enum Wu {
    Unwatch,
    Ping(ActorRef<u64>),
}

// S18 + `unwatch` docs ("no `Terminated` for it arrives after this call, even one
// already on its way"): a watcher unwatches its target while another task stops the
// target. Either `Terminated` came before the unwatch, or it never comes; never
// after, never twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s18_unwatch_racing_a_stop_never_hears_terminated_afterwards() {
    let what = "unwatch vs stop";
    in_systems(what, 150, "unwatch-race", |i, system| async move {
        let mut logs = Vec::new();
        let mut pairs = Vec::new();
        for j in 0..8 {
            let target: ActorRef<u64> = system
                .spawn(Behaviors::ignore::<u64>(), &format!("t{j}"))
                .unwrap();
            let log: Arc<Mutex<Vec<&'static str>>> = Arc::new(Mutex::new(Vec::new()));
            let (t, l) = (target.clone(), log.clone());
            let watcher: ActorRef<Wu> = system
                .spawn(
                    Behaviors::setup(move |ctx| {
                        ctx.watch(&t);
                        let (t, l, l2) = (t.clone(), l.clone(), l.clone());
                        Behaviors::receive(move |ctx, m: Wu| match m {
                            Wu::Unwatch => {
                                ctx.unwatch(&t);
                                l.lock().unwrap().push("unwatched");
                            }
                            Wu::Ping(to) => to.tell(1),
                        })
                        .on_signal(move |_, signal| {
                            if let Signal::Terminated(_) = signal {
                                l2.lock().unwrap().push("terminated");
                            }
                        })
                    }),
                    &format!("w{j}"),
                )
                .unwrap();
            logs.push(log);
            pairs.push((target, watcher));
        }
        let mut probe = TestProbe::<u64>::new(&system);
        let mut ends = Vec::new();
        for (j, (target, watcher)) in pairs.iter().enumerate() {
            let end = TestProbe::<u64>::new(&system);
            end.watch(target);
            ends.push(end);
            if (i + j) % 2 == 0 {
                watcher.tell(Wu::Unwatch);
                system.stop(target).unwrap();
            } else {
                system.stop(target).unwrap();
                watcher.tell(Wu::Unwatch);
            }
        }
        for ((target, watcher), end) in pairs.iter().zip(&mut ends) {
            end.expect_terminated(target, T).await;
            watcher.tell(Wu::Ping(probe.actor_ref().clone()));
            probe.expect_message(T).await;
        }
        sleep(ms(20)).await; // a window for a late Terminated to show
        for (j, log) in logs.iter().enumerate() {
            let log = log.lock().unwrap().clone();
            let fine = log == ["unwatched"] || log == ["terminated", "unwatched"];
            if !fine {
                return Err(format!("watcher w{j} saw {log:?}"));
            }
        }
        Ok(())
    })
    .await;
}

#[message]
pub struct Hoard(pub ActorRef<u64>);

// S23 + ask docs ("An ask still waiting after a millisecond also watches its target,
// so it fails as soon as the target stops even when the reply ref lives on
// elsewhere"): 400 asks, each to its own target that hands the reply ref to a keeper
// outside the system and never answers; the target is stopped (from outside, or by
// itself after hoarding, or before the ask) after a jitter of a few scheduler turns
// or a millisecond or two, so the stop lands before, at and after the moment the ask
// starts watching. Deadline 20 s; each ask must fail with `TargetTerminated` within
// 3 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s23_an_ask_racing_its_targets_stop_fails_at_once() {
    let system = ActorSystem::new("ask-race").unwrap();
    let (keep, keeper) = keeper();
    let mut bad = Vec::new();
    for batch in 0..8_usize {
        let mut tasks = JoinSet::new();
        for j in 0..50_usize {
            let n = batch * 50 + j;
            let keep = keep.clone();
            let self_stop = n % 3 == 1;
            let target: ActorRef<Hoard> = system
                .spawn(
                    Behaviors::receive_message(move |Hoard(to): Hoard| {
                        let _ = keep.send(to);
                        if self_stop {
                            Behaviors::stopped()
                        } else {
                            Behaviors::same()
                        }
                    }),
                    &format!("t{n}"),
                )
                .unwrap();
            let system = system.clone();
            tasks.spawn(async move {
                let before = n % 10 == 0;
                if before {
                    system.stop(&target).unwrap();
                }
                let started = Instant::now();
                let ask = target.ask_with(Hoard).timeout(Duration::from_secs(20));
                let stop = async {
                    match n % 4 {
                        0 => {}
                        1 => {
                            turns(n % 7).await;
                        }
                        2 => sleep(ms(1)).await,
                        _ => sleep(ms(2)).await,
                    }
                    if !before && !self_stop {
                        system.stop(&target).unwrap();
                    }
                };
                let (answer, ()) = tokio::join!(timeout(Duration::from_secs(3), ask), stop);
                match answer {
                    Ok(Err(AskError::TargetTerminated { .. })) => None,
                    Ok(other) => Some(format!("ask {n}: {other:?} after {:?}", started.elapsed())),
                    Err(_) => Some(format!("ask {n} still waiting after 3 s (deadline 20 s)")),
                }
            });
        }
        bad.extend(failures(&mut tasks).await);
    }
    drop(keep);
    timeout(T, system.terminate()).await.unwrap();
    let _ = timeout(T, keeper).await;
    assert!(
        bad.is_empty(),
        "{} of 400 asks did not fail at once with TargetTerminated:\n{}",
        bad.len(),
        bad[..bad.len().min(10)].join("\n")
    );
}

/// A leaf that counts its `PostStop`, and, when `grandchild`, spawns one child of
/// its own in its setup (counted in `spawned` when the spawn succeeds).
fn counted_leaf(
    spawned: Arc<AtomicU64>,
    stopped: Arc<AtomicU64>,
    grandchild: bool,
) -> Behavior<u64> {
    Behaviors::setup(move |ctx| {
        if grandchild
            && ctx
                .spawn_anonymous(counted_leaf(spawned.clone(), stopped.clone(), false))
                .map(|_: ActorRef<u64>| ())
                .is_ok()
        {
            spawned.fetch_add(1, SeqCst);
        }
        let stopped = stopped.clone();
        Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
            if *signal == Signal::PostStop {
                stopped.fetch_add(1, SeqCst);
            }
        })
    })
}

// S19 + S1 + S2: four actors spawn a child (which spawns a grandchild in its setup)
// on every message and tell themselves the next one, in an endless loop, while an
// outside task spawns top-level actors in a loop too; then the system terminates.
// `terminate` returns in time with `live_actors() == 0` ("zero once the system has
// terminated"); every actor whose spawn succeeded saw `PostStop` (no handler was
// running at the deadline); a top-level spawn after termination has begun fails with
// `SystemTerminated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_terminate_while_actors_spawn_children_in_a_loop() {
    let what = "terminate vs spawning";
    in_systems(what, 20, "spawn-loop", |i, system| async move {
        let spawned = Arc::new(AtomicU64::new(0));
        let stopped = Arc::new(AtomicU64::new(0));
        for j in 0..4 {
            let st = stopped.clone();
            let spawner: ActorRef<u64> = system
                .spawn(
                    spawn_loop(spawned.clone(), stopped.clone()).on_signal(move |_, signal| {
                        if *signal == Signal::PostStop {
                            st.fetch_add(1, SeqCst);
                        }
                    }),
                    &format!("spawner{j}"),
                )
                .unwrap();
            spawned.fetch_add(1, SeqCst);
            spawner.tell(0_u64);
        }
        let outside = {
            let (system, sp, st) = (system.clone(), spawned.clone(), stopped.clone());
            tokio::spawn(async move {
                loop {
                    match system.spawn_anonymous(counted_leaf(sp.clone(), st.clone(), true)) {
                        Ok(_) => {
                            sp.fetch_add(1, SeqCst);
                        }
                        Err(SpawnError::SystemTerminated { .. }) => return Ok(()),
                        Err(other) => return Err(format!("outside spawn: {other:?}")),
                    }
                    yield_now().await;
                }
            })
        };
        let target = 200 + (i as u64 % 4) * 100;
        wait_for("actors spawned", || spawned.load(SeqCst) >= target).await?;
        terminate_within(&system, "terminate did not finish in 10 s").await?;
        no_live_actors(&system, " after terminate returned")?;
        timeout(T, outside)
            .await
            .map_err(|_| "the outside spawner never saw SystemTerminated".to_string())?
            .unwrap()?;
        let (sp, st) = (spawned.load(SeqCst), stopped.load(SeqCst));
        if sp != st {
            return Err(format!("{sp} actors spawned, {st} saw PostStop"));
        }
        match system.spawn(Behaviors::ignore::<u64>(), "late") {
            Err(SpawnError::SystemTerminated { .. }) => {}
            other => return Err(format!("a spawn after termination: {other:?}")),
        }
        Ok(())
    })
    .await;
}

/// A tree node's `fanout` children `c0`, `c1`, ..., each `node(depth - 1, ...)`; none at 0.
fn children(
    ctx: &mut ActorContext<u64>,
    depth: u32,
    fanout: u32,
    log: &Log,
    node: fn(u32, u32, Log) -> Behavior<u64>,
) -> Vec<ActorRef<u64>> {
    if depth == 0 {
        return Vec::new();
    }
    (0..fanout)
        .map(|k| {
            ctx.spawn(node(depth - 1, fanout, log.clone()), &format!("c{k}"))
                .unwrap()
        })
        .collect()
}

/// `receive`, which also logs its actor's path in `log` at `PostStop`.
fn logging_post_stop(receive: Receive<u64>, log: &Log) -> Receive<u64> {
    let log = log.clone();
    receive.on_signal(move |ctx, signal| {
        if *signal == Signal::PostStop {
            log.lock().unwrap().push(ctx.path().to_string());
        }
    })
}

/// A node of a tree `depth` levels deep below it, `fanout` children each; each node
/// forwards every number to all its children, and logs its path at `PostStop`.
fn tree_node(depth: u32, fanout: u32, log: Log) -> Behavior<u64> {
    Behaviors::setup(move |ctx| {
        let children = children(ctx, depth, fanout, &log, tree_node);
        let forward = Behaviors::receive(move |_, n: u64| {
            for c in &children {
                c.tell(n);
            }
        });
        logging_post_stop(forward, &log)
    })
}

// S19 + S15: two trees of 40 actors (depth 3, fan-out 3) under load (every number
// told to a root is forwarded to all 39 below it) when the system terminates. Every
// actor sees `PostStop` exactly once, each after all its children have seen theirs
// ("each actor sees `PostStop` after its children have seen theirs"), and
// `live_actors()` is 0 when `terminate` returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s15_s19_post_stop_is_child_before_parent_under_load() {
    in_systems("post-stop order", 30, "tree", |i, system| async move {
        let log = log();
        let roots = two_roots(&system, || tree_node(3, 3, log.clone()));
        let producers = {
            let roots = roots.clone();
            tokio::spawn(async move {
                for n in 0..400_u64 {
                    roots[(n % 2) as usize].tell(n);
                    if n % 8 == 7 {
                        yield_now().await;
                    }
                }
            })
        };
        turns((i % 4) * 30).await;
        terminate_within(&system, "terminate did not finish").await?;
        producers.await.unwrap();
        no_live_actors(&system, "")?;
        eighty_post_stops(&log, "")
    })
    .await;
}

// =================================================================================
// 4. Routers
// =================================================================================

// S32 + PoolHandle::resize docs ("shrinking takes the most recently added routees out
// of the rotation at once and stops them (what they had queued becomes dead
// letters)"): three producers tell a pool router while another task resizes it up
// and down 12 times. Every message is handled by a routee or is a dead letter,
// exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s32_routees_leaving_on_resize_under_load_lose_nothing() {
    in_systems("pool resize", 30, "pool-resize", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let pool = Routers::pool(4, move || recorder(&h)).unwrap();
        let handle = pool.handle();
        let router: ActorRef<u64> = system.spawn(pool, "pool").unwrap();
        let resizer = tokio::spawn(async move {
            for (k, size) in [1, 5, 2, 6, 1, 3, 1, 4, 2, 5, 1, 3].into_iter().enumerate() {
                handle.resize(size).map_err(|e| format!("resize: {e}"))?;
                turns((k + i) % 5 * 10).await;
            }
            Ok::<(), String>(())
        });
        let r = router.clone();
        produce(3, 500, move |v| r.tell(v)).await;
        resizer.await.unwrap()?;
        let expected = all(3, 500);
        let (_, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/pool")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)
    })
    .await;
}

// S32 + S18 + S31: four routees each stop themselves after their 50th message while
// three producers tell the router 900 messages. "A routee that stops leaves the pool
// (the router watches it); when the last routee stops the router stops". Exactly 200
// are handled, the other 700 are dead letters (to a routee or to the router), each
// exactly once, and a watcher of the router hears `Terminated` once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s32_the_last_routee_stopping_stops_the_router_and_letters_the_rest() {
    in_systems("last routee", 40, "last-routee", |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let pool = Routers::pool(4, move || {
            let h = h.clone();
            let count = AtomicU64::new(0);
            Behaviors::receive_message(move |v: u64| {
                h.lock().unwrap().push(v);
                if count.fetch_add(1, SeqCst) + 1 == 50 {
                    Behaviors::stopped()
                } else {
                    Behaviors::same()
                }
            })
        })
        .unwrap();
        let router: ActorRef<u64> = system.spawn(pool, "pool").unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&router);
        let r = router.clone();
        produce(3, 300, move |v| r.tell(v)).await;
        probe.expect_terminated(&router, T).await;
        let expected = all(3, 300);
        let (_, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/pool")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        if len(&handled) != 200 {
            return Err(format!(
                "{} handled by four routees of 50 each",
                len(&handled)
            ));
        }
        probe.expect_no_termination(ms(50)).await;
        Ok(())
    })
    .await;
}

// S32 + S5: one producer tells a pool of four 4000 numbers on a multi-thread runtime:
// "strict round-robin", each routee in turn "in the order they joined", so
// `routee-k` handles exactly the numbers n with n % 4 == k - 1, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s32_s5_round_robin_is_strict_on_a_multi_thread_runtime() {
    in_systems("round-robin", 3, "round-robin", |_, system| async move {
        let seen = ByRoutee::default();
        let s = seen.clone();
        let pool = Routers::pool(4, move || name_recorder(&s)).unwrap();
        let router: ActorRef<u64> = system.spawn(pool, "pool").unwrap();
        for n in 0..4000_u64 {
            router.tell(n);
            if n % 64 == 63 {
                yield_now().await;
            }
        }
        let seen = all_routed(&seen, 4000).await?;
        for k in 1..=4_u64 {
            let want: Vec<u64> = (0..4000).filter(|n| n % 4 == k - 1).collect();
            let got = seen
                .get(&format!("routee-{k}"))
                .cloned()
                .unwrap_or_default();
            if got != want {
                return Err(format!(
                    "routee-{k} handled {} numbers, first {:?}",
                    got.len(),
                    &got[..got.len().min(8)]
                ));
            }
        }
        Ok(())
    })
    .await;
}

// =================================================================================
// 5. Timers
// =================================================================================

#[message]
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tm {
    Tick(u64),
    Item(u64),
    Fail,
    Cancel,
    Stall,
    Marker(ActorRef<u64>),
}

/// `n` actors `a0`, `a1`, ..., each `behavior` of its own tick counter, and the counters.
fn ticking(
    system: &ActorSystem,
    n: usize,
    behavior: impl Fn(Arc<AtomicU64>) -> Behavior<Tm>,
) -> (Vec<ActorRef<Tm>>, Vec<Arc<AtomicU64>>) {
    let counters: Vec<Arc<AtomicU64>> = (0..n).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let actors = counters
        .iter()
        .enumerate()
        .map(|(j, ticks)| {
            system
                .spawn(behavior(ticks.clone()), &format!("a{j}"))
                .unwrap()
        })
        .collect();
    (actors, counters)
}

/// Tell `actors`, in turn, the items `0..total`, yielding after every `every`.
async fn flood(actors: &[ActorRef<Tm>], total: u64, every: u64) {
    for n in 0..total {
        actors[(n % actors.len() as u64) as usize].tell(Tm::Item(n));
        if n % every == every - 1 {
            yield_now().await;
        }
    }
}

// S25 + S14 + S13 + S5: an actor restarted 30 times by a controller while four
// producers flood it, starting a 1 ms fixed-rate timer in each incarnation whose tick
// carries the incarnation number. "Timers belong to the actor cell and are cancelled
// on restart ... what the incarnation that failed scheduled never reaches the one
// replacing it": no incarnation ever sees another's tick; and every item is handled
// once, in each producer's order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s14_s25_a_restarts_old_ticks_never_reach_the_new_incarnation_under_load() {
    let what = "timers across restarts";
    in_systems(what, 8, "timer-restart", |_, system| async move {
        let handled = shared();
        let incarnations = Arc::new(AtomicU64::new(0));
        let stale: Shared = shared();
        let ticks = Arc::new(AtomicU64::new(0));
        let (h, inc, st, tk) = (
            handled.clone(),
            incarnations.clone(),
            stale.clone(),
            ticks.clone(),
        );
        let actor: ActorRef<Tm> = system
            .spawn(
                Behaviors::supervise(Behaviors::setup(move |ctx| {
                    let me = inc.fetch_add(1, SeqCst) + 1;
                    ctx.timers()
                        .start_fixed_rate("tick", Tm::Tick(me), ms(1))
                        .unwrap();
                    let (h, st, tk) = (h.clone(), st.clone(), tk.clone());
                    Behaviors::receive_message(move |m: Tm| -> Result<(), Boom> {
                        match m {
                            Tm::Tick(n) if n == me => {
                                tk.fetch_add(1, SeqCst);
                            }
                            Tm::Tick(n) => st.lock().unwrap().push((n << 32) | me),
                            Tm::Item(v) => h.lock().unwrap().push(v),
                            Tm::Fail => return Err(Boom),
                            _ => {}
                        }
                        Ok(())
                    })
                }))
                .on_failure::<Boom>(
                    SupervisorStrategy::restart()
                        .with_limit(1000, Duration::from_secs(60))
                        .unwrap(),
                ),
                "ticker",
            )
            .unwrap();
        let controller = {
            let actor = actor.clone();
            tokio::spawn(async move {
                for k in 0..30 {
                    actor.tell(Tm::Fail);
                    turns((k % 5) * 10).await;
                    if k % 3 == 0 {
                        sleep(ms(1)).await;
                    }
                }
            })
        };
        let a = actor.clone();
        produce(4, 300, move |v| a.tell(Tm::Item(v))).await;
        controller.await.unwrap();
        wait_for("every item handled", || len(&handled) >= 1200).await?;
        wait_for("31 incarnations", || incarnations.load(SeqCst) >= 31).await?;
        sleep(ms(20)).await; // the last incarnation's ticks keep coming
        let got = snapshot(&handled);
        account(&all(4, 300), &got, &[])?;
        fifo(&got)?;
        let stale = snapshot(&stale);
        if !stale.is_empty() {
            let shown: Vec<String> = stale
                .iter()
                .take(5)
                .map(|v| format!("tick of #{} seen by #{}", v >> 32, v & 0xffff_ffff))
                .collect();
            return Err(format!(
                "{} ticks reached another incarnation: {shown:?} ({} own ticks)",
                stale.len(),
                ticks.load(SeqCst)
            ));
        }
        Ok(())
    })
    .await;
}

// S25 + TimerScheduler::cancel docs ("A tick it already queued is dropped unseen"):
// twenty actors with a 1 ms fixed-rate timer, each flooded by a producer, are told
// `Cancel` once they have seen a few ticks. After the handler that cancels, no tick of
// that key is ever handled.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s25_a_cancelled_key_is_never_seen_again_under_load() {
    let what = "cancel under load";
    in_systems(what, 4, "timer-cancel", |_, system| async move {
        let late = Arc::new(AtomicU64::new(0));
        let (actors, counters) = ticking(&system, 20, |tk| {
            let (cn, lt) = (Arc::new(AtomicBool::new(false)), late.clone());
            Behaviors::with_timers(move |timers| {
                timers.start_fixed_rate("tick", Tm::Tick(0), ms(1)).unwrap();
                let (tk, cn, lt) = (tk.clone(), cn.clone(), lt.clone());
                Behaviors::receive_message(move |m: Tm| match m {
                    Tm::Tick(_) => {
                        if cn.load(SeqCst) {
                            lt.fetch_add(1, SeqCst);
                        } else {
                            tk.fetch_add(1, SeqCst);
                        }
                    }
                    Tm::Cancel => {
                        timers.cancel("tick");
                        cn.store(true, SeqCst);
                    }
                    Tm::Marker(to) => to.tell(1),
                    _ => {}
                })
            })
        });
        let flood = {
            let actors = actors.clone();
            tokio::spawn(async move { flood(&actors, 4000, 32).await })
        };
        for (actor, ticks) in actors.iter().zip(&counters) {
            wait_for("a few ticks", || ticks.load(SeqCst) >= 3).await?;
            actor.tell(Tm::Cancel);
        }
        flood.await.unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        for actor in &actors {
            actor.tell(Tm::Marker(probe.actor_ref().clone()));
            probe.expect_message(T).await;
        }
        sleep(ms(20)).await; // a window for a late tick
        let late = late.load(SeqCst);
        if late != 0 {
            return Err(format!(
                "{late} ticks handled after their key was cancelled"
            ));
        }
        Ok(())
    })
    .await;
}

// S25 + S24: fifty actors start a 1 ms single timer in their setup while a producer
// floods each of them: each sees its tick exactly once, behind the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s24_s25_a_single_timer_fires_exactly_once_under_load() {
    in_systems("single timer", 4, "timer-single", |_, system| async move {
        let (actors, counters) = ticking(&system, 50, |tk| {
            Behaviors::with_timers(move |timers| {
                timers.start_single_timer("once", Tm::Tick(0), ms(1));
                let tk = tk.clone();
                Behaviors::receive_message(move |m: Tm| {
                    if let Tm::Tick(_) = m {
                        tk.fetch_add(1, SeqCst);
                    }
                })
            })
        });
        flood(&actors, 5000, 64).await;
        wait_for("every tick", || {
            counters.iter().all(|c| c.load(SeqCst) >= 1)
        })
        .await?;
        sleep(ms(20)).await; // a window for a second tick
        let counts: Vec<u64> = counters.iter().map(|c| c.load(SeqCst)).collect();
        if counts.iter().any(|c| *c != 1) {
            return Err(format!("tick counts: {counts:?}"));
        }
        Ok(())
    })
    .await;
}

/// An actor with a repeating 5 ms timer (`fixed_rate` or fixed-delay), whose `Stall`
/// handler awaits `release`; counts its ticks and any overlap of its handlers.
fn staller(
    fixed_rate: bool,
    release: Arc<Notify>,
    ticks: Arc<AtomicU64>,
    overlaps: Arc<AtomicU64>,
) -> Behavior<Tm> {
    Behaviors::with_timers(move |timers| {
        if fixed_rate {
            timers.start_fixed_rate("tick", Tm::Tick(0), ms(5)).unwrap();
        } else {
            timers
                .start_fixed_delay("tick", Tm::Tick(0), ms(5))
                .unwrap();
        }
        let inside = Arc::new(AtomicBool::new(false));
        let (release, ticks, overlaps) = (release.clone(), ticks.clone(), overlaps.clone());
        Behaviors::receive_message_async(async move |m: Tm| {
            if inside.swap(true, SeqCst) {
                overlaps.fetch_add(1, SeqCst);
            }
            match m {
                Tm::Tick(_) => {
                    ticks.fetch_add(1, SeqCst);
                    yield_now().await;
                }
                Tm::Stall => release.notified().await,
                Tm::Marker(to) => to.tell(ticks.load(SeqCst)),
                _ => {}
            }
            inside.store(false, SeqCst);
        })
    })
}

// S24 + S25: two actors with a 5 ms timer, one fixed-delay and one fixed-rate, each
// stalled for at least 100 ms in an `async` handler (the ticks cannot re-enter it:
// no handler ever overlaps another). Fixed-delay: "never while that one still waits in
// the mailbox, so an actor that falls behind gets fewer ticks, not a backlog": a
// marker told right after the stall finds at most 3 ticks handled before it (one
// queued during the stall, one sent when that one was taken, and one for slack).
// Fixed-rate: "missed ticks are sent one after another after a stall": 30 ms after
// the stall, it has handled at least half of the ticks due since it started (a
// fixed-delay timer would have handled about 8 of the 26 or more due).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s24_s25_a_stalled_actor_gets_no_backlog_from_fixed_delay_and_a_catch_up_from_fixed_rate() {
    in_systems("stalled timers", 3, "timer-stall", |_, system| async move {
        let overlaps = Arc::new(AtomicU64::new(0));
        let (delay_release, rate_release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let (delay_ticks, rate_ticks) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let started = Instant::now();
        let delayed = system
            .spawn(staller(false, delay_release.clone(), delay_ticks.clone(), overlaps.clone()), "delay")
            .unwrap();
        let rated = system
            .spawn(staller(true, rate_release.clone(), rate_ticks.clone(), overlaps.clone()), "rate")
            .unwrap();
        delayed.tell(Tm::Stall);
        rated.tell(Tm::Stall);
        let stall = Instant::now();
        sleep(ms(100)).await; // the stall itself: measured below, not hoped for
        let stalled_for = stall.elapsed();
        if stalled_for < ms(100) {
            return Err(format!("the stall lasted only {stalled_for:?}"));
        }
        let mut probe = TestProbe::<u64>::new(&system);
        delay_release.notify_one();
        delayed.tell(Tm::Marker(probe.actor_ref().clone()));
        let before_marker = probe.expect_message(T).await;
        if before_marker > 3 {
            return Err(format!("fixed-delay: {before_marker} ticks handled before a marker told right after a {stalled_for:?} stall"));
        }
        rate_release.notify_one();
        rated.tell(Tm::Marker(probe.actor_ref().clone()));
        probe.expect_message(T).await;
        sleep(ms(30)).await;
        rated.tell(Tm::Marker(probe.actor_ref().clone()));
        let handled = probe.expect_message(T).await;
        let due = started.elapsed().as_millis() as u64 / 5;
        if handled * 2 < due {
            return Err(format!("fixed-rate: {handled} ticks handled of {due} due after a {stalled_for:?} stall"));
        }
        no_overlaps(&overlaps, " (a tick re-entered)")
    })
    .await;
}

// =================================================================================
// 6. More races: restarts with backoff, asks on full mailboxes, replay, adapters
// =================================================================================

#[message]
enum Rq {
    Fail,
    Get(ActorRef<u64>),
}

/// Fails on `Fail`, answers `Get` with its incarnation number; restarted after a
/// backoff of `backoff`..2x`backoff` (no jitter).
fn restarting(incarnations: Arc<AtomicU64>, backoff: Duration) -> Behavior<Rq> {
    Behaviors::supervise(Behaviors::setup(move |_| {
        let me = incarnations.fetch_add(1, SeqCst) + 1;
        Behaviors::receive_message(move |m: Rq| -> Result<(), Boom> {
            match m {
                Rq::Fail => Err(Boom),
                Rq::Get(to) => {
                    to.tell(me);
                    Ok(())
                }
            }
        })
    }))
    .on_failure::<Boom>(
        SupervisorStrategy::restart()
            .with_limit(10_000, Duration::from_secs(60))
            .unwrap()
            .with_backoff(Backoff::new(backoff, backoff * 2, 0.0).unwrap()),
    )
    .into()
}

// S13 + S14 + S23: asks made while their target backs off before a restart (20 ms):
// the ask watches its target after a millisecond, but "while an actor is backing off
// it is absent, not dead" and on a restart "watchers hear nothing": every ask is
// answered, by the next incarnation, and none fails with `TargetTerminated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s13_s23_asks_during_a_restart_backoff_are_answered_by_the_next_incarnation() {
    let what = "asks during backoff";
    in_systems(what, 15, "ask-backoff", |_, system| async move {
        let incarnations = Arc::new(AtomicU64::new(0));
        let actor: ActorRef<Rq> = system
            .spawn(restarting(incarnations.clone(), ms(20)), "flaky")
            .unwrap();
        let mut tasks = staggered(&actor, 8, 3, |k, actor| async move {
            if k == 0 {
                actor.tell(Rq::Fail);
            }
            actor
                .ask_with(Rq::Get)
                .timeout(Duration::from_secs(5))
                .await
        });
        let mut bad = Vec::new();
        while let Some(done) = tasks.join_next().await {
            if let Err(e) = done.unwrap() {
                bad.push(format!("{e:?}"));
            }
        }
        none(&bad, "of 8 asks failed", 8)?;
        let n = actor
            .ask_with(Rq::Get)
            .timeout(T)
            .await
            .map_err(|e| format!("{e}"))?;
        if n != 2 {
            return Err(format!("answered by incarnation {n}, expected 2"));
        }
        Ok(())
    })
    .await;
}

// S13 + S31 + S18: four producers tell an actor that fails on every 40th message of
// each producer and restarts after a backoff of 2..4 ms, and it is stopped from
// outside partway (often while it backs off). Every message is handled or a
// `RecipientStopped` letter, exactly once; a watcher hears `Terminated` once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s13_s31_a_stop_during_restarts_and_backoff_letters_the_rest_exactly_once() {
    let what = "stop during backoff";
    in_systems(what, 50, "stop-backoff", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let backoff = Backoff::new(ms(2), ms(4), 0.0).unwrap();
        let actor: ActorRef<u64> = system
            .spawn(failing_recorder(&handled, 40, backoff), "worker")
            .unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&actor);
        let k = 40 + (i * 41) % 400;
        let stopper = stop_when_handled(&system, &actor, &handled, k);
        let a = actor.clone();
        produce(4, 200, move |v| a.tell(v)).await;
        stopper.await.unwrap()?;
        probe.expect_terminated(&actor, T).await;
        let expected = all(4, 200);
        let (got, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/worker")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        fifo(&got)?;
        probe.expect_no_termination(ms(20)).await;
        Ok(())
    })
    .await;
}

// S13 + S19 + S31: an actor backing off for 10 s before its restart, with 100
// messages queued, when the system terminates (shutdown deadline 3 s). It runs no
// handler while it backs off, so nothing has to be cancelled at the deadline:
// `terminate` returns well before the deadline (under 2 s), with `live_actors() == 0`,
// and the 100 messages are `RecipientStopped` letters.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s13_s19_terminate_does_not_wait_out_a_restart_backoff() {
    let build = |i| {
        ActorSystem::builder(&format!("term-backoff-{i}"))
            .shutdown_timeout(Duration::from_secs(3))
            .build()
            .unwrap()
    };
    let what = "terminate during backoff";
    in_built_systems(what, 3, build, |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let backing_off = Arc::new(Notify::new());
        let b = backing_off.clone();
        let actor: ActorRef<u64> = system
            .spawn(
                Behaviors::supervise(
                    Behaviors::receive_message(move |v: u64| -> Result<(), Boom> {
                        if v == u64::MAX {
                            return Err(Boom);
                        }
                        h.lock().unwrap().push(v);
                        Ok(())
                    })
                    .on_signal(move |_, signal| {
                        if *signal == Signal::PreRestart {
                            b.notify_one();
                        }
                    }),
                )
                .on_failure::<Boom>(SupervisorStrategy::restart().with_backoff(
                    Backoff::new(Duration::from_secs(10), Duration::from_secs(20), 0.0).unwrap(),
                )),
                "sleeper",
            )
            .unwrap();
        actor.tell(u64::MAX);
        let a = actor.clone();
        produce(4, 25, move |v| a.tell(v)).await;
        // It backs off once its `PreRestart` has run (the backoff begins in that turn).
        timeout(T, backing_off.notified())
            .await
            .map_err(|_| format!("no PreRestart within {T:?}"))?;
        let started = Instant::now();
        terminate_within(&system, "terminate did not return in 10 s").await?;
        let took = started.elapsed();
        no_live_actors(&system, "")?;
        let expected = all(4, 25);
        let (_, found) = accounted(
            &mut letters,
            &handled,
            &expected,
            u64_under("/user/sleeper"),
        )
        .await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        if took > Duration::from_secs(2) {
            return Err(format!(
                "terminate took {took:?} with a backing-off actor (deadline 3 s)"
            ));
        }
        Ok(())
    })
    .await;
}

#[message]
enum Slow {
    Get(ActorRef<u64>),
}

/// The same request as `Slow::Get`, with its answer declared: asked with `ask`.
#[message(reply = u64)]
struct SlowGet;

/// Answers each request after two turns of the scheduler.
struct SlowActor;

#[actor]
impl SlowActor {
    async fn slow(&mut self, m: Slow) {
        yield_now().await;
        yield_now().await;
        let Slow::Get(to) = m;
        to.tell(1);
    }

    async fn get(&mut self, _: SlowGet) -> u64 {
        yield_now().await;
        yield_now().await;
        1
    }
}

/// How an ask carries its reply ref: in a field of the message (`ask_with`), or in
/// the slot of a request whose answer is declared (`ask`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    AskWith,
    Ask,
}

/// `n` times, 256 concurrent asks (deadline 20 s) of a slow actor with a mailbox of
/// 2 under `strategy`, in a system `ask-full-{first + i}`, with a dead-letter
/// subscriber (which reads only afterwards) when `subscribe`. Each ask ends at once
/// (answered, or failed with `refused`); never at its 20 s deadline; and each
/// refusal matches one dead letter with `reason`.
async fn asks_on_a_full_mailbox(
    what: &str,
    n: usize,
    first: usize,
    strategy: OverflowStrategy,
    reason: DeadLetterReason,
    subscribe: bool,
    form: Form,
) {
    let build = |i| ActorSystem::new(&format!("ask-full-{}", first + i)).unwrap();
    in_built_systems(what, n, build, |_, system| {
        let reason = reason.clone();
        async move {
            let mut letters = subscribe.then(|| dead_letters(&system));
            let slow = system
                .spawn_with(
                    Behaviors::setup(|_| SlowActor),
                    "slow",
                    MailboxConfig::bounded(2, strategy).unwrap(),
                )
                .unwrap();
            let mut tasks = staggered(&slow, 256, 8, move |_, slow| async move {
                let ask = match form {
                    Form::AskWith => slow.ask_with(Slow::Get),
                    Form::Ask => slow.ask(SlowGet),
                };
                timeout(Duration::from_secs(3), ask.timeout(Duration::from_secs(20))).await
            });
            let (mut answered, mut refused, mut other) = (0, 0, Vec::new());
            while let Some(done) = tasks.join_next().await {
                {
                    let outcome = done.unwrap();
                    match outcome {
                        Ok(Ok(_)) => answered += 1,
                        Ok(Err(AskError::MailboxFull { .. }))
                            if reason == DeadLetterReason::MailboxFull =>
                        {
                            refused += 1
                        }
                        Ok(Err(AskError::Unanswered { .. }))
                            if reason == DeadLetterReason::PushedOut =>
                        {
                            refused += 1
                        }
                        Ok(Err(e)) => other.push(format!("{e:?}")),
                        Err(_) => other.push("still waiting after 3 s".to_string()),
                    }
                }
            }
            none(&other, "of 256 asks ended otherwise", 5)?;
            if answered == 0 {
                return Err("nothing was answered".into());
            }
            let Some(letters) = letters.as_mut() else {
                return Ok(());
            };
            let mut found = 0;
            let deadline = Instant::now() + SETTLE;
            while found < refused && Instant::now() < deadline {
                if let Ok(Some(letter)) = timeout(ms(10), letters.recv()).await
                    && letter.recipient().to_string() == "/user/slow"
                {
                    {
                        if letter.reason() != &reason {
                            return Err(format!("a letter with {:?}", letter.reason()));
                        }
                        found += 1;
                    }
                }
            }
            while let Ok(Some(letter)) = timeout(ms(30), letters.recv()).await {
                if letter.recipient().to_string() == "/user/slow" {
                    found += 1;
                }
            }
            if found != refused {
                return Err(format!(
                    "{refused} asks refused, {found} letters ({answered} answered)"
                ));
            }
            Ok(())
        }
    })
    .await;
}

// S29 + S22 + ask docs ("`AskError::MailboxFull`: the target's bounded mailbox was
// full and its overflow strategy (drop-new, or fail) refused the request; the ask
// fails at once"): 256 concurrent asks at a slow actor with a drop-new mailbox of 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_s31_asks_on_a_full_drop_new_mailbox_fail_at_once_with_one_letter_each() {
    let (strategy, reason) = (OverflowStrategy::DropNew, DeadLetterReason::MailboxFull);
    let what = "asks vs drop-new";
    asks_on_a_full_mailbox(what, 3, 0, strategy, reason, true, Form::AskWith).await;
}

// S29 + S31 + ask docs ("`AskError::Unanswered`: the request was dropped without an
// answer"; "Under drop-oldest a request is taken, and one pushed out later fails its
// ask as `Unanswered`: at once for `ask`"): the same under drop-oldest, with a dead-letter subscriber (S31 invites
// one); each pushed-out request fails its ask at once (not at its 20 s deadline) and
// is one `PushedOut` letter. The letter carries the request without its reply slot,
// so the subscriber that holds it does not keep the ask waiting (an `ask_with`
// request, whose reply ref is a field, would: the ask docs say so).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_s31_asks_on_a_full_drop_oldest_mailbox_fail_at_once_with_one_letter_each() {
    let (strategy, reason) = (OverflowStrategy::DropOldest, DeadLetterReason::PushedOut);
    let what = "asks vs drop-oldest";
    asks_on_a_full_mailbox(what, 3, 100, strategy, reason, true, Form::Ask).await;
}

// The same as the test above with no dead-letter subscriber: a control, which shows
// what the ask docs describe when nobody keeps the pushed-out request.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s29_asks_on_a_full_drop_oldest_mailbox_without_a_subscriber_fail_at_once() {
    let (strategy, reason) = (OverflowStrategy::DropOldest, DeadLetterReason::PushedOut);
    let what = "asks vs drop-oldest, no subscriber";
    asks_on_a_full_mailbox(what, 3, 200, strategy, reason, false, Form::AskWith).await;
}

/// Stashes items until `Toggle`, then handles each slowly (1 ms), recording it first.
fn slow_after_unstash(stash: StashBuffer<Work>, handled: Shared) -> Behavior<Work> {
    Behaviors::receive_message(move |w: Work| -> Result<Behavior<Work>, StashOverflow> {
        match w {
            Work::Toggle => {
                let h = handled.clone();
                Ok(
                    stash.unstash_all(Behaviors::receive_message_async(async move |w: Work| {
                        if let Work::Item(v) = w {
                            h.lock().unwrap().push(v);
                            sleep(ms(1)).await;
                        }
                    })),
                )
            }
            item => {
                stash.stash(item)?;
                Ok(Behaviors::same())
            }
        }
    })
    .into()
}

// S27 + S31 + stash docs ("a system message (a stop, a watched actor's end) still
// outranks the replayed messages, so a stop during a replay is honoured, and what was
// not replayed yet becomes dead letters (RecipientStopped)"): 500 stashed items, then
// `Toggle` (replay at 1 ms each) and at once a stop. Far fewer than 500 are handled,
// and every item is handled or one `RecipientStopped` letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s27_s31_a_stop_during_a_replay_is_honoured_and_letters_the_rest() {
    let what = "stop during replay";
    in_systems(what, 10, "replay-stop", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let actor: ActorRef<Work> = system
            .spawn(
                Behaviors::with_stash(1000, move |stash| slow_after_unstash(stash, h.clone()))
                    .unwrap(),
                "replayer",
            )
            .unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&actor);
        for s in 0..500 {
            actor.tell(Work::Item(enc(0, s)));
        }
        actor.tell(Work::Toggle);
        turns(i % 4).await;
        system.stop(&actor).unwrap();
        probe.expect_terminated(&actor, T).await;
        let expected = all(1, 500);
        let (got, found) = accounted(&mut letters, &handled, &expected, work_item).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        fifo(&got)?;
        if len(&handled) >= 250 {
            return Err(format!(
                "{} of 500 replayed messages handled after the stop",
                len(&handled)
            ));
        }
        Ok(())
    })
    .await;
}

// S23 + S19: 100 asks (deadline 20 s) at 100 actors that hand their reply refs to a
// keeper outside the system, made around the moment the system terminates (every
// other iteration with a dead-letter subscriber that keeps what it gets): every ask
// fails with `TargetTerminated` within 3 s, none waits for its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_s23_asks_racing_terminate_fail_at_once() {
    repeat("asks vs terminate", 10, |i| async move {
        let system = ActorSystem::new(&format!("ask-term-{i}")).unwrap();
        let _letters = (i % 2 == 1).then(|| dead_letters(&system));
        let (keep, keeper) = keeper();
        let outcome: Result<(), String> = async {
            let targets: Vec<ActorRef<Hoard>> = (0..100)
                .map(|j| {
                    let keep = keep.clone();
                    system
                        .spawn(
                            Behaviors::receive_message(move |Hoard(to): Hoard| {
                                let _ = keep.send(to);
                            }),
                            &format!("t{j}"),
                        )
                        .unwrap()
                })
                .collect();
            let mut tasks = JoinSet::new();
            for (j, t) in targets.into_iter().enumerate() {
                tasks.spawn(async move {
                    turns(j % 10).await;
                    let ask = t.ask_with(Hoard).timeout(Duration::from_secs(20));
                    match timeout(Duration::from_secs(3), ask).await {
                        Ok(Err(AskError::TargetTerminated { .. })) => None,
                        Ok(other) => Some(format!("t{j}: {other:?}")),
                        Err(_) => Some(format!("t{j}: still waiting after 3 s")),
                    }
                });
            }
            turns(i * 3).await;
            let term = system.terminate();
            let bad = failures(&mut tasks).await;
            timeout(T, term)
                .await
                .map_err(|_| "terminate hung".to_string())?;
            none(&bad, "of 100 asks", 5)
        }
        .await;
        drop(keep);
        let out = finish(&system, outcome).await;
        let _ = timeout(T, keeper).await;
        out
    })
    .await;
}

// S32 + S31: a group router over four actors spawned elsewhere, which another task
// stops one by one while three producers tell the router. "A routee that stops
// leaves", the router stops with the last; every message is handled or one
// `RecipientStopped` letter (to a routee or to the router); the router's watcher
// hears `Terminated` once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s32_a_group_whose_routees_are_stopped_under_load_loses_nothing() {
    in_systems("group", 50, "group", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let routees: Vec<ActorRef<u64>> = (0..4)
            .map(|j| system.spawn(recorder(&handled), &format!("g{j}")).unwrap())
            .collect();
        let router: ActorRef<u64> = system
            .spawn(Routers::group(routees.clone()).unwrap(), "group")
            .unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&router);
        let produced = Arc::new(AtomicBool::new(false));
        let stopper = {
            let (system, handled, produced) = (system.clone(), handled.clone(), produced.clone());
            tokio::spawn(async move {
                for (j, r) in routees.iter().enumerate() {
                    let k = (i * 17) % 100 + j * 120;
                    wait_for("k handled", || len(&handled) >= k || produced.load(SeqCst)).await?;
                    turns((i + j) % 5 * 10).await;
                    system.stop(r).unwrap();
                }
                Ok::<(), String>(())
            })
        };
        let r = router.clone();
        produce(3, 300, move |v| r.tell(v)).await;
        produced.store(true, SeqCst);
        stopper.await.unwrap()?;
        probe.expect_terminated(&router, T).await;
        router.tell(enc(9, 0));
        let mut expected = all(3, 300);
        expected.push(enc(9, 0));
        let (_, found) = accounted(&mut letters, &handled, &expected, u64_under("/user/g")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        probe.expect_no_termination(ms(20)).await;
        Ok(())
    })
    .await;
}

/// A dead letter's number, whether it is still a `u64` (an adapter's) or an item.
fn any_item(letter: &DeadLetter) -> Option<u64> {
    if letter.is::<u64>() {
        return letter.take_message::<u64>();
    }
    work_item(letter)
}

// S28 + S5 + S31: four producers each send their even messages through a message
// adapter and their odd ones straight to its owner. The adapter's messages reach the
// owner "in order with its other messages", so each producer's order holds across the
// two routes; then the owner is stopped partway ("it stops with its owner"): every
// message, by either route, is handled or a dead letter, exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s28_s5_s31_adapter_and_direct_tells_keep_order_and_lose_nothing_at_a_stop() {
    in_systems("adapter", 60, "adapter", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ActorRef<u64>>();
        let owner: ActorRef<Work> = system
            .spawn(
                Behaviors::setup(move |ctx| {
                    let adapter: ActorRef<u64> = ctx.message_adapter(Work::Item);
                    let _ = tx.send(adapter);
                    let h = h.clone();
                    Behaviors::receive_message(move |w: Work| {
                        if let Work::Item(v) = w {
                            h.lock().unwrap().push(v);
                        }
                    })
                }),
                "owner",
            )
            .unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&owner);
        let stop_at = if i % 2 == 0 {
            Some((i * 31) % 800)
        } else {
            None
        };
        let adapter = timeout(T, rx.recv())
            .await
            .map_err(|_| "no adapter".to_string())?
            .unwrap();
        let stopper = stop_at.map(|k| stop_when_handled(&system, &owner, &handled, k));
        let (a, o) = (adapter.clone(), owner.clone());
        produce(4, 200, move |v| {
            if seq_of(v).is_multiple_of(2) {
                a.tell(v);
            } else {
                o.tell(Work::Item(v));
            }
        })
        .await;
        if let Some(stopper) = stopper {
            stopper.await.unwrap()?;
            probe.expect_terminated(&owner, T).await;
        }
        let expected = all(4, 200);
        let (got, found) = accounted(&mut letters, &handled, &expected, any_item).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        fifo(&got)
    })
    .await;
}

// S14 + S18: an actor restarted 20 times (no backoff) while four producers tell it,
// watched by a probe and by three actors: "watchers hear nothing" on a restart;
// when it is finally stopped each watcher hears `Terminated` exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s14_s18_watchers_hear_nothing_of_restarts_under_load_and_one_terminated_at_the_end() {
    let what = "watch vs restarts";
    in_systems(what, 20, "watch-restart", |_, system| async move {
        let incarnations = Arc::new(AtomicU64::new(0));
        let actor: ActorRef<Rq> = system
            .spawn(
                restarting(incarnations.clone(), Duration::from_micros(100)),
                "flaky",
            )
            .unwrap();
        let heard = log();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&actor);
        for j in 0..3 {
            let watcher =
                terminated_recorder(actor.clone(), heard.clone(), move |_| format!("w{j}"));
            system.spawn(watcher, &format!("w{j}")).unwrap();
        }
        let (a, mut tasks) = (actor.clone(), JoinSet::new());
        tasks.spawn(async move {
            for k in 0..20 {
                a.tell(Rq::Fail);
                turns(k % 4).await;
            }
        });
        let sink = system.spawn(Behaviors::ignore::<u64>(), "sink").unwrap();
        let a = actor.clone();
        produce(4, 100, move |_| a.tell(Rq::Get(sink.clone()))).await;
        tasks.join_next().await.unwrap().unwrap();
        wait_for("21 incarnations", || incarnations.load(SeqCst) >= 21).await?;
        probe.expect_no_termination(ms(20)).await;
        if !heard.lock().unwrap().is_empty() {
            return Err(format!(
                "Terminated heard during restarts: {:?}",
                heard.lock().unwrap()
            ));
        }
        system.stop(&actor).unwrap();
        probe.expect_terminated(&actor, T).await;
        wait_for("three watchers", || heard.lock().unwrap().len() >= 3).await?;
        probe.expect_no_termination(ms(20)).await;
        let mut got = heard.lock().unwrap().clone();
        got.sort();
        if got != ["w0", "w1", "w2"] {
            return Err(format!("watchers heard {got:?}"));
        }
        Ok(())
    })
    .await;
}

// S23 + S4 + S31: eight tasks ask `Take` 50 times each while a ninth asks `Seal`
// (answered with `ReplyThen::stop`), with a dead-letter subscriber that keeps every
// letter. Asks answered before the seal get their numbers; asks queued behind it
// fail with `TargetTerminated` within 3 s (deadline 20 s), never with a timeout; the
// number of answered `Take`s equals the sealed count.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s23_s4_asks_queued_behind_a_reply_then_stop_fail_at_once() {
    let what = "asks behind a seal";
    in_systems(what, 20, "seal-race", |i, system| async move {
        let _letters = dead_letters(&system);
        let ticket = system.spawn(Ticket::default(), "ticket").unwrap();
        let mut tasks = take_askers(&ticket, 50, |t| async move {
            let ask = t.ask(Take).timeout(Duration::from_secs(20));
            timeout(Duration::from_secs(3), ask).await
        });
        turns((i % 5) * 20).await;
        let sealed = timeout(
            Duration::from_secs(3),
            ticket.ask(Seal).timeout(Duration::from_secs(20)),
        )
        .await
        .map_err(|_| "the seal hung".to_string())?
        .map_err(|e| format!("seal: {e}"))?;
        let (mut answered, mut bad) = (0, Vec::new());
        while let Some(done) = tasks.join_next().await {
            for outcome in done.unwrap() {
                match outcome {
                    Ok(Ok(_)) => answered += 1,
                    Ok(Err(AskError::TargetTerminated { .. })) => {}
                    Ok(Err(e)) => bad.push(format!("{e:?}")),
                    Err(_) => bad.push("still waiting after 3 s".to_string()),
                }
            }
        }
        none(&bad, "of 400 asks", 3)?;
        if answered != sealed {
            return Err(format!("{answered} Takes answered, sealed at {sealed}"));
        }
        Ok(())
    })
    .await;
}

// S30 + S19 + S31: eight producers `offer` into a slow sink of capacity 1 while the
// system terminates: every offer resolves within 3 s; a `true` is handled or a
// letter, a `false` is a letter; exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_s30_s31_offers_racing_terminate_resolve_and_account_every_message() {
    let what = "offers vs terminate";
    in_systems(what, 20, "offer-term", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let sink = slow_sink(&system, &handled, 1);
        let (mut tasks, refused, hung) = offerers(&sink, 8, 60, Duration::from_secs(3));
        let k = (i * 23) % 300;
        wait_for("k handled", || len(&handled) >= k).await?;
        terminate_within(&system, "terminate hung").await?;
        join_all(&mut tasks).await;
        none_hung(&hung, "still waiting 3 s after they began")?;
        let expected = all(8, 60);
        let (_, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/sink")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        if !refused_are_letters(&refused, &found).is_empty() {
            return Err("a refused offer is not a dead letter".into());
        }
        Ok(())
    })
    .await;
}

// S2 + S14 + S31: producers keep telling a ref while its actor is stopped and a new
// actor is spawned under the same name ("A name frees up when the actor has
// stopped"). A ref names one incarnation (its uid): the new actor never handles what
// was told through the old ref, and each such message was handled by the old actor
// or is one `RecipientStopped` letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s2_s31_a_stale_ref_never_reaches_the_new_actor_of_the_same_name() {
    in_systems("name reuse", 30, "reuse", |i, system| async move {
        let mut letters = dead_letters(&system);
        let (old_handled, new_handled) = (shared(), shared());
        let old: ActorRef<u64> = system.spawn(recorder(&old_handled), "reuse").unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&old);
        let k = (i * 19) % 500;
        let replacer = {
            let (system, old, old_handled, new_handled) = (
                system.clone(),
                old.clone(),
                old_handled.clone(),
                new_handled.clone(),
            );
            tokio::spawn(async move {
                wait_for("k handled", || len(&old_handled) >= k).await?;
                system.stop(&old).unwrap();
                let deadline = Instant::now() + T;
                loop {
                    match system.spawn(recorder(&new_handled), "reuse") {
                        Ok(new) => return Ok::<ActorRef<u64>, String>(new),
                        Err(SpawnError::NameTaken { .. }) if Instant::now() < deadline => {
                            yield_now().await
                        }
                        Err(e) => return Err(format!("respawn: {e}")),
                    }
                }
            })
        };
        let o = old.clone();
        produce(4, 250, move |v| o.tell(v)).await;
        let new = replacer.await.unwrap()?;
        probe.expect_terminated(&old, T).await;
        old.tell(enc(9, 0));
        if new.uid() == old.uid() {
            return Err("the new actor has the old uid".into());
        }
        let mut expected = all(4, 250);
        expected.push(enc(9, 0));
        let found = settle(
            &mut letters,
            &old_handled,
            expected.len(),
            u64_under("/user/reuse"),
        )
        .await;
        if len(&new_handled) != 0 {
            return Err(format!(
                "the new actor handled {} messages told to the old ref",
                len(&new_handled)
            ));
        }
        account(&expected, &snapshot(&old_handled), &values(&found))?;
        reasons(&found, &DeadLetterReason::RecipientStopped)
    })
    .await;
}

/// A tree node like [`tree_node`], whose handler forwards a number to its children and
/// then awaits forever (an `async` handler that a stop must drop where it awaits).
fn stuck_node(depth: u32, fanout: u32, log: Log) -> Behavior<u64> {
    Behaviors::setup(move |ctx| {
        let children = children(ctx, depth, fanout, &log, stuck_node);
        let forward = Behaviors::receive_message_async(async move |n: u64| {
            for c in &children {
                c.tell(n);
            }
            std::future::pending::<()>().await;
        });
        logging_post_stop(forward, &log)
    })
}

// S19 + crate docs ("Cancel safety of handlers": a stop or termination "drops the
// handler's future at its current `.await` ... Then the actor stops (and sees
// `PostStop`)"): two trees of 40 actors, every one of them inside an `async` handler
// that never finishes, when the system terminates (deadline 5 s). `terminate` returns
// well before the deadline (under 2.5 s), every actor sees `PostStop` once, children
// before parents, and `live_actors()` is 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_terminate_drops_awaiting_handlers_and_keeps_post_stop_order() {
    in_systems("stuck trees", 10, "stuck-tree", |i, system| async move {
        let log = log();
        let roots = two_roots(&system, || stuck_node(3, 3, log.clone()));
        for (n, root) in roots.iter().enumerate() {
            root.tell(n as u64);
            root.tell(n as u64 + 10);
        }
        turns((i % 4) * 20).await;
        let started = Instant::now();
        terminate_within(&system, "terminate did not finish in 10 s").await?;
        let took = started.elapsed();
        no_live_actors(&system, "")?;
        eighty_post_stops(&log, &format!(" (terminate took {took:?})"))?;
        if took > Duration::from_millis(2500) {
            return Err(format!(
                "terminate took {took:?} with only awaiting handlers to drop"
            ));
        }
        Ok(())
    })
    .await;
}

// S48 + S19 + S25 + S23: a system that tracks leaks, busy with everything at once when
// it terminates: ten actors with 1 ms fixed-rate and fixed-delay timers restarted by
// a controller, four tasks asking a counter in a loop, two actors spawning children
// in a loop, and an actor stuck in an `async` handler. Once every ask has ended,
// `LeakReport::after_terminating` finds nothing left: no actor, task, timer or ask.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s19_s48_a_busy_system_terminated_under_load_leaves_nothing_behind() {
    let build = |i| {
        ActorSystem::builder(&format!("leaks-{i}"))
            .track_leaks(true)
            .build()
            .unwrap()
    };
    in_built_systems("leaks", 10, build, |i, system| async move {
        let mut tickers = Vec::new();
        for j in 0..10 {
            let ticker: ActorRef<Tm> = system
                .spawn(
                    Behaviors::supervise(Behaviors::with_timers(|timers| {
                        timers.start_fixed_rate("rate", Tm::Tick(0), ms(1)).unwrap();
                        timers
                            .start_fixed_delay("delay", Tm::Tick(1), ms(1))
                            .unwrap();
                        timers.start_single_timer("once", Tm::Tick(2), ms(3));
                        Behaviors::receive_message(|m: Tm| -> Result<(), Boom> {
                            if m == Tm::Fail { Err(Boom) } else { Ok(()) }
                        })
                    }))
                    .on_failure::<Boom>(
                        SupervisorStrategy::restart()
                            .with_limit(10_000, Duration::from_secs(60))
                            .unwrap(),
                    ),
                    &format!("ticker{j}"),
                )
                .unwrap();
            tickers.push(ticker);
        }
        let controller = {
            let tickers = tickers.clone();
            tokio::spawn(async move {
                for k in 0..200 {
                    tickers[k % 10].tell(Tm::Fail);
                    yield_now().await;
                }
            })
        };
        let counter = system.spawn(Ticket::default(), "counter").unwrap();
        let mut askers = JoinSet::new();
        for _ in 0..4 {
            let counter = counter.clone();
            askers.spawn(async move {
                loop {
                    match counter.ask(Take).timeout(Duration::from_secs(5)).await {
                        Ok(_) => {}
                        Err(AskError::TargetTerminated { .. }) => return Ok(()),
                        Err(e) => return Err(format!("an ask: {e:?}")),
                    }
                }
            });
        }
        let spawned = Arc::new(AtomicU64::new(0));
        for j in 0..2 {
            let spawner: ActorRef<u64> = system
                .spawn(
                    spawn_loop(spawned.clone(), Arc::new(AtomicU64::new(0))),
                    &format!("spawner{j}"),
                )
                .unwrap();
            spawner.tell(0_u64);
        }
        let stuck = system.spawn(stuck_node(0, 0, log()), "stuck").unwrap();
        stuck.tell(1_u64);
        wait_for("spawning", || spawned.load(SeqCst) >= 100).await?;
        turns((i % 5) * 10).await;
        let term = system.terminate();
        timeout(T, async {
            while let Some(done) = askers.join_next().await {
                done.unwrap()?;
            }
            Ok::<(), String>(())
        })
        .await
        .map_err(|_| "an ask did not end".to_string())??;
        controller.await.unwrap();
        timeout(T, term)
            .await
            .map_err(|_| "terminate hung".to_string())?;
        let report = timeout(T, tapio::testkit::LeakReport::after_terminating(&system))
            .await
            .map_err(|_| "the leak report hung".to_string())?;
        if !report.is_clean() || !report.counted_everything() {
            return Err(format!("leak report: {report}"));
        }
        Ok(())
    })
    .await;
}

// S30 + `offer` docs ("Waiting offers are served in the order they began to wait"):
// a sink of capacity 1, stalled in an `async` handler with one message queued behind
// it; eight offers from eight tasks, each begun (polled once, so waiting) before the
// next; then the sink is released. The eight are handled in the order they began to
// wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s30_waiting_offers_are_served_in_the_order_they_began_to_wait() {
    in_systems("offer order", 30, "offer-order", |i, system| async move {
        let handled = shared();
        let gate = Arc::new(Notify::new());
        let (h, g) = (handled.clone(), gate.clone());
        let sink: ActorRef<u64> = system
            .spawn_with(
                Behaviors::receive_message_async(async move |v: u64| {
                    if v == u64::MAX {
                        g.notified().await;
                    } else {
                        h.lock().unwrap().push(v);
                    }
                }),
                "sink",
                MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
            )
            .unwrap();
        sink.tell(u64::MAX); // taken, and the handler waits on the gate
        let filler = enc(9, 0);
        if !timeout(T, sink.offer(filler))
            .await
            .map_err(|_| "the filler offer hung".to_string())?
        {
            return Err("the filler was refused".into());
        }
        let mut tasks = JoinSet::new();
        for k in 0..8_u64 {
            let mut offer = sink.offer(enc(0, k));
            std::future::poll_fn(|cx| {
                if std::pin::Pin::new(&mut offer).poll(cx).is_ready() {
                    return std::task::Poll::Ready(Err(format!("offer {k} did not wait")));
                }
                std::task::Poll::Ready(Ok(()))
            })
            .await?;
            tasks.spawn(async move { timeout(T, offer).await });
            turns((k as usize + i) % 3).await;
        }
        gate.notify_one();
        while let Some(done) = tasks.join_next().await {
            if done.unwrap() != Ok(true) {
                return Err("an offer was refused or hung".into());
            }
        }
        wait_for("nine handled", || len(&handled) >= 9).await?;
        let got: Vec<String> = snapshot(&handled).into_iter().map(show).collect();
        let want: Vec<String> = std::iter::once(filler)
            .chain((0..8).map(|k| enc(0, k)))
            .map(show)
            .collect();
        if got != want {
            return Err(format!("handled in the order {got:?}"));
        }
        Ok(())
    })
    .await;
}

#[message]
pub struct Echo {
    pub id: u64,
    pub reply_to: ActorRef<u64>,
}

// S22 + S31: 400 asks with deadlines from 0 to 2 ms at a responder that always
// answers (it records each answer it sends), a little later than that: each answer
// either reaches its ask or, when the ask has timed out, is one `AskEnded` dead letter
// ("A reply that arrives after that becomes a dead letter with a reason"; "A message
// that went nowhere is never silently lost"). Never both, never neither. The race is
// rare: up to 250 iterations (100 000 asks).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s22_s31_an_answer_racing_the_deadline_is_delivered_or_lettered_exactly_once() {
    in_systems("late answers", 250, "late", |i, system| async move {
        let mut letters = dead_letters(&system);
        let replied = shared();
        let rp = replied.clone();
        let responder: ActorRef<Echo> = system
            .spawn(
                Behaviors::receive_message_async(async move |e: Echo| {
                    turns((e.id % 5) as usize).await;
                    e.reply_to.tell(e.id);
                    rp.lock().unwrap().push(e.id);
                }),
                "responder",
            )
            .unwrap();
        let answered = shared();
        let timed_out = shared();
        let mut tasks = JoinSet::new();
        for id in 0..400_u64 {
            let (r, a, t) = (responder.clone(), answered.clone(), timed_out.clone());
            tasks.spawn(async move {
                let within = Duration::from_micros((id * 53 + i as u64 * 7) % 2000);
                match r
                    .ask_with(|reply_to| Echo { id, reply_to })
                    .timeout(within)
                    .await
                {
                    Ok(v) if v == id => a.lock().unwrap().push(v),
                    Ok(v) => return Err(format!("ask {id} got {v}")),
                    Err(AskError::Timeout { .. }) => t.lock().unwrap().push(id),
                    Err(e) => return Err(format!("ask {id}: {e:?}")),
                }
                Ok(())
            });
        }
        while let Some(done) = timeout(T, tasks.join_next())
            .await
            .map_err(|_| "asks hung".to_string())?
        {
            done.unwrap()?;
        }
        let expected: Vec<u64> = (0..400).collect();
        let found = settle(&mut letters, &answered, expected.len(), |l| {
            l.take_message::<u64>()
        })
        .await;
        account(&expected, &snapshot(&answered), &values(&found)).map_err(|e| {
            let mut by: HashMap<String, usize> = HashMap::new();
            for (_, r) in &found {
                *by.entry(format!("{r:?}")).or_default() += 1;
            }
            format!(
                "{e}; {} asks timed out; letters by reason: {by:?}; the responder replied {} times; the subscription lost {}",
                len(&timed_out),
                len(&replied),
                letters.lost()
            )
        })?;
        reasons(&found, &DeadLetterReason::AskEnded)?;
        one_letter_each(&found, &timed_out, "asks timed out", "AskEnded letters")
    })
    .await;
}

// S32 + S5 (README: pools route "in strict round-robin, by broadcast, or by
// consistent hashing"): a broadcast pool of three under four producers: each routee
// handles every message exactly once, each producer's messages in the order sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s32_s5_a_broadcast_pool_gives_every_routee_every_message_in_order() {
    in_systems("broadcast", 10, "broadcast", |_, system| async move {
        let seen = ByRoutee::default();
        let s = seen.clone();
        let pool = Routers::pool(3, move || name_recorder(&s))
            .unwrap()
            .broadcast();
        let router: ActorRef<u64> = system.spawn(pool, "pool").unwrap();
        let r = router.clone();
        produce(4, 250, move |v| r.tell(v)).await;
        let seen = all_routed(&seen, 3000).await?;
        if seen.len() != 3 {
            return Err(format!("{} routees handled messages", seen.len()));
        }
        for (name, got) in &seen {
            account(&all(4, 250), got, &[]).map_err(|e| format!("{name}: {e}"))?;
            fifo(got).map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(())
    })
    .await;
}

// A compile-time check that the error types used above are the public ones.
#[allow(dead_code)]
fn _types(_: StashOverflow) {}
