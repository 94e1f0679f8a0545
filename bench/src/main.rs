//! `core`: tapio measured against raw tokio and its peers, in the same run.
//!
//! - `core compare [mt|ct|both] [runs=N] [workload ..]`: every workload (or those
//!   named) on raw tokio, tapio, actix, ractor, kameo and xtra, interleaved; prints
//!   the report as markdown and writes it, with its chart, to `bench/results/`
//!   (see `compare`). This is what BENCHMARKS.md shows.
//! - `core [workload ..]`: tapio's own table against raw tokio, with the goals of
//!   issues 7 and 8 (tell, contended, bounded, fairness, ping-pong, ask, spawn,
//!   memory, stop, skynet, dead-letters, wire, state, link, remote-ask, handshake;
//!   see `core_table`).
//! - `core profile <workload> <mt|ct>`: one workload many times, for a profiler.
//!
//! The children the two modes start: `core spawn-child`, `core memory-child`,
//! `core compare-child`.

mod chart;
mod compare;
mod core_table;
mod frameworks;
mod harness;
mod link_latency;
mod machine;
mod wire_state;
mod workloads;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("compare") => compare::main(&args),
        Some("compare-child") => compare::child(&args),
        _ => core_table::main(&args),
    }
}
