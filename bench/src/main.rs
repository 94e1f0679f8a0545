//! The core benchmark: tell throughput, ping-pong round trips, and spawning idle
//! actors, each next to the same workload on raw `tokio::sync::mpsc` task loops, on a
//! 2-worker multi-thread runtime and on a current-thread runtime.
//!
//! Run it with `cargo run --release --manifest-path bench/Cargo.toml`. Every figure
//! is the median of several runs; the ratios compare tapio with the raw loop measured
//! in the same process (for memory, in a child process each, so one measurement does
//! not inherit the other's freed heap).
//!
//! `core spawn-child <raw|tapio> <mt|ct>` is the child process the spawn measurement
//! starts; it prints `nanos_per_spawn bytes_per_actor`.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tapio::{Actor, ActorContext, ActorRef, ActorSystem, Behaviors, Handled, Protocol};
use tokio::sync::{Notify, mpsc};

const TELLS: u64 = 1_000_000;
const ROUND_TRIPS: u64 = 100_000;
const SPAWNS: usize = 100_000;
const RUNS: usize = 7;

#[derive(Clone, Copy, PartialEq)]
enum Flavor {
    MultiThread,
    CurrentThread,
}

impl Flavor {
    fn name(self) -> &'static str {
        match self {
            Self::MultiThread => "multi-thread, 2 workers",
            Self::CurrentThread => "current-thread",
        }
    }

    fn arg(self) -> &'static str {
        match self {
            Self::MultiThread => "mt",
            Self::CurrentThread => "ct",
        }
    }

    fn runtime(self) -> tokio::runtime::Runtime {
        let mut builder = match self {
            Self::MultiThread => {
                let mut b = tokio::runtime::Builder::new_multi_thread();
                b.worker_threads(2);
                b
            }
            Self::CurrentThread => tokio::runtime::Builder::new_current_thread(),
        };
        builder.enable_all().build().expect("a tokio runtime")
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn measure(flavor: Flavor, work: impl Fn(&tokio::runtime::Runtime) -> Duration) -> Duration {
    let runtime = flavor.runtime();
    work(&runtime); // warm-up
    median((0..RUNS).map(|_| work(&runtime)).collect())
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

/// An actor that sums the `u64`s it is told.
struct Summer {
    sum: u64,
    seen: u64,
    done: Arc<Notify>,
}

impl Protocol for Summer {
    type Msg = u64;
}

impl Actor for Summer {
    fn handle<'a>(&'a mut self, _: &'a mut ActorContext<u64>, n: u64) -> Handled<'a, u64> {
        self.sum = self.sum.wrapping_add(n);
        self.seen += 1;
        if self.seen == TELLS {
            std::hint::black_box(self.sum);
            self.done.notify_one();
        }
        Handled::ready(())
    }
}

async fn tell_tapio() -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let done = Arc::new(Notify::new());
    let finished = done.clone();
    let summer: ActorRef<u64> = system
        .spawn(
            Behaviors::setup(move |_| Summer {
                sum: 0,
                seen: 0,
                done: finished.clone(),
            }),
            "summer",
        )
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

fn resident_bytes() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<usize>()
                .ok()
        })
        .map_or(0, |kb| kb * 1024)
}

async fn wait_for(counter: &AtomicUsize, n: usize) {
    while counter.load(Ordering::Acquire) < n {
        tokio::task::yield_now().await;
    }
}

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
    let (elapsed, running, bytes) = runtime
        .block_on(async {
            tokio::spawn(async move {
                if kind == "raw" {
                    spawn_raw().await
                } else {
                    spawn_tapio().await
                }
            })
            .await
        })
        .expect("the spawning task finished");
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

// ---------------------------------------------------------------- report

fn per(d: Duration, n: u64) -> f64 {
    d.as_nanos() as f64 / n as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("spawn-child") {
        spawn_child(args[2].clone(), &args[3]);
        return;
    }
    if args.get(1).map(String::as_str) == Some("profile") {
        // `core profile <tell|tell-raw|ping|ping-raw> <mt|ct>`: one workload, many times,
        // for a profiler to sample.
        let flavor = if args.get(3).map(String::as_str) == Some("mt") {
            Flavor::MultiThread
        } else {
            Flavor::CurrentThread
        };
        let runtime = flavor.runtime();
        for _ in 0..40 {
            let _ = match args.get(2).map(String::as_str) {
                Some("tell-raw") => runtime.block_on(tell_raw()),
                Some("ping") => runtime.block_on(ping_pong_tapio()),
                Some("ping-raw") => runtime.block_on(ping_pong_raw()),
                _ => runtime.block_on(tell_tapio()),
            };
        }
        return;
    }
    println!("tapio core benchmark (median of {RUNS} runs; ratio = tapio / raw tokio mpsc)");
    for flavor in [Flavor::MultiThread, Flavor::CurrentThread] {
        println!("\n[{}]", flavor.name());
        let raw = measure(flavor, |rt| rt.block_on(tell_raw()));
        let ours = measure(flavor, |rt| rt.block_on(tell_tapio()));
        println!(
            "tell       raw {:>7.1} ns/msg   tapio {:>7.1} ns/msg   ratio {:.2}  (target <= 1.25)",
            per(raw, TELLS),
            per(ours, TELLS),
            per(ours, TELLS) / per(raw, TELLS)
        );
        let raw = measure(flavor, |rt| rt.block_on(ping_pong_raw()));
        let ours = measure(flavor, |rt| rt.block_on(ping_pong_tapio()));
        println!(
            "ping-pong  raw {:>7.1} ns/rt    tapio {:>7.1} ns/rt    ratio {:.2}  (target <= 1.30)",
            per(raw, ROUND_TRIPS),
            per(ours, ROUND_TRIPS),
            per(ours, ROUND_TRIPS) / per(raw, ROUND_TRIPS)
        );
        let (raw_ns, raw_running, raw_bytes) = spawn_in_child("raw", flavor);
        let (ours_ns, ours_running, ours_bytes) = spawn_in_child("tapio", flavor);
        println!(
            "spawn      raw {:>7} ns/task   tapio {:>7} ns/actor  ratio {:.2}  (target <= 1000 ns)",
            raw_ns,
            ours_ns,
            ours_ns as f64 / raw_ns.max(1) as f64
        );
        println!(
            "  +start   raw {:>7} ns/task   tapio {:>7} ns/actor  ratio {:.2}  (until every one has run)",
            raw_running,
            ours_running,
            ours_running as f64 / raw_running.max(1) as f64
        );
        println!(
            "memory     raw {:>7} B/task    tapio {:>7} B/actor   ratio {:.2}  (target <= 765 B)",
            raw_bytes,
            ours_bytes,
            ours_bytes as f64 / raw_bytes.max(1) as f64
        );
    }
}
