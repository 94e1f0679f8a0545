//! Blocking calls inside an actor: [`ActorContext::run_blocking`] runs them on tokio's
//! blocking pool, off the threads that run actors.
//!
//! Actors share a few threads: a handler that blocks its thread (a synchronous file
//! read, a database driver without `async`, a long computation, `std::thread::sleep`)
//! holds up every actor waiting for that thread, not only its own mailbox. On a
//! current-thread runtime that is every actor in the system. Nothing fails and
//! nothing is logged; the neighbours just stop, which is why this is the mistake that
//! is hardest to see in production.
//!
//! `ctx.run_blocking(f)` hands `f` to the blocking pool of the runtime the system runs
//! on ([`tokio::task::spawn_blocking`]) and returns a [`Blocking`] future of its
//! result, which an `async` handler awaits. While it waits:
//!
//! - its own actor takes no other message (it is still inside its handler), but it
//!   still reads its system lane: a stop interrupts the handler where it awaits, as
//!   for any `async` handler (see "Cancel safety of handlers" in the crate docs);
//! - every other actor keeps running, on a multi-thread runtime and on a
//!   current-thread runtime alike (tokio has a blocking pool for both).
//!
//! The future resolves to `Result<T, Failure>`: `?` in the handler makes a panic in
//! `f` the actor's failure, matched by supervision as [`Panicked`](crate::Panicked),
//! as if the handler itself had panicked.
//!
//! # Examples
//!
//! ```
//! use tapio::prelude::*;
//! use tapio::Failure;
//!
//! #[message(reply = u64)]
//! pub struct Checksum(pub Vec<u8>);
//!
//! #[derive(Clone, Default)]
//! pub struct Hasher;
//!
//! #[actor]
//! impl Hasher {
//!     async fn checksum(&mut self, ctx: &mut Ctx<Self>, Checksum(bytes): Checksum) -> Result<u64, Failure> {
//!         // Heavy, synchronous work: off the actors' threads.
//!         let sum = ctx
//!             .run_blocking(move || bytes.iter().map(|&b| u64::from(b)).sum())
//!             .await?;
//!         Ok(sum)
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let system = ActorSystem::new("hashing")?;
//! let hasher = system.spawn(Hasher, "hasher")?;
//! assert_eq!(hasher.ask(Checksum(vec![1, 2, 3])).await?, 6);
//! system.terminate().await;
//! # Ok(())
//! # }
//! ```
//!
//! [`ActorContext::run_blocking`]: crate::ActorContext::run_blocking
//!
//! # What is not counted
//!
//! A stop drops the `Blocking` future, not the call: the call runs on, detached, its
//! result thrown away. Nothing counts such calls, so termination does not wait for
//! them; dropping the runtime does. The call runs inside the actor's span and under the
//! caller's subscriber, so a thread-scoped subscriber sees its records.
//!
//! A thread-blocking handler has a second cost worth knowing: a task woken from a worker
//! thread goes to that worker's LIFO slot, which other workers do not steal, so an
//! actor woken by a handler that then blocks waits until the block ends.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::runtime::Handle;
use tokio::task::{JoinError, JoinHandle};

use crate::ground::failure::Failure;

/// Why a blocking call could not run, or its result could not come back.
///
/// It reaches the handler inside the [`Failure`] that [`Blocking`] resolves to
/// (supervision matches it with `on_failure::<BlockingError>(..)`). A panic in the
/// call is not one of these: it is a [`Panicked`](crate::Panicked) failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BlockingError {
    /// There is no tokio runtime to run the call on: the actor belongs to a
    /// `testkit::BehaviorTestKit` run outside any runtime.
    #[error(
        "`run_blocking` needs a tokio runtime and there is none here: run the handler \
         with `BehaviorTestKit::run_async` inside a runtime (`#[tokio::test]`), or test \
         the actor in a real system"
    )]
    NoRuntime,
    /// The runtime shut down before the call ran, so it never will.
    #[error(
        "the tokio runtime shut down before the blocking call ran: nothing can run on it \
         any more"
    )]
    RuntimeShutDown,
}

/// The result of a blocking call running on tokio's blocking pool: what
/// [`ActorContext::run_blocking`](crate::ActorContext::run_blocking) returns.
///
/// It resolves to the call's value, or to a [`Failure`]: [`Panicked`](crate::Panicked)
/// if the call panicked, a [`BlockingError`] if it could not run. It borrows nothing,
/// so it can be awaited while the context is used, kept in a local, or joined with
/// other futures.
///
/// # Cancel safety
///
/// The call starts when `run_blocking` is called, not when this future is first
/// polled, and it cannot be stopped from outside: dropping the future (as a stop
/// does, interrupting the handler that awaits it) lets the call run to its end on the
/// pool and throws its result away. A call that never returns keeps its pool thread,
/// and holds up dropping the runtime, until it does.
#[must_use = "the call runs whether or not this is awaited: await it to get its result"]
pub struct Blocking<T> {
    state: State<T>,
}

enum State<T> {
    /// The call was handed to the pool.
    Running(JoinHandle<T>),
    /// The call could not be handed over; the error is given once.
    Refused(Option<BlockingError>),
}

/// Hand `call` to the blocking pool of `runtime`, or else of the runtime this thread
/// is in, inside the caller's tracing span (the actor's, in a handler), with the
/// caller's subscriber: one set for this thread alone (`set_default`) is not the
/// pool thread's, and what the call logs would otherwise go past it.
pub(crate) fn start<T, F>(runtime: Option<&Handle>, call: F) -> Blocking<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let span = tracing::Span::current();
    let subscriber = tracing::dispatcher::get_default(Clone::clone);
    let call = move || tracing::dispatcher::with_default(&subscriber, || span.in_scope(call));
    let handle = match runtime {
        Some(runtime) => runtime.spawn_blocking(call),
        None => match Handle::try_current() {
            Ok(current) => current.spawn_blocking(call),
            Err(_) => {
                return Blocking {
                    state: State::Refused(Some(BlockingError::NoRuntime)),
                };
            }
        },
    };
    Blocking {
        state: State::Running(handle),
    }
}

impl<T> Future for Blocking<T> {
    type Output = Result<T, Failure>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.get_mut().state {
            State::Running(handle) => Pin::new(handle).poll(cx).map(|joined| match joined {
                Ok(value) => Ok(value),
                Err(error) => Err(failure_of(error)),
            }),
            State::Refused(error) => match error.take() {
                Some(error) => Poll::Ready(Err(Failure::new(error))),
                // Polled again after it answered: an answer is given once.
                None => Poll::Pending,
            },
        }
    }
}

/// What a call that did not return becomes: its panic, or the runtime's end.
fn failure_of(error: JoinError) -> Failure {
    match error.try_into_panic() {
        Ok(panic) => Failure::from_panic(panic),
        // Nothing aborts the task, so it was cancelled by the runtime's shutdown.
        Err(_) => Failure::new(BlockingError::RuntimeShutDown),
    }
}

impl<T> fmt::Debug for Blocking<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Running(handle) if handle.is_finished() => "finished",
            State::Running(_) => "running",
            State::Refused(_) => "refused",
        };
        f.debug_struct("Blocking").field("state", &state).finish()
    }
}
