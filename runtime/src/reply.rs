//! Answers to requests: where a `#[message(reply = T)]` handler's return value goes.

use std::fmt;

use crate::actor::context::ActorContext;
use crate::actor::{ActorPath, ActorRef};
use crate::behavior::{Behavior, Behaviors, IntoNext};
use crate::events::DeadLetterReason;
use crate::failure::{Failure, IntoFailure};
use crate::message::{Message, ReplySlot};

/// Where the answer to one request goes: the ref of whoever asked, or nobody when the
/// request was told.
///
/// The protocol enum that `#[actor]` generates carries one next to every request, and
/// the generated dispatch sends the handler's return value through it. An answer
/// nobody awaits becomes a dead letter with the reason
/// [`NoReplyExpected`](crate::DeadLetterReason::NoReplyExpected).
pub struct ReplyTo<T: Message> {
    target: Option<ActorRef<T>>,
}

impl<T: Message> Default for ReplyTo<T> {
    fn default() -> Self {
        Self::nobody()
    }
}

impl<T: Message> ReplySlot for ReplyTo<T> {}

/// The reply slot of a message that is not a request: there is no answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoReply;

impl ReplySlot for NoReply {}

impl<T: Message> ReplyTo<T> {
    /// Nobody awaits the answer.
    pub fn nobody() -> Self {
        Self { target: None }
    }

    /// Send the answer to `target`.
    pub fn to(target: ActorRef<T>) -> Self {
        Self {
            target: Some(target),
        }
    }

    /// Whether someone awaits the answer.
    pub fn is_expected(&self) -> bool {
        self.target.is_some()
    }

    /// Deliver `answer`; `from` is the answering actor, named in the dead letter when
    /// nobody awaits it.
    pub fn send(self, answer: T, from: &ActorPath, system: &crate::ActorSystem) {
        match self.target {
            Some(target) => target.deliver(answer),
            None => system
                .shared()
                .dead_letter(answer, from, DeadLetterReason::NoReplyExpected),
        }
    }
}

impl<T: Message> fmt::Debug for ReplyTo<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Some(target) => write!(f, "ReplyTo({target})"),
            None => f.write_str("ReplyTo(nobody)"),
        }
    }
}

/// What a request handler may return: the declared reply type `R`, or a `Result` of
/// it whose error fails the actor.
#[diagnostic::on_unimplemented(
    message = "a handler of a request answered with `{R}` cannot return `{Self}`",
    label = "expected `{R}`, or a `Result<{R}, E>`",
    note = "the request declares its reply with `#[message(reply = {R})]`: return that type, or change the declaration"
)]
pub trait IntoReply<R: Message> {
    /// The answer, or the failure.
    fn into_reply(self) -> Result<R, Failure>;
}

impl<R: Message> IntoReply<R> for R {
    #[inline]
    fn into_reply(self) -> Result<R, Failure> {
        Ok(self)
    }
}

impl<R: Message, E: IntoFailure> IntoReply<R> for Result<R, E> {
    #[inline]
    fn into_reply(self) -> Result<R, Failure> {
        self.map_err(IntoFailure::into_failure)
    }
}

/// Turns a handler's output into the next behavior, sending the answer on the way
/// for a request. Used by the code `#[actor]` generates.
#[doc(hidden)]
pub trait Finish<P: Message, O> {
    /// Finish one message.
    fn finish(self, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure>;
}

impl<P: Message, O: IntoNext<P>> Finish<P, O> for NoReply {
    #[inline(always)]
    fn finish(self, _ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure> {
        output.into_next()
    }
}

impl<P: Message, R: Message, O: IntoReply<R>> Finish<P, O> for ReplyTo<R> {
    #[inline]
    fn finish(self, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure> {
        let answer = output.into_reply()?;
        self.send(answer, ctx.path(), ctx.system());
        Ok(Behaviors::same())
    }
}

/// Finish one message of type `M`: `slot` says whether `output` is an answer or a
/// next behavior. A handler that answers `unhandled` has consumed its message, so
/// the message's type is noted here for the dead letter the cell publishes.
#[doc(hidden)]
#[inline(always)]
pub fn finish<M, P, S, O>(slot: S, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure>
where
    P: Message,
    S: Finish<P, O>,
{
    let next = slot.finish(ctx, output);
    if let Ok(behavior) = &next
        && behavior.is_unhandled()
    {
        note_unhandled(std::any::type_name::<M>());
    }
    next
}

thread_local! {
    /// The type of the message a handler just left unhandled, from [`finish`] to the
    /// cell (or test kit) applying the answer, in the same poll on the same thread.
    static UNHANDLED: std::cell::Cell<Option<&'static str>> = const { std::cell::Cell::new(None) };
}

fn note_unhandled(message_type: &'static str) {
    UNHANDLED.with(|noted| noted.set(Some(message_type)));
}

/// The type of the message just left unhandled, if its handler said (handlers
/// written with `#[actor]` do); taking it clears it.
pub(crate) fn take_unhandled() -> Option<&'static str> {
    UNHANDLED.with(std::cell::Cell::take)
}
