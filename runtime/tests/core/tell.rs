//! Telling: never blocking or failing (S3), one message at a time (S4), per-sender
//! order (S5), nothing lost at volume, and what a ref is.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason};

const SECOND: Duration = Duration::from_secs(1);

// S3: a tell to a stopped actor returns normally; the message becomes a dead letter
// with its reason, and the caller sees nothing.
#[tapio::test(start_paused = true)]
async fn a_tell_to_a_stopped_actor_is_a_dead_letter_not_an_error(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let mut letters = system.events().subscribe::<DeadLetter>();
    let once = system
        .spawn(
            Behaviors::receive_message(|_: u64| Behaviors::stopped()),
            "once",
        )
        .unwrap();
    probe.watch(&once);
    once.tell(1_u64);
    probe.expect_terminated(&once, SECOND).await;
    once.tell(2_u64); // `tell` returns `()`: there is nothing to unwrap, ignore or handle.
    let letter = tokio::time::timeout(SECOND, letters.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(letter.take_message::<u64>(), Some(2));
    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(letter.recipient(), once.path());
}

#[message]
pub enum Stall {
    /// Hold the handler until the gate opens.
    Hold(tokio::sync::watch::Receiver<bool>),
    /// Count one.
    Count,
    /// Report the count.
    Report(ActorRef<u64>),
}

#[derive(Clone)]
struct Staller {
    counted: u64,
}

#[actor]
impl Staller {
    async fn stall(&mut self, stall: Stall) {
        match stall {
            Stall::Hold(mut gate) => {
                let _ = gate.wait_for(|open| *open).await;
            }
            Stall::Count => self.counted += 1,
            Stall::Report(to) => to.tell(self.counted),
        }
    }
}

// S3: `tell` never blocks. The recipient is stuck in a handler, and a plain thread
// outside the runtime tells it 100,000 messages: every tell returns, none waits for
// the actor, and all of them are handled once the handler is released.
#[tapio::test(worker_threads = 2)]
async fn a_tell_never_waits_for_a_busy_actor(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let actor = system.spawn(Staller { counted: 0 }, "busy").unwrap();
    let (open, gate) = tokio::sync::watch::channel(false);
    actor.tell(Stall::Hold(gate));
    let (told, all_told) = std::sync::mpsc::channel();
    let sender = actor.clone();
    std::thread::spawn(move || {
        for _ in 0..100_000 {
            sender.tell(Stall::Count);
        }
        let _ = told.send(());
    });
    // Bounded: were a tell to wait for the stuck handler, this would time out.
    tokio::task::spawn_blocking(move || all_told.recv_timeout(Duration::from_secs(30)))
        .await
        .unwrap()
        .expect("every tell returned while the actor was stuck");
    open.send_replace(true);
    actor.tell(Stall::Report(probe.actor_ref().clone()));
    assert_eq!(probe.expect_message(Duration::from_secs(30)).await, 100_000);
}

/// Records how many handlers of one actor run at once, and the most ever seen.
#[derive(Clone)]
struct Exclusive {
    inside: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    total: u64,
    done: ActorRef<u64>,
}

#[message]
pub struct Work(pub u64);

#[actor]
impl Exclusive {
    async fn work(&mut self, Work(n): Work) {
        let now = self.inside.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        // Give every other sender the chance to get in while this handler is inside.
        tokio::task::yield_now().await;
        self.total += n; // plain state: no lock, no atomic
        self.inside.fetch_sub(1, Ordering::SeqCst);
        if n == 0 {
            self.done.tell(self.total);
        }
    }
}

// S4: one actor handles one message at a time, even with `async` handlers that
// yield and many concurrent senders on a multi-thread runtime; its state needs no lock.
#[tapio::test(worker_threads = 2)]
async fn one_message_at_a_time(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let most = Arc::new(AtomicUsize::new(0));
    let actor = system
        .spawn(
            Exclusive {
                inside: Arc::new(AtomicUsize::new(0)),
                most: most.clone(),
                total: 0,
                done: probe.actor_ref().clone(),
            },
            "exclusive",
        )
        .unwrap();
    let senders: Vec<_> = (0..4)
        .map(|_| {
            let actor = actor.clone();
            tokio::spawn(async move {
                for _ in 0..250 {
                    actor.tell(Work(1));
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for sender in senders {
        sender.await.unwrap();
    }
    actor.tell(Work(0));
    assert_eq!(probe.expect_message(Duration::from_secs(10)).await, 1000);
    assert_eq!(most.load(Ordering::SeqCst), 1, "two handlers overlapped");
}

// S4: a reply sent from a handler cannot overtake that handler: what the handler
// does before replying is visible to whoever acts on the reply.
#[tapio::test]
async fn a_reply_cannot_overtake_its_handler(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let log = probe.actor_ref().clone();
    let log_too = log.clone();
    let listener = system
        .spawn(
            Behaviors::receive_message(move |whom: String| log.tell(format!("listener: {whom}"))),
            "listener",
        )
        .unwrap();
    let greeter = system
        .spawn(
            Behaviors::receive_message(move |whom: String| {
                log_too.tell(format!("greeter: {whom}"));
                listener.tell(whom);
            }),
            "greeter",
        )
        .unwrap();
    greeter.tell(String::from("world"));
    let lines = probe.receive_messages(2, SECOND).await;
    assert_eq!(lines, ["greeter: world", "listener: world"]);
}

// S5: messages from one sender to one actor arrive in the order sent.
#[tapio::test(worker_threads = 2)]
async fn messages_from_one_sender_arrive_in_order(system: ActorSystem) {
    let mut probe = TestProbe::<Vec<u64>>::new(&system);
    let to = probe.actor_ref().clone();
    let collector: ActorRef<u64> = system
        .spawn(
            Behaviors::setup(move |_| Collector {
                seen: Vec::new(),
                to: to.clone(),
            }),
            "collector",
        )
        .unwrap();
    for n in 1..=10_000 {
        collector.tell(n);
    }
    collector.tell(0_u64);
    let seen = probe.expect_message(Duration::from_secs(10)).await;
    assert_eq!(seen, (1..=10_000).collect::<Vec<u64>>());
}

/// Collects `u64`s until a zero, then reports them.
struct Collector {
    seen: Vec<u64>,
    to: ActorRef<Vec<u64>>,
}

impl tapio::Protocol for Collector {
    type Msg = u64;
}

impl Actor for Collector {
    fn handle<'a>(&'a mut self, _: &'a mut ActorContext<u64>, n: u64) -> tapio::Handled<'a, u64> {
        if n == 0 {
            self.to.tell(std::mem::take(&mut self.seen));
        } else {
            self.seen.push(n);
        }
        tapio::Handled::ready(())
    }
}

// A million messages through one actor, from several senders at once on a
// multi-thread runtime: none is lost, and each sender's own order holds.
#[tapio::test(worker_threads = 2)]
async fn a_million_messages_through_one_actor_none_lost(system: ActorSystem) {
    const SENDERS: u64 = 4;
    const EACH: u64 = 250_000;
    let mut probe = TestProbe::<(u64, bool)>::new(&system);
    let counter = tally(&system, SENDERS, probe.actor_ref().clone());
    let senders: Vec<_> = (0..SENDERS)
        .map(|sender| {
            let counter = counter.clone();
            tokio::spawn(async move {
                for n in 0..EACH {
                    counter.tell((sender, n));
                    if n % 4096 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            })
        })
        .collect();
    for sender in senders {
        sender.await.unwrap();
    }
    counter.tell((u64::MAX, 0));
    let (count, in_order) = probe.expect_message(Duration::from_secs(60)).await;
    assert_eq!(count, SENDERS * EACH);
    assert!(in_order, "a sender's messages arrived out of order");
}

// S3 + S5: many more senders than cores, each a plain thread outside the runtime,
// telling one actor at once on a 2-worker runtime: the mailbox's lock is fought over
// by 32 threads on 2 cores, some of them preempted while they hold it. Every tell
// returns, none is lost, and each sender's own order holds.
#[tapio::test(worker_threads = 2)]
async fn many_threads_telling_one_actor_lose_nothing(system: ActorSystem) {
    const SENDERS: u64 = 32;
    const EACH: u64 = 20_000;
    let mut probe = TestProbe::<(u64, bool)>::new(&system);
    let counter = tally(&system, SENDERS, probe.actor_ref().clone());
    let (told, all_told) = std::sync::mpsc::channel();
    for sender in 0..SENDERS {
        let (counter, told) = (counter.clone(), told.clone());
        std::thread::spawn(move || {
            for n in 0..EACH {
                counter.tell((sender, n));
            }
            let _ = told.send(());
        });
    }
    drop(told);
    // Bounded: a lock that a preempted holder kept from everyone would time out.
    tokio::task::spawn_blocking(move || {
        for _ in 0..SENDERS {
            all_told
                .recv_timeout(Duration::from_secs(60))
                .expect("every sender finished telling");
        }
    })
    .await
    .unwrap();
    counter.tell((u64::MAX, 0));
    let (count, in_order) = probe.expect_message(Duration::from_secs(60)).await;
    assert_eq!(count, SENDERS * EACH);
    assert!(in_order, "a sender's messages arrived out of order");
}

/// A [`Tally`] of `senders` senders, reporting to `to`.
fn tally(system: &ActorSystem, senders: u64, to: ActorRef<(u64, bool)>) -> ActorRef<(u64, u64)> {
    system
        .spawn(
            Behaviors::setup(move |_| Tally {
                count: 0,
                next: vec![0; senders as usize],
                in_order: true,
                to: to.clone(),
            }),
            "tally",
        )
        .unwrap()
}

/// Counts `(sender, n)` pairs and checks each sender's `n` goes up by one.
struct Tally {
    count: u64,
    next: Vec<u64>,
    in_order: bool,
    to: ActorRef<(u64, bool)>,
}

impl tapio::Protocol for Tally {
    type Msg = (u64, u64);
}

impl Actor for Tally {
    fn handle<'a>(
        &'a mut self,
        _: &'a mut ActorContext<(u64, u64)>,
        (sender, n): (u64, u64),
    ) -> tapio::Handled<'a, (u64, u64)> {
        if sender == u64::MAX {
            self.to.tell((self.count, self.in_order));
        } else {
            let expected = &mut self.next[sender as usize];
            self.in_order &= *expected == n;
            *expected = n + 1;
            self.count += 1;
        }
        tapio::Handled::ready(())
    }
}

// A ref prints as a full URI with its uid, and compares and hashes by actor.
#[tapio::test]
async fn a_ref_is_its_actor_identity(system: ActorSystem) {
    let a = system.spawn(Behaviors::ignore::<u64>(), "a").unwrap();
    let b = system.spawn(Behaviors::ignore::<u64>(), "b").unwrap();
    let text = a.to_string();
    assert_eq!(
        text,
        format!("tapio://a_ref_is_its_actor_identity/user/a#{}", a.uid())
    );
    assert_eq!(format!("{a:?}"), format!("ActorRef({text})"));
    let set: HashSet<ActorRef<u64>> = [a.clone(), a.clone(), b.clone()].into_iter().collect();
    assert_eq!(set.len(), 2);
    assert_eq!(a.erase(), a);
    assert_ne!(a.erase(), b);
}

// A ref is one pointer, and an optional ref costs nothing more: refs travel inside
// messages by the million, and a promise ref (an ask's reply address) is the same
// kind of ref, not a wider enum.
#[test]
fn a_ref_is_one_pointer_wide() {
    use std::mem::size_of;
    assert_eq!(size_of::<ActorRef<u64>>(), size_of::<usize>());
    assert_eq!(size_of::<Option<ActorRef<u64>>>(), size_of::<usize>());
}

// The runtime's own messages have handlers too: `&'static str`, `()` and a tuple,
// each with a variant of its own (`str`, `Unit`, `Tuple`) and a helper that takes
// it whole (the unit's takes nothing).
#[derive(Clone)]
struct Recorder {
    seen: ActorRef<String>,
}

#[actor(helpers)]
impl Recorder {
    fn line(&mut self, line: &'static str) {
        self.seen.tell(format!("line {line}"));
    }
    fn tick(&mut self, (): ()) {
        self.seen.tell("tick".to_owned());
    }
    fn pair(&mut self, (n, flag): (u64, bool)) {
        self.seen.tell(format!("pair {n} {flag}"));
    }
}

#[tapio::test]
async fn an_actor_handles_a_static_str_the_unit_and_a_tuple(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let recorder = system
        .spawn(
            Recorder {
                seen: probe.actor_ref().clone(),
            },
            "recorder",
        )
        .unwrap();
    recorder.tell("hello");
    recorder.tell(());
    recorder.tell((1_u64, false));
    recorder.line("again");
    recorder.tick();
    recorder.pair((2, true));
    let seen = probe.receive_messages(6, SECOND).await;
    assert_eq!(
        seen,
        [
            "line hello",
            "tick",
            "pair 1 false",
            "line again",
            "tick",
            "pair 2 true"
        ]
    );
    assert_eq!(
        format!("{:?}", RecorderMsg::Unit((), Default::default())),
        "RecorderMsg::Unit(..)"
    );
}

/// A protocol generic over what it wraps, whose `Message` impl asks the wrapped
/// type to be `Send`, as a framework adapter writes it.
pub struct Wrapped<M>(M);

impl<M: Send + 'static> tapio::Message for Wrapped<M> {
    type ReplySlot = tapio::NoReply;
}

/// What the wrapper carries here: a ref to an actor of the same wrapped protocol.
pub enum Relay {
    Pass(ActorRef<Wrapped<Relay>>, u64),
    Done(u64),
}

// A protocol whose message carries a ref of its own generic type compiles (the
// mailbox's types must not make `Send` of such a protocol recurse without end) and
// its refs deliver: the relay passes the number on to the ref it was given.
#[tapio::test(start_paused = true)]
async fn a_generic_protocol_that_carries_its_own_refs_compiles_and_delivers(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let out = probe.actor_ref().clone();
    let relay = system
        .spawn(
            Behaviors::receive_message(move |Wrapped(relay): Wrapped<Relay>| {
                match relay {
                    Relay::Pass(to, n) => to.tell(Wrapped(Relay::Done(n + 1))),
                    Relay::Done(n) => out.tell(n),
                }
                Behaviors::same()
            }),
            "relay",
        )
        .unwrap();
    relay.tell(Wrapped(Relay::Pass(relay.clone(), 41)));
    assert_eq!(probe.expect_message(SECOND).await, 42);
}
