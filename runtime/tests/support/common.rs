//! What several test binaries share: a `tracing` subscriber whose output a test reads.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::MakeWriter;

/// Collects what a subscriber writes.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Self;

    fn make_writer(&'a self) -> Self {
        self.clone()
    }
}

/// A subscriber that writes plain text, at `level` and above, into what it returns.
pub fn capturing(level: tracing::Level) -> (Captured, impl tracing::Subscriber + Send + Sync) {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .with_ansi(false)
        .with_max_level(level)
        .finish();
    (captured, subscriber)
}

static GLOBAL_LOG: std::sync::OnceLock<Captured> = std::sync::OnceLock::new();

/// The global subscriber of this test binary, installed on first use (one per
/// process: every test that needs a global subscriber takes this one).
pub fn global_capture() -> &'static Captured {
    GLOBAL_LOG.get_or_init(|| {
        let (captured, subscriber) = capturing(tracing::Level::INFO);
        tracing::subscriber::set_global_default(subscriber).unwrap();
        captured
    })
}

/// A subscriber for this thread only, and what it captures.
///
/// The global one is installed first, on purpose: while a scoped subscriber is the
/// only one in the process, `tracing-core` 0.1 computes a callsite's interest from
/// the default of whichever thread reaches the callsite first
/// (tokio-rs/tracing#3611), so an actor spawned by another test on a thread without
/// a subscriber can switch the actor span off for this one too. With two
/// subscribers registered, every registered one is asked.
pub fn scoped_capture() -> (Captured, tracing::subscriber::DefaultGuard) {
    global_capture();
    let (captured, subscriber) = capturing(tracing::Level::INFO);
    (captured, tracing::subscriber::set_default(subscriber))
}
