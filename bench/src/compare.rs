//! `core compare`: every workload on raw tokio and on each framework, in one run.
//!
//! For each workload and runtime: one warm-up run per framework, then `runs` rounds,
//! each round running every framework once, starting one framework later each
//! round, so that a noisy minute hits every framework alike. A cell is the median
//! of its runs, with the smallest and largest; the ratio is the framework's median
//! over raw tokio's from the same rounds (time or bytes: lower is better). The
//! memory workloads run in a fresh child process per sample, as the warm-up of a
//! heap would blur what a few hundred bytes per actor cost.

use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::frameworks::{Framework, Fw, with_framework};
use crate::harness::{Flavor, Stats};
use crate::workloads::{self as w};

/// A workload of the comparison.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wl {
    Tell,
    Ask,
    Spawn,
    Stop,
    MemoryIdle,
    MemoryOne,
    Skynet,
    PingPong,
    Counting,
    ThreadRing,
    FjThroughput,
    FjCreate,
    Big,
    Chameneos,
}

impl Wl {
    pub const ALL: [Wl; 14] = [
        Wl::Tell,
        Wl::Ask,
        Wl::Spawn,
        Wl::Stop,
        Wl::MemoryIdle,
        Wl::MemoryOne,
        Wl::Skynet,
        Wl::PingPong,
        Wl::Counting,
        Wl::ThreadRing,
        Wl::FjThroughput,
        Wl::FjCreate,
        Wl::Big,
        Wl::Chameneos,
    ];

    /// Its name on the command line and in the table.
    pub fn arg(self) -> &'static str {
        match self {
            Wl::Tell => "tell",
            Wl::Ask => "ask",
            Wl::Spawn => "spawn",
            Wl::Stop => "stop",
            Wl::MemoryIdle => "memory-idle",
            Wl::MemoryOne => "memory-1msg",
            Wl::Skynet => "skynet",
            Wl::PingPong => "pingpong",
            Wl::Counting => "counting",
            Wl::ThreadRing => "threadring",
            Wl::FjThroughput => "fj-throughput",
            Wl::FjCreate => "fj-create",
            Wl::Big => "big",
            Wl::Chameneos => "chameneos",
        }
    }

    pub fn parse(arg: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|wl| wl.arg() == arg)
    }

    pub fn savina(self) -> bool {
        matches!(
            self,
            Wl::PingPong
                | Wl::Counting
                | Wl::ThreadRing
                | Wl::FjThroughput
                | Wl::FjCreate
                | Wl::Big
                | Wl::Chameneos
        )
    }

    fn memory(self) -> bool {
        matches!(self, Wl::MemoryIdle | Wl::MemoryOne)
    }

    /// What one figure of the workload is.
    pub fn unit(self) -> &'static str {
        match self {
            Wl::Tell | Wl::Counting | Wl::FjThroughput | Wl::Big => "ns/msg",
            Wl::Ask => "ns/ask",
            Wl::Spawn | Wl::Stop | Wl::Skynet | Wl::FjCreate => "ns/actor",
            Wl::MemoryIdle | Wl::MemoryOne => "B/actor",
            Wl::PingPong => "ns/round trip",
            Wl::ThreadRing => "ns/hop",
            Wl::Chameneos => "ns/meeting",
        }
    }

    /// What the workload does, for the table's notes.
    pub fn what(self) -> String {
        match self {
            Wl::Tell => format!("{} tells from one task to one actor", w::TELLS),
            Wl::Ask => format!("{} sequential asks from a task outside any actor", w::ASKS),
            Wl::Spawn => format!(
                "{} idle actors spawned from a task, until all have started",
                w::IDLE_ACTORS
            ),
            Wl::Stop => format!(
                "{} idle actors each told to stop, until every one has ended",
                w::IDLE_ACTORS
            ),
            Wl::MemoryIdle => format!(
                "resident memory of {} idle actors, never messaged",
                w::IDLE_ACTORS
            ),
            Wl::MemoryOne => "the same, once each has handled one message".to_owned(),
            Wl::Skynet => format!(
                "a tree of {} actors, 10 children each, {} leaves",
                skynet_actors(),
                w::SKYNET_LEAVES
            ),
            Wl::PingPong => format!("Savina PingPong: {} round trips", w::PING_PONGS),
            Wl::Counting => format!(
                "Savina Counting: {} increments from one actor to another, then a reply",
                w::COUNTS
            ),
            Wl::ThreadRing => format!(
                "Savina ThreadRing: {} actors, a token passed {} times",
                w::RING_ACTORS,
                w::RING_HOPS
            ),
            Wl::FjThroughput => format!(
                "Savina Fork-Join throughput: {} messages to each of {} actors",
                w::FJ_MESSAGES,
                w::FJ_ACTORS
            ),
            Wl::FjCreate => format!(
                "Savina Fork-Join create: {} actors, each created and told one message",
                w::FJ_CREATES
            ),
            Wl::Big => format!(
                "Savina Big: {} actors, {} pings each to random neighbours (and the pongs)",
                w::BIG_ACTORS,
                w::BIG_PINGS
            ),
            Wl::Chameneos => format!(
                "Savina Chameneos: {} chameneos, {} meetings at a mall",
                w::CHAMENEOS,
                w::MEETINGS
            ),
        }
    }

    /// How many of the unit one run is: the time of a run is divided by it.
    fn per_run(self) -> f64 {
        let n = match self {
            Wl::Tell => w::TELLS,
            Wl::Ask => w::ASKS,
            Wl::Spawn | Wl::Stop | Wl::MemoryIdle | Wl::MemoryOne => w::IDLE_ACTORS as u64,
            Wl::Skynet => skynet_actors(),
            Wl::PingPong => w::PING_PONGS,
            Wl::Counting => w::COUNTS,
            Wl::ThreadRing => w::RING_HOPS,
            Wl::FjThroughput => w::FJ_MESSAGES * w::FJ_ACTORS as u64,
            Wl::FjCreate => w::FJ_CREATES as u64,
            Wl::Big => 2 * w::BIG_PINGS * w::BIG_ACTORS as u64,
            Wl::Chameneos => w::MEETINGS,
        };
        n as f64
    }

    /// Whether it runs on the current-thread runtime too: the message-passing ones,
    /// where a wake-up on the same thread costs less than one on another worker.
    /// Spawn, stop, memory and skynet are about allocation and bookkeeping, and
    /// take the most time: on two workers only.
    fn on_current_thread(self) -> bool {
        !matches!(
            self,
            Wl::Spawn | Wl::Stop | Wl::MemoryIdle | Wl::MemoryOne | Wl::Skynet | Wl::FjCreate
        )
    }

    /// The rounds it gets: skynet takes seconds a run on some frameworks.
    fn runs(self, runs: usize) -> usize {
        if self == Wl::Skynet {
            runs.min(3)
        } else {
            runs
        }
    }
}

fn skynet_actors() -> u64 {
    let mut actors = 0;
    let mut level = 1;
    while level <= w::SKYNET_LEAVES {
        actors += level;
        level *= 10;
    }
    actors
}

/// One run of `wl` on `F`: its figure in `wl.unit()`; `None` if the framework got
/// the work wrong (see `workloads::counting`).
fn run_once<F: Framework>(wl: Wl, flavor: Flavor) -> Option<f64> {
    let elapsed: Duration = match wl {
        Wl::Tell => F::run(flavor, w::tell::<F>(w::TELLS)),
        Wl::Ask => F::run(flavor, F::ask(w::ASKS)),
        Wl::Spawn => F::run(flavor, w::spawn::<F>(w::IDLE_ACTORS)),
        Wl::Stop => F::run(flavor, w::stop::<F>(w::IDLE_ACTORS)),
        Wl::MemoryIdle | Wl::MemoryOne => {
            let one = wl == Wl::MemoryOne;
            return Some(F::run(flavor, w::memory::<F>(w::IDLE_ACTORS, one)) as f64);
        }
        Wl::Skynet => F::run(flavor, F::skynet(w::SKYNET_LEAVES)),
        Wl::PingPong => F::run(flavor, w::ping_pong::<F>(w::PING_PONGS)),
        Wl::Counting => F::run(flavor, w::counting::<F>(w::COUNTS))?,
        Wl::ThreadRing => F::run(flavor, w::thread_ring::<F>(w::RING_ACTORS, w::RING_HOPS)),
        Wl::FjThroughput => F::run(
            flavor,
            w::fork_join_throughput::<F>(w::FJ_ACTORS, w::FJ_MESSAGES),
        ),
        Wl::FjCreate => F::run(flavor, w::fork_join_create::<F>(w::FJ_CREATES)),
        Wl::Big => F::run(flavor, w::big::<F>(w::BIG_ACTORS, w::BIG_PINGS)),
        Wl::Chameneos => F::run(flavor, w::chameneos::<F>(w::CHAMENEOS, w::MEETINGS)),
    };
    Some(elapsed.as_nanos() as f64 / wl.per_run())
}

/// One sample of `wl` on `fw`: the memory workloads in a child process of their own.
fn sample(fw: Fw, wl: Wl, flavor: Flavor) -> Option<f64> {
    if !wl.memory() {
        return with_framework!(fw, F => run_once::<F>(wl, flavor));
    }
    let exe = std::env::current_exe().expect("the bench's own path");
    let out = Command::new(exe)
        .args(["compare-child", fw.arg(), wl.arg(), flavor.arg()])
        .output()
        .expect("the child ran");
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// `core compare-child <fw> <workload> <mt|ct>`: one run, its figure printed.
pub fn child(args: &[String]) {
    let fw = Fw::parse(&args[2]).expect("a framework");
    let wl = Wl::parse(&args[3]).expect("a workload");
    let flavor = Flavor::parse(&args[4]);
    if let Some(figure) = with_framework!(fw, F => run_once::<F>(wl, flavor)) {
        println!("{figure}");
    }
}

/// The cells of one workload on one runtime, in `Fw::ALL` order.
pub struct Row {
    pub wl: Wl,
    pub flavor: Flavor,
    pub cells: Vec<Option<Stats>>,
}

impl Row {
    pub fn median(&self, fw: Fw) -> Option<f64> {
        let i = Fw::ALL.iter().position(|f| *f == fw)?;
        self.cells[i].map(|s| s.median)
    }

    /// `fw`'s median over raw tokio's.
    pub fn ratio(&self, fw: Fw) -> Option<f64> {
        Some(self.median(fw)? / self.median(Fw::Raw)?)
    }

    /// The peer (not raw, not tapio) with the lowest median.
    pub fn best_peer(&self) -> Option<(Fw, f64)> {
        Fw::ALL
            .into_iter()
            .filter(|fw| !matches!(fw, Fw::Raw | Fw::Tapio))
            .filter_map(|fw| Some((fw, self.median(fw)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// Warm up, then `runs` interleaved rounds of `wl` on every framework.
fn measure(wl: Wl, flavor: Flavor, runs: usize) -> Row {
    let frameworks = Fw::ALL;
    if !wl.memory() {
        for fw in frameworks {
            sample(fw, wl, flavor);
        }
    }
    // A framework that gets a run wrong gets a dash: one wrong run voids its cell.
    let mut samples: Vec<Option<Vec<f64>>> = vec![Some(Vec::new()); frameworks.len()];
    for round in 0..wl.runs(runs) {
        for k in 0..frameworks.len() {
            let i = (round + k) % frameworks.len();
            if let Some(cell) = &mut samples[i] {
                match sample(frameworks[i], wl, flavor) {
                    Some(figure) => cell.push(figure),
                    None => samples[i] = None,
                }
            }
        }
    }
    Row {
        wl,
        flavor,
        cells: samples
            .iter()
            .map(|s| s.as_deref().and_then(Stats::of))
            .collect(),
    }
}

fn figure(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn cell(stats: Option<Stats>) -> String {
    match stats {
        Some(s) => format!("{} ({}–{})", figure(s.median), figure(s.min), figure(s.max)),
        None => "–".to_owned(),
    }
}

fn ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_owned(), |r| format!("{r:.2}x"))
}

/// The machine, the versions and the runtimes, as markdown.
fn setup_section(runs: usize, flavors: &[Flavor]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### Machine and versions\n");
    for line in crate::machine::describe() {
        let _ = writeln!(s, "- {line}");
    }
    let flavors: Vec<&str> = flavors.iter().map(|f| f.name()).collect();
    let _ = writeln!(
        s,
        "- runtimes: tokio {}, a fresh runtime per run; actix on its own `actix::System` \
         (one thread) on every row\n- method: one warm-up run per framework, then {runs} \
         interleaved rounds (3 for skynet; the memory rows: {runs} child processes each, \
         no warm-up); a cell is `median (min–max)`",
        flavors.join(" and ")
    );
    s
}

fn tables(rows: &[Row]) -> String {
    let mut s = String::new();
    let names: Vec<&str> = Fw::ALL.iter().map(|fw| fw.name()).collect();
    let mut flavors: Vec<Flavor> = rows.iter().map(|r| r.flavor).collect();
    flavors.dedup();
    for flavor in flavors {
        let rows: Vec<&Row> = rows.iter().filter(|r| r.flavor == flavor).collect();
        let _ = writeln!(s, "### {} ({})\n", flavor.name(), flavor.arg());
        let _ = writeln!(s, "| workload | unit | {} |", names.join(" | "));
        let _ = writeln!(s, "|---|---|{}", "---:|".repeat(names.len()));
        for row in &rows {
            let cells: Vec<String> = row.cells.iter().map(|c| cell(*c)).collect();
            let _ = writeln!(
                s,
                "| {} | {} | {} |",
                row.wl.arg(),
                row.wl.unit(),
                cells.join(" | ")
            );
        }
        let _ = writeln!(
            s,
            "\nRatio to raw tokio (median over median; lower is better):\n"
        );
        let _ = writeln!(s, "| workload | {} | best peer |", names[1..].join(" | "));
        let _ = writeln!(s, "|---|{}---|", "---:|".repeat(names.len() - 1));
        for row in &rows {
            let ratios: Vec<String> = Fw::ALL[1..]
                .iter()
                .map(|fw| ratio(row.ratio(*fw)))
                .collect();
            let best = row
                .best_peer()
                .map_or_else(|| "–".to_owned(), |(fw, _)| fw.name().to_owned());
            let _ = writeln!(
                s,
                "| {} | {} | {} |",
                row.wl.arg(),
                ratios.join(" | "),
                best
            );
        }
        let _ = writeln!(s);
    }
    s
}

/// The goals of issue 15, each with its figure, from the rows of `flavor`.
fn goals(rows: &[Row], flavor: Flavor) -> String {
    let mut s = String::new();
    let row = |wl: Wl| rows.iter().find(|r| r.wl == wl && r.flavor == flavor);
    let met = |ok: bool| if ok { "met" } else { "missed" };
    let _ = writeln!(
        s,
        "### Goals (issue 15), on {} ({})\n",
        flavor.name(),
        flavor.arg()
    );
    let _ = writeln!(s, "| goal | figure | |\n|---|---|---|");
    if let Some(r) = row(Wl::Tell)
        && let (Some(t), Some(q)) = (r.ratio(Fw::Tapio), r.best_peer())
    {
        let throughput = 1.0 / t;
        let _ = writeln!(
            s,
            "| tell throughput ≥ 0.8x raw's | {throughput:.2}x raw's throughput (time {t:.2}x) | {} |",
            met(throughput >= 0.8)
        );
        let tapio = r.median(Fw::Tapio).unwrap_or(f64::MAX);
        let _ = writeln!(
            s,
            "| tell ahead of every peer | tapio {} ns, best peer {} {} ns | {} |",
            figure(tapio),
            q.0.name(),
            figure(q.1),
            met(tapio < q.1)
        );
    }
    if let Some(r) = row(Wl::Ask)
        && let (Some(t), Some(q)) = (r.ratio(Fw::Tapio), r.best_peer())
    {
        let _ = writeln!(
            s,
            "| ask latency ≤ 1.5x raw oneshot+mpsc | {t:.2}x | {} |",
            met(t <= 1.5)
        );
        let tapio = r.median(Fw::Tapio).unwrap_or(f64::MAX);
        let _ = writeln!(
            s,
            "| ask ahead of every peer | tapio {} ns, best peer {} {} ns | {} |",
            figure(tapio),
            q.0.name(),
            figure(q.1),
            met(tapio < q.1)
        );
    }
    if let Some(r) = row(Wl::MemoryOne)
        && let (Some(tapio), Some(q)) = (r.median(Fw::Tapio), r.best_peer())
    {
        let _ = writeln!(
            s,
            "| memory per idle actor after one message ≤ leanest peer's | tapio {} B, leanest peer {} {} B | {} |",
            figure(tapio),
            q.0.name(),
            figure(q.1),
            met(tapio <= q.1)
        );
    }
    for r in rows.iter().filter(|r| r.flavor == flavor && r.wl.savina()) {
        if let (Some(tapio), Some(q)) = (r.median(Fw::Tapio), r.best_peer()) {
            // A peer more than 10% ahead takes less than tapio's time / 1.1.
            let ahead = tapio / q.1;
            let _ = writeln!(
                s,
                "| no peer >10% ahead on {} | tapio {} ns, best peer {} {} ns: tapio takes {ahead:.2}x its time | {} |",
                r.wl.arg(),
                figure(tapio),
                q.0.name(),
                figure(q.1),
                met(ahead <= 1.1)
            );
        }
    }
    s
}

/// `core compare [mt|ct|both] [runs=N] [workload ..]`.
pub fn main(args: &[String]) {
    let mut flavors = vec![Flavor::MultiThread, Flavor::CurrentThread];
    let mut runs = 5;
    let mut only = Vec::new();
    for arg in &args[2..] {
        match arg.as_str() {
            "mt" => flavors = vec![Flavor::MultiThread],
            "ct" => flavors = vec![Flavor::CurrentThread],
            "both" => {}
            _ => {
                if let Some(n) = arg.strip_prefix("runs=") {
                    runs = n.parse().expect("runs=N takes a number");
                } else {
                    only.push(Wl::parse(arg).unwrap_or_else(|| {
                        panic!(
                            "unknown workload {arg}; the workloads: {}",
                            Wl::ALL.map(Wl::arg).join(" ")
                        )
                    }));
                }
            }
        }
    }
    let workloads: Vec<Wl> = if only.is_empty() {
        Wl::ALL.to_vec()
    } else {
        only.clone()
    };
    let command = std::iter::once("cargo run --release --".to_owned())
        .chain(args[1..].iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let began = Instant::now();
    let mut rows = Vec::new();
    for &flavor in &flavors {
        for &wl in &workloads {
            // A workload named on the command line runs on every runtime asked for.
            if flavor == Flavor::CurrentThread && only.is_empty() && !wl.on_current_thread() {
                continue;
            }
            let row = measure(wl, flavor, runs);
            let cells: Vec<String> = row.cells.iter().map(|c| cell(*c)).collect();
            eprintln!(
                "{:<4} {:<14} {:<13} {}",
                flavor.arg(),
                wl.arg(),
                wl.unit(),
                cells.join("  ")
            );
            rows.push(row);
        }
    }
    let took = began.elapsed();
    let mut report = String::new();
    let _ = writeln!(
        report,
        "<!-- written by `{command}` (in bench/), in {:.0} s -->\n",
        took.as_secs_f64()
    );
    report.push_str(&setup_section(runs, &flavors));
    let _ = writeln!(report, "\n### What each workload does\n");
    for &wl in &workloads {
        let _ = writeln!(report, "- `{}`: {}", wl.arg(), wl.what());
    }
    let _ = writeln!(
        report,
        "\nOn the current-thread runtime: every workload but spawn, stop, the memory \
         ones, skynet and fj-create (unless named on the command line)."
    );
    let _ = writeln!(report);
    report.push_str(&tables(&rows));
    for &flavor in &flavors {
        report.push_str(&goals(&rows, flavor));
        let _ = writeln!(report);
    }
    let _ = writeln!(report, "The whole run took {:.0} s.", took.as_secs_f64());
    println!("{report}");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    std::fs::create_dir_all(&dir).expect("bench/results");
    std::fs::write(dir.join("compare.md"), &report).expect("bench/results/compare.md written");
    for &flavor in &flavors {
        let name = match flavor {
            Flavor::MultiThread => "ratios.svg",
            Flavor::CurrentThread => "ratios-ct.svg",
        };
        crate::chart::ratios(&rows, flavor, &dir.join(name)).expect("the chart drawn");
    }
}
