//! Answers to requests: where a `#[message(reply = T)]` handler's return value goes.
//!
//! A handler's output is finished through `OutputCheck`: five traits with a `finish`
//! method, picked by autoref in generated code (`(&&&&&check).finish(..)`), each for the
//! first case whose bounds hold: a valid output; a `Result` whose error can fail the
//! actor (with `Finish`'s messages about what a handler may return); a `Result` whose
//! error cannot (the never-implemented `HandlerError`, so the error reads "a handler
//! cannot fail with a `u32`" rather than a missing `std::error::Error`); any other
//! output; and a reply slot that is not known because the parameter is not a message
//! (no error here: the protocol enum reports it). `String` and `&'static str` errors box
//! into a `BoxError`.
//!
//! `UNHANDLED`, a thread-local, carries the type name of a message whose handler
//! answered `unhandled`, from the generated `finish` to `NextStep::of`, in the same poll
//! on the same thread.
//!
//! Layer: actor. `ReplyTo`'s wire form (its `ReplySlot` impl: the ref a request's
//! frame names, decoded into a live ref) lives with the refs on the wire, in
//! `net/wire/refs.rs`.

use std::fmt;

use crate::actor::behavior::{Behavior, Behaviors, IntoNext};
use crate::actor::context::ActorContext;
use crate::actor::{ActorPath, ActorRef};
use crate::ground::events::DeadLetterReason;
use crate::ground::failure::{Failure, IntoFailure};
use crate::ground::message::{AnsweredBy, Message, NoReply, ReplySlot};

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

/// The reply slot of a request whose reply is `Self`: what `#[message(reply = T)]`
/// names as its `ReplySlot`, so a reply type that is no message is one error (this
/// bound), not one more for every place the slot's type is checked.
#[doc(hidden)]
pub trait SlotFor {
    /// `ReplyTo<Self>`.
    type Slot: ReplySlot;
}

impl<T: Message> SlotFor for T {
    type Slot = ReplyTo<T>;
}

/// A message that is answered with exactly one `Reply`.
///
/// Declare it with `#[message(reply = T)]`. A handler for a request returns the
/// reply (or a `Result` of it); any other return type fails to compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a request, so nothing declares its reply type",
    note = "declare the reply type on the message: `#[message(reply = YourReply)]`"
)]
pub trait Request: Message<ReplySlot = ReplyTo<<Self as Request>::Reply>> {
    /// The type of the answer.
    type Reply: Message;
}

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

    /// Whoever awaits the answer (what a request's frame names as its reply-to).
    pub(crate) fn target(&self) -> Option<&ActorRef<T>> {
        self.target.as_ref()
    }

    /// The request this answers went to a state that does not handle it: its asker
    /// hears so at once (`ReplySlot::refuse`).
    pub(crate) fn refuse_unhandled(self, state: &'static str) {
        if let Some(target) = self.target {
            target.refuse_answer(crate::actor::promise::Refusal::NotHandled { state });
        }
    }

    /// Answer with what a request handler returns, from the actor of `ctx`, and
    /// return the next behavior: what the code `#[actor]` generates does with a
    /// request handler's return value, for an [`Actor`](crate::Actor) written by
    /// hand.
    ///
    /// `output` is the answer (then the behavior stays the same), a
    /// [`ReplyThen`] (the answer, then its next behavior), or a `Result` of either,
    /// whose error is the actor's failure and sends no answer.
    ///
    /// # Errors
    ///
    /// The failure `output` carries; nothing is sent then.
    pub fn answer<P, O>(self, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure>
    where
        P: Message,
        O: IntoReply<T, P>,
    {
        // On a failure nothing is sent: a promise of another system hears, once the
        // supervisor has decided, whether the actor stops (see `RemoteSlot`'s
        // `Drop`), as a local asker reads its target's state.
        output.reply_through(self, ctx)
    }

    /// Hand `request`, with the duty to answer it, to `target`, which answers
    /// whoever awaits this reply directly (S52): the actor that forwards is free at
    /// once. `target` must answer `request` with `T`, which the compiler checks. An
    /// ask awaiting the answer fails at once if `target` cannot take the request
    /// (`MailboxFull`, `TargetTerminated`) or stops while it holds it
    /// (`TargetTerminated`). In an `#[actor]` handler, return a [`Forward`] instead.
    pub fn forward<M, Q>(self, target: &ActorRef<Q>, request: M)
    where
        M: Request<Reply = T> + AnsweredBy<Q>,
        Q: Message,
    {
        let awaiting = self.target.clone();
        let delivery = target.deliver_to(request.wrap_into(self));
        let refusal = match delivery {
            crate::actor::Delivery::Queued => return,
            crate::actor::Delivery::Full => crate::actor::promise::Refusal::MailboxFull,
            crate::actor::Delivery::Refused => crate::actor::promise::Refusal::TargetTerminated,
        };
        if let Some(awaiting) = awaiting {
            awaiting.refuse_answer(refusal);
        }
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

/// What a request handler may return: the declared reply type `R`, a
/// [`ReplyThen<R, P>`] (the answer, then a next behavior for the actor of protocol
/// `P`), a [`Forward<R>`] (the request handed on, to an actor that answers it), or
/// a `Result` of one of these whose error fails the actor (and sends no answer).
#[diagnostic::on_unimplemented(
    message = "a handler of a request answered with `{R}` cannot return `{Self}`",
    label = "expected `{R}`, a `ReplyThen<{R}, {P}>`, a `Forward<{R}>`, or a `Result` of one of these",
    note = "the request declares its reply with `#[message(reply = {R})]`: return that type (or `ReplyThen<{R}, {P}>` to answer and then stop or switch, or `Forward::to(&other, request)` to have another actor answer), or change the declaration"
)]
pub trait IntoReply<R: Message, P: Message> {
    /// Carry it out: send the answer through `reply` (a [`Forward`] hands `reply`
    /// on with its request) and return the next behavior; a failure sends nothing.
    #[doc(hidden)]
    fn reply_through(
        self,
        reply: ReplyTo<R>,
        ctx: &ActorContext<P>,
    ) -> Result<Behavior<P>, Failure>;
}

impl<R: Message, P: Message> IntoReply<R, P> for R {
    #[inline]
    fn reply_through(
        self,
        reply: ReplyTo<R>,
        ctx: &ActorContext<P>,
    ) -> Result<Behavior<P>, Failure> {
        reply.send(self, ctx.path(), ctx.system());
        Ok(Behaviors::same())
    }
}

impl<R: Message, P: Message> IntoReply<R, P> for ReplyThen<R, P> {
    #[inline]
    fn reply_through(
        self,
        reply: ReplyTo<R>,
        ctx: &ActorContext<P>,
    ) -> Result<Behavior<P>, Failure> {
        reply.send(self.answer, ctx.path(), ctx.system());
        Ok(self.next)
    }
}

impl<R: Message, P: Message> IntoReply<R, P> for Forward<R> {
    #[inline]
    fn reply_through(self, reply: ReplyTo<R>, _: &ActorContext<P>) -> Result<Behavior<P>, Failure> {
        (self.pass)(reply);
        Ok(Behaviors::same())
    }
}

// One impl for each `Result`, not one over `Result<T: IntoReply, E>`: a reply type
// may itself be a `Result`, and the general impl would overlap with the one for `R`.
impl<R: Message, P: Message, E: IntoFailure> IntoReply<R, P> for Result<R, E> {
    #[inline]
    fn reply_through(
        self,
        reply: ReplyTo<R>,
        ctx: &ActorContext<P>,
    ) -> Result<Behavior<P>, Failure> {
        self.map_err(IntoFailure::into_failure)?
            .reply_through(reply, ctx)
    }
}

impl<R: Message, P: Message, E: IntoFailure> IntoReply<R, P> for Result<ReplyThen<R, P>, E> {
    #[inline]
    fn reply_through(
        self,
        reply: ReplyTo<R>,
        ctx: &ActorContext<P>,
    ) -> Result<Behavior<P>, Failure> {
        self.map_err(IntoFailure::into_failure)?
            .reply_through(reply, ctx)
    }
}

impl<R: Message, P: Message, E: IntoFailure> IntoReply<R, P> for Result<Forward<R>, E> {
    #[inline]
    fn reply_through(
        self,
        reply: ReplyTo<R>,
        ctx: &ActorContext<P>,
    ) -> Result<Behavior<P>, Failure> {
        self.map_err(IntoFailure::into_failure)?
            .reply_through(reply, ctx)
    }
}

/// A request handed on, with the duty to answer it, to another actor: return it
/// from an `#[actor]` request handler, and the other actor answers whoever asked,
/// directly (S52). The handler's actor is free at once; the other actor must answer
/// the request with `R`, the reply the handler's request declares, which the
/// compiler checks. An ask awaiting the answer fails at once if the other actor
/// cannot take the request or stops while it holds it (S23).
///
/// ```
/// use tapio::prelude::*;
/// use tapio::Forward;
///
/// #[message(reply = u64)]
/// pub struct Track(pub String);
///
/// #[derive(Clone, Default)]
/// pub struct Group(u64);
///
/// #[actor]
/// impl Group {
///     fn track(&mut self, _: Track) -> u64 {
///         self.0 += 1;
///         self.0
///     }
/// }
///
/// #[derive(Clone)]
/// pub struct Manager {
///     group: ActorRef<GroupMsg>,
/// }
///
/// #[actor]
/// impl Manager {
///     // The group answers whoever asked the manager.
///     fn track(&mut self, request: Track) -> Forward<u64> {
///         Forward::to(&self.group, request)
///     }
/// }
///
/// # #[tokio::main] async fn main() {
/// let system = ActorSystem::new("iot").unwrap();
/// let group = system.spawn(Group::default(), "group").unwrap();
/// let manager = system.spawn(Manager { group }, "manager").unwrap();
/// assert_eq!(manager.ask(Track("dev-1".into())).await.unwrap(), 1);
/// system.terminate().await;
/// # }
/// ```
#[must_use = "a `Forward` does nothing unless a request handler returns it"]
pub struct Forward<R: Message> {
    /// Hands the request on, with the reply slot it is given.
    pass: Box<dyn FnOnce(ReplyTo<R>) + Send>,
}

impl<R: Message> Forward<R> {
    /// Hand `request` on to `target`, which answers it with `R`.
    pub fn to<M, Q>(target: &ActorRef<Q>, request: M) -> Self
    where
        M: Request<Reply = R> + AnsweredBy<Q>,
        Q: Message,
    {
        let target = target.clone();
        Self {
            pass: Box::new(move |reply: ReplyTo<R>| reply.forward(&target, request)),
        }
    }
}

impl<R: Message> fmt::Debug for Forward<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Forward")
    }
}

/// An answer to a request, then what the actor does next: return it from a request
/// handler to answer and then stop, or answer and then switch behavior.
///
/// The answer is sent first, so whoever asked gets it, and then the next behavior
/// applies: [`ReplyThen::stop`] stops the actor after the answer (an `ask` resolves
/// with the answer, and watchers then see the actor terminated).
///
/// `P` is the protocol of the answering actor: in an `#[actor]` block, the
/// generated enum, as in `ReplyThen<u64, AccountMsg>`.
///
/// # Examples
///
/// ```
/// use tapio::prelude::*;
/// use tapio::ReplyThen;
///
/// #[message(reply = u64)]
/// pub struct Close;
///
/// #[derive(Clone, Default)]
/// pub struct Account { balance: u64 }
///
/// #[actor]
/// impl Account {
///     // Answer with the final balance, then stop.
///     fn close(&mut self, _: Close) -> ReplyThen<u64, AccountMsg> {
///         ReplyThen::stop(self.balance)
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let system = ActorSystem::new("bank")?;
/// let account = system.spawn(Account { balance: 7 }, "account")?;
/// assert_eq!(account.ask(Close).await?, 7);
/// # system.terminate().await;
/// # Ok(())
/// # }
/// ```
#[must_use = "a `ReplyThen` does nothing unless a request handler returns it"]
pub struct ReplyThen<R, P: Message> {
    answer: R,
    next: Behavior<P>,
}

impl<R: Message, P: Message> ReplyThen<R, P> {
    /// Answer with `answer`, then continue as `next`: [`Behaviors::same`],
    /// [`Behaviors::stopped`], or another behavior to switch to.
    pub fn new(answer: R, next: impl Into<Behavior<P>>) -> Self {
        Self {
            answer,
            next: next.into(),
        }
    }

    /// Answer with `answer`, then stop the actor.
    pub fn stop(answer: R) -> Self {
        Self::new(answer, Behaviors::stopped())
    }

    /// The answer.
    pub fn answer(&self) -> &R {
        &self.answer
    }

    /// What the actor does after answering.
    pub fn next(&self) -> &Behavior<P> {
        &self.next
    }
}

impl<R: fmt::Debug, P: Message> fmt::Debug for ReplyThen<R, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplyThen")
            .field("answer", &self.answer)
            .field("next", &self.next)
            .finish()
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

impl<P: Message, R: Message, O: IntoReply<R, P>> Finish<P, O> for ReplyTo<R> {
    #[inline]
    fn finish(self, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure> {
        self.answer(ctx, output)
    }
}

/// Finish one message of type `M`: `slot` says whether `output` is an answer or a
/// next behavior. A handler that answers `unhandled` has consumed its message, so
/// the message's type is noted here for the dead letter the cell publishes.
#[doc(hidden)]
#[inline(always)]
pub(crate) fn finish<M, P, S, O>(
    slot: S,
    ctx: &ActorContext<P>,
    output: O,
) -> Result<Behavior<P>, Failure>
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

/// How the code `#[actor]` generates finishes a message: `(&&&&&check).finish::<M>(slot,
/// ctx, output)`, where the number of `&` picks the first of five traits whose impl's
/// bounds hold (autoref specialization). Every level calls [`finish`] the same way;
/// they differ in what they require of the types, and so in the one error a wrong
/// handler gets:
///
/// 1. `S: Finish<P, O>`: nothing more; this is every valid handler.
/// 2. `S` is a known reply slot and `O` a `Result` whose error can fail the actor:
///    `S: Finish<P, O>`, whose messages (`IntoNext`, `IntoReply`) say what the
///    handler may return.
/// 3. `O` is a `Result` whose error cannot fail the actor (`Result<(), u32>`): the
///    never-implemented [`HandlerError`] of the error type, so the message is about
///    it, rather than rustc's "`u32: std::error::Error` is not satisfied" from deep
///    inside `IntoFailure`'s blanket impl.
/// 4. `S` is a known reply slot: `S: Finish<P, O>`.
/// 5. `S` is not known: the handler's parameter is not a message, which the protocol
///    enum already reports; nothing more is required, and the body is never run.
#[doc(hidden)]
#[allow(missing_debug_implementations)]
pub struct OutputCheck<S, P, O>(std::marker::PhantomData<Types<S, P, O>>);

/// The types an [`OutputCheck`] is about, without owning any.
type Types<S, P, O> = fn() -> (S, P, O);

impl<S, P, O> OutputCheck<S, P, O> {
    /// The check for `output`'s type.
    #[inline(always)]
    pub fn of(_output: &O) -> Self {
        Self(std::marker::PhantomData)
    }
}

/// A reply slot the runtime defines: [`NoReply`] or [`ReplyTo`]. The slot of a type
/// that is not a message is not one.
#[doc(hidden)]
pub trait KnownSlot {}

impl KnownSlot for NoReply {}

impl<R: Message> KnownSlot for ReplyTo<R> {}

/// Level 1 of [`OutputCheck`]: a valid output.
#[doc(hidden)]
pub trait OutputFinishes<S, P: Message, O> {
    /// Finish one message of type `M`: see [`finish`].
    fn finish<M>(self, slot: S, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure>;
}

impl<S: Finish<P, O>, P: Message, O> OutputFinishes<S, P, O> for &&&&&OutputCheck<S, P, O> {
    #[inline(always)]
    fn finish<M>(self, slot: S, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure> {
        finish::<M, P, S, O>(slot, ctx, output)
    }
}

/// Level 2 of [`OutputCheck`]: a `Result` whose error can fail the actor, but whose
/// value is not an answer.
#[doc(hidden)]
pub trait ResultWithError<S, P: Message, T, E> {
    /// Finish one message of type `M`: see [`finish`].
    fn finish<M>(
        self,
        slot: S,
        ctx: &ActorContext<P>,
        output: Result<T, E>,
    ) -> Result<Behavior<P>, Failure>
    where
        S: Finish<P, Result<T, E>>;
}

impl<S: KnownSlot, P: Message, T, E: IntoFailure> ResultWithError<S, P, T, E>
    for &&&&OutputCheck<S, P, Result<T, E>>
{
    #[inline(always)]
    fn finish<M>(
        self,
        slot: S,
        ctx: &ActorContext<P>,
        output: Result<T, E>,
    ) -> Result<Behavior<P>, Failure>
    where
        S: Finish<P, Result<T, E>>,
    {
        finish::<M, P, S, Result<T, E>>(slot, ctx, output)
    }
}

/// Level 3 of [`OutputCheck`]: a `Result` whose error cannot fail the actor.
#[doc(hidden)]
pub trait ErrorCannotFail<S, P: Message, T, E> {
    /// Never compiles: `E` is not a [`HandlerError`].
    fn finish<M>(
        self,
        slot: S,
        ctx: &ActorContext<P>,
        output: Result<T, E>,
    ) -> Result<Behavior<P>, Failure>
    where
        E: HandlerError;
}

impl<S, P: Message, T, E> ErrorCannotFail<S, P, T, E> for &&&OutputCheck<S, P, Result<T, E>> {
    fn finish<M>(self, _: S, _: &ActorContext<P>, _: Result<T, E>) -> Result<Behavior<P>, Failure>
    where
        E: HandlerError,
    {
        Err(Failure::from_boxed(
            "a handler error that is not an error".into(),
        ))
    }
}

/// Level 4 of [`OutputCheck`]: any other output of a handler of a message.
#[doc(hidden)]
pub trait KnownSlotOutput<S, P: Message, O> {
    /// Finish one message of type `M`: see [`finish`].
    fn finish<M>(self, slot: S, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure>
    where
        S: Finish<P, O>;
}

impl<S: KnownSlot, P: Message, O> KnownSlotOutput<S, P, O> for &&OutputCheck<S, P, O> {
    #[inline(always)]
    fn finish<M>(self, slot: S, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure>
    where
        S: Finish<P, O>,
    {
        finish::<M, P, S, O>(slot, ctx, output)
    }
}

/// Level 5 of [`OutputCheck`]: the reply slot is not known, because the handler's
/// parameter is not a message, which the protocol enum already reports.
#[doc(hidden)]
pub trait UnknownSlot<S, P: Message, O> {
    /// Never run: the program does not compile.
    fn finish<M>(self, slot: S, ctx: &ActorContext<P>, output: O) -> Result<Behavior<P>, Failure>;
}

impl<S, P: Message, O> UnknownSlot<S, P, O> for &OutputCheck<S, P, O> {
    fn finish<M>(self, _: S, _: &ActorContext<P>, _: O) -> Result<Behavior<P>, Failure> {
        Err(Failure::from_boxed(
            "a handler of a type that is not a message".into(),
        ))
    }
}

/// Never implemented: [`OutputCheck`] requires it of a handler's error type that
/// cannot fail an actor, for the message.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a handler cannot fail with a `{Self}`: its error must be a `std::error::Error`",
    label = "`{Self}` is not a `std::error::Error`",
    note = "a handler's `Err` fails the actor, and supervision matches failures by type (`on_failure::<E>(..)`): return `Result<_, E>` with `E: std::error::Error + Send + Sync + 'static`, a `tapio::BoxError`, or a `String` or `&'static str` message"
)]
pub trait HandlerError {}
