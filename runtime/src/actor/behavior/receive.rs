//! The functional behavior: closures for messages and signals.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use crate::actor::behavior::{Behavior, Behaviors, HandledKind, IntoNext, Kind};
use crate::actor::context::ActorContext;
use crate::actor::signal::Signal;
use crate::ground::failure::Failure;
use crate::ground::message::Message;

/// A message handler: an answer now, or (for `receive_async`) a future of one that
/// may borrow the context until it is done.
type MessageFn<P> = dyn for<'a> Fn(&'a mut ActorContext<P>, P) -> HandledKind<'a, P> + Send + Sync;
type SignalFn<P> =
    dyn Fn(&mut ActorContext<P>, &Signal) -> Result<Behavior<P>, Failure> + Send + Sync;

/// A behavior made of a message handler and, optionally, a signal handler.
///
/// Built by [`Behaviors::receive`] and [`Behaviors::receive_message`], or by
/// [`Behaviors::receive_async`] and [`Behaviors::receive_message_async`] for an
/// `async` message handler; it converts into a [`Behavior`] wherever one is expected
/// (`.into()` where a function has to name the type). The signal handler is
/// synchronous in both cases.
///
/// # Examples
///
/// ```
/// use tapio::prelude::*;
///
/// let closing: Behavior<u64> = Behaviors::receive_message(|_: u64| Behaviors::stopped())
///     .on_signal(|ctx, signal| {
///         if *signal == Signal::PostStop {
///             tracing::info!("closed {}", ctx.path());
///         }
///         Behaviors::same()
///     })
///     .into();
/// # let _ = closing;
/// ```
pub struct Receive<P: Message>(Arc<Handlers<P>>);

// Behind one pointer, so a running `Receive` costs the cell one word.
struct Handlers<P: Message> {
    on_message: Arc<MessageFn<P>>,
    on_signal: Option<Arc<SignalFn<P>>>,
}

impl<P: Message> Receive<P> {
    /// A synchronous message handler.
    pub(crate) fn new<F>(on_message: F) -> Self
    where
        F: Fn(&mut ActorContext<P>, P) -> Result<Behavior<P>, Failure> + Send + Sync + 'static,
    {
        Self::from_fn(move |ctx, message| HandledKind::Ready(on_message(ctx, message)))
    }

    /// An `async` message handler: the closure is cloned for each message, and the
    /// clone is called, so the future owns what the closure captured and borrows
    /// only the context.
    pub(crate) fn new_async<F>(on_message: F) -> Self
    where
        F: for<'a> AsyncHandler<'a, P>,
    {
        Self::from_fn(move |ctx, message| {
            let future = on_message.clone().call(ctx, message);
            HandledKind::Pending(Box::pin(async move { future.await.into_next() }))
        })
    }

    fn from_fn<F>(on_message: F) -> Self
    where
        F: for<'a> Fn(&'a mut ActorContext<P>, P) -> HandledKind<'a, P> + Send + Sync + 'static,
    {
        Self(Arc::new(Handlers {
            on_message: Arc::new(on_message),
            on_signal: None,
        }))
    }

    /// Handle signals ([`Signal::PostStop`], [`Signal::PreRestart`],
    /// [`Signal::Terminated`]) with `handler`, replacing any signal handler set
    /// before. Without one, every signal is unhandled.
    pub fn on_signal<F, R>(self, handler: F) -> Self
    where
        F: Fn(&mut ActorContext<P>, &Signal) -> R + Send + Sync + 'static,
        R: IntoNext<P>,
    {
        Self(Arc::new(Handlers {
            on_message: self.0.on_message.clone(),
            on_signal: Some(Arc::new(move |ctx, signal| {
                handler(ctx, signal).into_next()
            })),
        }))
    }

    pub(crate) fn message<'a>(
        &self,
        ctx: &'a mut ActorContext<P>,
        message: P,
    ) -> HandledKind<'a, P> {
        (self.0.on_message)(ctx, message)
    }

    pub(crate) fn signal(
        &self,
        ctx: &mut ActorContext<P>,
        signal: &Signal,
    ) -> Result<Behavior<P>, Failure> {
        match &self.0.on_signal {
            Some(handler) => handler(ctx, signal),
            None => Ok(Behaviors::unhandled()),
        }
    }
}

impl<P: Message> Clone for Receive<P> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<P: Message> From<Receive<P>> for Behavior<P> {
    fn from(receive: Receive<P>) -> Self {
        Behavior::from_kind(Kind::Receive(receive))
    }
}

impl<P: Message> fmt::Debug for Receive<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receive")
            .field("on_signal", &self.0.on_signal.is_some())
            .finish_non_exhaustive()
    }
}

/// A closure that [`Behaviors::receive_async`] takes: called with the context and a
/// message, it returns a `Send` future of the answer, which may borrow the context.
///
/// Implemented for every closure `F: Clone + Send + Sync + 'static` whose call
/// returns such a future: an `async move |ctx, message| { .. }` closure, or a closure
/// returning an `async move` block. There is nothing to implement by hand. The trait
/// exists because Rust cannot yet say "the future of this async closure is `Send`"
/// in a bound; the answer type is [`AsyncHandler::Output`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an async message handler of protocol `{P}`",
    note = "pass an `async move |ctx, message| {{ .. }}` closure whose captures are `Clone` and whose future is `Send` (nothing that is not `Send`, such as an `Rc` or a `MutexGuard`, may be held across an `.await`)"
)]
pub trait AsyncHandler<'a, P: Message>: Clone + Send + Sync + 'static {
    /// What the future answers with: `()`, a next behavior, or a `Result` of one.
    type Output: IntoNext<P>;
    /// The future of one message.
    type Future: Future<Output = Self::Output> + Send + 'a;

    /// Start handling `message`.
    fn call(self, ctx: &'a mut ActorContext<P>, message: P) -> Self::Future;
}

impl<'a, P, F, Fut> AsyncHandler<'a, P> for F
where
    P: Message,
    F: FnOnce(&'a mut ActorContext<P>, P) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future + Send + 'a,
    Fut::Output: IntoNext<P>,
{
    type Output = Fut::Output;
    type Future = Fut;

    fn call(self, ctx: &'a mut ActorContext<P>, message: P) -> Fut {
        self(ctx, message)
    }
}
