//! What an actor fails with: a handler's error, or a panic caught at the cell.

use std::any::Any;
use std::error::Error;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::actor::ActorPath;

/// The failure of an actor: a handler returned an error, or a handler panicked.
///
/// A failure never reaches the sender of the message that caused it. It goes to the
/// actor's supervision, which matches it by the type of the error
/// (`on_failure::<std::io::Error>(..)`); a panic is matched as [`Panicked`].
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

    /// Whether the error is an `E`.
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

    /// The type name of the error, for example `std::io::error::Error`.
    pub fn error_type(&self) -> &'static str {
        self.inner.type_name
    }

    /// Where the failure happened first, then each supervisor it was escalated to.
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

/// What a handler's error becomes: anything that is a `std::error::Error`, and a
/// [`Failure`] itself.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error of a handler",
    note = "a handler's error must implement `std::error::Error + Send + Sync + 'static`, so supervision can match it by type"
)]
pub trait IntoFailure {
    /// Convert into a failure.
    fn into_failure(self) -> Failure;
}

impl<E: Error + Send + Sync + 'static> IntoFailure for E {
    fn into_failure(self) -> Failure {
        Failure::new(self)
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
