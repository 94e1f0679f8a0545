//! What every example shares: somewhere to write its lines, and logging.

use std::sync::{Arc, Mutex, PoisonError};

/// The error an example returns: anything, with its message.
pub type ExampleError = Box<dyn std::error::Error + Send + Sync>;

/// The lines an example produces, written by its actors in the order they happen.
///
/// Actors write here instead of printing, so the example can be asserted by a test
/// and printed by `main` once it is over.
#[derive(Debug, Clone, Default)]
pub struct Lines(Arc<Mutex<Vec<String>>>);

impl Lines {
    /// Record one line.
    pub fn push(&self, line: impl Into<String>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line.into());
    }

    /// Everything recorded so far.
    pub fn snapshot(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Something that happens a number of times, which an example waits for instead of
/// sleeping and hoping: actors `mark` it, `main` waits until it `reached` a count.
#[derive(Debug, Clone)]
pub struct Tally(Arc<tokio::sync::Semaphore>);

impl Default for Tally {
    fn default() -> Self {
        Self(Arc::new(tokio::sync::Semaphore::new(0)))
    }
}

impl Tally {
    /// It happened once more.
    pub fn mark(&self) {
        self.0.add_permits(1);
    }

    /// Wait until it has happened `n` more times since the last wait.
    pub async fn reached(&self, n: u32) {
        if let Ok(permits) = self.0.acquire_many(n).await {
            permits.forget();
        }
    }
}

/// How long an example waits for anything it expects before it gives up: far longer
/// than any step takes, so reaching it means something is broken.
pub const WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Wait for `step` for at most [`WAIT`], so a broken example fails with `what` it
/// was waiting for instead of hanging.
///
/// # Errors
///
/// When `step` has not finished within [`WAIT`].
pub async fn within<T>(
    what: &str,
    step: impl std::future::IntoFuture<Output = T>,
) -> Result<T, ExampleError> {
    tokio::time::timeout(WAIT, step)
        .await
        .map_err(|_| format!("gave up after {WAIT:?} waiting for {what}").into())
}

/// Send the actors' logs to stderr, at the level `RUST_LOG` asks for (nothing by
/// default). Every record a handler logs is tagged with the actor's path.
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// What an example's `main` does: set up logging (`RUST_LOG`), run the example, and
/// print the lines it returns.
pub async fn show(
    run: impl std::future::Future<Output = Result<Vec<String>, ExampleError>>,
) -> Result<(), ExampleError> {
    init_logging();
    print(&run.await?);
    Ok(())
}

/// Print an example's lines, one per line, as its `main` does.
pub fn print(lines: &[String]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
}
