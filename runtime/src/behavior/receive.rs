//! The functional behavior: closures for messages and signals.

use std::fmt;
use std::sync::Arc;

use crate::actor::context::ActorContext;
use crate::behavior::{Behavior, Behaviors, IntoNext, Kind};
use crate::failure::Failure;
use crate::message::Message;
use crate::signal::Signal;

type MessageFn<P> = dyn Fn(&mut ActorContext<P>, P) -> Result<Behavior<P>, Failure> + Send + Sync;
type SignalFn<P> =
    dyn Fn(&mut ActorContext<P>, &Signal) -> Result<Behavior<P>, Failure> + Send + Sync;

/// A behavior made of a message handler and, optionally, a signal handler.
///
/// Built by [`Behaviors::receive`] and [`Behaviors::receive_message`]; it converts
/// into a [`Behavior`] wherever one is expected (`.into()` where a function has to
/// name the type).
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
    pub(crate) fn new<F>(on_message: F) -> Self
    where
        F: Fn(&mut ActorContext<P>, P) -> Result<Behavior<P>, Failure> + Send + Sync + 'static,
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

    pub(crate) fn message(
        &self,
        ctx: &mut ActorContext<P>,
        message: P,
    ) -> Result<Behavior<P>, Failure> {
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
