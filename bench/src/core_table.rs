//! The core benchmark: each workload on tapio next to the same work on raw tokio tasks
//! and channels, measured in the same run, on a 2-worker multi-thread runtime and on a
//! current-thread runtime; for ask and skynet, actix too.
//!
//! - tell: throughput of tells to one actor (raw: an unbounded mpsc to a task);
//! - contended: four producer tasks telling one actor at once, a quarter of the
//!   messages each (raw: four clones of one unbounded sender to a task);
//! - bounded: offer, 1,000,000 messages offered (each awaited) to an actor whose
//!   mailbox holds 1,024 (raw: `send().await` on `mpsc::channel(1024)`); bnd paced
//!   and bnd flood, 1,000,000 tells to an actor whose mailbox holds 1,024 and drops
//!   what comes when it is full (`DropNew`), from a producer that tells 512 at a
//!   time and waits until they are handled (the consumer keeps up, nothing dropped)
//!   or tells them all at once (on one thread the consumer cannot run meanwhile: all
//!   but 1,024 are dropped), timed until the actor has handled an offered last
//!   message; the dropped ones (dead letters, counted as told less handled) are in
//!   the last column (raw: `try_send`, a full channel's number dropped);
//! - fairness: on the current-thread runtime, an actor drains a backlog of 1,000,000
//!   messages while a neighbour task loops on `yield_now`; the neighbour's longest
//!   wait between two of its runs, and the most messages drained in one wait (raw: a
//!   task draining an unbounded channel). A single long wait is what the OS or the
//!   machine's other load does as much as the drainer: the drained count is the
//!   steadier figure. Not on 2 workers, where the other worker runs the neighbour;
//! - ping-pong: round trips between two actors that tell each other;
//! - ask: sequential request/reply from a plain task, outside any actor (raw: an mpsc
//!   to a task that answers through a oneshot; actix: `Addr::send`);
//! - spawn and memory: 100,000 idle actors, each in a child process of its own;
//! - memory+1msg: the same 100,000 actors, each told one message, once every one
//!   has handled it (raw: 100,000 tasks, each sent one number on its unbounded
//!   channel); memory+burst: the same 100,000 actors, each told a burst of 1,000
//!   messages, ten actors at a time, measured once all have handled theirs and gone
//!   idle (raw: the same through unbounded channels); both in child processes, with
//!   `core memory` (not `spawn`). The burst row counted 10,000 actors until
//!   December 2026: the heap the ten mailboxes in flight had grown (about 1 MB) was
//!   then a tenth of each actor's figure, where it is a hundredth of the other rows';
//!   a hundred million tells take tapio 2 s and raw tokio 3 s;
//! - stop: terminating a system of 100,000 idle actors, until all have ended (raw:
//!   100,000 idle tasks, each told to end through its channel, all awaited);
//! - skynet: a tree of 1,111,111 actors, 10 children each down to 1,000,000 leaves; the
//!   leaves report their number, the sums flow up to the root;
//! - dead letters: tells to a stopped actor nobody subscribes to dead letters for
//!   (raw: `UnboundedSender::send` to a closed channel);
//! - wire and state: see `wire_state` (their baselines are postcard alone and a
//!   plain `#[actor]`).
//!
//! Run it with `cargo run --release --manifest-path bench/Cargo.toml`. Every figure
//! is the median of several runs after a warm-up; tell, contended, ping-pong, ask,
//! skynet, wire and state run the baseline and tapio (and on one thread skynet's
//! actix) in interleaved rounds, so a slow stretch of the machine or a heap another run left
//! behind falls on each alike. The table at the end gives each framework's ratio
//! to the raw baseline and the goals of issues 7 and 8 (issue 8's, for the mailbox:
//! tell <= 0.8x, contended <= 0.6x, ping-pong <= 0.9x, memory+1msg and memory+burst
//! <= 773 B, xtra's figure; bounded and fairness have none, and show what was
//! dropped or drained instead). actix runs its actors on a single-threaded arbiter
//! (its own `System` on a current-thread runtime): it has no place on the 2-worker
//! row, which shows a dash for it.
//!
//! `core spawn-child <raw|tapio> <mt|ct>` is the child process the spawn measurement
//! starts; it prints `nanos_per_spawn nanos_until_started bytes_per_actor`.
//! `core memory-child <raw|tapio> <one|burst> <mt|ct>` is the memory+1msg or
//! memory+burst one; it prints `bytes_per_actor`.
//! `core profile <workload> <mt|ct>` runs one workload many times, for a profiler.

use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tapio::{
    Actor, ActorContext, ActorRef, ActorSystem, Behavior, Behaviors, Handled, MailboxConfig,
    OverflowStrategy, Protocol, Signal, actor, message,
};
use tokio::sync::{Notify, mpsc, oneshot};

use crate::harness::{Flavor, in_task, resident_bytes, wait_for};

pub const TELLS: u64 = 1_000_000;
/// The producers that share the contended tells, `TELLS / PRODUCERS` each.
const PRODUCERS: u64 = 4;
/// The capacity of the bounded mailboxes and channels.
const BOUND: usize = 1024;
/// The backlog an actor drains while a neighbour waits for the thread.
const BACKLOG: u64 = 1_000_000;
const ROUND_TRIPS: u64 = 100_000;
pub const SPAWNS: usize = 100_000;
/// The memory after a burst: `BURST_ACTORS` actors, as many as the other memory
/// rows count, each told `BURST` messages, `BURST_WAVE` actors at a time, each wave
/// handled before the next is told, so that what is measured is what each actor
/// keeps, not how much of the peak the allocator keeps.
const BURST_ACTORS: usize = SPAWNS;
const BURST: u64 = 1_000;
const BURST_WAVE: usize = 10;
pub const ASKS: u64 = 100_000;
const STOPS: usize = 100_000;
/// Skynet's leaves: 10 children per actor, six levels down.
pub const SKYNET_LEAVES: u64 = 1_000_000;
/// Skynet's actors: the leaves and every level above them.
pub const SKYNET_ACTORS: u64 = 1_111_111;
const DEAD_LETTERS: u64 = 1_000_000;
const RUNS: usize = 7;
/// For the workloads that take a second or so a run: stop and skynet.
const HEAVY_RUNS: usize = 3;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The median of `runs` runs of `work` on a fresh runtime, after one warm-up run.
fn measure(
    flavor: Flavor,
    runs: usize,
    work: impl Fn(&tokio::runtime::Runtime) -> Duration,
) -> Duration {
    let runtime = flavor.runtime();
    work(&runtime); // warm-up
    median((0..runs).map(|_| work(&runtime)).collect())
}

/// As `measure` for several frameworks' `works` at once, in rounds: a warm-up of
/// each, then `runs` rounds running each once in turn (issue 15's method). Skynet
/// measured one framework after another gave the first a fresh heap and the next
/// one the first's leavings: raw tokio, measured first, took 499 ns an actor there
/// and 1,154 when interleaved with the peers. The median of each.
fn measure_interleaved<const N: usize>(
    runs: usize,
    works: [&dyn Fn() -> Duration; N],
) -> [Duration; N] {
    for work in works {
        work(); // warm-up
    }
    let mut taken: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(runs));
    for _ in 0..runs {
        for (work, taken) in works.iter().zip(taken.iter_mut()) {
            taken.push(work());
        }
    }
    taken.map(median)
}

/// Raw tokio's `raw` and tapio's `ours`, each on a runtime of its own, measured in
/// interleaved rounds (`measure_interleaved`): a run of one after a run of the
/// other, so a slow stretch of the machine falls on both.
fn measure_pair(
    flavor: Flavor,
    runs: usize,
    raw: impl Fn(&tokio::runtime::Runtime) -> Duration,
    ours: impl Fn(&tokio::runtime::Runtime) -> Duration,
) -> (Duration, Duration) {
    let (raw_rt, ours_rt) = (flavor.runtime(), flavor.runtime());
    let [raw, ours] = measure_interleaved(runs, [&|| raw(&raw_rt), &|| ours(&ours_rt)]);
    (raw, ours)
}

/// As `measure`, for work that also counts something: the median duration and the
/// median count, each over the runs.
fn measure_counted(
    flavor: Flavor,
    runs: usize,
    work: impl Fn(&tokio::runtime::Runtime) -> (Duration, u64),
) -> (Duration, u64) {
    let runtime = flavor.runtime();
    work(&runtime); // warm-up
    let (durations, mut counts): (Vec<Duration>, Vec<u64>) =
        (0..runs).map(|_| work(&runtime)).unzip();
    counts.sort_unstable();
    (median(durations), counts[counts.len() / 2])
}

/// As `measure`, for actix: its own `System` on a current-thread runtime, and `work`
/// in a task of its own, as `in_task` runs the others.
fn measure_actix<F>(runs: usize, work: impl Fn() -> F) -> Duration
where
    F: Future<Output = Duration> + 'static,
{
    let system = actix::System::new();
    let run = || {
        system
            .block_on(async { actix::spawn(work()).await })
            .expect("the measured task finished")
    };
    run(); // warm-up
    median((0..runs).map(|_| run()).collect())
}

// ---------------------------------------------------------------- tell throughput

async fn tell_raw() -> Duration {
    let (tx, mut rx) = mpsc::unbounded_channel::<u64>();
    let done = Arc::new(Notify::new());
    let finished = done.clone();
    tokio::spawn(async move {
        let mut sum = 0_u64;
        let mut seen = 0_u64;
        while let Some(n) = rx.recv().await {
            sum = sum.wrapping_add(n);
            seen += 1;
            if seen == TELLS {
                std::hint::black_box(sum);
                finished.notify_one();
            }
        }
    });
    let start = Instant::now();
    for n in 0..TELLS {
        let _ = tx.send(n);
    }
    done.notified().await;
    start.elapsed()
}

/// An actor that sums the `u64`s it is told, and says so once it has seen `until`.
struct Summer {
    sum: u64,
    seen: u64,
    until: u64,
    done: Arc<Notify>,
}

impl Protocol for Summer {
    type Msg = u64;
}

impl Actor for Summer {
    fn handle<'a>(&'a mut self, _: &'a mut ActorContext<u64>, n: u64) -> Handled<'a, u64> {
        self.sum = self.sum.wrapping_add(n);
        self.seen += 1;
        if self.seen == self.until {
            std::hint::black_box(self.sum);
            self.done.notify_one();
        }
        Handled::ready(())
    }
}

/// A `Summer` that notifies `done` once it has seen `until` messages.
fn summer(until: u64, done: &Arc<Notify>) -> Behavior<u64> {
    let done = done.clone();
    Behaviors::setup(move |_| Summer {
        sum: 0,
        seen: 0,
        until,
        done: done.clone(),
    })
}

async fn tell_tapio() -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let done = Arc::new(Notify::new());
    let summer: ActorRef<u64> = system
        .spawn(summer(TELLS, &done), "summer")
        .expect("spawned");
    let start = Instant::now();
    for n in 0..TELLS {
        summer.tell(n);
    }
    done.notified().await;
    let elapsed = start.elapsed();
    system.terminate().await;
    elapsed
}

// ---------------------------------------------------------------- contended tell

/// A task that sums what comes on its unbounded channel and notifies `done` once it
/// has seen `until` numbers.
/// What a raw summer task keeps: the sum, how many it has seen, and when to say so.
struct RawSums {
    sum: u64,
    seen: u64,
    until: u64,
    finished: Arc<Notify>,
}

impl RawSums {
    fn new(until: u64, finished: Arc<Notify>) -> Self {
        Self {
            sum: 0,
            seen: 0,
            until,
            finished,
        }
    }

    fn add(&mut self, n: u64) {
        self.sum = self.sum.wrapping_add(n);
        self.seen += 1;
        if self.seen == self.until {
            std::hint::black_box(self.sum);
            self.finished.notify_one();
        }
    }
}

fn raw_summer(until: u64, done: &Arc<Notify>) -> mpsc::UnboundedSender<u64> {
    let (tx, mut rx) = mpsc::unbounded_channel::<u64>();
    let finished = done.clone();
    tokio::spawn(async move {
        let mut sums = RawSums::new(until, finished);
        while let Some(n) = rx.recv().await {
            sums.add(n);
        }
    });
    tx
}

/// `PRODUCERS` tasks, each with a clone of one unbounded sender, each sending
/// `TELLS / PRODUCERS` numbers at once, to one task.
async fn contended_raw() -> Duration {
    let done = Arc::new(Notify::new());
    let tx = raw_summer(TELLS, &done);
    let start = Instant::now();
    for _ in 0..PRODUCERS {
        let tx = tx.clone();
        tokio::spawn(async move {
            for n in 0..TELLS / PRODUCERS {
                let _ = tx.send(n);
            }
        });
    }
    done.notified().await;
    start.elapsed()
}

/// As `contended_raw`: `PRODUCERS` tasks, each with a clone of one actor's ref.
async fn contended_tapio() -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let done = Arc::new(Notify::new());
    let summer: ActorRef<u64> = system
        .spawn(summer(TELLS, &done), "summer")
        .expect("spawned");
    let start = Instant::now();
    for _ in 0..PRODUCERS {
        let summer = summer.clone();
        tokio::spawn(async move {
            for n in 0..TELLS / PRODUCERS {
                summer.tell(n);
            }
        });
    }
    done.notified().await;
    let elapsed = start.elapsed();
    system.terminate().await;
    elapsed
}

// ---------------------------------------------------------------- fairness

/// A neighbour on the thread: a task that yields (`yield_now`) in a loop until
/// `stop`. Returns the longest time it waited between two of its runs, and the most
/// messages the drainer handled (it stores its count in `drained`) in such a wait.
fn ticker(
    stop: &Arc<AtomicBool>,
    drained: &Arc<AtomicU64>,
) -> tokio::task::JoinHandle<(Duration, u64)> {
    let stop = stop.clone();
    let drained = drained.clone();
    tokio::spawn(async move {
        let mut longest = Duration::ZERO;
        let mut most = 0;
        let mut last = Instant::now();
        let mut last_drained = drained.load(Ordering::Relaxed);
        while !stop.load(Ordering::Acquire) {
            tokio::task::yield_now().await;
            let now = Instant::now();
            let now_drained = drained.load(Ordering::Relaxed);
            longest = longest.max(now - last);
            most = most.max(now_drained - last_drained);
            last = now;
            last_drained = now_drained;
        }
        (longest, most)
    })
}

/// A task draining a backlog of `BACKLOG` numbers on an unbounded channel, next to
/// a ticker: the ticker's longest wait, and the most messages drained in a wait.
async fn fairness_raw() -> (Duration, u64) {
    let (tx, mut rx) = mpsc::unbounded_channel::<u64>();
    let drained = Arc::new(AtomicU64::new(0));
    let done = Arc::new(Notify::new());
    let (count, finished) = (drained.clone(), done.clone());
    tokio::spawn(async move {
        let mut sum = 0_u64;
        let mut seen = 0_u64;
        while let Some(n) = rx.recv().await {
            sum = sum.wrapping_add(n);
            seen += 1;
            count.store(seen, Ordering::Relaxed);
            if seen == BACKLOG {
                std::hint::black_box(sum);
                finished.notify_one();
            }
        }
    });
    for n in 0..BACKLOG {
        let _ = tx.send(n);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let ticker = ticker(&stop, &drained);
    done.notified().await;
    stop.store(true, Ordering::Release);
    ticker.await.expect("the ticker ran")
}

/// Sums what it is told, as `Summer`, and shows its count to the ticker.
struct Drainer {
    sum: u64,
    seen: u64,
    drained: Arc<AtomicU64>,
    done: Arc<Notify>,
}

impl Protocol for Drainer {
    type Msg = u64;
}

impl Actor for Drainer {
    fn handle<'a>(&'a mut self, _: &'a mut ActorContext<u64>, n: u64) -> Handled<'a, u64> {
        self.sum = self.sum.wrapping_add(n);
        self.seen += 1;
        self.drained.store(self.seen, Ordering::Relaxed);
        if self.seen == BACKLOG {
            std::hint::black_box(self.sum);
            self.done.notify_one();
        }
        Handled::ready(())
    }
}

/// As `fairness_raw`, for an actor draining its mailbox.
async fn fairness_tapio() -> (Duration, u64) {
    let system = ActorSystem::new("bench").expect("a system");
    let drained = Arc::new(AtomicU64::new(0));
    let done = Arc::new(Notify::new());
    let (count, finished) = (drained.clone(), done.clone());
    let drainer: ActorRef<u64> = system
        .spawn(
            Behaviors::setup(move |_| Drainer {
                sum: 0,
                seen: 0,
                drained: count.clone(),
                done: finished.clone(),
            }),
            "drainer",
        )
        .expect("spawned");
    for n in 0..BACKLOG {
        drainer.tell(n);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let ticker = ticker(&stop, &drained);
    done.notified().await;
    stop.store(true, Ordering::Release);
    let waits = ticker.await.expect("the ticker ran");
    system.terminate().await;
    waits
}

// ---------------------------------------------------------------- bounded mailboxes

/// A task that sums what comes on a bounded channel, as `raw_summer`.
fn raw_bounded_summer(until: u64, done: &Arc<Notify>) -> mpsc::Sender<u64> {
    let (tx, mut rx) = mpsc::channel::<u64>(BOUND);
    let finished = done.clone();
    tokio::spawn(async move {
        let mut sums = RawSums::new(until, finished);
        while let Some(n) = rx.recv().await {
            sums.add(n);
        }
    });
    tx
}

/// `TELLS` numbers through a channel of `BOUND`, each `send` awaited.
async fn offer_raw() -> Duration {
    let done = Arc::new(Notify::new());
    let tx = raw_bounded_summer(TELLS, &done);
    let start = Instant::now();
    for n in 0..TELLS {
        let _ = tx.send(n).await;
    }
    done.notified().await;
    start.elapsed()
}

fn bounded_mailbox() -> MailboxConfig {
    MailboxConfig::bounded(BOUND, OverflowStrategy::DropNew).expect("a valid capacity")
}

/// As `offer_raw`: `TELLS` offers, each awaited, to an actor whose mailbox holds
/// `BOUND`.
async fn offer_tapio() -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let done = Arc::new(Notify::new());
    let summer: ActorRef<u64> = system
        .spawn_with(summer(TELLS, &done), "summer", bounded_mailbox())
        .expect("spawned");
    let start = Instant::now();
    for n in 0..TELLS {
        let _ = summer.offer(n).await;
    }
    done.notified().await;
    let elapsed = start.elapsed();
    system.terminate().await;
    elapsed
}

/// The last message of a bounded tell run: the consumer reports what it handled.
const END: u64 = u64::MAX;

/// Paced, the producer tells this many (half the bound), then waits until the
/// consumer has handled them: a consumer that keeps up, on either runtime.
const PACE: u64 = 512;

/// `TELLS` numbers through a channel of `BOUND` with `try_send`, a full channel's
/// number dropped (as `DropNew` does); `paced`: `PACE` at a time, each lot handled
/// before the next. Then `END`, awaited. The time until the consumer has seen it, and
/// how many were dropped.
async fn bounded_tell_raw(paced: bool) -> (Duration, u64) {
    let (tx, mut rx) = mpsc::channel::<u64>(BOUND);
    let (report, handled) = oneshot::channel();
    let window = Arc::new(Notify::new());
    let caught_up = window.clone();
    tokio::spawn(async move {
        let mut seen = 0_u64;
        while let Some(n) = rx.recv().await {
            if n == END {
                let _ = report.send(seen);
                break;
            }
            std::hint::black_box(n);
            seen += 1;
            if seen.is_multiple_of(PACE) {
                caught_up.notify_one();
            }
        }
    });
    let start = Instant::now();
    for n in 0..TELLS {
        let _ = tx.try_send(n);
        if paced && n % PACE == PACE - 1 {
            window.notified().await;
        }
    }
    let _ = tx.send(END).await;
    let handled = handled.await.expect("a count");
    (start.elapsed(), TELLS - handled)
}

/// Counts what it handles until `END`, and reports the count; notifies `window`
/// every `PACE`.
struct Tally {
    seen: u64,
    window: Arc<Notify>,
    report: Option<oneshot::Sender<u64>>,
}

impl Protocol for Tally {
    type Msg = u64;
}

impl Actor for Tally {
    fn handle<'a>(&'a mut self, _: &'a mut ActorContext<u64>, n: u64) -> Handled<'a, u64> {
        if n == END {
            if let Some(report) = self.report.take() {
                let _ = report.send(self.seen);
            }
        } else {
            std::hint::black_box(n);
            self.seen += 1;
            if self.seen.is_multiple_of(PACE) {
                self.window.notify_one();
            }
        }
        Handled::ready(())
    }
}

/// As `bounded_tell_raw`, with tells to an actor whose mailbox holds `BOUND` and
/// drops what comes when it is full (`DropNew`): each one dropped is a dead letter
/// (nobody subscribes to them), counted as told less handled. `END` is offered.
async fn bounded_tell_tapio(paced: bool) -> (Duration, u64) {
    let system = ActorSystem::new("bench").expect("a system");
    let (report, handled) = oneshot::channel();
    let report = std::sync::Mutex::new(Some(report));
    let window = Arc::new(Notify::new());
    let caught_up = window.clone();
    let tally: ActorRef<u64> = system
        .spawn_with(
            Behaviors::setup(move |_| Tally {
                seen: 0,
                window: caught_up.clone(),
                report: report.lock().ok().and_then(|mut r| r.take()),
            }),
            "tally",
            bounded_mailbox(),
        )
        .expect("spawned");
    let start = Instant::now();
    for n in 0..TELLS {
        tally.tell(n);
        if paced && n % PACE == PACE - 1 {
            window.notified().await;
        }
    }
    let _ = tally.offer(END).await;
    let handled = handled.await.expect("a count");
    let elapsed = start.elapsed();
    system.terminate().await;
    (elapsed, TELLS - handled)
}

// ---------------------------------------------------------------- ping-pong

async fn ping_pong_raw() -> Duration {
    let (to_pong, mut pong_rx) = mpsc::unbounded_channel::<u64>();
    let (to_ping, mut ping_rx) = mpsc::unbounded_channel::<u64>();
    tokio::spawn(async move {
        while let Some(n) = pong_rx.recv().await {
            let _ = to_ping.send(n);
        }
    });
    let done = Arc::new(Notify::new());
    let finished = done.clone();
    let start_tx = to_pong.clone();
    tokio::spawn(async move {
        while let Some(n) = ping_rx.recv().await {
            if n == ROUND_TRIPS {
                finished.notify_one();
                break;
            }
            let _ = to_pong.send(n + 1);
        }
    });
    let start = Instant::now();
    let _ = start_tx.send(1);
    done.notified().await;
    start.elapsed()
}

/// Ping and pong each hold the other's ref, as the two raw tasks hold each other's
/// sender: a round trip is two tells and two wake-ups on both sides.
async fn ping_pong_tapio() -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let done = Arc::new(Notify::new());
    let finished = done.clone();
    let ping_ref: Arc<OnceLock<ActorRef<u64>>> = Arc::new(OnceLock::new());
    let partner = ping_ref.clone();
    let pong: ActorRef<u64> = system
        .spawn(
            Behaviors::receive_message(move |n: u64| {
                if let Some(ping) = partner.get() {
                    ping.tell(n);
                }
            }),
            "pong",
        )
        .expect("spawned");
    let table = pong.clone();
    let ping: ActorRef<u64> = system
        .spawn(
            Behaviors::receive_message(move |n: u64| {
                if n == ROUND_TRIPS {
                    finished.notify_one();
                    return Behaviors::stopped();
                }
                table.tell(n + 1);
                Behaviors::same()
            }),
            "ping",
        )
        .expect("spawned");
    let _ = ping_ref.set(ping);
    let start = Instant::now();
    pong.tell(1_u64);
    done.notified().await;
    let elapsed = start.elapsed();
    system.terminate().await;
    elapsed
}

// ---------------------------------------------------------------- spawning

/// Spawning `SPAWNS` idle tasks: the time to spawn them all, the time until every
/// one has also run its start, and the resident bytes each costs.
async fn spawn_raw() -> (Duration, Duration, usize) {
    let started = Arc::new(AtomicUsize::new(0));
    let before = resident_bytes();
    let start = Instant::now();
    let mut senders = Vec::with_capacity(SPAWNS);
    for _ in 0..SPAWNS {
        let (tx, mut rx) = mpsc::unbounded_channel::<u64>();
        let started = started.clone();
        tokio::spawn(async move {
            started.fetch_add(1, Ordering::AcqRel);
            while rx.recv().await.is_some() {}
        });
        senders.push(tx);
    }
    let elapsed = start.elapsed();
    wait_for(&started, SPAWNS).await;
    let running = start.elapsed();
    let bytes = resident_bytes().saturating_sub(before) / SPAWNS;
    drop(senders);
    (elapsed, running, bytes)
}

/// As `spawn_raw`, for idle actors whose setup counts their start.
async fn spawn_tapio() -> (Duration, Duration, usize) {
    let system = ActorSystem::new("bench").expect("a system");
    let started = Arc::new(AtomicUsize::new(0));
    let counter = started.clone();
    let idle: tapio::Behavior<u64> = Behaviors::setup(move |_| {
        counter.fetch_add(1, Ordering::AcqRel);
        Behaviors::ignore()
    });
    let before = resident_bytes();
    let start = Instant::now();
    let mut refs = Vec::with_capacity(SPAWNS);
    for _ in 0..SPAWNS {
        refs.push(system.spawn_anonymous(idle.clone()).expect("spawned"));
    }
    let elapsed = start.elapsed();
    wait_for(&started, SPAWNS).await;
    let running = start.elapsed();
    let bytes = resident_bytes().saturating_sub(before) / SPAWNS;
    drop(refs);
    system.terminate().await;
    (elapsed, running, bytes)
}

fn spawn_child(kind: String, flavor: &str) {
    let flavor = if flavor == "ct" {
        Flavor::CurrentThread
    } else {
        Flavor::MultiThread
    };
    let runtime = flavor.runtime();
    // Spawned from inside a task, as an actor (or setup code) spawns its children:
    // on the multi-thread runtime, a spawn from outside the workers pays for the
    // shared injection queue and for waking a worker, whatever is being spawned.
    let (elapsed, running, bytes) = in_task(&runtime, async move {
        if kind == "raw" {
            spawn_raw().await
        } else {
            spawn_tapio().await
        }
    });
    println!(
        "{} {} {}",
        elapsed.as_nanos() / SPAWNS as u128,
        running.as_nanos() / SPAWNS as u128,
        bytes
    );
}

/// Spawn nanoseconds, spawn-and-start nanoseconds and bytes per actor, the median of
/// three child processes (by spawn time).
fn spawn_in_child(kind: &str, flavor: Flavor) -> (u64, u64, u64) {
    let exe = std::env::current_exe().expect("the bench's own path");
    let mut runs: Vec<(u64, u64, u64)> = (0..3)
        .map(|_| {
            let out = Command::new(&exe)
                .args(["spawn-child", kind, flavor.arg()])
                .output()
                .expect("the child ran");
            let text = String::from_utf8_lossy(&out.stdout);
            let mut fields = text
                .split_whitespace()
                .map(|f| f.parse::<u64>().unwrap_or(0));
            (
                fields.next().unwrap_or(0),
                fields.next().unwrap_or(0),
                fields.next().unwrap_or(0),
            )
        })
        .collect();
    runs.sort();
    runs[runs.len() / 2]
}

// ---------------------------------------------------------------- memory after traffic

/// Counts the messages handled by every actor (or task) of a memory run, and
/// notifies `done` when the count reaches `target`.
struct HandledCount {
    count: AtomicU64,
    target: AtomicU64,
    done: Notify,
}

impl HandledCount {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            count: AtomicU64::new(0),
            target: AtomicU64::new(u64::MAX),
            done: Notify::new(),
        })
    }

    fn one(&self) {
        let count = self.count.fetch_add(1, Ordering::AcqRel) + 1;
        if count == self.target.load(Ordering::Acquire) {
            self.done.notify_one();
        }
    }

    /// Tell every one of `receivers` `per_receiver` messages with `send`, `wave`
    /// receivers at a time, waiting until a wave has handled all of its messages
    /// before the next one is told.
    async fn tell_in_waves<R>(
        &self,
        receivers: &[R],
        per_receiver: u64,
        wave: usize,
        send: impl Fn(&R, u64),
    ) {
        let mut told = 0_u64;
        for chunk in receivers.chunks(wave) {
            told += chunk.len() as u64 * per_receiver;
            self.target.store(told, Ordering::Release);
            for receiver in chunk {
                for n in 0..per_receiver {
                    send(receiver, n);
                }
            }
            self.done.notified().await;
        }
    }
}

/// The resident bytes each of `tasks` idle tasks costs once each has received
/// `per_task` messages through its unbounded channel and gone idle again.
async fn memory_raw(tasks: usize, per_task: u64, wave: usize) -> usize {
    let handled = HandledCount::new();
    let before = resident_bytes();
    let mut senders = Vec::with_capacity(tasks);
    for _ in 0..tasks {
        let (tx, mut rx) = mpsc::unbounded_channel::<u64>();
        let handled = handled.clone();
        tokio::spawn(async move {
            while let Some(n) = rx.recv().await {
                std::hint::black_box(n);
                handled.one();
            }
        });
        senders.push(tx);
    }
    handled
        .tell_in_waves(&senders, per_task, wave, |tx, n| {
            let _ = tx.send(n);
        })
        .await;
    let bytes = resident_bytes().saturating_sub(before) / tasks;
    drop(senders);
    bytes
}

/// Counts what it is told.
struct Counted(Arc<HandledCount>);

impl Protocol for Counted {
    type Msg = u64;
}

impl Actor for Counted {
    fn handle<'a>(&'a mut self, _: &'a mut ActorContext<u64>, n: u64) -> Handled<'a, u64> {
        std::hint::black_box(n);
        self.0.one();
        Handled::ready(())
    }
}

/// As `memory_raw`, for actors with an unbounded mailbox.
async fn memory_tapio(actors: usize, per_actor: u64, wave: usize) -> usize {
    let system = ActorSystem::new("bench").expect("a system");
    let handled = HandledCount::new();
    let counter = handled.clone();
    let counted: Behavior<u64> = Behaviors::setup(move |_| Counted(counter.clone()));
    let before = resident_bytes();
    let mut refs = Vec::with_capacity(actors);
    for _ in 0..actors {
        refs.push(system.spawn_anonymous(counted.clone()).expect("spawned"));
    }
    handled
        .tell_in_waves(&refs, per_actor, wave, |actor, n| actor.tell(n))
        .await;
    let bytes = resident_bytes().saturating_sub(before) / actors;
    drop(refs);
    system.terminate().await;
    bytes
}

/// `core memory-child <raw|tapio> <one|burst> <mt|ct>`: prints the bytes per actor
/// after one message each (`SPAWNS` actors, all told at once), or after a burst of
/// `BURST` each (`BURST_ACTORS` actors, `BURST_WAVE` at a time).
fn memory_child(kind: &str, traffic: &str, flavor: &str) {
    let flavor = if flavor == "ct" {
        Flavor::CurrentThread
    } else {
        Flavor::MultiThread
    };
    let runtime = flavor.runtime();
    let (actors, per_actor, wave) = if traffic == "burst" {
        (BURST_ACTORS, BURST, BURST_WAVE)
    } else {
        (SPAWNS, 1, SPAWNS)
    };
    let bytes = if kind == "raw" {
        in_task(&runtime, memory_raw(actors, per_actor, wave))
    } else {
        in_task(&runtime, memory_tapio(actors, per_actor, wave))
    };
    println!("{bytes}");
}

/// Bytes per actor after `traffic` (`one` or `burst`), the median of three child
/// processes.
fn memory_in_child(kind: &str, traffic: &str, flavor: Flavor) -> u64 {
    let exe = std::env::current_exe().expect("the bench's own path");
    let mut runs: Vec<u64> = (0..3)
        .map(|_| {
            let out = Command::new(&exe)
                .args(["memory-child", kind, traffic, flavor.arg()])
                .output()
                .expect("the child ran");
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .unwrap_or(0)
        })
        .collect();
    runs.sort_unstable();
    runs[runs.len() / 2]
}

// ---------------------------------------------------------------- ask

pub async fn ask_raw(asks: u64) -> Duration {
    let (tx, mut rx) = mpsc::unbounded_channel::<(u64, oneshot::Sender<u64>)>();
    tokio::spawn(async move {
        while let Some((n, reply)) = rx.recv().await {
            let _ = reply.send(n);
        }
    });
    let start = Instant::now();
    let mut sum = 0_u64;
    for n in 0..asks {
        let (reply, answer) = oneshot::channel();
        let _ = tx.send((n, reply));
        sum = sum.wrapping_add(answer.await.expect("an answer"));
    }
    let elapsed = start.elapsed();
    std::hint::black_box(sum);
    elapsed
}

/// A request whose answer is its own number.
#[message(reply = u64)]
pub struct Echo(pub u64);

/// Answers every `Echo`.
#[derive(Clone)]
struct Echoer;

#[actor]
impl Echoer {
    fn echo(&mut self, Echo(n): Echo) -> u64 {
        n
    }
}

pub async fn ask_tapio(asks: u64) -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let echoer = system.spawn(Echoer, "echoer").expect("spawned");
    let start = Instant::now();
    let mut sum = 0_u64;
    for n in 0..asks {
        sum = sum.wrapping_add(echoer.ask(Echo(n)).await.expect("an answer"));
    }
    let elapsed = start.elapsed();
    std::hint::black_box(sum);
    system.terminate().await;
    elapsed
}

/// actix's request, answered with its number.
struct ActixEcho(u64);

impl actix::Message for ActixEcho {
    type Result = u64;
}

struct ActixEchoer;

impl actix::Actor for ActixEchoer {
    type Context = actix::Context<Self>;
}

impl actix::Handler<ActixEcho> for ActixEchoer {
    type Result = u64;

    fn handle(&mut self, ActixEcho(n): ActixEcho, _: &mut Self::Context) -> u64 {
        n
    }
}

pub async fn ask_actix(asks: u64) -> Duration {
    use actix::Actor as _;
    let echoer = ActixEchoer.start();
    let start = Instant::now();
    let mut sum = 0_u64;
    for n in 0..asks {
        sum = sum.wrapping_add(echoer.send(ActixEcho(n)).await.expect("an answer"));
    }
    let elapsed = start.elapsed();
    std::hint::black_box(sum);
    elapsed
}

// ---------------------------------------------------------------- stopping

/// `STOPS` idle tasks, each with a channel, all started; then each is told to end
/// and every one is awaited.
async fn stop_raw() -> Duration {
    let started = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::with_capacity(STOPS);
    for _ in 0..STOPS {
        let (tx, mut rx) = mpsc::unbounded_channel::<()>();
        let started = started.clone();
        let task = tokio::spawn(async move {
            started.fetch_add(1, Ordering::AcqRel);
            let _ = rx.recv().await;
        });
        tasks.push((tx, task));
    }
    wait_for(&started, STOPS).await;
    let start = Instant::now();
    for (tx, _) in &tasks {
        let _ = tx.send(());
    }
    for (_, task) in tasks {
        let _ = task.await;
    }
    start.elapsed()
}

/// `STOPS` idle actors, all started; then the system terminates, which stops every
/// one and returns once all have ended.
async fn stop_tapio() -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let started = Arc::new(AtomicUsize::new(0));
    let counter = started.clone();
    let idle: Behavior<u64> = Behaviors::setup(move |_| {
        counter.fetch_add(1, Ordering::AcqRel);
        Behaviors::ignore()
    });
    for _ in 0..STOPS {
        let _ = system.spawn_anonymous(idle.clone()).expect("spawned");
    }
    wait_for(&started, STOPS).await;
    let start = Instant::now();
    system.terminate().await;
    start.elapsed()
}

// ---------------------------------------------------------------- skynet

/// A task that is the skynet node for the numbers `num .. num + size`.
fn skynet_raw_node(num: u64, size: u64, report: mpsc::UnboundedSender<u64>) {
    tokio::spawn(async move {
        if size == 1 {
            let _ = report.send(num);
            return;
        }
        let step = size / 10;
        let (tx, mut rx) = mpsc::unbounded_channel();
        for i in 0..10 {
            skynet_raw_node(num + i * step, step, tx.clone());
        }
        let mut sum = 0;
        for _ in 0..10 {
            sum += rx.recv().await.unwrap_or(0);
        }
        let _ = report.send(sum);
    });
}

pub async fn skynet_raw(leaves: u64) -> Duration {
    let start = Instant::now();
    let (tx, mut rx) = mpsc::unbounded_channel();
    skynet_raw_node(0, leaves, tx);
    let sum = rx.recv().await;
    let elapsed = start.elapsed();
    assert_eq!(sum, Some(leaves * (leaves - 1) / 2));
    elapsed
}

/// Raw tokio again, with what every addressable actor has and a task alone does not:
/// a mailbox of its own (a channel made by its parent, before its task starts), and a
/// parent that keeps its children's senders (its child table) until they reported.
/// Not a goal: it shows what the tree costs on tokio once each node has a mailbox.
fn skynet_mailbox_node(
    num: u64,
    size: u64,
    own: mpsc::UnboundedSender<u64>,
    mut mailbox: mpsc::UnboundedReceiver<u64>,
    report: mpsc::UnboundedSender<u64>,
) {
    tokio::spawn(async move {
        if size == 1 {
            let _ = report.send(num);
            return;
        }
        let step = size / 10;
        let mut children = Vec::with_capacity(10);
        for i in 0..10 {
            let (tx, rx) = mpsc::unbounded_channel();
            children.push(tx.clone());
            skynet_mailbox_node(num + i * step, step, tx, rx, own.clone());
        }
        let mut sum = 0;
        for _ in 0..10 {
            sum += mailbox.recv().await.unwrap_or(0);
        }
        drop(children);
        let _ = report.send(sum);
    });
}

pub async fn skynet_mailbox(leaves: u64) -> Duration {
    let start = Instant::now();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (own, mailbox) = mpsc::unbounded_channel();
    skynet_mailbox_node(0, leaves, own, mailbox, tx);
    let sum = rx.recv().await;
    let elapsed = start.elapsed();
    assert_eq!(sum, Some(leaves * (leaves - 1) / 2));
    elapsed
}

/// An inner skynet node: sums what its ten children report, reports the sum, stops.
struct SkynetNode {
    report: ActorRef<u64>,
    sum: u64,
    seen: u32,
}

impl Protocol for SkynetNode {
    type Msg = u64;
}

impl Actor for SkynetNode {
    fn handle<'a>(&'a mut self, _: &'a mut ActorContext<u64>, n: u64) -> Handled<'a, u64> {
        self.sum += n;
        self.seen += 1;
        if self.seen < 10 {
            return Handled::ready(());
        }
        self.report.tell(self.sum);
        Handled::ready(Behaviors::stopped())
    }
}

/// The skynet actor for the numbers `num .. num + size`: a leaf reports its number
/// when it starts, a node spawns its ten children when it starts.
fn skynet_tapio_node(num: u64, size: u64, report: ActorRef<u64>) -> Behavior<u64> {
    if size == 1 {
        return Behaviors::setup(move |_| {
            report.tell(num);
            Behaviors::stopped()
        });
    }
    Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        let step = size / 10;
        for i in 0..10 {
            let child = skynet_tapio_node(num + i * step, step, ctx.self_ref().clone());
            let _ = ctx.spawn_anonymous(child).expect("spawned");
        }
        SkynetNode {
            report: report.clone(),
            sum: 0,
            seen: 0,
        }
    })
}

pub async fn skynet_tapio(leaves: u64) -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result: ActorRef<u64> = system
        .spawn(
            Behaviors::receive_message(move |sum: u64| {
                let _ = tx.send(sum);
            }),
            "result",
        )
        .expect("spawned");
    let start = Instant::now();
    let _ = system
        .spawn_anonymous(skynet_tapio_node(0, leaves, result))
        .expect("spawned");
    let sum = rx.recv().await;
    let elapsed = start.elapsed();
    assert_eq!(sum, Some(leaves * (leaves - 1) / 2));
    system.terminate().await;
    elapsed
}

/// What an actix skynet node reports to its parent.
struct ActixSum(u64);

impl actix::Message for ActixSum {
    type Result = ();
}

struct ActixSkynetNode {
    num: u64,
    size: u64,
    report: actix::Recipient<ActixSum>,
    sum: u64,
    seen: u32,
}

impl actix::Actor for ActixSkynetNode {
    type Context = actix::Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        use actix::{ActorContext as _, AsyncContext as _};
        if self.size == 1 {
            self.report.do_send(ActixSum(self.num));
            ctx.stop();
            return;
        }
        let step = self.size / 10;
        let me = ctx.address().recipient();
        for i in 0..10 {
            actix::Actor::start(ActixSkynetNode {
                num: self.num + i * step,
                size: step,
                report: me.clone(),
                sum: 0,
                seen: 0,
            });
        }
    }
}

impl actix::Handler<ActixSum> for ActixSkynetNode {
    type Result = ();

    fn handle(&mut self, ActixSum(n): ActixSum, ctx: &mut Self::Context) {
        use actix::ActorContext as _;
        self.sum += n;
        self.seen += 1;
        if self.seen == 10 {
            self.report.do_send(ActixSum(self.sum));
            ctx.stop();
        }
    }
}

/// Hands the root's sum over to the benchmark.
struct ActixResult(Option<oneshot::Sender<u64>>);

impl actix::Actor for ActixResult {
    type Context = actix::Context<Self>;
}

impl actix::Handler<ActixSum> for ActixResult {
    type Result = ();

    fn handle(&mut self, ActixSum(n): ActixSum, _: &mut Self::Context) {
        if let Some(done) = self.0.take() {
            let _ = done.send(n);
        }
    }
}

pub async fn skynet_actix(leaves: u64) -> Duration {
    use actix::Actor as _;
    let (done, sum) = oneshot::channel();
    let result = ActixResult(Some(done)).start();
    let start = Instant::now();
    ActixSkynetNode {
        num: 0,
        size: leaves,
        report: result.recipient(),
        sum: 0,
        seen: 0,
    }
    .start();
    let sum = sum.await;
    let elapsed = start.elapsed();
    assert_eq!(sum, Ok(leaves * (leaves - 1) / 2));
    elapsed
}

// ---------------------------------------------------------------- dead letters

async fn dead_letters_raw() -> Duration {
    let (tx, rx) = mpsc::unbounded_channel::<u64>();
    drop(rx);
    let start = Instant::now();
    for n in 0..DEAD_LETTERS {
        std::hint::black_box(tx.send(n).is_err());
    }
    start.elapsed()
}

/// Tells to an actor that has stopped, with nobody subscribed to dead letters.
async fn dead_letters_tapio() -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let once: ActorRef<u64> = system
        .spawn(
            Behaviors::receive_message(|_: u64| Behaviors::stopped()),
            "once",
        )
        .expect("spawned");
    // A watcher that says when `once` has stopped: the bench builds tapio without its
    // testkit, as a program does.
    let (ended, mut heard) = mpsc::unbounded_channel::<()>();
    let target = once.clone();
    system
        .spawn(
            Behaviors::setup(move |ctx| {
                ctx.watch(&target);
                let ended = ended.clone();
                Behaviors::receive_message(|_: ()| ()).on_signal(move |_, signal| {
                    if matches!(signal, Signal::Terminated(_)) {
                        let _ = ended.send(());
                    }
                })
            }),
            "watcher",
        )
        .expect("spawned");
    once.tell(0_u64);
    tokio::time::timeout(Duration::from_secs(5), heard.recv())
        .await
        .expect("the stopped actor's Terminated");
    let start = Instant::now();
    for n in 0..DEAD_LETTERS {
        once.tell(n);
    }
    let elapsed = start.elapsed();
    system.terminate().await;
    elapsed
}

// ---------------------------------------------------------------- report

fn micros(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1_000.0
}

fn per(d: Duration, n: u64) -> f64 {
    d.as_nanos() as f64 / n as f64
}

/// actix's figure for a row.
#[derive(Clone, Copy)]
enum Actix {
    /// Not part of this workload's comparison.
    Absent,
    /// actix cannot run on this runtime.
    Dash,
    Measured(f64),
}

/// One line of the final table.
struct Row {
    workload: &'static str,
    flavor: Flavor,
    unit: &'static str,
    raw: f64,
    tapio: f64,
    actix: Actix,
    goal: String,
}

impl Row {
    fn print(&self) {
        let actix = match self.actix {
            Actix::Absent => (String::new(), String::new()),
            Actix::Dash => ("-".to_owned(), "-".to_owned()),
            Actix::Measured(ns) => (format!("{ns:.1}"), format!("{:.2}", ns / self.raw)),
        };
        println!(
            "{:<12} {:<4} {:<9} {:>10.1} {:>10.1} {:>10} {:>9.2} {:>9}   {}",
            self.workload,
            self.flavor.arg(),
            self.unit,
            self.raw,
            self.tapio,
            actix.0,
            self.tapio / self.raw,
            actix.1,
            self.goal
        );
    }
}

/// Every workload on one runtime flavor, or those `only` names; each row is printed
/// as soon as it is known.
fn rows(flavor: Flavor, only: &[String]) -> Vec<Row> {
    let want = |workload: &str| only.is_empty() || only.iter().any(|w| w == workload);
    let mut rows = Vec::new();
    let mut row = |row: Row| {
        row.print();
        rows.push(row);
    };
    // actix's figure, in nanoseconds per `n`: on the current-thread row only.
    let actix = |figure: &dyn Fn() -> Duration, n: u64| match flavor {
        Flavor::CurrentThread => Actix::Measured(per(figure(), n)),
        Flavor::MultiThread => Actix::Dash,
    };

    if want("tell") {
        let (raw, ours) = measure_pair(
            flavor,
            RUNS,
            |rt| rt.block_on(tell_raw()),
            |rt| rt.block_on(tell_tapio()),
        );
        row(Row {
            workload: "tell",
            flavor,
            unit: "ns/msg",
            raw: per(raw, TELLS),
            tapio: per(ours, TELLS),
            actix: Actix::Absent,
            goal: "<= 0.8x".into(),
        });
    }

    if want("contended") {
        let (raw, ours) = measure_pair(
            flavor,
            RUNS,
            |rt| rt.block_on(contended_raw()),
            |rt| rt.block_on(contended_tapio()),
        );
        row(Row {
            workload: "contended",
            flavor,
            unit: "ns/msg",
            raw: per(raw, TELLS),
            tapio: per(ours, TELLS),
            actix: Actix::Absent,
            goal: "<= 0.6x".into(),
        });
    }

    // On 2 workers the neighbour would run beside the drainer, not wait for it.
    if want("fairness") && flavor == Flavor::CurrentThread {
        let (raw, raw_most) = measure_counted(flavor, RUNS, |rt| rt.block_on(fairness_raw()));
        let (ours, most) = measure_counted(flavor, RUNS, |rt| rt.block_on(fairness_tapio()));
        row(Row {
            workload: "fairness",
            flavor,
            unit: "µs wait",
            raw: per(raw, 1_000),
            tapio: per(ours, 1_000),
            actix: Actix::Absent,
            goal: format!("most drained in a wait: raw {raw_most}, tapio {most}"),
        });
    }

    if want("bounded") {
        let raw = measure(flavor, RUNS, |rt| rt.block_on(offer_raw()));
        let ours = measure(flavor, RUNS, |rt| rt.block_on(offer_tapio()));
        row(Row {
            workload: "offer",
            flavor,
            unit: "ns/msg",
            raw: per(raw, TELLS),
            tapio: per(ours, TELLS),
            actix: Actix::Absent,
            goal: String::new(),
        });
        for (paced, workload) in [(true, "bnd paced"), (false, "bnd flood")] {
            let (raw, raw_dropped) =
                measure_counted(flavor, RUNS, |rt| rt.block_on(bounded_tell_raw(paced)));
            let (ours, dropped) =
                measure_counted(flavor, RUNS, |rt| rt.block_on(bounded_tell_tapio(paced)));
            row(Row {
                workload,
                flavor,
                unit: "ns/msg",
                raw: per(raw, TELLS),
                tapio: per(ours, TELLS),
                actix: Actix::Absent,
                goal: format!("dropped: raw {raw_dropped}, tapio {dropped}"),
            });
        }
    }

    if want("ping-pong") {
        let (raw, ours) = measure_pair(
            flavor,
            RUNS,
            |rt| rt.block_on(ping_pong_raw()),
            |rt| rt.block_on(ping_pong_tapio()),
        );
        row(Row {
            workload: "ping-pong",
            flavor,
            unit: "ns/rt",
            raw: per(raw, ROUND_TRIPS),
            tapio: per(ours, ROUND_TRIPS),
            actix: Actix::Absent,
            goal: "<= 0.9x".into(),
        });
    }

    if want("ask") {
        let (raw, ours) = measure_pair(
            flavor,
            RUNS,
            |rt| in_task(rt, ask_raw(ASKS)),
            |rt| in_task(rt, ask_tapio(ASKS)),
        );
        row(Row {
            workload: "ask",
            flavor,
            unit: "ns/ask",
            raw: per(raw, ASKS),
            tapio: per(ours, ASKS),
            actix: actix(&|| measure_actix(RUNS, || ask_actix(ASKS)), ASKS),
            goal: "<= 1.5x, ahead of actix (ct)".into(),
        });
    }

    if want("spawn") {
        let (raw_ns, raw_running, raw_bytes) = spawn_in_child("raw", flavor);
        let (ours_ns, ours_running, ours_bytes) = spawn_in_child("tapio", flavor);
        row(Row {
            workload: "spawn",
            flavor,
            unit: "ns/actor",
            raw: raw_ns as f64,
            tapio: ours_ns as f64,
            actix: Actix::Absent,
            goal: "<= 1000 ns".into(),
        });
        row(Row {
            workload: "  +start",
            flavor,
            unit: "ns/actor",
            raw: raw_running as f64,
            tapio: ours_running as f64,
            actix: Actix::Absent,
            goal: "until every one has run".into(),
        });
        row(Row {
            workload: "memory",
            flavor,
            unit: "B/actor",
            raw: raw_bytes as f64,
            tapio: ours_bytes as f64,
            actix: Actix::Absent,
            goal: "<= 765 B".into(),
        });
    }

    if want("memory") {
        for (traffic, workload) in [("one", "memory+1msg"), ("burst", "memory+burst")] {
            row(Row {
                workload,
                flavor,
                unit: "B/actor",
                raw: memory_in_child("raw", traffic, flavor) as f64,
                tapio: memory_in_child("tapio", traffic, flavor) as f64,
                actix: Actix::Absent,
                goal: "<= 773 B".into(),
            });
        }
    }

    if want("stop") {
        let raw = measure(flavor, HEAVY_RUNS, |rt| in_task(rt, stop_raw()));
        let ours = measure(flavor, HEAVY_RUNS, |rt| in_task(rt, stop_tapio()));
        row(Row {
            workload: "stop",
            flavor,
            unit: "ns/actor",
            raw: per(raw, STOPS as u64),
            tapio: per(ours, STOPS as u64),
            actix: Actix::Absent,
            goal: "<= 1.5x".into(),
        });
    }

    if want("skynet") {
        // Interleaved: each run leaves the heap to the next (see
        // `measure_interleaved`).
        let (raw_rt, tapio_rt, mailbox_rt) = (flavor.runtime(), flavor.runtime(), flavor.runtime());
        let raw_run = || in_task(&raw_rt, skynet_raw(SKYNET_LEAVES));
        let tapio_run = || in_task(&tapio_rt, skynet_tapio(SKYNET_LEAVES));
        let mailbox_run = || in_task(&mailbox_rt, skynet_mailbox(SKYNET_LEAVES));
        let (raw, ours, mailbox, actix_ns) = match flavor {
            Flavor::CurrentThread => {
                let system = actix::System::new();
                let actix_run = || {
                    system
                        .block_on(async { actix::spawn(skynet_actix(SKYNET_LEAVES)).await })
                        .expect("the measured task finished")
                };
                let [raw, ours, mailbox, theirs] = measure_interleaved(
                    HEAVY_RUNS,
                    [&raw_run, &tapio_run, &mailbox_run, &actix_run],
                );
                (
                    raw,
                    ours,
                    mailbox,
                    Actix::Measured(per(theirs, SKYNET_ACTORS)),
                )
            }
            Flavor::MultiThread => {
                let [raw, ours, mailbox] =
                    measure_interleaved(HEAVY_RUNS, [&raw_run, &tapio_run, &mailbox_run]);
                (raw, ours, mailbox, Actix::Dash)
            }
        };
        row(Row {
            workload: "skynet",
            flavor,
            unit: "ns/actor",
            raw: per(raw, SKYNET_ACTORS),
            tapio: per(ours, SKYNET_ACTORS),
            actix: actix_ns,
            goal: "<= 1.2x, ahead of actix".into(),
        });
        // The same runs, against raw tokio with a mailbox a node (`skynet_mailbox`).
        row(Row {
            workload: "skynet/mbox",
            flavor,
            unit: "ns/actor",
            raw: per(mailbox, SKYNET_ACTORS),
            tapio: per(ours, SKYNET_ACTORS),
            actix: Actix::Absent,
            goal: "none (raw = tokio with a mailbox a node)".into(),
        });
    }

    if want("wire") {
        let (raw, ours) = measure_pair(
            flavor,
            RUNS,
            |rt| rt.block_on(crate::wire_state::wire_postcard()),
            |rt| rt.block_on(crate::wire_state::wire_tapio()),
        );
        row(Row {
            workload: "wire",
            flavor,
            unit: "ns/msg",
            raw: per(raw, crate::wire_state::WIRE_MESSAGES),
            tapio: per(ours, crate::wire_state::WIRE_MESSAGES),
            actix: Actix::Absent,
            goal: "<= 1.43x (raw = postcard encode+decode)".into(),
        });
    }

    if want("link") {
        let ours = measure(flavor, HEAVY_RUNS, |rt| {
            rt.block_on(crate::wire_state::link_tapio())
        });
        row(Row {
            workload: "link",
            flavor,
            unit: "ns/msg",
            raw: 1_000.0,
            tapio: per(ours, crate::wire_state::LINK_MESSAGES),
            actix: Actix::Absent,
            goal: "<= 1.0x (raw = 1,000 ns: 1,000,000 msg/s)".into(),
        });
    }

    if want("remote-ask") {
        use crate::link_latency::{quantile, raw_round_trip, remote_ask};
        let runtime = flavor.runtime();
        runtime.block_on(remote_ask()); // warm-up
        let raw = runtime.block_on(raw_round_trip());
        let ours = runtime.block_on(remote_ask());
        for (q, workload) in [(0.5, "remote ask p50"), (0.99, "remote ask p99")] {
            row(Row {
                workload,
                flavor,
                unit: "us",
                raw: micros(quantile(&raw, q)),
                tapio: micros(quantile(&ours, q)),
                actix: Actix::Absent,
                goal: "(raw = TCP round trip of 100 bytes)".into(),
            });
        }
    }

    if want("handshake") {
        use crate::link_latency::{handshakes, quantile, tcp_connects};
        let runtime = flavor.runtime();
        let connects = runtime.block_on(tcp_connects());
        for (tls, workload) in [(false, "handshake"), (true, "handshake tls")] {
            let made = runtime.block_on(handshakes(tls));
            row(Row {
                workload,
                flavor,
                unit: "us",
                raw: micros(quantile(&connects, 0.5)),
                tapio: micros(quantile(&made, 0.5)),
                actix: Actix::Absent,
                goal: "(p50; raw = bare TCP connect)".into(),
            });
        }
    }

    if want("state") {
        let (plain, machine) = measure_pair(
            flavor,
            RUNS,
            |rt| rt.block_on(crate::wire_state::state_plain()),
            |rt| rt.block_on(crate::wire_state::state_machine()),
        );
        row(Row {
            workload: "state",
            flavor,
            unit: "ns/msg",
            raw: per(plain, crate::wire_state::STATE_TELLS),
            tapio: per(machine, crate::wire_state::STATE_TELLS),
            actix: Actix::Absent,
            goal: "<= 1.2x (raw = plain #[actor])".into(),
        });
    }

    if want("dead-letters") {
        let raw = measure(flavor, RUNS, |rt| rt.block_on(dead_letters_raw()));
        let ours = measure(flavor, RUNS, |rt| rt.block_on(dead_letters_tapio()));
        row(Row {
            workload: "dead letter",
            flavor,
            unit: "ns/letter",
            raw: per(raw, DEAD_LETTERS),
            tapio: per(ours, DEAD_LETTERS),
            actix: Actix::Absent,
            goal: String::new(),
        });
    }
    rows
}

fn print_header() {
    println!(
        "{:<12} {:<4} {:<9} {:>10} {:>10} {:>10} {:>9} {:>9}   goal (issues 7, 8)",
        "workload", "rt", "unit", "raw", "tapio", "actix", "tapio/raw", "actix/raw"
    );
}

fn profile(workload: &str, flavor: Flavor) {
    let runtime = flavor.runtime();
    // `PROFILE_RUNS` makes the run shorter (or longer) for a slow profiler.
    let runs = std::env::var("PROFILE_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(40);
    for _ in 0..runs {
        let _ = match workload {
            "tell-raw" => runtime.block_on(tell_raw()),
            "offer" => runtime.block_on(offer_tapio()),
            "offer-raw" => runtime.block_on(offer_raw()),
            "fairness" => runtime.block_on(fairness_tapio()).0,
            "fairness-raw" => runtime.block_on(fairness_raw()).0,
            "contended" => runtime.block_on(contended_tapio()),
            "contended-raw" => runtime.block_on(contended_raw()),
            "ping" => runtime.block_on(ping_pong_tapio()),
            "ping-raw" => runtime.block_on(ping_pong_raw()),
            "ask" => in_task(&runtime, ask_tapio(ASKS)),
            "ask-raw" => in_task(&runtime, ask_raw(ASKS)),
            // actix on its own System, one thread whatever the flavor.
            "ask-actix" => actix::System::new()
                .block_on(async { actix::spawn(ask_actix(ASKS)).await })
                .expect("the measured task finished"),
            "stop" => in_task(&runtime, stop_tapio()),
            "stop-raw" => in_task(&runtime, stop_raw()),
            "skynet" => in_task(&runtime, skynet_tapio(SKYNET_LEAVES)),
            "skynet-raw" => in_task(&runtime, skynet_raw(SKYNET_LEAVES)),
            "skynet-mbox" => in_task(&runtime, skynet_mailbox(SKYNET_LEAVES)),
            "dead" => runtime.block_on(dead_letters_tapio()),
            "wire" => runtime.block_on(crate::wire_state::wire_tapio()),
            "wire-raw" => runtime.block_on(crate::wire_state::wire_postcard()),
            "state" => runtime.block_on(crate::wire_state::state_machine()),
            _ => runtime.block_on(tell_tapio()),
        };
    }
}

/// The core table (and its child processes and profile mode), as `core` ran it
/// before the peers came: `args` are the command line.
pub fn main(args: &[String]) {
    let flavor_arg = |i: usize| {
        if args.get(i).map(String::as_str) == Some("mt") {
            Flavor::MultiThread
        } else {
            Flavor::CurrentThread
        }
    };
    match args.get(1).map(String::as_str) {
        Some("spawn-child") => {
            spawn_child(args[2].clone(), &args[3]);
            return;
        }
        Some("memory-child") => {
            memory_child(&args[2], &args[3], &args[4]);
            return;
        }
        Some("profile") => {
            // `core profile <tell|tell-raw|offer|offer-raw|contended|contended-raw|
            // fairness|fairness-raw|ping|ping-raw|ask|ask-raw|ask-actix|stop|stop-raw|skynet|
            // skynet-raw|skynet-mbox|dead|wire|wire-raw|state> <mt|ct>`
            profile(args.get(2).map_or("tell", String::as_str), flavor_arg(3));
            return;
        }
        _ => {}
    }
    println!(
        "tapio core benchmark: median of {RUNS} runs ({HEAVY_RUNS} for stop and skynet); \
         ratio = framework / raw tokio; actix on its own current-thread System, \
         '-' where it cannot run on 2 workers"
    );
    print_header();
    let mut table = Vec::new();
    // `core [workload ..]`: only those rows (tell, contended, bounded, fairness,
    // ping-pong, ask, spawn, memory, stop, skynet, dead-letters).
    let only = &args[1..];
    for flavor in [Flavor::MultiThread, Flavor::CurrentThread] {
        table.extend(rows(flavor, only));
    }
    println!(
        "\nSummary (mt = {}, ct = {})",
        Flavor::MultiThread.name(),
        Flavor::CurrentThread.name()
    );
    print_header();
    for row in &table {
        row.print();
    }
}
