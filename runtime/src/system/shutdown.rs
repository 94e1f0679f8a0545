//! Graceful shutdown on the operating system's signals.
//!
//! A service wires SIGINT (Ctrl-C) and SIGTERM (what a container runtime sends to stop
//! a process) to [`ActorSystem::terminate`]: every actor stops bottom-up against the
//! system's shutdown deadline, and `main` returns.
//!
//! ```no_run
//! use tapio::prelude::*;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let system = ActorSystem::new("service")?;
//!     // Install the handlers first, so a signal that comes early is not missed.
//!     let signals = system.shutdown_on_signals()?;
//!     // ... spawn the service's actors ...
//!     let signal = signals.wait().await; // returns once the system has terminated
//!     tracing::info!(?signal, "stopped");
//!     Ok(())
//! }
//! ```

use std::fmt;
use std::io;

use crate::actor::ActorSystem;

/// A signal that asks the process to shut down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShutdownSignal {
    /// SIGINT, or Ctrl-C.
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl fmt::Display for ShutdownSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Interrupt => "SIGINT",
            Self::Terminate => "SIGTERM",
        })
    }
}

/// Handlers for SIGINT and SIGTERM, installed by
/// [`ActorSystem::shutdown_on_signals`]. Once installed, those signals no longer end
/// the process by themselves, for the rest of its life: tokio keeps its handler even
/// after this value is dropped, and offers no way to put the default one back. A
/// signal that arrives with nobody waiting in [`wait`](Self::wait) is only recorded.
/// So keep waiting until the process is to exit, and let `main` return (or call
/// `std::process::exit`) once the system has terminated; a second Ctrl-C during a
/// slow shutdown does not force the exit either, the shutdown deadline does.
pub struct ShutdownSignals {
    system: ActorSystem,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl ActorSystem {
    /// Install handlers for SIGINT and SIGTERM; [`ShutdownSignals::wait`] then
    /// terminates this system when one arrives.
    ///
    /// # Errors
    ///
    /// When the handlers cannot be installed (the operating system refused).
    pub fn shutdown_on_signals(&self) -> io::Result<ShutdownSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(ShutdownSignals {
                system: self.clone(),
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(ShutdownSignals {
                system: self.clone(),
            })
        }
    }
}

impl ShutdownSignals {
    /// Wait for the next SIGINT or SIGTERM, without terminating anything.
    pub async fn received(&mut self) -> ShutdownSignal {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => ShutdownSignal::Interrupt,
                _ = self.terminate.recv() => ShutdownSignal::Terminate,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            ShutdownSignal::Interrupt
        }
    }

    /// Wait for SIGINT or SIGTERM, terminate the system, and return the signal once
    /// the system has terminated.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before a signal arrives changes nothing; after, the
    /// termination goes on in its own task.
    pub async fn wait(mut self) -> ShutdownSignal {
        let signal = self.received().await;
        tracing::info!(%signal, system = self.system.name(), "shutting down");
        self.system.terminate().await;
        signal
    }
}

impl fmt::Debug for ShutdownSignals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShutdownSignals")
            .field("system", &self.system.name())
            .finish_non_exhaustive()
    }
}
