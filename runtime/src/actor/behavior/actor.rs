//! Struct-style actors: a value with fields and one handler per message type.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::actor::behavior::{Behavior, Behaviors, IntoNext};
use crate::actor::context::ActorContext;
use crate::actor::signal::Signal;
use crate::actor::supervision::Supervise;
use crate::ground::failure::Failure;
use crate::ground::message::{Message, Protocol};

/// An actor written as a struct: its fields are its state, changed in place without
/// a lock, because the actor handles one message at a time.
///
/// `#[actor]` implements this trait from an `impl` block with one method per message
/// type: it generates the protocol enum (`Self::Msg`) and the `handle` that
/// dispatches to the methods. Writing it by hand is possible and is what the
/// `counter_without_macros` example shows.
///
/// A value of an `Actor` type that is also `Clone` can be spawned directly; a
/// restart starts again from a clone of that value. Otherwise build it in
/// [`Behaviors::setup`].
pub trait Actor: Protocol + Send + 'static {
    /// Handle one message.
    fn handle<'a>(
        &'a mut self,
        ctx: &'a mut ActorContext<Self::Msg>,
        message: Self::Msg,
    ) -> Handled<'a, Self::Msg>;

    /// Supervise this actor: `Counter::default().supervise().on_failure::<E>(..)`,
    /// the same as `Behaviors::supervise(Counter::default())`. A restart starts again
    /// from a clone of this value.
    fn supervise(self) -> Supervise<Self::Msg>
    where
        Self: Sized + Clone + Sync,
    {
        Behaviors::supervise(self)
    }

    /// Called once the actor is installed, before its first message (and again on
    /// each restart): what a state machine's initial state does on entry. The
    /// default does nothing; an error fails the start.
    #[doc(hidden)]
    fn started(&mut self, ctx: &mut ActorContext<Self::Msg>) -> Result<(), Failure> {
        let _ = ctx;
        Ok(())
    }

    /// Handle a signal. The default leaves every signal unhandled.
    fn signal<'a>(
        &'a mut self,
        ctx: &'a mut ActorContext<Self::Msg>,
        signal: &'a Signal,
    ) -> Handled<'a, Self::Msg> {
        let _ = (ctx, signal);
        Handled::ready(Behaviors::unhandled())
    }
}

type HandlerFuture<'a, P> = Pin<Box<dyn Future<Output = Result<Behavior<P>, Failure>> + Send + 'a>>;

/// What a struct actor's handler produced: an answer now, or a future of one.
///
/// A synchronous handler costs no allocation; an `async` one is boxed once per
/// message. While the future runs the actor takes no other message; a stop or a
/// child's escalation drops the future where it awaits (see the crate docs, "Cancel
/// safety of handlers"), and other signals wait until it is done.
pub struct Handled<'a, P: Message>(pub(crate) HandledKind<'a, P>);

pub(crate) enum HandledKind<'a, P: Message> {
    Ready(Result<Behavior<P>, Failure>),
    Pending(HandlerFuture<'a, P>),
}

impl<'a, P: Message> Handled<'a, P> {
    /// The handler is done: `outcome` is the next behavior, `()`, or a `Result`.
    #[inline]
    pub fn ready<R: IntoNext<P>>(outcome: R) -> Self {
        Self(HandledKind::Ready(outcome.into_next()))
    }

    /// The handler continues as `future`.
    pub fn pending<F>(future: F) -> Self
    where
        F: Future + Send + 'a,
        F::Output: IntoNext<P>,
    {
        Self(HandledKind::Pending(Box::pin(async move {
            future.await.into_next()
        })))
    }
}

impl<P: Message> fmt::Debug for Handled<'_, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            HandledKind::Ready(Ok(next)) => write!(f, "Handled::Ready({next:?})"),
            HandledKind::Ready(Err(failure)) => write!(f, "Handled::Failed({failure})"),
            HandledKind::Pending(_) => f.write_str("Handled::Pending"),
        }
    }
}
