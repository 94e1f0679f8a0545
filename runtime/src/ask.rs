//! Ask: send one request and await one answer, with a deadline.
//!
//! [`ActorRef::ask`](crate::ActorRef::ask) sends a request declared with
//! `#[message(reply = T)]` and resolves to a `T`: the reply type is known statically,
//! so a caller that expects another type, or a handler that answers with one, does
//! not compile (S21). [`ActorRef::ask_with`](crate::ActorRef::ask_with) is the same
//! for a message that carries its reply ref in a field, the way the reference library
//! writes requests.
//!
//! The ref the answer goes to is a promise, not an actor: cheap, and registered
//! nowhere. Three ways of not getting an answer are told apart:
//!
//! - [`AskError::Timeout`]: nothing came before the deadline (5 s unless
//!   [`Ask::timeout`] says otherwise). An answer that comes later is a dead letter
//!   ([`AskEnded`](crate::DeadLetterReason::AskEnded)) (S22).
//! - [`AskError::TargetTerminated`]: the target stopped before answering. The ask
//!   watches its target, so it fails at once instead of at the deadline (S23).
//! - [`AskError::Unanswered`]: the request was dropped without an answer, for
//!   example by a protocol that does not carry the reply ref.
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//! use tapio::prelude::*;
//!
//! #[message]
//! pub struct Count(pub u64);
//!
//! #[message(reply = Count)]
//! pub struct GetCount;
//!
//! #[derive(Clone, Default)]
//! pub struct Counter(u64);
//!
//! #[actor]
//! impl Counter {
//!     fn get(&mut self, _: GetCount) -> Count {
//!         Count(self.0)
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let system = ActorSystem::new("asking")?;
//! let counter = system.spawn(Counter(3), "counter")?;
//! let Count(n) = counter.ask(GetCount).timeout(Duration::from_millis(100)).await?;
//! assert_eq!(n, 3);
//! system.terminate().await;
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, oneshot};

use crate::actor::{ActorPath, ActorRef, AnyActorRef, promise};
use crate::message::{Accepts, Answers, Message, Request};
use crate::reply::ReplyTo;

/// Why an ask got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// No answer came before the deadline.
    #[error("{target} did not answer within {after:?}")]
    Timeout {
        /// The actor asked.
        target: ActorPath,
        /// The deadline.
        after: Duration,
    },
    /// The target stopped before it answered.
    #[error("{target} stopped before it answered")]
    TargetTerminated {
        /// The actor asked.
        target: ActorPath,
    },
    /// The request was dropped without an answer.
    #[error(
        "{target} dropped the request without answering: does its protocol carry the reply (a `#[message(reply = ..)]` handled by `#[actor]`, or a `reply_to` field)?"
    )]
    Unanswered {
        /// The actor asked.
        target: ActorPath,
    },
}

/// An ask on its way: await it for the answer. The request was sent when the ask was
/// made; [`Ask::timeout`] sets the deadline (5 s by default), counted from the first
/// poll.
#[must_use = "an ask does nothing with its answer unless it is awaited"]
pub struct Ask<R: Message> {
    answer: oneshot::Receiver<R>,
    target: AnyActorRef,
    /// Woken when the target ends; `None` when it had ended before the ask.
    end: Option<Arc<Notify>>,
    timeout: Duration,
}

impl<R: Message> Ask<R> {
    /// The deadline unless one is given.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

    /// Wait at most `timeout` for the answer.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn wait(self) -> Result<R, AskError> {
        let Self {
            mut answer,
            target,
            end,
            timeout,
        } = self;
        let target_ended = async {
            let Some(end) = end else {
                return;
            };
            let notified = end.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            // An end between taking the notice and enabling it would not wake us.
            if target.core().lane().is_closed() {
                return;
            }
            notified.await;
        };
        let path = || target.path().clone();
        // A request dropped by a target that stops (or had stopped) was not refused: its
        // target is gone.
        let dropped = || {
            if target.core().is_stopping() {
                AskError::TargetTerminated { target: path() }
            } else {
                AskError::Unanswered { target: path() }
            }
        };
        tokio::select! {
            biased;
            answer = &mut answer => answer.map_err(|_| dropped()),
            () = target_ended => answer
                .try_recv()
                // The target ended; an answer may have made it out just before.
                .map_err(|_| AskError::TargetTerminated { target: path() }),
            () = tokio::time::sleep(timeout) => answer
                .try_recv()
                .map_err(|_| AskError::Timeout { target: path(), after: timeout }),
        }
    }
}

impl<R: Message> IntoFuture for Ask<R> {
    type Output = Result<R, AskError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.wait())
    }
}

impl<R: Message> fmt::Debug for Ask<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ask")
            .field("target", &self.target)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl<P: Message> ActorRef<P> {
    /// Send `request` and await its answer, of the type the request declares with
    /// `#[message(reply = T)]`.
    pub fn ask<M>(&self, request: M) -> Ask<M::Reply>
    where
        M: Request + Message<ReplySlot = ReplyTo<<M as Request>::Reply>>,
        P: Answers<M>,
    {
        let (reply_to, ask) = self.prepare_ask();
        self.deliver(P::wrap_with(request, ReplyTo::to(reply_to)));
        ask
    }

    /// Build a request around a fresh reply ref, send it, and await what comes back to
    /// that ref: for messages that carry their reply ref in a field.
    ///
    /// ```
    /// # use std::time::Duration;
    /// use tapio::prelude::*;
    ///
    /// #[message]
    /// pub struct Lookup { pub title: String, pub reply_to: ActorRef<u32> }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let system = ActorSystem::new("desk")?;
    /// let desk = system.spawn(
    ///     Behaviors::receive_message(|lookup: Lookup| lookup.reply_to.tell(3_u32)),
    ///     "desk",
    /// )?;
    /// let shelf = desk
    ///     .ask_with(|reply_to| Lookup { title: "Dune".into(), reply_to })
    ///     .timeout(Duration::from_millis(50))
    ///     .await?;
    /// assert_eq!(shelf, 3);
    /// # system.terminate().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn ask_with<R, M, F>(&self, build: F) -> Ask<R>
    where
        R: Message,
        M: Message,
        P: Accepts<M>,
        F: FnOnce(ActorRef<R>) -> M,
    {
        let (reply_to, ask) = self.prepare_ask();
        self.deliver(P::wrap(build(reply_to)));
        ask
    }

    /// A promise for the answer, and the ask that awaits it.
    fn prepare_ask<R: Message>(&self) -> (ActorRef<R>, Ask<R>) {
        let target = self.erase();
        let (promise, answer) = promise(target.core().system());
        let end = target.core().lane().end_notice();
        let ask = Ask {
            answer,
            target,
            end,
            timeout: Ask::<R>::DEFAULT_TIMEOUT,
        };
        (ActorRef::local(promise), ask)
    }
}
