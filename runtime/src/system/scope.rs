//! A system that lives exactly as long as a block of code: terminated when the block
//! is done with it, however the block ends.

use std::future::Future;
use std::panic::resume_unwind;

use crate::actor::ActorSystem;
use crate::ground::failure::CatchPanic;
use crate::system::ActorSystemBuilder;
use crate::system::SystemError;

impl ActorSystem {
    /// Run `body` with a new system named `name`, then terminate the system: the
    /// system's owner is the block, and when the block is done so is the system.
    ///
    /// Rust has no `async` drop, so dropping every handle to a system does not stop
    /// its actors (they run on until [`terminate`](Self::terminate), or until the
    /// tokio runtime itself shuts down). `scope` ties the two together: whatever
    /// `body` returns is returned after every actor has stopped, a `body` that
    /// panics terminates the system before the panic goes on, and a `scope` future
    /// dropped before its end (a timeout, a `select!` that took another branch)
    /// begins the system's termination as it goes.
    ///
    /// An escalation that reached a guardian terminates the system early, while the
    /// block may still run; `scope` logs it at the end. To act on it, await
    /// [`when_terminated`](Self::when_terminated) inside the block.
    ///
    /// # Errors
    ///
    /// As [`ActorSystemBuilder::build`]; the body does not run then.
    ///
    /// # Examples
    ///
    /// ```
    /// use tapio::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let kept = ActorSystem::scope("scoped", |system| async move {
    ///     system.spawn(Behaviors::ignore::<u64>(), "idle")?;
    ///     Ok::<_, tapio::SpawnError>(system)
    /// })
    /// .await??;
    /// // The block is over, and so is its system.
    /// assert!(kept.spawn(Behaviors::ignore::<u64>(), "late").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn scope<F, Fut, T>(name: &str, body: F) -> Result<T, SystemError>
    where
        F: FnOnce(ActorSystem) -> Fut,
        Fut: Future<Output = T>,
    {
        Self::builder(name).scope(body).await
    }
}

impl ActorSystemBuilder {
    /// Build the system, run `body` with it, then terminate it; see
    /// [`ActorSystem::scope`].
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build); the body does not run then.
    pub async fn scope<F, Fut, T>(self, body: F) -> Result<T, SystemError>
    where
        F: FnOnce(ActorSystem) -> Fut,
        Fut: Future<Output = T>,
    {
        let system = self.build()?;
        let mut guard = TerminateOnDrop(Some(system.clone()));
        let outcome = CatchPanic(Box::pin(body(system.clone()))).await;
        system.terminate().await;
        if let Err(failure) = system.when_terminated().await {
            tracing::error!(
                system = system.name(),
                error = %failure,
                climbed = ?failure.climbed(),
                "the scoped system was ended by an escalation nobody caught"
            );
        }
        guard.0 = None;
        match outcome {
            Ok(output) => Ok(output),
            Err(panic) => resume_unwind(panic),
        }
    }
}

/// Begins the termination of a system whose scope was dropped before its end.
struct TerminateOnDrop(Option<ActorSystem>);

impl Drop for TerminateOnDrop {
    fn drop(&mut self) {
        if let Some(system) = self.0.take() {
            system.shared().begin_termination();
        }
    }
}
