//! What the report says about where it ran: the processor, its cores, the memory,
//! the kernel, the compiler, tapio's commit, and the crates' versions as the
//! Cargo.lock the bench was built from has them.

use std::process::Command;

/// The crates whose versions the report names.
const CRATES: [&str; 6] = ["tokio", "actix", "actix-rt", "ractor", "kameo", "xtra"];

/// `name`'s version in the bench's Cargo.lock, compiled in.
fn locked_version(name: &str) -> Option<&'static str> {
    let lock = include_str!("../Cargo.lock");
    let needle = format!("name = \"{name}\"\nversion = \"");
    let at = lock.find(&needle)? + needle.len();
    let end = lock[at..].find('"')?;
    Some(&lock[at..at + end])
}

fn proc_field(file: &str, field: &str) -> Option<String> {
    std::fs::read_to_string(file)
        .ok()?
        .lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == field).then(|| value.trim().to_owned())
        })
}

/// tapio's commit, from git in the bench's checkout (`-dirty` if it has changes).
fn tapio_commit() -> String {
    Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=10"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map_or_else(|| "unknown".to_owned(), |s| s.trim().to_owned())
}

/// One line per fact.
pub fn describe() -> Vec<String> {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = proc_field("/proc/cpuinfo", "model name").unwrap_or_else(|| "unknown".into());
    let memory = proc_field("/proc/meminfo", "MemTotal")
        .and_then(|kb| kb.trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or_else(
            || "unknown".to_owned(),
            |kb| format!("{:.1} GiB", kb as f64 / 1024.0 / 1024.0),
        );
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| "unknown".to_owned(), |s| s.trim().to_owned());
    let versions: Vec<String> = CRATES
        .iter()
        .map(|name| format!("{name} {}", locked_version(name).unwrap_or("?")))
        .collect();
    vec![
        format!("machine: {cores} cores ({cpu}), {memory} memory, Linux {kernel}"),
        format!(
            "compiler: {}, release profile (codegen-units = 1)",
            env!("BENCH_RUSTC")
        ),
        format!("tapio: this repository at {}", tapio_commit()),
        format!("crates (bench/Cargo.lock): {}", versions.join(", ")),
    ]
}
