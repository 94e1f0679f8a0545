//! The harness of the race tests: each case runs in a bounded loop of fresh systems on
//! a multi-thread runtime; producers encode their id and sequence number in each
//! message, and the checks account for every message as handled or lettered, in order,
//! with nothing hung or leaked.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub use super::outside::{Boom, Log, ms, new_log as log};
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
pub const T: Duration = Duration::from_secs(10);

/// How long accounting waits for the last letters to come in.
pub const SETTLE: Duration = Duration::from_secs(3);

pub type Shared = Arc<Mutex<Vec<u64>>>;

pub fn shared() -> Shared {
    Arc::new(Mutex::new(Vec::new()))
}

pub fn len(s: &Shared) -> usize {
    s.lock().unwrap().len()
}

pub fn snapshot(s: &Shared) -> Vec<u64> {
    s.lock().unwrap().clone()
}

/// Message `seq` of producer `p`.
pub fn enc(p: u64, seq: u64) -> u64 {
    (p << 32) | seq
}

pub fn producer_of(v: u64) -> u64 {
    v >> 32
}

pub fn seq_of(v: u64) -> u64 {
    v & 0xffff_ffff
}

pub fn show(v: u64) -> String {
    format!("p{}#{}", producer_of(v), seq_of(v))
}

/// Every message `producers` producers send, `per` each.
pub fn all(producers: u64, per: u64) -> Vec<u64> {
    (0..producers)
        .flat_map(|p| (0..per).map(move |s| enc(p, s)))
        .collect()
}

/// `producers` tasks, each sending `per` messages through `send` in order, yielding
/// every 16 so that they interleave with each other and with the actors.
pub async fn produce(producers: u64, per: u64, send: impl Fn(u64) + Send + Sync + Clone + 'static) {
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
pub fn dead_letters(system: &ActorSystem) -> Subscription<DeadLetter> {
    system
        .events()
        .subscribe_with_capacity::<DeadLetter>(1 << 16)
        .unwrap()
}

/// A letter's `u64` message, if it was meant for an actor whose path starts with
/// `prefix`.
pub fn u64_under(prefix: &'static str) -> impl Fn(&DeadLetter) -> Option<u64> {
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
pub async fn settle(
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
pub fn account(expected: &[u64], handled: &[u64], lettered: &[u64]) -> Result<(), String> {
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
pub fn fifo(handled: &[u64]) -> Result<(), String> {
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
pub fn reasons(found: &[(u64, DeadLetterReason)], reason: &DeadLetterReason) -> Result<(), String> {
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

pub fn values(found: &[(u64, DeadLetterReason)]) -> Vec<u64> {
    found.iter().map(|(v, _)| *v).collect()
}

/// In `log` (paths, in `PostStop` order), every parent comes after its children.
pub fn post_stop_order(log: &[String]) -> Result<(), String> {
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
pub async fn turns(n: usize) {
    for _ in 0..n {
        yield_now().await;
    }
}

/// Wait until `cond` holds, polling with yields, at most `T`.
pub async fn wait_for(what: &str, cond: impl Fn() -> bool) -> Result<(), String> {
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
pub async fn repeat<F, Fut>(what: &str, n: usize, mut iteration: F)
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
pub async fn finish(system: &ActorSystem, outcome: Result<(), String>) -> Result<(), String> {
    if timeout(T, system.terminate()).await.is_err() {
        return outcome.and(Err("terminate did not finish in time".into()));
    }
    outcome
}

/// [`repeat`] `body` `n` times, each in a fresh system `{name}-{i}`, terminated after.
pub async fn in_systems<F, Fut>(what: &str, n: usize, name: &str, body: F)
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
pub async fn in_built_systems<B, F, Fut>(what: &str, n: usize, build: B, mut body: F)
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
pub async fn accounted(
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
pub fn one_letter_each(
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
pub fn none<X: std::fmt::Debug>(items: &[X], what: &str, shown: usize) -> Result<(), String> {
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
pub fn no_overlaps(overlaps: &AtomicU64, why: &str) -> Result<(), String> {
    match overlaps.load(SeqCst) {
        0 => Ok(()),
        n => Err(format!("{n} handler runs overlapped another{why}")),
    }
}

/// Fails unless the system has no live actor left (saying so, then `when`).
pub fn no_live_actors(system: &ActorSystem, when: &str) -> Result<(), String> {
    match system.live_actors() {
        0 => Ok(()),
        live => Err(format!("live_actors() is {live}{when}")),
    }
}

/// Terminate `system` within `T`, failing with `hung` if it does not.
pub async fn terminate_within(system: &ActorSystem, hung: &str) -> Result<(), String> {
    timeout(T, system.terminate())
        .await
        .map_err(|_| hung.to_string())
}

/// A task that stops `actor` once `handled` holds `k` messages (answers how the wait went).
pub fn stop_when_handled<M: Message>(
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
pub fn slow_sink(system: &ActorSystem, handled: &Shared, capacity: usize) -> ActorRef<u64> {
    system
        .spawn_with(
            slow_recorder(handled),
            "sink",
            MailboxConfig::bounded(capacity, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap()
}

/// `producers` tasks offering `per` messages each to `sink`; answers them, the refused, the hung.
pub fn offerers(
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
pub fn none_hung(hung: &Shared, what: &str) -> Result<(), String> {
    match len(hung) {
        0 => Ok(()),
        n => Err(format!("{n} offers {what}")),
    }
}

/// `n` tasks, task `k` running `body(k, target)` after `k % stagger` turns of the scheduler.
pub fn staggered<M, X, F, Fut>(
    target: &ActorRef<M>,
    n: usize,
    stagger: usize,
    body: F,
) -> JoinSet<X>
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
pub async fn failures(tasks: &mut JoinSet<Option<String>>) -> Vec<String> {
    let mut bad = Vec::new();
    while let Some(done) = tasks.join_next().await {
        if let Some(why) = done.unwrap() {
            bad.push(why);
        }
    }
    bad
}

/// Wait for every task of `tasks` (each must not panic).
pub async fn join_all<X: 'static>(tasks: &mut JoinSet<X>) {
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
}

/// The values of `refused` that are not among the letters `found`.
pub fn refused_are_letters(refused: &Shared, found: &[(u64, DeadLetterReason)]) -> Vec<u64> {
    let lettered: HashSet<u64> = values(found).into_iter().collect();
    snapshot(refused)
        .into_iter()
        .filter(|v| !lettered.contains(v))
        .collect()
}

/// An actor that watches `target` and logs `label(ended)` in `heard` for each `Terminated`.
pub fn terminated_recorder<M: Message>(
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

/// Two roots named `root0` and `root1`, each made by `node`.
pub fn two_roots(system: &ActorSystem, node: impl Fn() -> Behavior<u64>) -> Vec<ActorRef<u64>> {
    (0..2)
        .map(|r| system.spawn(node(), &format!("root{r}")).unwrap())
        .collect()
}

/// `log` holds one `PostStop` for each of 80 actors, each child's before its parent's.
pub fn eighty_post_stops(log: &Log, why: &str) -> Result<(), String> {
    let log = log.lock().unwrap().clone();
    if log.len() != 80 || log.iter().collect::<HashSet<_>>().len() != 80 {
        return Err(format!("{} PostStop for 80 actors{why}", log.len()));
    }
    post_stop_order(&log)
}

/// On every number, spawns a grandparent [`counted_leaf`] and tells itself the next one.
pub fn spawn_loop(spawned: Arc<AtomicU64>, stopped: Arc<AtomicU64>) -> Receive<u64> {
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
pub fn recorder(handled: &Shared) -> Behavior<u64> {
    let h = handled.clone();
    Behaviors::receive_message(move |v: u64| h.lock().unwrap().push(v)).into()
}

/// A sink that records every `u64` and then yields once inside its handler: slower
/// than its producers, so a bounded mailbox fills.
pub fn slow_recorder(handled: &Shared) -> Behavior<u64> {
    let h = handled.clone();
    Behaviors::receive_message_async(async move |v: u64| {
        h.lock().unwrap().push(v);
        yield_now().await;
    })
    .into()
}

// =================================================================================
// 2. Ordering
// =================================================================================

#[message]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Work {
    Item(u64),
    Toggle,
    Fail,
}

pub fn work_item(letter: &DeadLetter) -> Option<u64> {
    match letter.take_message::<Work>() {
        Some(Work::Item(v)) => Some(v),
        _ => None,
    }
}

#[message(reply = u64)]
pub struct Take;

#[message(reply = u64)]
pub struct Seal;

#[message]
pub struct Bump;

#[derive(Clone, Default)]
pub struct Ticket {
    pub n: u64,
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
pub fn take_askers<X, F, Fut>(ticket: &ActorRef<TicketMsg>, per: usize, ask: F) -> JoinSet<Vec<X>>
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

/// A leaf that counts its `PostStop`, and, when `grandchild`, spawns one child of
/// its own in its setup (counted in `spawned` when the spawn succeeds).
pub fn counted_leaf(
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

/// A tree node's `fanout` children `c0`, `c1`, ..., each `node(depth - 1, ...)`; none at 0.
pub fn children(
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
pub fn logging_post_stop(receive: Receive<u64>, log: &Log) -> Receive<u64> {
    let log = log.clone();
    receive.on_signal(move |ctx, signal| {
        if *signal == Signal::PostStop {
            log.lock().unwrap().push(ctx.path().to_string());
        }
    })
}

/// A tree node like [`tree_node`], whose handler forwards a number to its children and
/// then awaits forever (an `async` handler that a stop must drop where it awaits).
pub fn stuck_node(depth: u32, fanout: u32, log: Log) -> Behavior<u64> {
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
