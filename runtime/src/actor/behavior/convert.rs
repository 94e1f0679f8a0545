//! What may be spawned, what a setup factory may return, and what a handler may
//! answer with.

use std::sync::Arc;

use crate::actor::behavior::{Actor, Behavior, Kind, Receive, Started, StartedKind};
use crate::ground::failure::{Failure, IntoFailure};
use crate::ground::message::Message;

/// Something that can be spawned as an actor of protocol `P`: a [`Behavior`], a
/// [`Receive`], or an `#[actor]` value that is `Clone`.
///
/// A struct actor spawned by value must be `Clone` because a restart starts again
/// from that value, and `Sync` because the behavior keeping it can be shared
/// between threads (a field of `Cell` or `RefCell` is not). To build one without
/// either, spawn `Behaviors::setup(|ctx| MyActor::new(ctx))`: the value then lives
/// in the actor alone, which needs only `Send`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be spawned as an actor with protocol `{P}`",
    label = "not a behavior of `{P}`",
    note = "spawn a `Behavior<{P}>`, a `Receive<{P}>`, or a `Clone` value of an `#[actor]` type whose protocol is `{P}`; for an actor that is not `Clone`, spawn `Behaviors::setup(|ctx| /* build it */)`"
)]
pub trait IntoBehavior<P: Message> {
    /// Convert into a behavior.
    fn into_behavior(self) -> Behavior<P>;
}

impl<P: Message> IntoBehavior<P> for Behavior<P> {
    fn into_behavior(self) -> Behavior<P> {
        self
    }
}

impl<P: Message> IntoBehavior<P> for Receive<P> {
    fn into_behavior(self) -> Behavior<P> {
        self.into()
    }
}

impl<A> IntoBehavior<A::Msg> for A
where
    A: Actor + Clone + Sync,
{
    fn into_behavior(self) -> Behavior<A::Msg> {
        Behavior::from_kind(Kind::Actor(Arc::new(move || Box::new(self.clone()))))
    }
}

/// What a [`Behaviors::setup`](crate::Behaviors::setup) factory may return: a
/// behavior, an `#[actor]` value (no `Clone` needed, since setup runs again on each
/// restart), or a `Result` of either, whose error fails the start.
#[diagnostic::on_unimplemented(
    message = "a setup factory for protocol `{P}` cannot return `{Self}`",
    note = "return a `Behavior<{P}>`, a `Receive<{P}>`, a value of an `#[actor]` type whose protocol is `{P}`, or a `Result` of one of these"
)]
pub trait SetupOutput<P: Message> {
    /// Convert into what the cell starts next.
    #[doc(hidden)]
    fn into_started(self) -> Result<Started<P>, Failure>;
}

impl<P: Message> SetupOutput<P> for Behavior<P> {
    fn into_started(self) -> Result<Started<P>, Failure> {
        Ok(Started(StartedKind::Behavior(self)))
    }
}

impl<P: Message> SetupOutput<P> for Receive<P> {
    fn into_started(self) -> Result<Started<P>, Failure> {
        Ok(Started(StartedKind::Behavior(self.into())))
    }
}

impl<A: Actor> SetupOutput<A::Msg> for A {
    fn into_started(self) -> Result<Started<A::Msg>, Failure> {
        Ok(Started(StartedKind::Actor(Box::new(self))))
    }
}

impl<P, T, E> SetupOutput<P> for Result<T, E>
where
    P: Message,
    T: SetupOutput<P>,
    E: IntoFailure,
{
    fn into_started(self) -> Result<Started<P>, Failure> {
        self.map_err(IntoFailure::into_failure)?.into_started()
    }
}

/// What a handler may answer with: `()` (the same behavior), a [`Behavior`], a
/// [`Receive`], or a `Result` of one of these whose error fails the actor.
///
/// The error may be of any type that implements `std::error::Error + Send + Sync`,
/// or a [`BoxError`](crate::BoxError), into which `?` converts all of them: a
/// handler that meets errors of several types returns `Result<_, BoxError>`, and
/// supervision still matches each by its own type. A closure that uses `?` names its
/// error type, as in `|line: String| -> Result<_, BoxError> { .. }`: Rust cannot
/// guess which error `?` should convert into.
#[diagnostic::on_unimplemented(
    message = "a handler of protocol `{P}` cannot answer with `{Self}`",
    label = "not a next behavior",
    note = "answer with `()`, a `Behavior<{P}>` such as `Behaviors::same()` or `Behaviors::stopped()`, or a `Result` of one of these whose error implements `std::error::Error` (or is a `tapio::BoxError`)"
)]
pub trait IntoNext<P: Message> {
    /// Convert into the next behavior, or the failure.
    fn into_next(self) -> Result<Behavior<P>, Failure>;
}

impl<P: Message> IntoNext<P> for () {
    #[inline]
    fn into_next(self) -> Result<Behavior<P>, Failure> {
        Ok(Behavior::from_kind(Kind::Same))
    }
}

impl<P: Message> IntoNext<P> for Behavior<P> {
    #[inline]
    fn into_next(self) -> Result<Behavior<P>, Failure> {
        Ok(self)
    }
}

impl<P: Message> IntoNext<P> for Receive<P> {
    fn into_next(self) -> Result<Behavior<P>, Failure> {
        Ok(self.into())
    }
}

impl<P, T, E> IntoNext<P> for Result<T, E>
where
    P: Message,
    T: IntoNext<P>,
    E: IntoFailure,
{
    #[inline]
    fn into_next(self) -> Result<Behavior<P>, Failure> {
        match self {
            Ok(next) => next.into_next(),
            Err(error) => Err(error.into_failure()),
        }
    }
}
