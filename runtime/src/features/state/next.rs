//! What a switching handler answers: [`Next`], and the checks that keep a switch to
//! the declared successors.

use std::fmt;

use crate::actor::context::ActorContext;
use crate::actor::reply::ReplyTo;
use crate::features::state::{StateMachine, StateOf};
use crate::ground::failure::{Failure, IntoFailure};
use crate::ground::message::Message;
use crate::ground::message::NoReply;

/// What a handler that takes its state by value (`self`) answers: stay in the
/// state, stop the actor, or switch to a declared successor.
///
/// `S` is the state the handler belongs to, so a handler writes `-> Next<Self>`.
/// [`Next::to`] accepts only the successors the actor's `states(..)` table declares
/// for `S`; anything else does not compile.
///
/// A request's switching handler answers `(reply, Next<Self>)`.
#[must_use = "a state's handler returns what happens next"]
pub struct Next<S: StateOf> {
    step: Step<<S::Machine as StateMachine>::States>,
}

/// What happens next, with the state as the machine holds it.
pub(crate) enum Step<T> {
    /// Stay in the state, put back.
    Stay(T),
    /// Switch to this state.
    Switch(T),
    /// Stop the actor.
    Stop,
}

impl<S: StateOf> Next<S> {
    /// Stay in this state: hand the state back (`Next::stay(self)`).
    #[inline]
    pub fn stay(state: S) -> Self {
        Self {
            step: Step::Stay(state.into_states()),
        }
    }

    /// Stop the actor.
    #[inline]
    pub fn stop() -> Self {
        Self { step: Step::Stop }
    }

    /// Switch to `target`, a declared successor of `S`. The stash, if the state
    /// stashed anything, is replayed in front of the mailbox.
    #[inline]
    pub fn to<T>(target: T) -> Self
    where
        S: Transition<T>,
    {
        Self {
            step: Step::Switch(S::into_successor(target)),
        }
    }
}

impl<S: StateOf> fmt::Debug for Next<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let machine = <S::Machine as StateMachine>::state_name;
        match &self.step {
            Step::Stay(_) => write!(f, "Next::stay({})", S::NAME),
            Step::Switch(state) => write!(f, "Next::to({})", machine(state).unwrap_or("?")),
            Step::Stop => f.write_str("Next::stop()"),
        }
    }
}

/// `Self` may switch to `Target`: implemented by `#[actor(states(..))]` for every
/// switch its table declares, and for a machine written without the macros by
/// [`transitions!`](crate::state::transitions). A hand-written impl does not
/// compile: the trait is sealed by [`Declared`], which only those two implement,
/// and each of them declares a state's whole row once, so a second table for the
/// same state (widening the macro's) is a conflicting impl.
///
/// Every state also "switches" to a type nobody can build, so no state ever has a
/// single impl: rustc then never guesses the target from the only impl, and a wrong
/// switch always gets this message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot switch to `{Target}`: its actor's table does not list `{Target}` after `{Self}`",
    label = "not a declared successor of `{Self}`",
    note = "a state switches only to the states its actor's `states(..)` table lists after it: add `{Target}` there (`{Self} => {Target}`), or switch to one of the successors it declares: `{Successors}` (`NoSuccessors` for a state that switches to none)"
)]
pub trait Transition<Target, Successors = <Self as StateOf>::Successors>:
    StateOf + Declared<Target>
{
    /// `target`, as the enum of the machine's states.
    #[doc(hidden)]
    fn into_successor(target: Target) -> <Self::Machine as StateMachine>::States;
}

/// The seal of [`Transition`]: `Self => Target` is a row of a declared table.
/// Implemented only by what `#[actor(states(..))]` and
/// [`transitions!`](crate::state::transitions) write.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`Transition` is declared by a state machine's table, not implemented by hand",
    label = "`{Self} => {Target}` is in no table",
    note = "list the switch in the actor's table, `#[actor(states({Self} => {Target}, ..))]`; a machine written without the macros declares its table with `tapio::state::transitions!`"
)]
pub trait Declared<Target> {}

/// One table a state: what `#[actor(states(..))]` and
/// [`transitions!`](crate::state::transitions) write once for each state of the
/// table they declare, so a state declared twice is a conflicting impl.
#[doc(hidden)]
pub trait DeclaredTable {}

/// A type with no values, which every state may "switch" to (see [`Transition`]).
#[doc(hidden)]
#[derive(Debug)]
pub enum Unreachable {}

impl<S: StateOf> Declared<Unreachable> for S {}

impl<S: StateOf> Transition<Unreachable> for S {
    fn into_successor(target: Unreachable) -> <S::Machine as StateMachine>::States {
        match target {}
    }
}

/// What a switching handler of state `S` may answer for a message whose reply goes
/// to `Slot`: a [`Next<S>`] for a message that is not a request, `(reply, Next<S>)`
/// for a request, or a `Result` of either whose error fails the actor.
///
/// Generated code asks for [`TellSwitch`] or [`RequestSwitch`] directly (through
/// the slot's `switched`), whose messages say what each kind of message
/// answers; this trait joins them for a table written by hand (`switched`).
#[diagnostic::on_unimplemented(
    message = "a switching handler of `{S}` cannot answer with `{Self}` here",
    label = "expected `Next<{S}>`, or `(reply, Next<{S}>)` for a request",
    note = "a handler that takes `self` answers `Next<Self>` (`Next::stay(self)`, `Next::stop()`, `Next::to(successor)`), a request's handler `(reply, Next<Self>)`, or a `Result` of one of these"
)]
pub trait SwitchOutput<S: StateOf, Slot> {
    /// Answer the request (if it is one) and give the step.
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn into_step(
        self,
        reply: Slot,
        ctx: &ActorContext<<S::Machine as crate::Protocol>::Msg>,
    ) -> Result<Step<<S::Machine as StateMachine>::States>, Failure>;
}

impl<S: StateOf, O: TellSwitch<S>> SwitchOutput<S, NoReply> for O {
    #[inline]
    #[allow(private_interfaces)]
    fn into_step(
        self,
        _reply: NoReply,
        _ctx: &ActorContext<<S::Machine as crate::Protocol>::Msg>,
    ) -> Result<Step<<S::Machine as StateMachine>::States>, Failure> {
        self.into_tell_step()
    }
}

impl<S: StateOf, R: Message, O: RequestSwitch<S, R>> SwitchOutput<S, ReplyTo<R>> for O {
    #[inline]
    #[allow(private_interfaces)]
    fn into_step(
        self,
        reply: ReplyTo<R>,
        ctx: &ActorContext<<S::Machine as crate::Protocol>::Msg>,
    ) -> Result<Step<<S::Machine as StateMachine>::States>, Failure> {
        self.into_request_step(reply, ctx)
    }
}

/// What a switching handler of state `S` answers for a message that is not a
/// request: `Next<S>`, or a `Result` of it.
#[diagnostic::on_unimplemented(
    message = "a switching handler of `{S}` for a message that is not a request cannot answer with `{Self}`",
    label = "expected `Next<{S}>`: the message has no reply to send",
    note = "a handler that takes `self` answers `Next<Self>` (`Next::stay(self)`, `Next::stop()`, `Next::to(successor)`), or a `Result` of it; to answer the sender, declare the message a request (`#[message(reply = T)]`) and answer `(reply, Next<Self>)`"
)]
pub trait TellSwitch<S: StateOf> {
    /// The step.
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn into_tell_step(self) -> Result<Step<<S::Machine as StateMachine>::States>, Failure>;
}

impl<S: StateOf> TellSwitch<S> for Next<S> {
    #[inline]
    #[allow(private_interfaces)]
    fn into_tell_step(self) -> Result<Step<<S::Machine as StateMachine>::States>, Failure> {
        Ok(self.step)
    }
}

impl<S: StateOf, T: TellSwitch<S>, E: IntoFailure> TellSwitch<S> for Result<T, E> {
    #[allow(private_interfaces)]
    fn into_tell_step(self) -> Result<Step<<S::Machine as StateMachine>::States>, Failure> {
        self.map_err(IntoFailure::into_failure)?.into_tell_step()
    }
}

/// What a switching handler of state `S` answers for a request whose reply is `R`:
/// `(reply, Next<S>)`, or a `Result` of it.
#[diagnostic::on_unimplemented(
    message = "a switching handler of `{S}` for a request cannot answer with `{Self}`: it answers the reply, then the next state",
    label = "expected `({R}, Next<{S}>)`",
    note = "a request's handler that takes `self` answers `(reply, Next<Self>)`, such as `(reply, Next::to(successor))` or `(reply, Next::stop())`, or a `Result` of it: the reply is sent, then the switch is made"
)]
pub trait RequestSwitch<S: StateOf, R: Message> {
    /// Send the reply, and give the step.
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn into_request_step(
        self,
        reply: ReplyTo<R>,
        ctx: &ActorContext<<S::Machine as crate::Protocol>::Msg>,
    ) -> Result<Step<<S::Machine as StateMachine>::States>, Failure>;
}

impl<S: StateOf, R: Message> RequestSwitch<S, R> for (R, Next<S>) {
    #[allow(private_interfaces)]
    fn into_request_step(
        self,
        reply: ReplyTo<R>,
        ctx: &ActorContext<<S::Machine as crate::Protocol>::Msg>,
    ) -> Result<Step<<S::Machine as StateMachine>::States>, Failure> {
        let (answer, next) = self;
        reply.send(answer, ctx.path(), ctx.system());
        Ok(next.step)
    }
}

impl<S: StateOf, R: Message, T: RequestSwitch<S, R>, E: IntoFailure> RequestSwitch<S, R>
    for Result<T, E>
{
    #[allow(private_interfaces)]
    fn into_request_step(
        self,
        reply: ReplyTo<R>,
        ctx: &ActorContext<<S::Machine as crate::Protocol>::Msg>,
    ) -> Result<Step<<S::Machine as StateMachine>::States>, Failure> {
        self.map_err(IntoFailure::into_failure)?
            .into_request_step(reply, ctx)
    }
}

/// Declare the table of a state machine written without the macros: for each state,
/// the states it may switch to (none after the `=>` for a state that switches to
/// nothing). Each state is listed once, with its whole row.
///
/// It implements [`Transition`] for every row, which nothing else may do outside
/// `#[actor(states(..))]`; a state that the macro's table declares cannot be listed
/// here as well (its impls would conflict), so this cannot widen a table.
///
/// ```ignore
/// tapio::state::transitions! {
///     Disconnected => Authenticating;
///     Authenticating => Ready, Disconnected;
///     Ready => Closing;
///     Closing => ;
/// }
/// ```
///
/// The `state_machine_without_macros` example uses it, with every other impl the
/// macros write spelled out by hand.
#[macro_export]
#[doc(hidden)]
macro_rules! __tapio_transitions {
    ($($state:ty => $($target:ty),* ;)*) => {
        $(
            impl $crate::__private::DeclaredTable for $state {}
            $(
                impl $crate::__private::Declared<$target> for $state {}
                impl $crate::state::Transition<$target> for $state {
                    #[inline]
                    fn into_successor(
                        target: $target,
                    ) -> <<$state as $crate::state::StateOf>::Machine as $crate::state::StateMachine>::States {
                        <$target as $crate::state::StateOf>::into_states(target)
                    }
                }
            )*
        )*
    };
}
