//! What every measurement shares: the runtimes, running work in a task, the resident
//! memory, and the summary of a cell's samples (median, min, max).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The tokio runtime a workload runs on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Flavor {
    MultiThread,
    CurrentThread,
}

impl Flavor {
    pub fn name(self) -> &'static str {
        match self {
            Self::MultiThread => "multi-thread, 2 workers",
            Self::CurrentThread => "current-thread",
        }
    }

    pub fn arg(self) -> &'static str {
        match self {
            Self::MultiThread => "mt",
            Self::CurrentThread => "ct",
        }
    }

    /// `mt` or `ct`; anything else is the current-thread runtime.
    pub fn parse(arg: &str) -> Self {
        if arg == "mt" {
            Self::MultiThread
        } else {
            Self::CurrentThread
        }
    }

    pub fn runtime(self) -> tokio::runtime::Runtime {
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

/// Run `work` in a task rather than in `block_on`: on the multi-thread runtime the
/// future given to `block_on` runs outside the workers, and an actor (or setup code)
/// that spawns or waits does so on a worker.
pub fn in_task<F>(runtime: &tokio::runtime::Runtime, work: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    runtime
        .block_on(async { tokio::spawn(work).await })
        .expect("the measured task finished")
}

/// This process's resident memory, from /proc.
pub fn resident_bytes() -> usize {
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

/// Yield until `counter` has reached `n`.
pub async fn wait_for(counter: &AtomicUsize, n: usize) {
    while counter.load(Ordering::Acquire) < n {
        tokio::task::yield_now().await;
    }
}

/// The samples of one cell: median, smallest and largest.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Stats {
    /// `None` for no samples.
    pub fn of(samples: &[f64]) -> Option<Self> {
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = match sorted.len() {
            0 => return None,
            n if n % 2 == 1 => sorted[n / 2],
            n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        Some(Self {
            median,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        })
    }
}
