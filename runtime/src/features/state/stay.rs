//! What a handler that stays in its state may answer: `()`, the reply of its request,
//! or a `Result` of either. Nothing else leaves a state but a switching handler's
//! [`Next`](super::Next), so a machine is left only by its table.
//!
//! A staying handler (`&mut self`), an `#[otherwise]` method and a hook are finished
//! through [`Staying`], a reply slot whose `Finish` accepts only those answers; a
//! `Behavior`, a `ReplyThen` or a `Machine` gets [`StayNext`]'s or [`StayReply`]'s
//! message on the handler's return type, saying how to switch or stop instead.

use crate::actor::behavior::{Behavior, IntoNext};
use crate::actor::context::ActorContext;
use crate::actor::reply::{Finish, Forward, IntoReply, KnownSlot, ReplyTo};
use crate::ground::failure::{Failure, IntoFailure};
use crate::ground::message::Message;
use crate::ground::message::NoReply;

/// The reply slot of a handler that stays in its state: the message's own slot, with
/// fewer answers allowed. Used by the code `#[state]` generates.
#[doc(hidden)]
#[derive(Debug)]
pub struct Staying<S>(pub S);

impl<S: KnownSlot> KnownSlot for Staying<S> {}

/// What a handler that stays in its state answers when its message is not a request.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a handler that stays in its state cannot answer with `{Self}`",
    label = "a handler that borrows its state (`&mut self`) answers `()` or a `Result<(), E>`",
    note = "only a switch of the `states(..)` table leaves a state: take the state by value, `fn go(self, ..) -> Next<Self>`, and answer `Next::to(Successor)`, `Next::stop()` or `Next::stay(self)`"
)]
pub trait StayNext<P: Message>: IntoNext<P> {}

impl<P: Message> StayNext<P> for () {}

impl<P: Message, E: IntoFailure> StayNext<P> for Result<(), E> {}

/// What a handler that stays in its state answers to a request whose reply is `R`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a request handler that stays in its state answers with `{R}`, not `{Self}`",
    label = "a handler that borrows its state (`&mut self`) answers `{R}`, a `Forward<{R}>`, or a `Result` of either",
    note = "to answer and then switch or stop, take the state by value, `fn ask(self, ..) -> ({R}, Next<Self>)`, and answer `(reply, Next::to(Successor))` or `(reply, Next::stop())`"
)]
pub trait StayReply<R: Message, P: Message>: IntoReply<R, P> {}

impl<R: Message, P: Message> StayReply<R, P> for R {}

impl<R: Message, P: Message, E: IntoFailure> StayReply<R, P> for Result<R, E> {}

impl<R: Message, P: Message> StayReply<R, P> for Forward<R> {}

impl<R: Message, P: Message, E: IntoFailure> StayReply<R, P> for Result<Forward<R>, E> {}

impl<P: Message, O: StayNext<P>> Finish<P, O> for Staying<NoReply> {
    #[inline(always)]
    fn finish(self, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure> {
        self.0.finish(ctx, output)
    }
}

impl<P: Message, R: Message, O: StayReply<R, P>> Finish<P, O> for Staying<ReplyTo<R>> {
    #[inline(always)]
    fn finish(self, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure> {
        self.0.finish(ctx, output)
    }
}

/// An `#[otherwise]` method's or a hook's answer, checked on its return type.
#[doc(hidden)]
#[inline(always)]
pub fn stay_next<P: Message, O: StayNext<P>>(output: O) -> O {
    output
}
