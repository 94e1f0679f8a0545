//! What an actor fails with: a handler's error, or a panic caught at the cell.
//!
//! A `Failure` is one boxed pointer wide, so the futures and messages that could carry
//! one, and almost never do, pay one word for it.
//!
//! Layer: ground. Imports only ground (`path`).

use std::any::{Any, TypeId};
use std::error::Error;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::ground::path::ActorPath;

/// A boxed error of any type: what `?` turns every `std::error::Error + Send + Sync`
/// into, so one handler can fail with errors of several types.
///
/// A handler may return `Result<_, BoxError>`. The failure still knows the error's
/// own type: `on_failure::<std::io::Error>(..)` matches an `io::Error` that arrived
/// in the box (see [`Failure::is`]).
pub type BoxError = Box<dyn Error + Send + Sync + 'static>;

/// The failure of an actor: a handler returned an error, or a handler panicked.
///
/// A failure never reaches the sender of the message that caused it. It goes to the
/// actor's supervision, which matches it by the type of the error
/// (`on_failure::<std::io::Error>(..)`); a panic is matched as [`Panicked`]. An error
/// returned in a [`BoxError`] is matched by the type inside the box.
///
/// When a failure is escalated, every actor it passes through is added to
/// [`Failure::climbed`], so the error that terminates a system says where it began
/// and which supervisors handed it on.
#[derive(Clone)]
pub struct Failure {
    // One pointer, so a failure costs nothing in the futures and messages that can
    // carry one but almost never do.
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    error: Arc<dyn Error + Send + Sync + 'static>,
    type_name: &'static str,
    climbed: Vec<ActorPath>,
}

impl Failure {
    /// A failure carrying `error`.
    pub fn new<E: Error + Send + Sync + 'static>(error: E) -> Self {
        let any: &dyn Any = &error;
        if let Some(failure) = any.downcast_ref::<Failure>() {
            return failure.clone();
        }
        Self {
            inner: Box::new(Inner {
                error: Arc::new(error),
                type_name: std::any::type_name::<E>(),
                climbed: Vec::new(),
            }),
        }
    }

    /// A failure carrying the error inside `error`: it is matched by the type of
    /// that error, not as a box. A [`Failure`] in the box comes out as itself.
    pub fn from_boxed(error: BoxError) -> Self {
        Self::boxed(error, BOXED)
    }

    /// `error` unboxed, named `type_name` unless it is a failure already.
    fn boxed(error: BoxError, type_name: &'static str) -> Self {
        match error.downcast::<Failure>() {
            Ok(failure) => *failure,
            Err(error) => Self {
                inner: Box::new(Inner {
                    error: Arc::from(error),
                    type_name,
                    climbed: Vec::new(),
                }),
            },
        }
    }

    /// A failure for a caught panic, with the panic's message.
    pub(crate) fn from_panic(panic: Box<dyn Any + Send>) -> Self {
        let message = if let Some(text) = panic.downcast_ref::<&'static str>() {
            (*text).to_owned()
        } else if let Some(text) = panic.downcast_ref::<String>() {
            text.clone()
        } else {
            String::from("a panic with a non-text payload")
        };
        Self::new(Panicked { message })
    }

    /// Whether the error is an `E`. An error that was returned in a [`BoxError`] is
    /// the error inside the box: a `Box<dyn Error + Send + Sync>` holding an
    /// `io::Error` *is* an `io::Error`.
    pub fn is<E: Error + 'static>(&self) -> bool {
        self.inner.error.is::<E>()
    }

    /// The error as an `E`, if it is one.
    pub fn downcast_ref<E: Error + 'static>(&self) -> Option<&E> {
        self.inner.error.downcast_ref::<E>()
    }

    /// The error itself.
    pub fn error(&self) -> &(dyn Error + Send + Sync + 'static) {
        &*self.inner.error
    }

    /// The type name of the error as the handler returned it, for example
    /// `std::io::error::Error`. An error returned in a [`BoxError`] is named
    /// `Box<dyn Error + Send + Sync>`: the box does not say what it holds (ask with
    /// [`Failure::is`] or [`Failure::downcast_ref`]).
    pub fn error_type(&self) -> &'static str {
        self.inner.type_name
    }

    /// Where the failure happened first, then each supervisor it was escalated to;
    /// a failure that reached a guardian ends with it (`/user`).
    pub fn climbed(&self) -> &[ActorPath] {
        &self.inner.climbed
    }

    /// Record that the failure passed through `path`.
    pub(crate) fn climb(mut self, path: &ActorPath) -> Self {
        if self.inner.climbed.last() != Some(path) {
            self.inner.climbed.push(path.clone());
        }
        self
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.inner.error, f)
    }
}

impl fmt::Debug for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Failure")
            .field("error", &self.inner.error)
            .field("type", &self.inner.type_name)
            .field("climbed", &self.inner.climbed)
            .finish()
    }
}

/// Two failures are equal when their errors have the same type and the same text,
/// and they climbed the same paths: what a test can assert on.
impl PartialEq for Failure {
    fn eq(&self, other: &Self) -> bool {
        self.inner.type_name == other.inner.type_name
            && self.inner.climbed == other.inner.climbed
            && (Arc::ptr_eq(&self.inner.error, &other.inner.error)
                || self.inner.error.to_string() == other.inner.error.to_string())
    }
}

impl Eq for Failure {}

/// What [`Failure::error_type`] says of an error that arrived in a [`BoxError`].
const BOXED: &str = "Box<dyn Error + Send + Sync>";

impl From<BoxError> for Failure {
    fn from(error: BoxError) -> Self {
        Self::from_boxed(error)
    }
}

impl Error for Failure {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.inner.error)
    }
}

/// The error a failure carries when a handler panicked.
///
/// Supervise panics with `on_failure::<Panicked>(..)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the handler panicked: {message}")]
pub struct Panicked {
    /// The panic message.
    pub message: String,
}

/// A behavior that makes no sense where it was used, such as starting as `same`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid behavior: {0}")]
pub struct InvalidBehavior(pub &'static str);

/// The failure of a restart that had to run a [`Behaviors::setup_once`] factory
/// again: it ran when the actor started and is gone.
///
/// The actor stops with it, whatever the restart strategy said (the log says so,
/// and watchers see the actor terminated). The same failure stops a second actor
/// spawned from a clone of the same one-shot behavior.
///
/// [`Behaviors::setup_once`]: crate::Behaviors::setup_once
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a restart cannot run the `Behaviors::setup_once` factory again: it ran when the actor \
     started; put the `Behaviors::supervise(..)` inside the one-shot setup so a restart \
     rebuilds only what it supervises, or use `Behaviors::setup` with a factory that can \
     run again"
)]
pub struct RestartWithoutFactory;

/// What a handler's error becomes: anything that is a `std::error::Error + Send +
/// Sync`, a [`BoxError`] holding one, and a [`Failure`] itself.
///
/// Whatever converts into a [`BoxError`] qualifies, so a `String` or a
/// `&'static str` does too (supervision can then match it only with
/// `on_any_failure`). An error in a box is matched by its own type.
///
/// # Examples
///
/// One handler, two error types, `?` on both, no `map_err`:
///
/// ```
/// use tapio::prelude::*;
/// use tapio::BoxError;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("the line is empty")]
/// pub struct Empty;
///
/// fn parse(line: &str) -> Result<u64, BoxError> {
///     if line.is_empty() {
///         return Err(Empty.into());
///     }
///     Ok(line.trim().parse::<u64>()?)
/// }
///
/// let lines: Behavior<String> = Behaviors::supervise(Behaviors::receive_message(
///     |line: String| -> Result<_, BoxError> {
///         let n = parse(&line)?;
///         tracing::info!(n, "parsed");
///         Ok(Behaviors::same())
///     },
/// ))
/// // Matched through the box: an empty line is resumed, anything else stops.
/// .on_failure::<Empty>(SupervisorStrategy::resume())
/// .into();
/// # let _ = lines;
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error of a handler",
    note = "a handler's error must implement `std::error::Error + Send + Sync + 'static`, or be a `Box<dyn std::error::Error + Send + Sync>` (`tapio::BoxError`), so supervision can match it by type"
)]
pub trait IntoFailure {
    /// Convert into a failure.
    fn into_failure(self) -> Failure;
}

impl<E> IntoFailure for E
where
    E: Into<BoxError> + 'static,
{
    fn into_failure(self) -> Failure {
        let type_name = if TypeId::of::<E>() == TypeId::of::<BoxError>() {
            BOXED
        } else {
            std::any::type_name::<E>()
        };
        Failure::boxed(self.into(), type_name)
    }
}

/// A future whose panic comes back as its output's `Err`, with the panic's payload:
/// how a handler's panic becomes a failure, and how a scoped system is terminated
/// before its block's panic goes on.
pub(crate) struct CatchPanic<F>(pub(crate) F);

impl<F: Future + Unpin> Future for CatchPanic<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| Pin::new(future).poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_matched_by_the_type_of_its_error() {
        let failure = Failure::new(std::io::Error::other("refused"));
        assert!(failure.is::<std::io::Error>());
        assert!(!failure.is::<Panicked>());
        assert_eq!(failure.to_string(), "refused");
    }

    #[test]
    fn wrapping_a_failure_again_keeps_the_original_error() {
        let inner = Failure::new(Panicked {
            message: "boom".into(),
        });
        let outer = Failure::new(inner);
        assert!(outer.is::<Panicked>());
    }

    #[derive(Debug, thiserror::Error)]
    #[error("custom")]
    struct Custom;

    #[test]
    fn an_error_in_a_box_is_matched_by_its_own_type() {
        let boxed: BoxError = Box::new(std::io::Error::other("refused"));
        let failure = boxed.into_failure();
        assert!(failure.is::<std::io::Error>());
        assert!(!failure.is::<Custom>());
        assert_eq!(failure.error_type(), "Box<dyn Error + Send + Sync>");
        assert_eq!(failure.to_string(), "refused");

        let failure = Failure::from(BoxError::from(Custom));
        assert!(failure.downcast_ref::<Custom>().is_some());
    }

    #[test]
    fn an_error_not_in_a_box_keeps_its_type_name() {
        let failure = Custom.into_failure();
        assert!(failure.is::<Custom>());
        assert!(failure.error_type().ends_with("Custom"));
    }

    #[test]
    fn a_failure_in_a_box_comes_out_as_itself() {
        let inner = Failure::new(std::io::Error::other("refused"));
        let boxed: BoxError = Box::new(inner.clone());
        let failure = boxed.into_failure();
        assert_eq!(failure, inner);
        assert_eq!(failure.error_type(), inner.error_type());
    }

    #[test]
    fn text_becomes_a_failure_too() {
        let failure = "no such shelf".into_failure();
        assert_eq!(failure.to_string(), "no such shelf");
        assert!(!failure.is::<std::io::Error>());
    }

    #[test]
    fn panics_keep_their_message() {
        let failure = Failure::from_panic(Box::new("boom"));
        assert_eq!(failure.to_string(), "the handler panicked: boom");
        let failure = Failure::from_panic(Box::new(String::from("bang")));
        assert_eq!(
            failure
                .downcast_ref::<Panicked>()
                .map(|p| p.message.as_str()),
            Some("bang")
        );
    }
}
