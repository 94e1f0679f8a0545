//! The composition root: the builder that puts a system together (its settings,
//! its wire registry, its remote settings and transport), termination, and why a
//! system could not be built. The system's handle and shared state live in the
//! actor layer (`actor/system.rs`); `scope.rs` and `shutdown.rs` add to the handle
//! from here too.
//!
//! Layer: system, the top of `runtime/src` but for the testkit. May import every
//! layer below, the network (`net/`) included.

use crate::actor::ActorSystem;
use crate::ground::failure::Failure;

mod builder;
mod error;
pub(crate) mod scope;
pub mod shutdown;
mod termination;

pub use self::builder::ActorSystemBuilder;
pub use self::error::SystemError;

impl ActorSystem {
    /// A system named `name` with default settings, on the current tokio runtime.
    ///
    /// # Errors
    ///
    /// As [`ActorSystemBuilder::build`].
    pub fn new(name: &str) -> Result<Self, SystemError> {
        Self::builder(name).build()
    }

    /// A builder for a system named `name`.
    pub fn builder(name: &str) -> ActorSystemBuilder {
        ActorSystemBuilder::new(name)
    }

    /// Stop every actor, bottom-up, and wait until that is done.
    ///
    /// `/user` stops first, then `/system`. Every actor sees `PostStop` after all of
    /// its children have seen theirs; an `async` handler that awaits is dropped where
    /// it awaits (see the crate docs, "Cancel safety of handlers"). The whole tree
    /// races one deadline,
    /// [`Settings::shutdown_timeout`](crate::Settings::shutdown_timeout): an actor
    /// still running a handler when it passes (a synchronous one, or a `PostStop`
    /// that awaits) is
    /// cancelled and may never see `PostStop`; its parent stops waiting for it, and
    /// every other actor still sees its own, children before parents. Calling it
    /// again, or after an escalation terminated the system, waits for the same end.
    ///
    /// A system with remoting then tells each linked peer that it stops, and reads
    /// what the peers had already written until each closes its connection, so that
    /// a message in flight is delivered or dead-lettered, never silently lost: this
    /// adds a round trip to each peer, bounded by a second for the notices and a
    /// second for the reading.
    ///
    /// Termination begins when this is called, not when the future is first polled,
    /// so synchronous code (a `Drop`, a signal handler, a callback) can start it and
    /// never wait: `drop(system.terminate());` terminates the system (`let _ =`
    /// does too, and clippy's `let_underscore_future` lint warns of it). Await the
    /// future, or [`when_terminated`](Self::when_terminated), to wait for the end.
    ///
    /// # Cancel safety
    ///
    /// Termination runs in a task of its own: dropping this future stops only the
    /// waiting, not the shutdown.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), tapio::SystemError> {
    /// let system = tapio::ActorSystem::new("sync-stop")?;
    /// drop(system.terminate()); // from code that cannot await: it has begun
    /// assert!(system.is_terminating());
    /// system.when_terminated().await.ok();
    /// assert_eq!(system.live_actors(), 0);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use = "termination has begun already; await this future to wait until every actor has stopped"]
    pub fn terminate(&self) -> impl Future<Output = ()> + Send + 'static {
        self.shared.begin_termination();
        let system = self.clone();
        async move {
            let _ = system.when_terminated().await;
        }
    }

    /// Wait until the system has terminated.
    ///
    /// # Errors
    ///
    /// The failure that terminated it, when an escalation reached a guardian: the
    /// original error, with [`Failure::climbed`] listing each actor it passed.
    pub async fn when_terminated(&self) -> Result<(), Failure> {
        let mut outcome = self.shared.outcome.subscribe();
        match outcome.wait_for(Option::is_some).await {
            Ok(outcome) => outcome.clone().unwrap_or(Ok(())),
            // The sender lives as long as `self.shared`, which `self` keeps alive.
            Err(_) => Ok(()),
        }
    }
}
