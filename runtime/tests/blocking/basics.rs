//! `ctx.run_blocking`: a blocking call off the actors' threads, so other actors keep
//! running (S33), on a multi-thread runtime and on a current-thread one. The actor
//! itself waits for the call, a stop still interrupts it, a panic in the call is the
//! actor's failure, and the call's value reaches the handler.
//!
//! Every blocking call here holds its thread until the test releases it through a
//! `std::sync::mpsc` channel, so "the call is still running" is a fact, not a timing
//! guess. The call also gives up after `CEILING`: were it run on an actor's thread,
//! the test would fail then instead of hanging.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Outcome, TestProbe};
use tapio::{BlockingError, Failure};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::timeout;

const SECOND: Duration = Duration::from_secs(1);

/// How long a blocking call waits for its release at most.
const CEILING: Duration = Duration::from_secs(10);

/// A call that blocks its thread until it is released, telling the test when it
/// starts and when it ends.
pub struct Gate {
    release: std_mpsc::Receiver<u64>,
    entered: UnboundedSender<()>,
    finished: UnboundedSender<Result<u64, String>>,
}

impl Gate {
    /// Block this thread until released (or `CEILING` passes); the value released
    /// with, or why there was none.
    fn wait(self) -> Result<u64, String> {
        let _ = self.entered.send(());
        let got = self
            .release
            .recv_timeout(CEILING)
            .map_err(|error| format!("not released: {error}"));
        let _ = self.finished.send(got.clone());
        got
    }
}

/// The test's end of a [`Gate`].
pub struct Lever {
    release: std_mpsc::Sender<u64>,
    entered: UnboundedReceiver<()>,
    finished: UnboundedReceiver<Result<u64, String>>,
}

impl Lever {
    /// Wait until the call is running, and so holding its thread.
    async fn entered(&mut self) {
        timeout(SECOND, self.entered.recv())
            .await
            .expect("the blocking call started within a second")
            .expect("the call's gate is still there");
    }

    /// Let the call return `value`.
    fn release(&self, value: u64) {
        self.release.send(value).expect("the call still waits");
    }

    /// Wait until the call has returned; what it returned.
    async fn finished(&mut self) -> Result<u64, String> {
        timeout(SECOND, self.finished.recv())
            .await
            .expect("the blocking call returned within a second")
            .expect("the call's gate is still there")
    }
}

fn gate() -> (Gate, Lever) {
    let (release_tx, release) = std_mpsc::channel();
    let (entered_tx, entered) = unbounded_channel();
    let (finished_tx, finished) = unbounded_channel();
    (
        Gate {
            release,
            entered: entered_tx,
            finished: finished_tx,
        },
        Lever {
            release: release_tx,
            entered,
            finished,
        },
    )
}

#[message]
#[derive(Debug, PartialEq)]
pub enum Seen {
    /// The handler got the call's value.
    Got(Result<u64, String>),
    /// The handler got a failure instead.
    Failed(String),
    PostStop,
    Started,
    Pong(u64),
}

/// Make the call behind `gate` in `run_blocking`, and report its value.
#[message]
pub struct Block(pub Gate);

/// An actor that blocks in `run_blocking` on each `Block`, and reports `PostStop`.
fn blocker(to: ActorRef<Seen>) -> Behavior<Block> {
    let on_stop = to.clone();
    Behaviors::receive_async(async move |ctx, Block(gate): Block| -> Result<_, Failure> {
        let got = ctx.run_blocking(move || gate.wait()).await?;
        to.tell(Seen::Got(got));
        Ok(Behaviors::same())
    })
    .on_signal(move |_, signal| {
        if *signal == Signal::PostStop {
            on_stop.tell(Seen::PostStop);
        }
        Behaviors::same()
    })
    .into()
}

#[message]
#[derive(Clone)]
pub enum Neighbour {
    Ping(u64, ActorRef<Seen>),
    Tick,
}

/// Ticks every 5 ms (each tick goes to `ticks`) and answers pings.
fn neighbour(ticks: UnboundedSender<()>) -> Behavior<Neighbour> {
    Behaviors::setup(move |ctx| {
        ctx.timers()
            .start_fixed_rate("tick", Neighbour::Tick, Duration::from_millis(5))
            .unwrap();
        let ticks = ticks.clone();
        Behaviors::receive_message(move |message: Neighbour| match message {
            Neighbour::Ping(n, reply_to) => reply_to.tell(Seen::Pong(n)),
            Neighbour::Tick => {
                let _ = ticks.send(());
            }
        })
    })
}

/// S33 on whatever runtime the test runs: `blockers` actors each hold a thread in
/// `run_blocking` (as many as the runtime has workers), and meanwhile a neighbour
/// keeps ticking and answering; each blocker handles nothing else until its call
/// returns, then gets the value it was released with.
async fn neighbour_keeps_running_beside(system: &ActorSystem, blockers: u64) {
    let (ticks_tx, mut ticks) = unbounded_channel();
    let next_door = system.spawn(neighbour(ticks_tx), "neighbour").unwrap();
    let mut pongs = TestProbe::<Seen>::new(system);

    let mut held = Vec::new();
    for n in 0..blockers {
        let mut probe = TestProbe::<Seen>::new(system);
        let actor = system
            .spawn(blocker(probe.actor_ref().clone()), &format!("blocker-{n}"))
            .unwrap();
        let (first, mut first_lever) = gate();
        actor.tell(Block(first));
        first_lever.entered().await;
        // A second call waits for the first: the actor is inside its handler.
        let (second, second_lever) = gate();
        actor.tell(Block(second));
        probe.expect_no_message(Duration::from_millis(20)).await;
        held.push((probe, first_lever, second_lever));
    }

    // Every blocker holds a thread now, and the neighbour goes on.
    for _ in 0..3 {
        timeout(SECOND, ticks.recv())
            .await
            .expect("the neighbour ticked while the calls blocked")
            .unwrap();
    }
    for n in 0..3 {
        next_door.tell(Neighbour::Ping(n, pongs.actor_ref().clone()));
        assert_eq!(pongs.expect_message(SECOND).await, Seen::Pong(n));
    }

    for ((mut probe, first, mut second), n) in held.into_iter().zip(0_u64..) {
        first.release(100 + n);
        assert_eq!(probe.expect_message(SECOND).await, Seen::Got(Ok(100 + n)));
        second.entered().await;
        second.release(200 + n);
        assert_eq!(second.finished().await, Ok(200 + n));
        assert_eq!(probe.expect_message(SECOND).await, Seen::Got(Ok(200 + n)));
    }
}

// S33: two actors hold both workers' worth of threads in `run_blocking`; the
// neighbour keeps ticking and answering.
#[tapio::test(worker_threads = 2)]
async fn s33_a_neighbour_keeps_running_on_two_workers(system: ActorSystem) {
    neighbour_keeps_running_beside(&system, 2).await;
}

// S33: on a current-thread runtime, where a call made on the actor's thread would
// stop everything, the neighbour keeps ticking and answering.
#[tapio::test]
async fn s33_a_neighbour_keeps_running_on_the_current_thread(system: ActorSystem) {
    neighbour_keeps_running_beside(&system, 1).await;
}

/// A stop while the actor waits for its call: it stops at once, sees `PostStop`,
/// and never handles the call's value, which the call still returns on the pool.
async fn stop_while_waiting(system: &ActorSystem) {
    let mut probe = TestProbe::<Seen>::new(system);
    let actor = system
        .spawn(blocker(probe.actor_ref().clone()), "blocker")
        .unwrap();
    probe.watch(&actor);
    let (call, mut lever) = gate();
    actor.tell(Block(call));
    lever.entered().await;

    system.stop(&actor).unwrap();
    // The call still holds its thread: the stop did not wait for it.
    assert_eq!(probe.expect_message(SECOND).await, Seen::PostStop);
    probe.expect_terminated(&actor, SECOND).await;

    lever.release(7);
    assert_eq!(lever.finished().await, Ok(7));
    probe.expect_no_message(Duration::from_millis(50)).await;
}

// S33: a stop interrupts the handler that awaits the call; the value is discarded.
#[tapio::test]
async fn s33_a_stop_while_waiting_stops_the_actor_on_the_current_thread(system: ActorSystem) {
    stop_while_waiting(&system).await;
}

// S33: the same on two workers.
#[tapio::test(worker_threads = 2)]
async fn s33_a_stop_while_waiting_stops_the_actor_on_two_workers(system: ActorSystem) {
    stop_while_waiting(&system).await;
}

#[message]
pub struct Explode(pub bool);

/// Panics in the pool on `Explode(true)`, with `?` on the result; reports each
/// start. Restarted on a panic.
fn exploding(to: ActorRef<Seen>) -> Behavior<Explode> {
    Behaviors::supervise(Behaviors::setup(move |_| {
        to.tell(Seen::Started);
        let to = to.clone();
        Behaviors::receive_async(
            async move |ctx, Explode(really): Explode| -> Result<_, Failure> {
                let n = ctx
                    .run_blocking(move || {
                        if really {
                            panic!("boom in the pool");
                        }
                        7
                    })
                    .await?;
                to.tell(Seen::Got(Ok(n)));
                Ok(Behaviors::same())
            },
        )
    }))
    .on_failure::<Panicked>(SupervisorStrategy::restart())
    .into()
}

// S33: a panic in the call is the actor's failure, which `?` hands to supervision:
// restarted on `Panicked`, the actor then works again.
#[tapio::test]
async fn s33_a_panic_in_the_call_is_the_actors_failure(system: ActorSystem) {
    let mut probe = TestProbe::<Seen>::new(&system);
    let actor = system
        .spawn(exploding(probe.actor_ref().clone()), "exploding")
        .unwrap();
    assert_eq!(probe.expect_message(SECOND).await, Seen::Started);
    actor.tell(Explode(true));
    assert_eq!(probe.expect_message(SECOND).await, Seen::Started);
    actor.tell(Explode(false));
    assert_eq!(probe.expect_message(SECOND).await, Seen::Got(Ok(7)));
}

// S33: the handler that looks at the result instead of `?` sees the panic as a
// `Panicked` failure with the panic's message.
#[tapio::test]
async fn s33_a_panic_in_the_call_is_a_panicked_failure(system: ActorSystem) {
    let mut probe = TestProbe::<Seen>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |ctx, _: u64| {
                let outcome = ctx
                    .run_blocking(|| -> u64 { panic!("boom in the pool") })
                    .await;
                let report = match outcome {
                    Ok(n) => Seen::Got(Ok(n)),
                    Err(failure) => match failure.downcast_ref::<Panicked>() {
                        Some(panicked) => Seen::Failed(panicked.message.clone()),
                        None => Seen::Failed(format!("not a panic: {failure}")),
                    },
                };
                to.tell(report);
            }),
            "careful",
        )
        .unwrap();
    actor.tell(1);
    assert_eq!(
        probe.expect_message(SECOND).await,
        Seen::Failed("boom in the pool".into())
    );
}

#[message(reply = u64)]
pub struct Checksum(pub Vec<u8>);

#[derive(Clone, Default)]
pub struct Hasher {
    answered: u64,
}

#[actor]
impl Hasher {
    async fn checksum(
        &mut self,
        ctx: &mut Ctx<Self>,
        Checksum(bytes): Checksum,
    ) -> Result<u64, Failure> {
        let call = ctx.run_blocking(move || bytes.iter().map(|&b| u64::from(b)).sum::<u64>());
        // The future borrows nothing: the context is free while the call runs.
        let _ = ctx.path();
        let sum = call.await?;
        self.answered += 1;
        Ok(sum + self.answered)
    }
}

// S33: the call's value reaches the handler (an `async fn` of an `#[actor]`), on
// either runtime.
#[tapio::test]
async fn s33_the_value_reaches_the_handler(system: ActorSystem) {
    let hasher = system.spawn(Hasher::default(), "hasher").unwrap();
    let sum = hasher.ask(Checksum(vec![1, 2, 3])).timeout(SECOND).await;
    assert_eq!(sum, Ok(7));
    let sum = hasher.ask(Checksum(vec![10])).timeout(SECOND).await;
    assert_eq!(sum, Ok(12));
}

#[tapio::test(worker_threads = 2)]
async fn s33_the_value_reaches_the_handler_on_two_workers(system: ActorSystem) {
    let hasher = system.spawn(Hasher::default(), "hasher").unwrap();
    let sum = hasher.ask(Checksum(vec![1, 2, 3])).timeout(SECOND).await;
    assert_eq!(sum, Ok(7));
}

/// Doubles its message in `run_blocking` and keeps the result.
fn doubler(last: Arc<AtomicU64>) -> Behavior<u64> {
    Behaviors::receive_async(async move |ctx, n: u64| -> Result<_, Failure> {
        let doubled = ctx.run_blocking(move || n * 2).await?;
        last.store(doubled, Ordering::SeqCst);
        Ok(Behaviors::same())
    })
    .into()
}

// A `BehaviorTestKit` used outside any runtime has nowhere to run the call: the
// handler gets `BlockingError::NoRuntime`, whose message says what to do.
#[test]
fn without_a_runtime_the_call_is_refused_with_a_typed_error() {
    let last = Arc::new(AtomicU64::new(0));
    let mut kit = BehaviorTestKit::new(doubler(last.clone()));
    let failure = kit.run(21_u64).unwrap_err();
    assert_eq!(
        failure.downcast_ref::<BlockingError>(),
        Some(&BlockingError::NoRuntime)
    );
    assert!(failure.to_string().contains("run_async"), "{failure}");
    assert_eq!(last.load(Ordering::SeqCst), 0);
}

// Inside a runtime, the kit's `run_async` runs the call on that runtime's pool.
#[tokio::test]
async fn a_behavior_test_kit_runs_the_call_with_run_async() {
    let last = Arc::new(AtomicU64::new(0));
    let mut kit = BehaviorTestKit::new(doubler(last.clone()));
    let outcome = timeout(SECOND, kit.run_async(21_u64)).await.unwrap();
    assert_eq!(outcome, Ok(Outcome::Same));
    assert_eq!(last.load(Ordering::SeqCst), 42);
}
