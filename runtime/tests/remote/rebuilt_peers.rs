//! Three systems and peers rebuilt on the same address: refs handed on and watched,
//! partitions between two of three, reply refs passed to a third system, old
//! incarnations after a rebuild, remotely spawned pools, frames and offers at the frame
//! limit, and TLS settings errors (S11, S14, S16, S22, S31, S32, S35-S47).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::nodes::peer_of;
use crate::support::nodes::{Ca, tls_reason};
use crate::support::nodes::{given_up, partition_until_given_up, recover};
use crate::support::nodes::{low_port, node_on};
use crate::support::outside;
use crate::support::outside::letter_where;
#[allow(dead_code)]
use crate::support::raw_link;
use outside::{Boom, T, letters, ms, next};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tapio::prelude::*;
use tapio::remote::spawn::{RemoteSpawnError, Spawned, Spawner, SpawnerMsg};
use tapio::remote::{LinkError, PeerUnreachable, RemoteSettings, TlsSettings};
use tapio::testkit::{LinkDirection, TestProbe, TwoNodes, two_nodes};
use tapio::wire::{FrameHeader, WireLimits, WireMessage, WireProblem};
use tapio::{AskError, DeadLetter, DeadLetterReason, IntoBehavior, Subscription};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

// ---------------------------------------------------------------- messages

#[message(remote = "sw16.note.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note(pub u64);

/// A message carrying a ref.
#[message(remote = "sw16.carry.v1")]
pub struct Carry(pub ActorRef<Note>);

#[message(remote = "sw16.pong.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pong(pub u64);

/// A job whose answer goes to `reply_to`.
#[message(remote = "sw16.job.v1")]
pub struct Job {
    pub n: u64,
    pub reply_to: ActorRef<Pong>,
}

#[message(remote = "sw16.named.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named(pub String);

/// What a spawned routee or counter is told.
#[message(remote = "sw16.work.v1")]
pub enum Work {
    Who(ActorRef<Named>),
    Add(u64),
    Get(ActorRef<Pong>),
    Crash,
    Quit,
}

#[message(remote = "sw16.blob.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    pub id: u64,
    pub bytes: Vec<u8>,
}

/// Asks for a blob of `len` bytes back.
#[message(remote = "sw16.want.v1", reply = Blob)]
pub struct Want {
    pub len: usize,
}

#[message(remote = "sw16.echo.v1", reply = Pong)]
pub struct Echo(pub u64);

// ---------------------------------------------------------------- factories

#[message(remote = "sw16.pool-args.v1")]
pub struct PoolArgs {
    pub size: usize,
}

/// A worker: answers `Who` with its own name, keeps a sum (`Add`, `Get`), fails
/// on `Crash` (restarted: fresh sum, same name) and stops on `Quit`.
fn worker() -> Behavior<Work> {
    Behaviors::supervise(Behaviors::setup(|_ctx: &mut ActorContext<Work>| {
        let sum = std::sync::atomic::AtomicU64::new(0);
        Behaviors::receive(move |ctx, work: Work| -> Result<Behavior<Work>, Boom> {
            match work {
                Work::Who(to) => to.tell(Named(ctx.path().name().to_owned())),
                Work::Add(n) => {
                    sum.fetch_add(n, Ordering::SeqCst);
                }
                Work::Get(to) => to.tell(Pong(sum.load(Ordering::SeqCst))),
                Work::Crash => return Err(Boom),
                Work::Quit => return Ok(Behaviors::stopped()),
            }
            Ok(Behaviors::same())
        })
    }))
    .on_failure::<Boom>(SupervisorStrategy::restart())
    .into()
}

/// A pool of `size` workers.
#[remote_behavior("sw16.pool")]
pub fn pool(args: PoolArgs) -> Behavior<Work> {
    Routers::pool(args.size.clamp(1, 16), worker)
        .expect("a size from 1 to 16")
        .into_behavior()
}

#[message(remote = "sw16.counter-args.v1")]
pub struct CounterArgs;

/// One worker.
#[remote_behavior("sw16.counter")]
pub fn counter(_args: CounterArgs) -> Behavior<Work> {
    worker()
}

#[message(remote = "sw16.parent-args.v1")]
pub struct ParentArgs {
    pub tag: u64,
}

/// How many times each parent's setup ran, by tag.
static PARENT_SETUPS: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// A parent that spawns a kid in its setup; the kid escalates every failure, and
/// the parent restarts on any. `Crash` goes to the kid; `Get` answers how many
/// times this parent's setup ran; `Who` answers with the kid's name, if it is
/// there.
#[remote_behavior("sw16.parent")]
pub fn parent(args: ParentArgs) -> Behavior<Work> {
    let tag = args.tag;
    Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<Work>| {
        PARENT_SETUPS.lock().unwrap().push(tag);
        let kid: Behavior<Work> =
            Behaviors::supervise(Behaviors::receive_message(|_: Work| -> Result<(), Boom> {
                Err(Boom)
            }))
            .on_failure::<Boom>(SupervisorStrategy::escalate())
            .into();
        let kid = ctx.spawn(kid, "kid").expect("a fresh name in setup");
        Behaviors::receive(move |ctx, work: Work| match work {
            Work::Crash => kid.tell(Work::Crash),
            Work::Get(to) => {
                let runs = PARENT_SETUPS
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|t| **t == tag)
                    .count();
                to.tell(Pong(runs as u64));
            }
            Work::Who(to) => {
                let name = ctx
                    .child("kid")
                    .map_or("none".to_owned(), |k| k.path().name().to_owned());
                to.tell(Named(name));
            }
            Work::Add(_) | Work::Quit => {}
        })
    }))
    .on_any_failure(SupervisorStrategy::restart())
    .into()
}

// ---------------------------------------------------------------- helpers

fn settings(unreachable_after: Duration) -> RemoteSettings {
    RemoteSettings::loopback()
        .heartbeat_interval(ms(100))
        .unreachable_after(unreachable_after)
}

/// A system on a loopback port the OS picks, with a calm (20 s) detector.
fn node(name: &str) -> ActorSystem {
    ActorSystem::builder(name)
        .remote(settings(Duration::from_secs(20)))
        .build()
        .unwrap()
}

/// A system whose detector gives a peer up after 1.5 s of silence.
fn quick_node(name: &str) -> ActorSystem {
    ActorSystem::builder(name)
        .remote(settings(ms(1500)))
        .build()
        .unwrap()
}

/// Two nodes with a calm detector.
fn calm() -> TwoNodes {
    two_nodes(settings(Duration::from_secs(20))).expect("two nodes")
}

/// Two nodes whose detectors give up after 1.5 s.
fn quick() -> TwoNodes {
    two_nodes(settings(ms(1500))).expect("two nodes")
}

/// A sink of notes on `system` named `name`: its local ref and its channel.
fn sink_on(system: &ActorSystem, name: &str) -> (ActorRef<Note>, mpsc::UnboundedReceiver<u64>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let sink = system
        .spawn(
            Behaviors::receive_message(move |Note(n): Note| {
                let _ = tx.send(n);
            }),
            name,
        )
        .unwrap();
    (sink, rx)
}

/// A keeper of refs on `system` named `name`: every `Carry` it gets, on a channel.
fn keeper_on(
    system: &ActorSystem,
    name: &str,
) -> (ActorRef<Carry>, mpsc::UnboundedReceiver<ActorRef<Note>>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let keeper = system
        .spawn(
            Behaviors::receive_message(move |Carry(r): Carry| {
                let _ = tx.send(r);
            }),
            name,
        )
        .unwrap();
    (keeper, rx)
}

/// `local` resolved from `from` (with its uid), once a note told through it arrived.
async fn linked_ref(
    from: &ActorSystem,
    local: &ActorRef<Note>,
    rx: &mut mpsc::UnboundedReceiver<u64>,
    n: u64,
) -> ActorRef<Note> {
    let remote = from.resolve::<Note>(&local.to_string()).unwrap();
    remote.tell(Note(n));
    assert_eq!(next(rx).await, n);
    remote
}

/// Asserts nothing arrives on `rx` for `quiet`.
async fn nothing_on<M: std::fmt::Debug>(rx: &mut mpsc::UnboundedReceiver<M>, quiet: Duration) {
    if let Ok(got) = timeout(quiet, rx.recv()).await {
        panic!("nothing expected, got {got:?}");
    }
}

/// How long a give-up may take: one window (`quick`'s 1.5 s), with room for a
/// loaded machine.
const GIVE_UP: Duration = Duration::from_secs(10);

async fn terminate_all(systems: &[&ActorSystem]) {
    let ends: Vec<_> = systems.iter().map(|s| s.terminate()).collect();
    for end in ends {
        timeout(Duration::from_secs(10), end)
            .await
            .expect("terminated within the bound");
    }
}

/// `what`, awaited within `T`.
async fn within<F: std::future::Future>(what: F) -> F::Output {
    timeout(T, what).await.expect("within the bound")
}

/// Asserts that `started` was less than `bound` ago.
fn assert_within(started: Instant, bound: Duration) {
    assert!(started.elapsed() < bound, "{:?}", started.elapsed());
}

/// A probe on `system` watching `target`.
fn watching<M: Message>(system: &ActorSystem, target: &ActorRef<M>) -> TestProbe<Note> {
    let probe = TestProbe::<Note>::new(system);
    probe.watch(target);
    probe
}

/// Heals a partition between a and b, both ways.
fn heal_both(a: &ActorSystem, b: &ActorSystem) {
    LinkDirection::between(a, b.address()).heal();
    LinkDirection::between(b, a.address()).heal();
}

/// A sink named "sink" on `system`, resolved from `from` once a `Note(n)` told
/// through it arrived: its local ref, the ref from `from` and its channel.
async fn linked_sink(
    system: &ActorSystem,
    from: &ActorSystem,
    n: u64,
) -> (ActorRef<Note>, ActorRef<Note>, mpsc::UnboundedReceiver<u64>) {
    let (sink, mut rx) = sink_on(system, "sink");
    let remote = linked_ref(from, &sink, &mut rx, n).await;
    (sink, remote, rx)
}

/// `what` as `to` gets it inside a `Carry` from `from`: a keeper on `to`,
/// resolved from `from`, is told it.
async fn handed_over(
    from: &ActorSystem,
    to: &ActorSystem,
    what: &ActorRef<Note>,
) -> ActorRef<Note> {
    let (keeper, mut kept) = keeper_on(to, "keeper");
    let keeper_from = from.resolve::<Carry>(&keeper.to_string()).unwrap();
    keeper_from.tell(Carry(what.clone()));
    next(&mut kept).await
}

/// Asks `to` for job `n`, waiting up to `deadline`.
async fn job(to: &ActorRef<Job>, n: u64, deadline: Duration) -> Result<Pong, AskError> {
    to.ask_with(|reply_to| Job { n, reply_to })
        .timeout(deadline)
        .await
}

// ======================================================== 1. three systems

/// S36, S41: b hands a a ref to c's actor; a tells through it (c hears, directly)
/// and watches it; when c terminates, a's watch and b's both hear `Terminated`, at
/// once (well before the 20 s detector).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s41_a_ref_to_c_handed_over_by_b_is_used_and_heard_ending_with_c() {
    let (a, b, c) = (node("a"), node("b"), node("c"));
    let (sink, on_b, mut rx) = linked_sink(&c, &b, 1).await;
    let on_a = handed_over(&b, &a, &on_b).await;
    assert_eq!(on_a.path().to_uri(), sink.path().to_uri());
    assert_eq!(on_a.uid(), sink.uid());
    on_a.tell(Note(2));
    assert_eq!(next(&mut rx).await, 2);

    let mut watch_a = watching(&a, &on_a);
    let mut watch_b = watching(&b, &on_b);
    let started = Instant::now();
    c.terminate().await;
    watch_a.expect_terminated(&on_a, T).await;
    watch_b.expect_terminated(&on_b, T).await;
    assert_within(started, Duration::from_secs(10));
    terminate_all(&[&a, &b]).await;
}

/// S41: a watches an actor on b and one on c; c terminating ends only the watch of
/// c's actor; b's goes on, and hears its actor stop later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_one_of_three_terminating_ends_only_its_own_watches() {
    let (a, b, c) = (node("a"), node("b"), node("c"));
    let (b_sink, to_b, mut b_rx) = linked_sink(&b, &a, 1).await;
    let (_, to_c, _c_rx) = linked_sink(&c, &a, 1).await;
    let mut probe = watching(&a, &to_b);
    probe.watch(&to_c);
    c.terminate().await;
    probe.expect_terminated(&to_c, T).await;
    probe.expect_no_termination(ms(300)).await;
    to_b.tell(Note(2));
    assert_eq!(next(&mut b_rx).await, 2);
    b.stop(&b_sink).unwrap();
    probe.expect_terminated(&to_b, T).await;
    terminate_all(&[&a, &b]).await;
}

/// S42, S49: a partition between a and c (both ways) gives up c on a and a on c,
/// and nothing else: a's watch of b's actor stays, a still reaches b, b still
/// reaches c, and b publishes no `PeerUnreachable`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_s49_a_partition_between_two_of_three_gives_up_only_that_pair() {
    let (a, b, c) = (quick_node("a"), quick_node("b"), quick_node("c"));
    let (_, a_to_b, mut b_rx) = linked_sink(&b, &a, 1).await;
    let (c_sink, a_to_c, mut c_rx) = linked_sink(&c, &a, 1).await;
    let b_to_c = linked_ref(&b, &c_sink, &mut c_rx, 2).await;
    let mut on_b = b.events().subscribe::<PeerUnreachable>();
    let mut on_a = a.events().subscribe::<PeerUnreachable>();
    let mut probe = watching(&a, &a_to_b);
    probe.watch(&a_to_c);

    partition_until_given_up(&a, &c, GIVE_UP).await;
    probe.expect_terminated(&a_to_c, T).await;
    assert_eq!(on_a.recv().await.map(|e| e.peer), Some(c.address().clone()));
    assert!(a.is_quarantined(c.address()));
    assert!(!a.is_quarantined(b.address()));
    assert!(!c.is_quarantined(b.address()));
    a_to_b.tell(Note(3));
    assert_eq!(next(&mut b_rx).await, 3);
    b_to_c.tell(Note(4));
    assert_eq!(next(&mut c_rx).await, 4);
    probe.expect_no_termination(ms(300)).await;
    assert!(on_a.try_recv().is_none(), "a gave up on another peer");
    assert!(on_b.try_recv().is_none(), "b gave up on a peer");
    heal_both(&a, &c);
    terminate_all(&[&a, &b, &c]).await;
}

/// S41, S42: a and b both watch c's actor (b through a ref a handed it); a
/// partition between b and c gives c up on b: b's watch hears `Terminated`, a's
/// does not, and a still reaches c.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_s42_a_give_up_between_b_and_c_ends_bs_watch_of_c_and_not_as() {
    let (a, b, c) = (quick_node("a"), quick_node("b"), quick_node("c"));
    let (_, on_a, mut rx) = linked_sink(&c, &a, 1).await;
    let on_b = handed_over(&a, &b, &on_a).await;
    on_b.tell(Note(2));
    assert_eq!(next(&mut rx).await, 2);
    let mut watch_a = watching(&a, &on_a);
    let mut watch_b = watching(&b, &on_b);

    partition_until_given_up(&b, &c, GIVE_UP).await;
    watch_b.expect_terminated(&on_b, T).await;
    watch_a.expect_no_termination(ms(300)).await;
    on_a.tell(Note(3));
    assert_eq!(next(&mut rx).await, 3);
    assert!(!a.is_quarantined(c.address()));
    heal_both(&b, &c);
    terminate_all(&[&a, &b, &c]).await;
}

/// A forwarder on `from` named `name`: every `Job` it gets goes to `to`.
fn forwarder_on(from: &ActorSystem, name: &str, to: ActorRef<Job>) -> ActorRef<Job> {
    from.spawn(
        Behaviors::receive_message(move |job: Job| to.tell(job)),
        name,
    )
    .unwrap()
}

/// `asker`'s ref to a forwarder named "fwd" on `via`, passing every `Job` on to
/// `target` (resolved from `via`).
fn forwarded(asker: &ActorSystem, via: &ActorSystem, target: &ActorRef<Job>) -> ActorRef<Job> {
    let to_target = via.resolve::<Job>(&target.to_string()).unwrap();
    let fwd = forwarder_on(via, "fwd", to_target);
    asker.resolve::<Job>(&fwd.to_string()).unwrap()
}

/// A dropper on `system`: every `Job` it gets, its number on a channel, and its
/// reply ref dropped unused.
fn dropper_on(system: &ActorSystem) -> (ActorRef<Job>, mpsc::UnboundedReceiver<u64>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let dropper = system
        .spawn(
            Behaviors::receive_message(move |job: Job| {
                let _ = tx.send(job.n);
            }),
            "dropper",
        )
        .unwrap();
    (dropper, rx)
}

/// S44: a asks b's forwarder, which passes the request (its reply ref inside) on
/// to c, which is linked with a; c's actor drops the reply ref without using it.
/// c says so, and the ask fails at once with `Unanswered`, not at its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_a_reply_ref_passed_on_to_a_linked_third_system_and_dropped_there_is_unanswered_at_once()
 {
    let (a, b, c) = (node("a"), node("b"), node("c"));
    let (dropper, mut dropped) = dropper_on(&c);
    // c and a are linked: c has sent to a.
    let _linked = linked_sink(&a, &c, 1).await;
    let fwd_on_a = forwarded(&a, &b, &dropper);
    let started = Instant::now();
    let asked = job(&fwd_on_a, 7, Duration::from_secs(20)).await;
    assert_eq!(next(&mut dropped).await, 7);
    assert!(
        matches!(asked, Err(AskError::Unanswered { .. })),
        "{asked:?}"
    );
    assert_within(started, Duration::from_secs(10));
    terminate_all(&[&a, &b, &c]).await;
}

/// S44 (remoting.md): a reply ref passed on to a third system that has never
/// linked with the asker, and dropped there unused, is not reported (that system
/// does not dial an address a peer wrote): the ask ends at its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_a_reply_ref_dropped_on_a_third_system_never_linked_with_the_asker_times_out() {
    let (a, b, c) = (node("a"), node("b"), node("c"));
    let (dropper, mut dropped) = dropper_on(&c);
    let fwd_on_a = forwarded(&a, &b, &dropper);
    let asked = job(&fwd_on_a, 8, ms(1500)).await;
    assert_eq!(next(&mut dropped).await, 8);
    assert!(matches!(asked, Err(AskError::Timeout { .. })), "{asked:?}");
    terminate_all(&[&a, &b, &c]).await;
}

/// S44, S22: a reply ref passed a -> b -> c is answered twice by c: the ask on a
/// gets the first answer, and the second is a dead letter on a
/// (`AlreadyAnswered`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s22_s44_a_reply_ref_passed_on_to_a_third_system_answered_twice() {
    let (a, b, c) = (node("a"), node("b"), node("c"));
    let twice = c
        .spawn(
            Behaviors::receive_message(move |job: Job| {
                job.reply_to.tell(Pong(job.n));
                job.reply_to.tell(Pong(job.n + 1));
            }),
            "twice",
        )
        .unwrap();
    let fwd_on_a = forwarded(&a, &b, &twice);
    let mut on_a = letters(&a);
    let asked = job(&fwd_on_a, 40, T).await;
    assert_eq!(asked, Ok(Pong(40)));
    let letter = letter_where(&mut on_a, T, |l| l.is::<Pong>()).await;
    assert_eq!(letter.take_message::<Pong>(), Some(Pong(41)));
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::AlreadyAnswered,
        "{letter}"
    );
    terminate_all(&[&a, &b, &c]).await;
}

// ======================================================== 2. a peer rebuilt on the same port

/// A system named b on `port` (its detector giving up after `unreachable_after`)
/// with a sink named "sink": the system, the sink's local ref and its channel.
fn b_with_sink_on(
    port: u16,
    unreachable_after: Duration,
) -> (ActorSystem, ActorRef<Note>, mpsc::UnboundedReceiver<u64>) {
    let b = node_on("b", port, unreachable_after);
    let (sink, rx) = sink_on(&b, "sink");
    (b, sink, rx)
}

/// Terminates `b` while a probe on `a` watches `target` (on b), and waits for its
/// `Terminated`.
async fn terminate_watched(a: &ActorSystem, b: &ActorSystem, target: &ActorRef<Note>) {
    let mut probe = watching(a, target);
    b.terminate().await;
    probe.expect_terminated(target, T).await;
}

/// S36, S37, S43: b's sink is known to a (with its uid); b terminates and a new b
/// starts on the same port with a new sink of the same name. The old ref, sent to
/// the new b inside a message, is a ref to the stopped incarnation there: a tell
/// through it does not reach the new sink (a dead letter), and a watch through it
/// hears `Terminated` at once. A ref resolved again reaches the new sink.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s37_s43_an_old_incarnations_ref_sent_to_the_rebuilt_system_reaches_nobody_there() {
    let a = node("a");
    let port = low_port();
    let (b, sink, mut rx) = b_with_sink_on(port, Duration::from_secs(20));
    let old = linked_ref(&a, &sink, &mut rx, 1).await;
    terminate_watched(&a, &b, &old).await;

    let (b2, sink2, mut rx2) = b_with_sink_on(port, Duration::from_secs(20));
    assert_eq!(b2.address(), b.address());
    // On b2: `Carry(r)` tells r `Note(9)` and watches r, reporting its end.
    let (ends_tx, mut ends) = mpsc::unbounded_channel();
    let user = b2
        .spawn(
            Behaviors::receive(move |ctx, Carry(r): Carry| {
                r.tell(Note(9));
                ctx.watch(&r);
            })
            .on_signal(move |_, signal| {
                if let Signal::Terminated(t) = signal {
                    let _ = ends_tx.send(t.actor().path().to_string());
                }
            }),
            "user",
        )
        .unwrap();
    let mut on_b2 = letters(&b2);
    let user_on_a = a.resolve::<Carry>(&user.to_string()).unwrap();
    user_on_a.tell(Carry(old.clone()));
    assert_eq!(next(&mut ends).await, "/user/sink");
    let letter = letter_where(&mut on_b2, T, |l| l.is::<Note>()).await;
    assert_eq!(letter.recipient().to_string(), "/user/sink", "{letter}");
    nothing_on(&mut rx2, ms(200)).await;

    linked_ref(&a, &sink2, &mut rx2, 10).await;
    terminate_all(&[&a, &b2]).await;
}

/// S41, S43, S44: after b is rebuilt on the same port, a watch made through a ref
/// to the old b's actor hears `Terminated` at once, and an ask through an old ref
/// fails at once; neither reaches the new actor of the same name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_s43_s44_a_watch_and_an_ask_through_an_old_ref_after_a_rebuild_end_at_once() {
    let a = node("a");
    let port = low_port();
    let b = node_on("b", port, Duration::from_secs(20));
    let echo = |system: &ActorSystem, seen: mpsc::UnboundedSender<u64>| {
        system
            .spawn(
                Behaviors::receive_message(move |job: Job| {
                    let _ = seen.send(job.n);
                    job.reply_to.tell(Pong(job.n));
                }),
                "echo",
            )
            .unwrap()
    };
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let old_echo = echo(&b, seen_tx);
    let old = a.resolve::<Job>(&old_echo.to_string()).unwrap();
    assert_eq!(job(&old, 1, T).await, Ok(Pong(1)));
    assert_eq!(next(&mut seen).await, 1);
    b.terminate().await;

    let b2 = node_on("b", port, Duration::from_secs(20));
    let (seen2_tx, mut seen2) = mpsc::unbounded_channel();
    let new_echo = echo(&b2, seen2_tx);
    // The new session is up before the old ref is used.
    let fresh = a.resolve::<Job>(&new_echo.to_string()).unwrap();
    assert_eq!(job(&fresh, 2, T).await, Ok(Pong(2)));
    assert_eq!(next(&mut seen2).await, 2);

    watching(&a, &old).expect_terminated(&old, T).await;
    let started = Instant::now();
    let asked = job(&old, 3, Duration::from_secs(20)).await;
    assert!(asked.is_err(), "{asked:?}");
    assert!(!matches!(asked, Err(AskError::Timeout { .. })), "{asked:?}");
    assert_within(started, Duration::from_secs(5));
    nothing_on(&mut seen2, ms(200)).await;
    terminate_all(&[&a, &b2]).await;
}

/// S42, S43: a gives b up (partition); b terminates and a new b starts on the
/// same port. a's quarantine of the address holds (sends dead-letter
/// `Quarantined`, reconnect says `Quarantined`) until it is cleared; then a links
/// to the new b, which never quarantined a.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_s43_a_quarantine_outlives_the_peers_rebuild_until_it_is_cleared() {
    let a = quick_node("a");
    let port = low_port();
    let (b, sink, mut rx) = b_with_sink_on(port, ms(1500));
    let _old = linked_ref(&a, &sink, &mut rx, 1).await;
    partition_until_given_up(&a, &b, GIVE_UP).await;
    LinkDirection::between(&b, a.address()).heal();
    b.terminate().await;
    LinkDirection::between(&a, b.address()).heal();

    let (b2, sink2, mut rx2) = b_with_sink_on(port, ms(1500));
    assert!(a.is_quarantined(b2.address()));
    let mut on_a = letters(&a);
    let fresh = a.resolve::<Note>(&sink2.to_string()).unwrap();
    fresh.tell(Note(2));
    let letter = letter_where(&mut on_a, T, |l| l.is::<Note>()).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::Quarantined { peer } if peer == b2.address()),
        "{letter}"
    );
    assert!(matches!(
        a.reconnect(b2.address()).await,
        Err(LinkError::Quarantined { .. })
    ));
    assert!(a.clear_quarantine(b2.address()));
    within(a.reconnect(b2.address()))
        .await
        .expect("linked to the new b");
    linked_ref(&a, &sink2, &mut rx2, 3).await;
    terminate_all(&[&a, &b2]).await;
}

/// S36, S43: a ref a got inside a message from the old b (decoded, not resolved)
/// names the session that ended when b terminated: after b is rebuilt on the
/// same port, a tell through it is a dead letter (`SessionEnded`) and never
/// reaches the new actor of the same name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s43_a_ref_decoded_from_the_old_peer_does_not_reach_the_rebuilt_one() {
    let a = node("a");
    let port = low_port();
    let (b, sink, mut rx) = b_with_sink_on(port, Duration::from_secs(20));
    let decoded = handed_over(&b, &a, &sink).await;
    decoded.tell(Note(1));
    assert_eq!(next(&mut rx).await, 1);
    terminate_watched(&a, &b, &decoded).await;

    let (b2, sink2, mut rx2) = b_with_sink_on(port, Duration::from_secs(20));
    linked_ref(&a, &sink2, &mut rx2, 2).await;
    let mut on_a = letters(&a);
    decoded.tell(Note(3));
    let letter = letter_where(&mut on_a, T, |l| l.is::<Note>()).await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::SessionEnded { peer } if peer == b2.address()),
        "{letter}"
    );
    nothing_on(&mut rx2, ms(200)).await;
    terminate_all(&[&a, &b2]).await;
}

/// S43, S39, S41: a system that stopped is not quarantined (it said it was
/// leaving); `reconnect` to its port while nobody listens fails with a typed
/// error at once; once a system is rebuilt there, `reconnect` links and a ref
/// resolved again reaches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_s43_reconnect_to_a_stopped_peer_fails_typed_then_links_once_it_is_rebuilt() {
    let a = node("a");
    let port = low_port();
    let (b, sink, mut rx) = b_with_sink_on(port, Duration::from_secs(20));
    let old = linked_ref(&a, &sink, &mut rx, 1).await;
    terminate_watched(&a, &b, &old).await;
    assert!(!a.is_quarantined(b.address()));
    let started = Instant::now();
    let refused = within(a.reconnect(b.address())).await;
    assert!(
        matches!(&refused, Err(LinkError::Failed { peer, .. }) if peer == b.address()),
        "{refused:?}"
    );
    assert_within(started, Duration::from_secs(3));

    let (b2, sink2, mut rx2) = b_with_sink_on(port, Duration::from_secs(20));
    within(a.reconnect(b2.address()))
        .await
        .expect("linked to the new b");
    linked_ref(&a, &sink2, &mut rx2, 2).await;
    terminate_all(&[&a, &b2]).await;
}

// ======================================================== 3. remote spawn, routers, supervision

fn spawner_on(system: &ActorSystem, from: &ActorSystem) -> ActorRef<SpawnerMsg> {
    let spawner = system
        .spawn(
            Spawner::offering::<pool>()
                .and::<counter>()
                .and::<parent>()
                .build()
                .unwrap(),
            "spawner",
        )
        .unwrap();
    from.resolve::<SpawnerMsg>(&spawner.to_string()).unwrap()
}

/// The actor `spawning` started, within `T`.
async fn started<P: Message>(
    spawning: impl std::future::Future<Output = Result<Spawned<P>, RemoteSpawnError>>,
) -> ActorRef<P> {
    within(spawning).await.expect("started").actor
}

async fn who(target: &ActorRef<Work>) -> String {
    let Named(name) = target
        .ask_with(Work::Who)
        .timeout(T)
        .await
        .expect("an answer");
    name
}

/// S46, S32: a pool router started on b through a spawner answers a's asks in
/// strict rotation over its routees; told `Quit` once per routee (round robin),
/// the routees stop, the pool stops with its last, and a's watch hears it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s32_s46_a_remotely_spawned_pool_rotates_and_ends_with_its_last_routee() {
    let nodes = calm();
    let spawner = spawner_on(&nodes.b, &nodes.a);
    let p = started(spawner.spawn_remote::<pool>(PoolArgs { size: 3 }, "p")).await;
    let mut probe = watching(&nodes.a, &p);
    let mut names = Vec::new();
    for _ in 0..6 {
        names.push(who(&p).await);
    }
    let mut first: Vec<_> = names[..3].to_vec();
    assert_eq!(&names[..3], &names[3..], "{names:?}");
    first.sort();
    first.dedup();
    assert_eq!(first.len(), 3, "three routees: {names:?}");
    for _ in 0..3 {
        p.tell(Work::Quit);
    }
    probe.expect_terminated(&p, T).await;
    nodes.terminate().await;
}

/// S46, S32, S11, S14: a spawned pool whose routees restart on failure keeps its
/// three routees through a crash of each: the same names answer afterwards, each
/// with a fresh sum, and the requester's watch hears nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s11_s14_s32_s46_a_remotely_spawned_pool_of_restarting_routees_keeps_its_routees() {
    let nodes = calm();
    let spawner = spawner_on(&nodes.b, &nodes.a);
    let p = started(spawner.spawn_remote::<pool>(PoolArgs { size: 3 }, "p")).await;
    let mut probe = watching(&nodes.a, &p);
    let mut before: Vec<String> = Vec::new();
    for _ in 0..3 {
        before.push(who(&p).await);
    }
    for _ in 0..3 {
        p.tell(Work::Add(5));
    }
    for _ in 0..3 {
        p.tell(Work::Crash);
    }
    let mut sums = Vec::new();
    for _ in 0..3 {
        sums.push(p.ask_with(Work::Get).timeout(T).await);
    }
    assert_eq!(sums, vec![Ok(Pong(0)); 3], "fresh sums after the restarts");
    let mut after: Vec<String> = Vec::new();
    for _ in 0..3 {
        after.push(who(&p).await);
    }
    assert_eq!(before, after);
    probe.expect_no_termination(ms(200)).await;
    nodes.terminate().await;
}

/// S46, S14, S36, S41: an actor a started on b is handed to c as a ref; c uses it
/// across a restart (the crash told from a): the ref keeps working, c's watch hears
/// nothing, and the sum is fresh. Stopped, both watches hear it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s14_s36_s46_a_spawned_restarting_actor_keeps_its_ref_for_a_third_system() {
    let (a, b, c) = (node("a"), node("b"), node("c"));
    let spawner = spawner_on(&b, &a);
    let w = started(spawner.spawn_remote::<counter>(CounterArgs, "w")).await;
    let on_c = c.resolve::<Work>(&w.to_string()).unwrap();
    on_c.tell(Work::Add(3));
    assert_eq!(on_c.ask_with(Work::Get).timeout(T).await, Ok(Pong(3)));
    let mut watch_a = watching(&a, &w);
    let mut watch_c = watching(&c, &on_c);
    w.tell(Work::Crash);
    // FIFO from a: the crash is handled before this answer.
    assert_eq!(w.ask_with(Work::Get).timeout(T).await, Ok(Pong(0)));
    on_c.tell(Work::Add(4));
    assert_eq!(on_c.ask_with(Work::Get).timeout(T).await, Ok(Pong(4)));
    watch_c.expect_no_termination(ms(200)).await;
    on_c.tell(Work::Quit);
    watch_c.expect_terminated(&on_c, T).await;
    watch_a.expect_terminated(&w, T).await;
    terminate_all(&[&a, &b, &c]).await;
}

/// S46, S16, S14: inside an actor started on b, a kid escalates its failure; the
/// spawned parent restarts (its setup runs again, its kid comes back), on b, and
/// a's watch of it hears nothing; the ref a holds keeps working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s14_s16_s46_an_escalation_inside_a_remotely_spawned_actor_restarts_it_unheard() {
    let nodes = calm();
    let spawner = spawner_on(&nodes.b, &nodes.a);
    let p = started(spawner.spawn_remote::<parent>(ParentArgs { tag: 16 }, "parent")).await;
    let mut probe = watching(&nodes.a, &p);
    assert_eq!(p.ask_with(Work::Get).timeout(T).await, Ok(Pong(1)));
    p.tell(Work::Crash);
    let deadline = Instant::now() + T;
    loop {
        let runs = p.ask_with(Work::Get).timeout(T).await;
        if runs == Ok(Pong(2)) {
            break;
        }
        assert_eq!(runs, Ok(Pong(1)));
        assert!(Instant::now() < deadline, "the parent never restarted");
        tokio::time::sleep(ms(20)).await;
    }
    assert_eq!(who(&p).await, "kid");
    probe.expect_no_termination(ms(200)).await;
    nodes.terminate().await;
}

// ======================================================== 4. frames at the limit

fn blob(id: u64, len: usize) -> Blob {
    Blob {
        id,
        bytes: vec![(id % 251) as u8; len],
    }
}

/// A sink of blobs on b named "blobs", resolved from a: the ref from a and the
/// channel of what it gets.
fn blob_sink(nodes: &TwoNodes) -> (ActorRef<Blob>, mpsc::UnboundedReceiver<Blob>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let sink = nodes
        .b
        .spawn(
            Behaviors::receive_message(move |b: Blob| {
                let _ = tx.send(b);
            }),
            "blobs",
        )
        .unwrap();
    (nodes.a.resolve::<Blob>(&sink.to_string()).unwrap(), rx)
}

/// Asserts `letter`'s reason is `NotEncodable`.
fn assert_not_encodable(letter: &DeadLetter) {
    assert!(
        matches!(letter.reason(), DeadLetterReason::NotEncodable(_)),
        "{letter}"
    );
}

/// S40, S31: in a burst of blobs, one over the frame limit is a dead letter on the
/// sender, naming it; the others arrive equal and in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s40_one_tell_over_the_frame_limit_in_a_burst_is_the_only_one_lost() {
    let nodes = calm();
    let (to, mut rx) = blob_sink(&nodes);
    let mut on_a = letters(&nodes.a);
    let max = WireLimits::DEFAULT.max_frame;
    let sizes = [10, max - 4096, max + 10, 1, max / 2];
    for (id, len) in sizes.iter().enumerate() {
        to.tell(blob(id as u64, *len));
    }
    for id in [0_u64, 1, 3, 4] {
        let got = next(&mut rx).await;
        assert_eq!(got, blob(id, sizes[id as usize]));
    }
    let letter = letter_where(&mut on_a, T, |l| l.is::<Blob>()).await;
    assert_eq!(letter.take_message::<Blob>().map(|b| b.id), Some(2));
    assert_not_encodable(&letter);
    nothing_on(&mut rx, ms(200)).await;
    nodes.terminate().await;
}

/// S44, S31: an answer over the frame limit cannot cross: it is a dead letter on
/// the answering system (`NotEncodable`), and the asker hears at once that no
/// answer will come (`Unanswered`), not at its deadline as if nobody had
/// answered; the link stays up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s44_an_answer_over_the_frame_limit_is_lettered_there_and_unanswered_here_at_once() {
    #[derive(Clone)]
    pub struct Maker;
    #[actor]
    impl Maker {
        fn want(&mut self, w: Want) -> Blob {
            blob(1, w.len)
        }
    }
    let nodes = calm();
    let maker = nodes.b.spawn(Behaviors::setup(|_| Maker), "maker").unwrap();
    let to = nodes.a.resolve::<MakerMsg>(&maker.to_string()).unwrap();
    let max = WireLimits::DEFAULT.max_frame;
    assert_eq!(
        to.ask(Want { len: 100 })
            .timeout(T)
            .await
            .map(|b| b.bytes.len()),
        Ok(100)
    );
    let mut on_b = letters(&nodes.b);
    let started = Instant::now();
    let asked = to
        .ask(Want { len: max + 100 })
        .timeout(Duration::from_secs(20))
        .await;
    assert!(
        matches!(asked, Err(AskError::Unanswered { .. })),
        "{:?}",
        asked.map(|b| b.id)
    );
    assert_within(started, Duration::from_secs(10));
    let letter = letter_where(&mut on_b, T, |l| l.is::<Blob>()).await;
    assert_not_encodable(&letter);
    // The link stays up.
    assert_eq!(
        to.ask(Want { len: 7 })
            .timeout(T)
            .await
            .map(|b| b.bytes.len()),
        Ok(7)
    );
    nodes.terminate().await;
}

/// S47, S31: an offer of a message over the frame limit resolves `false` at once
/// (no room will ever come for it) with a dead letter; the next offer is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s47_an_offer_over_the_frame_limit_resolves_false_at_once() {
    let nodes = calm();
    let (to, mut rx) = blob_sink(&nodes);
    let mut on_a = letters(&nodes.a);
    let max = WireLimits::DEFAULT.max_frame;
    let offered = timeout(T, to.offer(blob(1, max + 1))).await;
    assert_eq!(offered, Ok(false));
    let letter = letter_where(&mut on_a, T, |l| l.is::<Blob>()).await;
    assert_not_encodable(&letter);
    assert_eq!(timeout(T, to.offer(blob(2, 10))).await, Ok(true));
    assert_eq!(next(&mut rx).await.id, 2);
    nodes.terminate().await;
}

// ======================================================== 5. offers and a full outbound buffer

/// How many tells overfill the outbound queue (1,024 frames and one in the
/// writer's hands).
const OVERFILL: u64 = 1_500;

/// S47, S31, S40: behind a one-way partition, tells past the full outbound buffer
/// are dead letters (`OutboundFull`, naming the peer); an offer made then waits.
/// After the heal the offer resolves `true`, and what was not lettered arrives in
/// order, the offered note last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s40_s47_tells_past_a_full_outbound_buffer_are_lettered_and_an_offer_waits() {
    let nodes = calm();
    let (_, to, mut rx) = linked_sink(&nodes.b, &nodes.a, 0).await;
    let mut on_a = letters(&nodes.a);
    nodes.a_to_b().partition();
    for n in 1..=OVERFILL {
        to.tell(Note(n));
    }
    let mut offer = Box::pin(to.offer(Note(OVERFILL + 1)));
    if let Ok(accepted) = timeout(ms(200), &mut offer).await {
        let letters: Vec<String> = std::iter::from_fn(|| on_a.try_recv())
            .map(|letter| letter.to_string())
            .take(3)
            .collect();
        panic!(
            "the offer resolved {accepted} while the buffer was full; first letters: {letters:?}"
        );
    }
    let mut full = Vec::new();
    while let Some(letter) = on_a.try_recv() {
        if let Some(Note(n)) = letter.take_message::<Note>() {
            assert!(
                matches!(letter.reason(), DeadLetterReason::OutboundFull { peer } if peer == nodes.b.address()),
                "{letter}"
            );
            full.push(n);
        }
    }
    assert!(!full.is_empty(), "no tell was refused for a full buffer");
    nodes.a_to_b().heal();
    assert_eq!(timeout(T, offer).await, Ok(true));
    let expected: Vec<u64> = (1..=OVERFILL + 1).filter(|n| !full.contains(n)).collect();
    let mut got = Vec::new();
    while got.len() < expected.len() {
        got.push(next(&mut rx).await);
    }
    assert_eq!(got, expected);
    nodes.terminate().await;
}

/// Fills a's outbound buffer toward b behind a one-way partition, and returns an
/// offer that waits for room.
fn fill_and_offer(nodes: &TwoNodes, to: &ActorRef<Note>) -> tokio::task::JoinHandle<bool> {
    nodes.a_to_b().partition();
    for n in 1..=OVERFILL {
        to.tell(Note(n));
    }
    let offer = to.offer(Note(OVERFILL + 1));
    tokio::spawn(offer)
}

/// Asserts `offer` has not resolved within 200 ms.
async fn still_waiting(offer: &mut tokio::task::JoinHandle<bool>) {
    assert!(
        timeout(ms(200), &mut *offer).await.is_err(),
        "resolved early"
    );
}

/// Waits for the dead letter of the offered note (`OVERFILL + 1`) on `on_a`.
async fn offered_note_lettered(on_a: &mut Subscription<DeadLetter>) {
    letter_where(
        on_a,
        T,
        |l| matches!(l.take_message::<Note>(), Some(Note(n)) if n == OVERFILL + 1),
    )
    .await;
}

/// S47, S42: an offer waiting for room in the buffer toward a peer that is then
/// given up on resolves `false` (it does not hang), and is a dead letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_s47_an_offer_waiting_on_a_full_buffer_resolves_false_at_the_give_up() {
    let nodes = quick();
    let (_, to, _rx) = linked_sink(&nodes.b, &nodes.a, 0).await;
    let mut on_a = letters(&nodes.a);
    let mut gave_up = nodes.a.events().subscribe::<PeerUnreachable>();
    let mut offer = fill_and_offer(&nodes, &to);
    still_waiting(&mut offer).await;
    nodes.b_to_a().partition();
    given_up(&mut gave_up, nodes.b.address(), GIVE_UP).await;
    assert_eq!(timeout(T, offer).await.map(Result::ok), Ok(Some(false)));
    offered_note_lettered(&mut on_a).await;
    nodes.heal();
    nodes.terminate().await;
}

/// S47, S41: an offer waiting for room in the buffer toward a peer whose system
/// terminates resolves `false` once this system hears of it (the other direction
/// is open), and is a dead letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_s47_an_offer_waiting_on_a_full_buffer_resolves_false_when_the_peer_terminates() {
    let nodes = calm();
    let (_, to, _rx) = linked_sink(&nodes.b, &nodes.a, 0).await;
    let mut on_a = letters(&nodes.a);
    let mut probe = watching(&nodes.a, &to);
    let mut offer = fill_and_offer(&nodes, &to);
    still_waiting(&mut offer).await;
    let started = Instant::now();
    timeout(Duration::from_secs(10), nodes.b.terminate())
        .await
        .expect("b terminates");
    probe.expect_terminated(&to, T).await;
    assert_eq!(timeout(T, offer).await.map(Result::ok), Ok(Some(false)));
    assert!(started.elapsed() < Duration::from_secs(10));
    offered_note_lettered(&mut on_a).await;
    nodes.a_to_b().heal();
    nodes.terminate().await;
}

// ======================================================== 6. TLS settings misuse

/// S38: the certificate and the key given the wrong way round is a typed error
/// that names a part, and its message says what to give.
#[test]
fn s38_tls_certificate_and_key_swapped_is_a_typed_error_that_says_what_to_give() {
    let ca = Ca::new("ca");
    let (cert, key) = ca.node("n");
    let result = TlsSettings::from_pem(key.as_bytes(), cert.as_bytes(), ca.pem.as_bytes());
    let message = result
        .as_ref()
        .err()
        .map(ToString::to_string)
        .unwrap_or_default();
    let reason = tls_reason(result);
    assert!(
        reason.contains("certificate chain") || reason.contains("private key"),
        "{reason}"
    );
    assert!(message.contains("PEM"), "{message}");
    assert!(
        !message.contains("PRIVATE KEY-----"),
        "no key material: {message}"
    );
}

/// S38: a private key where the CA roots go is refused, naming the CA roots.
#[test]
fn s38_tls_a_private_key_given_as_ca_roots_is_refused_naming_the_roots() {
    let ca = Ca::new("ca");
    let (cert, key) = ca.node("n");
    let reason = tls_reason(TlsSettings::from_pem(
        cert.as_bytes(),
        key.as_bytes(),
        key.as_bytes(),
    ));
    assert!(reason.contains("CA roots"), "{reason}");
    assert!(!reason.contains("PRIVATE KEY"), "no key material: {reason}");
}

/// S38: the CA's certificate given as the node's chain, with the node's key: the
/// key does not belong to that certificate, and the error says so.
#[test]
fn s38_tls_the_cas_certificate_as_the_nodes_chain_is_refused_naming_the_key() {
    let ca = Ca::new("ca");
    let (_cert, key) = ca.node("n");
    let reason = tls_reason(TlsSettings::from_pem(
        ca.pem.as_bytes(),
        key.as_bytes(),
        ca.pem.as_bytes(),
    ));
    assert!(reason.contains("key"), "{reason}");
}

/// S38: TLS does not stand in for the shared secret: listening beyond loopback
/// with TLS and no secret refuses to start, and a short secret is refused too.
#[tokio::test(flavor = "current_thread")]
async fn s38_tls_beyond_loopback_still_needs_the_secret() {
    let ca = Ca::new("ca");
    let (cert, key) = ca.node("n");
    let tls = TlsSettings::from_pem(cert.as_bytes(), key.as_bytes(), ca.pem.as_bytes()).unwrap();
    let built = ActorSystem::builder("open")
        .remote(RemoteSettings::bind("0.0.0.0", 0).tls(tls.clone()))
        .build();
    let Err(error) = built else { panic!("started") };
    let error = error.to_string();
    assert!(error.contains("secret"), "{error}");
    let built = ActorSystem::builder("short")
        .remote(
            RemoteSettings::bind("0.0.0.0", 0)
                .secret(b"short".to_vec())
                .tls(tls),
        )
        .build();
    let Err(error) = built else { panic!("started") };
    let error = error.to_string();
    assert!(error.contains("16"), "{error}");
}

// ======================================================== 7. the event stream across cycles

/// S49, S42, S43: each of two give-ups of one peer (with a recovery between)
/// publishes exactly one `PeerUnreachable` to a subscription that lives through
/// both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_s49_each_give_up_across_two_cycles_publishes_one_event() {
    let nodes = quick();
    let mut sub = nodes.a.events().subscribe::<PeerUnreachable>();
    for cycle in 0..2 {
        nodes.a.reconnect(nodes.b.address()).await.unwrap();
        partition_until_given_up(&nodes.a, &nodes.b, GIVE_UP).await;
        let event = timeout(T, sub.recv())
            .await
            .expect("an event")
            .expect("open");
        assert_eq!(&event.peer, nodes.b.address(), "cycle {cycle}");
        assert!(event.quarantined);
        recover(&nodes.a, &nodes.b).await;
        assert!(sub.try_recv().is_none(), "a second event in cycle {cycle}");
    }
    nodes.terminate().await;
}

/// S49: a subscription unsubscribed between two give-ups hears only the first; one
/// made after the first give-up hears only the second; the subscriber count
/// follows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_s49_subscriptions_made_and_dropped_between_cycles_hear_only_their_own() {
    let nodes = quick();
    let base = nodes.a.events().subscriber_count::<PeerUnreachable>();
    let mut early = nodes.a.events().subscribe::<PeerUnreachable>();
    assert_eq!(
        nodes.a.events().subscriber_count::<PeerUnreachable>(),
        base + 1
    );
    nodes.a.reconnect(nodes.b.address()).await.unwrap();
    partition_until_given_up(&nodes.a, &nodes.b, GIVE_UP).await;
    let mut late = nodes.a.events().subscribe::<PeerUnreachable>();
    assert!(timeout(T, early.recv()).await.unwrap().is_some());
    early.unsubscribe();
    assert_eq!(
        nodes.a.events().subscriber_count::<PeerUnreachable>(),
        base + 1
    );
    assert!(
        late.try_recv().is_none(),
        "a stale event for a late subscriber"
    );
    recover(&nodes.a, &nodes.b).await;
    partition_until_given_up(&nodes.a, &nodes.b, GIVE_UP).await;
    let event = timeout(T, late.recv()).await.unwrap().unwrap();
    assert_eq!(&event.peer, nodes.b.address());
    assert!(late.try_recv().is_none());
    nodes.heal();
    nodes.terminate().await;
}

/// S42, S45: a partition both ways gives each side up after one window, every
/// time. The partition holds dials too: before, each side's reader cut the silent
/// connection after a window, the peer dialled again, and that handshake passed
/// the partition, counted as a sign of life and began a second window (a give-up
/// after 4 s instead of 2, about half the rounds).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_s45_a_partition_gives_each_side_up_after_one_window_every_time() {
    const WINDOW: Duration = Duration::from_secs(2);
    for round in 0..4 {
        let settings = RemoteSettings::loopback()
            .heartbeat_interval(ms(100))
            .unreachable_after(WINDOW);
        let nodes = two_nodes(settings).expect("two nodes");
        timeout(T, nodes.a.reconnect(nodes.b.address()))
            .await
            .expect("a links within the bound")
            .expect("a links");
        timeout(T, nodes.b.reconnect(nodes.a.address()))
            .await
            .expect("b links within the bound")
            .expect("b links");
        let mut on_a = nodes.a.events().subscribe::<PeerUnreachable>();
        let mut on_b = nodes.b.events().subscribe::<PeerUnreachable>();
        let started = Instant::now();
        nodes.partition();
        // One window and some: a second window would end past twice `WINDOW`.
        let bound = WINDOW + WINDOW * 3 / 4;
        for (side, events) in [("a", &mut on_a), ("b", &mut on_b)] {
            let event = timeout(bound.saturating_sub(started.elapsed()), events.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "round {round}: {side} gave nothing up within {bound:?} of the partition"
                    )
                })
                .expect("the event stream is open");
            assert!(event.quarantined, "round {round}: {event:?}");
        }
        nodes.heal();
        nodes.terminate().await;
    }
}

// ======================================================== 8. malformed frames from a peer

/// A node on loopback with the raw link's secret, an inbox of notes at
/// `/user/inbox` and an echo at `/user/echo`; and a raw peer linked to it.
struct Raw {
    node: ActorSystem,
    inbox: mpsc::UnboundedReceiver<u64>,
    stream: tokio::net::TcpStream,
    peer: String,
}

#[derive(Clone)]
pub struct Echoer;

#[actor]
impl Echoer {
    fn echo(&mut self, Echo(n): Echo) -> Pong {
        Pong(n)
    }
}

static RAW_PEERS: AtomicUsize = AtomicUsize::new(0);

async fn raw() -> Raw {
    let node = ActorSystem::builder("raw-node")
        .remote(
            RemoteSettings::loopback()
                .secret(raw_link::SECRET.to_vec())
                .heartbeat_interval(raw_link::HEARTBEAT)
                .unreachable_after(Duration::from_secs(30)),
        )
        .build()
        .unwrap();
    let (_, inbox) = sink_on(&node, "inbox");
    node.spawn(Behaviors::setup(|_| Echoer), "echo").unwrap();
    let peer = raw_link::raw_address(&format!("raw{}", RAW_PEERS.fetch_add(1, Ordering::SeqCst)));
    let (stream, _, _) = raw_link::linked(&node, &peer).await;
    Raw {
        node,
        inbox,
        stream,
        peer,
    }
}

impl Raw {
    async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.unwrap();
    }

    /// A good note on the same connection is delivered: the link is up.
    async fn still_delivers(&mut self, n: u64) {
        let frame = raw_link::frame(
            Note::KEY,
            "/user/inbox",
            &postcard::to_allocvec(&Note(n)).unwrap(),
        );
        self.send(&frame).await;
        assert_eq!(next(&mut self.inbox).await, n);
    }

    /// The next `FromPeer` letter naming this raw peer, and its problem.
    async fn refused(&self, sub: &mut Subscription<DeadLetter>) -> WireProblem {
        let letter = letter_where(sub, T, |l| {
            matches!(l.reason(), DeadLetterReason::FromPeer { .. })
        })
        .await;
        let DeadLetterReason::FromPeer { peer, problem } = letter.reason() else {
            unreachable!()
        };
        assert_eq!(peer.to_string(), self.peer, "{letter}");
        assert_eq!(peer_of(letter.reason()), Some(peer));
        problem.clone()
    }
}

/// A frame with `header` as given, written by hand, and `payload`.
fn hand_frame(header: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut body = header.to_vec();
    body.extend_from_slice(payload);
    raw_link::framed(&body)
}

/// A postcard string: its length as a varint (under 128 here), then its bytes.
fn pstr(s: &[u8]) -> Vec<u8> {
    assert!(s.len() < 128);
    let mut v = vec![s.len() as u8];
    v.extend_from_slice(s);
    v
}

/// S37: a frame whose recipient is not an actor path is a dead letter naming the
/// peer (`InvalidPath`); the link stays up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_frame_to_a_recipient_that_is_no_path_is_a_letter_naming_the_peer() {
    let mut raw = raw().await;
    let mut sub = letters(&raw.node);
    let note = postcard::to_allocvec(&Note(1)).unwrap();
    for bad in ["user/inbox", "/user//inbox", "/user/in box", ""] {
        raw.send(&raw_link::frame(Note::KEY, bad, &note)).await;
        let problem = raw.refused(&mut sub).await;
        assert!(
            matches!(
                problem,
                WireProblem::InvalidPath(_) | WireProblem::NoRecipient
            ),
            "{bad:?}: {problem:?}"
        );
    }
    raw.still_delivers(2).await;
    raw.node.terminate().await;
}

/// S37: a request frame whose reply-to is not an actor URI (or names a path with
/// an invalid name) is a dead letter naming the peer (`UnreadableHeader`); the
/// request is not delivered as if it were told, and the link stays up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_request_whose_reply_to_is_no_uri_is_a_letter_naming_the_peer() {
    let mut raw = raw().await;
    let mut sub = letters(&raw.node);
    let peer = raw.peer.clone();
    let bad_path = format!("{}/system/pro mises/1", peer);
    for reply_to in ["this is not a uri", bad_path.as_str()] {
        let frame = tapio::wire::encode_frame(
            &FrameHeader {
                key: Echo::KEY,
                recipient: "/user/echo",
                uid: 0,
                reply_to: Some(reply_to),
            },
            &postcard::to_allocvec(&Echo(5)).unwrap(),
            &WireLimits::DEFAULT,
        )
        .unwrap();
        raw.send(&frame).await;
        let problem = raw.refused(&mut sub).await;
        assert!(
            matches!(problem, WireProblem::UnreadableHeader(_)),
            "{reply_to:?}: {problem:?}"
        );
    }
    raw.still_delivers(3).await;
    // The echo never ran: no answer of it was lettered (as `NoReplyExpected`).
    while let Some(letter) = sub.try_recv() {
        assert!(!letter.is::<Pong>(), "the request was delivered: {letter}");
    }
    raw.node.terminate().await;
}

/// S37: a header whose key is not UTF-8 is unreadable: a dead letter naming the
/// peer, and the link stays up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_header_that_is_not_utf8_is_a_letter_naming_the_peer() {
    let mut raw = raw().await;
    let mut sub = letters(&raw.node);
    let mut header = pstr(&[0xff, 0xfe, 0xfd]);
    header.extend(pstr(b"/user/inbox"));
    header.push(0); // uid 0
    header.push(0); // no reply-to
    raw.send(&hand_frame(&header, &[1])).await;
    let problem = raw.refused(&mut sub).await;
    assert!(
        matches!(problem, WireProblem::UnreadableHeader(_)),
        "{problem:?}"
    );
    // And a recipient that is not UTF-8.
    let mut header = pstr(Note::KEY.as_bytes());
    header.extend(pstr(&[b'/', 0xc3, 0x28]));
    header.push(0);
    header.push(0);
    raw.send(&hand_frame(&header, &[1])).await;
    let problem = raw.refused(&mut sub).await;
    assert!(
        matches!(problem, WireProblem::UnreadableHeader(_)),
        "{problem:?}"
    );
    raw.still_delivers(4).await;
    raw.node.terminate().await;
}

/// S37, S35: a key of the link's own namespace (`!..`) sent to a user actor, and
/// one that names nothing, are refused as dead letters naming the peer; the link
/// stays up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s35_s37_a_link_key_sent_to_a_user_actor_is_a_letter_naming_the_peer() {
    let mut raw = raw().await;
    let mut sub = letters(&raw.node);
    for key in ["!nonsense", "!welcome"] {
        raw.send(&raw_link::frame(key, "/user/inbox", &[1, 2, 3]))
            .await;
        let problem = raw.refused(&mut sub).await;
        assert!(!problem.to_string().is_empty(), "{key}");
    }
    raw.still_delivers(5).await;
    raw.node.terminate().await;
}

/// S37: a frame shorter than a header (its prefix says 2 bytes) is a dead letter
/// naming the peer, and the frame after it is read from the right place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_frame_shorter_than_its_header_is_a_letter_and_the_next_is_read() {
    let mut raw = raw().await;
    let mut sub = letters(&raw.node);
    raw.send(&raw_link::framed(&[20, b'x'])).await;
    let problem = raw.refused(&mut sub).await;
    assert!(
        matches!(
            problem,
            WireProblem::UnreadableHeader(_) | WireProblem::BadLength { .. }
        ),
        "{problem:?}"
    );
    raw.send(&raw_link::framed(&[])).await;
    raw.refused(&mut sub).await;
    raw.still_delivers(6).await;
    raw.node.terminate().await;
}

/// S37, S36: a payload whose ref is no actor URI (garbage, a path with an invalid
/// name, a uid that is not a number) does not decode: a dead letter naming the
/// peer (`Undecodable`, with the key), and the link stays up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s37_a_ref_in_a_payload_that_is_no_uri_is_a_letter_naming_the_peer() {
    let mut raw = raw().await;
    let (_keeper, mut kept) = keeper_on(&raw.node, "keeper");
    let mut sub = letters(&raw.node);
    let own = raw.node.address().to_string();
    let bad_name = format!("{own}/user/in box#1");
    let bad_uid = format!("{own}/user/inbox#one");
    for uri in ["garbage", bad_name.as_str(), bad_uid.as_str()] {
        let payload = postcard::to_allocvec(uri).unwrap();
        raw.send(&raw_link::frame(Carry::KEY, "/user/keeper", &payload))
            .await;
        let problem = raw.refused(&mut sub).await;
        assert!(
            matches!(&problem, WireProblem::Undecodable { key, .. } if key == Carry::KEY),
            "{uri:?}: {problem:?}"
        );
    }
    raw.still_delivers(7).await;
    nothing_on(&mut kept, ms(100)).await;
    raw.node.terminate().await;
}

/// A watcher on `system` of `target`: it says on `watching` once its watch is made
/// (and, through `linked`, on the target's system: a note told after the watch,
/// over the same link, comes after it), and each `Terminated` it hears on the
/// channel returned.
fn watcher_after<Q: Message>(
    system: &ActorSystem,
    target: ActorRef<Q>,
    linked: ActorRef<Note>,
) -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    let behavior: Behavior<u64> = Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        ctx.watch(&target);
        linked.tell(Note(0));
        let tx = tx.clone();
        Behaviors::receive_message(|_: u64| {}).on_signal(move |_, signal: &Signal| {
            if let Signal::Terminated(end) = signal {
                let _ = tx.send(end.actor().path().to_string());
            }
        })
    });
    system.spawn(behavior, "watcher").unwrap();
    rx
}

// S18 + S41 (issue 30, item 3): the link's own frames never compete with messages
// for the outbound bound. Behind a one-way partition b -> a, an actor on b tells
// 5,000 notes to a (past b's bound of 1,024 and what its writer has taken into its
// batch: the rest are lettered) and stops; its `!ended` still queues, and once the
// link heals a's watcher hears `Terminated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s18_s41_an_end_sent_past_a_full_outbound_buffer_is_not_lost() {
    let nodes = calm();
    let (_, note_b, mut at_b) = linked_sink(&nodes.b, &nodes.a, 0).await;
    let (sink_a, _at_a) = sink_on(&nodes.a, "sink-a");
    let sink_a_from_b = nodes.b.resolve::<Note>(&sink_a.to_string()).unwrap();
    let talker = nodes
        .b
        .spawn(
            Behaviors::receive_message(move |Note(n): Note| {
                for i in 0..n {
                    sink_a_from_b.tell(Note(i));
                }
                Behaviors::stopped()
            }),
            "talker",
        )
        .unwrap();
    let talker_from_a = nodes.a.resolve::<Note>(&talker.to_string()).unwrap();
    let mut ended = watcher_after(&nodes.a, talker_from_a.clone(), note_b);
    assert_eq!(next(&mut at_b).await, 0, "the watch reached b");
    nodes.b_to_a().partition();
    let mut probe = TestProbe::<u64>::new(&nodes.b);
    probe.watch(&talker);
    talker_from_a.tell(Note(5_000));
    probe.expect_terminated(&talker, T).await;
    nodes.b_to_a().heal();
    assert_eq!(next(&mut ended).await, talker_from_a.path().to_string());
    nodes.terminate().await;
}

// S18 + S41 (issue 30, item 3): a watch made while the outbound buffer is full of
// messages (a one-way partition a -> b) still reaches b: once the link heals and
// the target stops, a's watcher hears `Terminated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s18_s41_a_watch_made_past_a_full_outbound_buffer_is_not_lost() {
    let nodes = calm();
    let (_, note_b, _at_b) = linked_sink(&nodes.b, &nodes.a, 0).await;
    let target = nodes
        .b
        .spawn(Behaviors::ignore::<Note>(), "target")
        .unwrap();
    let target_from_a = nodes.a.resolve::<Note>(&target.to_string()).unwrap();
    nodes.a_to_b().partition();
    for n in 1..=OVERFILL {
        note_b.tell(Note(n));
    }
    let mut ended = watcher_after(&nodes.a, target_from_a.clone(), note_b.clone());
    nodes.a_to_b().heal();
    nodes.b.stop(&target).unwrap();
    assert_eq!(next(&mut ended).await, target_from_a.path().to_string());
    nodes.terminate().await;
}
