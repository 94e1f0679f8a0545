//! Behaviors: what an actor does with the next message (see [`Behavior`]).
//!
//! Layer: actor. Imports ground, the mailbox and the actor.

mod actor;
mod convert;
mod receive;

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

pub(crate) use self::actor::HandledKind;
pub use self::actor::{Actor, Handled};
pub use self::convert::{IntoBehavior, IntoNext, SetupOutput};
pub use self::receive::{AsyncHandler, Receive};

use crate::actor::context::ActorContext;
use crate::actor::stash::{InvalidStash, StashBuffer, Unstash};
use crate::actor::supervision::Supervise;
use crate::ground::failure::Failure;
use crate::ground::message::Message;

/// What an actor does with its next message.
///
/// A [`Behavior<P>`] is a recipe, cheap to clone and holding no state that changes.
/// The runtime builds a running actor from it when the actor starts, and builds it
/// again on a restart. State lives in what the recipe builds: the fields of an
/// `#[actor]` struct, or the values a [`Behaviors::setup`] factory creates.
///
/// A handler answers with the next behavior:
///
/// | answer | meaning |
/// |---|---|
/// | [`Behaviors::same`] (or `()`) | keep going, unchanged |
/// | [`Behaviors::stopped`] | stop this actor |
/// | [`Behaviors::unhandled`] | the message becomes an unhandled dead letter |
/// | any other behavior | switch to it for the next message |
/// | `Err(e)` | the actor fails with `e`; its supervision decides what happens |
///
/// # Examples
///
/// Functional style, switching between two behaviors:
///
/// ```
/// use tapio::prelude::*;
///
/// #[message]
/// pub enum Switch { Flip, Report(ActorRef<bool>) }
///
/// fn light(on: bool) -> Behavior<Switch> {
///     Behaviors::receive_message(move |message: Switch| match message {
///         Switch::Flip => light(!on),
///         Switch::Report(to) => {
///             to.tell(on);
///             Behaviors::same()
///         }
///     })
///     .into()
/// }
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let system = ActorSystem::new("light")?;
/// # let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
/// # let reader = system.spawn(Behaviors::receive_message(move |b: bool| { let _ = tx.send(b); }), "reader")?;
/// let lamp = system.spawn(light(false), "lamp")?;
/// lamp.tell(Switch::Flip);
/// lamp.tell(Switch::Report(reader));
/// # assert_eq!(rx.recv().await, Some(true));
/// # system.terminate().await;
/// # Ok(())
/// # }
/// ```
pub struct Behavior<P: Message> {
    pub(crate) kind: Kind<P>,
}

pub(crate) type SetupFn<P> =
    dyn Fn(&mut ActorContext<P>) -> Result<Started<P>, Failure> + Send + Sync;
pub(crate) type ActorFactory<P> = dyn Fn() -> Box<dyn Actor<Msg = P>> + Send + Sync;
type OnceFn<P> = dyn FnOnce(&mut ActorContext<P>) -> Result<Started<P>, Failure> + Send;

/// The factory of a [`Behaviors::setup_once`], until it runs.
pub(crate) struct SetupOnce<P: Message>(Mutex<Option<Box<OnceFn<P>>>>);

impl<P: Message> SetupOnce<P> {
    /// The factory, the first time; `None` ever after.
    pub(crate) fn take(&self) -> Option<Box<OnceFn<P>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    fn is_spent(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }
}

pub(crate) enum Kind<P: Message> {
    Same,
    Stopped,
    Unhandled,
    Empty,
    Ignore,
    Receive(Receive<P>),
    Setup(Arc<SetupFn<P>>),
    SetupOnce(Arc<SetupOnce<P>>),
    Actor(Arc<ActorFactory<P>>),
    Supervise(Arc<Supervise<P>>),
    /// Replay a stash, then go on as the behavior inside (`StashBuffer::unstash_all`).
    Unstash(Box<Unstash<P>>),
}

/// What a setup factory produced: another behavior to start, or an actor value.
/// Opaque: it only travels from [`SetupOutput`] to the cell.
#[doc(hidden)]
pub struct Started<P: Message>(pub(crate) StartedKind<P>);

pub(crate) enum StartedKind<P: Message> {
    Behavior(Behavior<P>),
    Actor(Box<dyn Actor<Msg = P>>),
}

impl<P: Message> fmt::Debug for Started<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            StartedKind::Behavior(behavior) => write!(f, "Started({behavior:?})"),
            StartedKind::Actor(_) => f.write_str("Started(actor)"),
        }
    }
}

impl<P: Message> Behavior<P> {
    pub(crate) const fn from_kind(kind: Kind<P>) -> Self {
        Self { kind }
    }

    /// A short name of what kind of behavior this is, for messages and debugging.
    pub(crate) fn kind_name(&self) -> &'static str {
        match &self.kind {
            Kind::Same => "same",
            Kind::Stopped => "stopped",
            Kind::Unhandled => "unhandled",
            Kind::Empty => "empty",
            Kind::Ignore => "ignore",
            Kind::Receive(_) => "receive",
            Kind::Setup(_) => "setup",
            Kind::SetupOnce(_) => "setup_once",
            Kind::Actor(_) => "actor",
            Kind::Supervise(_) => "supervise",
            Kind::Unstash(_) => "unstash_all",
        }
    }

    /// Whether starting this behavior again can work: not when it is (or
    /// supervises) a [`Behaviors::setup_once`] whose factory already ran.
    pub(crate) fn can_start_again(&self) -> bool {
        match &self.kind {
            Kind::SetupOnce(setup) => !setup.is_spent(),
            Kind::Supervise(supervise) => supervise.inner.can_start_again(),
            _ => true,
        }
    }

    /// Whether this is [`Behaviors::same`].
    pub fn is_same(&self) -> bool {
        matches!(self.kind, Kind::Same)
    }

    /// Whether this is [`Behaviors::stopped`].
    pub fn is_stopped(&self) -> bool {
        matches!(self.kind, Kind::Stopped)
    }

    /// Whether this is [`Behaviors::unhandled`].
    pub fn is_unhandled(&self) -> bool {
        matches!(self.kind, Kind::Unhandled)
    }
}

impl<P: Message> Clone for Behavior<P> {
    fn clone(&self) -> Self {
        Self::from_kind(match &self.kind {
            Kind::Same => Kind::Same,
            Kind::Stopped => Kind::Stopped,
            Kind::Unhandled => Kind::Unhandled,
            Kind::Empty => Kind::Empty,
            Kind::Ignore => Kind::Ignore,
            Kind::Receive(receive) => Kind::Receive(receive.clone()),
            Kind::Setup(setup) => Kind::Setup(setup.clone()),
            Kind::SetupOnce(setup) => Kind::SetupOnce(setup.clone()),
            Kind::Actor(factory) => Kind::Actor(factory.clone()),
            Kind::Supervise(supervise) => Kind::Supervise(supervise.clone()),
            Kind::Unstash(unstash) => Kind::Unstash(unstash.clone()),
        })
    }
}

impl<P: Message> fmt::Debug for Behavior<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Behavior::{}", self.kind_name())
    }
}

/// The constructors of [`Behavior`]s.
#[derive(Debug, Clone, Copy)]
pub struct Behaviors;

impl Behaviors {
    /// Keep the current behavior for the next message.
    pub const fn same<P: Message>() -> Behavior<P> {
        Behavior::from_kind(Kind::Same)
    }

    /// Stop this actor: its children stop first, then it sees
    /// [`Signal::PostStop`](crate::Signal::PostStop).
    pub const fn stopped<P: Message>() -> Behavior<P> {
        Behavior::from_kind(Kind::Stopped)
    }

    /// The message was not for this behavior: it becomes a dead letter with the
    /// reason [`Unhandled`](crate::DeadLetterReason::Unhandled), and the behavior
    /// stays as it is.
    ///
    /// The handler has taken the message by value, so the letter carries no value:
    /// it names the message's type (for an `#[actor]` handler, the message's own
    /// type, not the protocol enum's) and its recipient. A message that no behavior
    /// could take at all, such as one sent to [`Behaviors::empty`], keeps its value.
    pub const fn unhandled<P: Message>() -> Behavior<P> {
        Behavior::from_kind(Kind::Unhandled)
    }

    /// A behavior that handles no message: every message becomes an unhandled dead
    /// letter.
    pub const fn empty<P: Message>() -> Behavior<P> {
        Behavior::from_kind(Kind::Empty)
    }

    /// A behavior that drops every message without a trace. For an actor that
    /// exists to own children or to be watched; prefer [`Behaviors::empty`] when a
    /// message arriving would be a mistake worth seeing.
    pub const fn ignore<P: Message>() -> Behavior<P> {
        Behavior::from_kind(Kind::Ignore)
    }

    /// Handle each message with `handler`, which gets the actor's context.
    ///
    /// `handler` returns the next behavior, `()` for "the same", or a `Result` of
    /// either. Add a signal handler with [`Receive::on_signal`]. For a handler that
    /// awaits, see [`Behaviors::receive_async`].
    pub fn receive<P, F, R>(handler: F) -> Receive<P>
    where
        P: Message,
        F: Fn(&mut ActorContext<P>, P) -> R + Send + Sync + 'static,
        R: IntoNext<P>,
    {
        Receive::new(move |ctx, message| handler(ctx, message).into_next())
    }

    /// Handle each message with `handler`, which needs no context.
    pub fn receive_message<P, F, R>(handler: F) -> Receive<P>
    where
        P: Message,
        F: Fn(P) -> R + Send + Sync + 'static,
        R: IntoNext<P>,
    {
        Receive::new(move |_, message| handler(message).into_next())
    }

    /// Handle each message with an `async` handler, which gets the actor's context:
    /// `Behaviors::receive_async(async move |ctx, message: P| { .. })`.
    ///
    /// The handler answers like the one of [`Behaviors::receive`]: `()`, the next
    /// behavior, or a `Result` of either. While its future runs, the actor takes no
    /// other message, the same as for an `async` handler of an `#[actor]`: messages
    /// are handled one at a time and in order, and the future may hold `ctx` across
    /// an `.await`. A stop or a child's escalation drops the future where it awaits
    /// (see the crate docs, "Cancel safety of handlers"); other signals wait until it
    /// is done.
    ///
    /// Two requirements, both checked when it compiles:
    ///
    /// - The future must be `Send`, because the actor's task may move to another
    ///   worker thread at any `.await`: hold nothing that is not `Send` (an `Rc`, a
    ///   `std::sync::MutexGuard`) across an `.await`.
    /// - The closure must be `Clone` (it is when what it captures is): it is cloned
    ///   for each message and the future owns its clone. Capture what is cheap to
    ///   clone, such as refs, senders and `Arc`s. This is how the future can use the
    ///   closure's captures while it borrows the context; Rust cannot yet require the
    ///   future of a borrowing async closure to be `Send`.
    ///
    /// Add a (synchronous) signal handler with [`Receive::on_signal`].
    ///
    /// # Examples
    ///
    /// An echo that waits before it answers, and stops on zero:
    ///
    /// ```
    /// use std::time::Duration;
    /// use tapio::prelude::*;
    ///
    /// #[message]
    /// pub struct Echo { pub n: u64, pub to: ActorRef<u64> }
    ///
    /// fn echo(delay: Duration) -> Behavior<Echo> {
    ///     Behaviors::receive_async(async move |ctx, echo: Echo| {
    ///         tokio::time::sleep(delay).await;
    ///         tracing::debug!(path = %ctx.path(), n = echo.n, "echo");
    ///         echo.to.tell(echo.n);
    ///         if echo.n == 0 { Behaviors::stopped() } else { Behaviors::same() }
    ///     })
    ///     .into()
    /// }
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let system = ActorSystem::new("echo")?;
    /// # let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    /// # let reader = system.spawn(Behaviors::receive_message(move |n: u64| { let _ = tx.send(n); }), "reader")?;
    /// let echo = system.spawn(echo(Duration::from_millis(1)), "echo")?;
    /// echo.tell(Echo { n: 2, to: reader.clone() });
    /// echo.tell(Echo { n: 1, to: reader });
    /// # assert_eq!(rx.recv().await, Some(2));
    /// # assert_eq!(rx.recv().await, Some(1));
    /// # system.terminate().await;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// A future that is not `Send` is refused:
    ///
    /// ```compile_fail
    /// use std::rc::Rc;
    /// use tapio::prelude::*;
    ///
    /// let _ = Behaviors::receive_async(async |_ctx, n: u64| {
    ///     let shared = Rc::new(n);
    ///     tokio::task::yield_now().await;
    ///     tracing::info!(n = *shared);
    /// });
    /// ```
    pub fn receive_async<P, F, R>(handler: F) -> Receive<P>
    where
        P: Message,
        F: AsyncFn(&mut ActorContext<P>, P) -> R + for<'a> AsyncHandler<'a, P, Output = R>,
        R: IntoNext<P>,
    {
        Receive::new_async(handler)
    }

    /// Handle each message with an `async` handler that needs no context:
    /// `Behaviors::receive_message_async(async move |message: P| { .. })`. The same
    /// as [`Behaviors::receive_async`] otherwise: one message at a time, in order; a
    /// `Send` future; a `Clone` closure, cloned for each message.
    pub fn receive_message_async<P, F, Fut, R>(handler: F) -> Receive<P>
    where
        P: Message,
        F: AsyncFn(P) -> R + FnOnce(P) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoNext<P>,
    {
        Receive::new_async(move |_: &mut ActorContext<P>, message: P| handler(message))
    }

    /// Deferred construction: `factory` runs when the actor starts, with its
    /// context, and again on every restart. It returns the behavior or the
    /// `#[actor]` value to run; returning an `Err` fails the start.
    ///
    /// This is the place to spawn children that must come back after a restart,
    /// and to create state that a restart must reset.
    ///
    /// Because it may run again, `factory` is `Fn`: it cannot move a value out of
    /// what it captured. To hand an actor a value that exists once (a
    /// `oneshot::Sender`, a connected socket), use [`Behaviors::setup_once`].
    ///
    /// Return what you built as it is: `setup` takes a [`Behavior`], a
    /// [`Receive`], an `#[actor]` value, a [`Machine`](crate::Machine), or a
    /// `Result` of one (see [`SetupOutput`]). A `.into()` on the factory's last line
    /// gives the compiler several types to turn it into and nothing to choose by
    /// (E0283, "type annotations needed"): leave the `.into()` out.
    ///
    /// ```
    /// use tapio::prelude::*;
    ///
    /// let echo: Behavior<String> = Behaviors::setup(|ctx: &mut ActorContext<String>| {
    ///     let me = ctx.path().clone();
    ///     // A `Receive`, returned as it is (no `.into()`).
    ///     Behaviors::receive_message(move |text: String| tracing::info!(%me, text))
    /// });
    /// # let _ = echo;
    /// ```
    pub fn setup<P, F, S>(factory: F) -> Behavior<P>
    where
        P: Message,
        F: Fn(&mut ActorContext<P>) -> S + Send + Sync + 'static,
        S: SetupOutput<P>,
    {
        Behavior::from_kind(Kind::Setup(Arc::new(move |ctx| {
            factory(ctx).into_started()
        })))
    }

    /// Deferred construction that runs once: `factory` is `FnOnce`, so it can move
    /// what it captured (a `oneshot::Sender`, a socket, a receiver) into the actor
    /// it builds, without a `Mutex<Option<_>>`. It returns what a
    /// [`Behaviors::setup`] factory returns.
    ///
    /// The price is that a restart cannot run it again. If a `supervise` around it
    /// orders a restart, the restart fails with [`RestartWithoutFactory`] and the
    /// actor stops, whatever the strategy said: the failure is logged, and
    /// watchers see the actor terminated. Resume and stop work as usual. To restart
    /// what a one-shot setup builds, put the `supervise` *inside* it: a restart then
    /// rebuilds the supervised behavior, and the one-shot setup does not run again
    /// (a setup outside `supervise(..)` never does). The behavior is a value used
    /// once too: spawning a clone of it a second time fails the same way.
    ///
    /// [`RestartWithoutFactory`]: crate::RestartWithoutFactory
    ///
    /// # Examples
    ///
    /// An actor that owns the sending half of a oneshot channel and completes it:
    ///
    /// ```
    /// use tapio::prelude::*;
    /// use tokio::sync::oneshot;
    ///
    /// #[message]
    /// pub struct Finish(pub u64);
    ///
    /// pub struct Job {
    ///     done: Option<oneshot::Sender<u64>>,
    /// }
    ///
    /// #[actor]
    /// impl Job {
    ///     fn finish(&mut self, Finish(n): Finish) -> Behavior<JobMsg> {
    ///         if let Some(done) = self.done.take() {
    ///             let _ = done.send(n);
    ///         }
    ///         Behaviors::stopped()
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let system = ActorSystem::new("jobs")?;
    /// let (done, result) = oneshot::channel();
    /// // `done` moves into the actor: no `Mutex`, no `Clone`.
    /// let job = system.spawn(Behaviors::setup_once(move |_ctx| Job { done: Some(done) }), "job")?;
    /// job.tell(Finish(42));
    /// assert_eq!(result.await?, 42);
    /// # system.terminate().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn setup_once<P, F, S>(factory: F) -> Behavior<P>
    where
        P: Message,
        F: FnOnce(&mut ActorContext<P>) -> S + Send + 'static,
        S: SetupOutput<P>,
    {
        let factory: Box<OnceFn<P>> = Box::new(move |ctx| factory(ctx).into_started());
        Behavior::from_kind(Kind::SetupOnce(Arc::new(SetupOnce(Mutex::new(Some(
            factory,
        ))))))
    }

    /// A behavior built with a [`StashBuffer`] of `capacity` at hand, to hold the
    /// messages the actor cannot handle yet and replay them later with
    /// [`StashBuffer::unstash_all`] (see [`stash`](crate::actor::stash)). `factory` runs like
    /// a setup, on start and on every restart, and gets a new, empty buffer each time:
    /// a restart turns what the old one held into dead letters. A factory that needs
    /// the context too is a [`Behaviors::setup`] that makes its buffer with
    /// [`ActorContext::stash_buffer`].
    ///
    /// # Errors
    ///
    /// [`InvalidStash::ZeroCapacity`] for a capacity of 0, refused here, when the
    /// behavior is built, rather than when the actor starts.
    ///
    /// # Examples
    ///
    /// ```
    /// use tapio::prelude::*;
    /// use tapio::InvalidStash;
    ///
    /// // Holds every number until a zero comes, then replays them, zero last.
    /// let gate = Behaviors::with_stash(100, |stash| {
    ///     Behaviors::receive_message(move |n: u64| {
    ///         if n == 0 {
    ///             return Ok(stash.unstash_all(Behaviors::receive_message(|n: u64| {
    ///                 tracing::info!(n);
    ///             })));
    ///         }
    ///         stash.stash(n).map(|()| Behaviors::same())
    ///     })
    /// });
    /// assert!(gate.is_ok());
    /// assert_eq!(
    ///     Behaviors::with_stash(0, |_| Behaviors::ignore::<u64>()).unwrap_err(),
    ///     InvalidStash::ZeroCapacity
    /// );
    /// ```
    pub fn with_stash<P, F, S>(capacity: usize, factory: F) -> Result<Behavior<P>, InvalidStash>
    where
        P: Message,
        F: Fn(StashBuffer<P>) -> S + Send + Sync + 'static,
        S: SetupOutput<P>,
    {
        let capacity = std::num::NonZeroUsize::new(capacity).ok_or(InvalidStash::ZeroCapacity)?;
        Ok(Self::setup(move |ctx| {
            let stash = StashBuffer::new(capacity, ctx.self_ref().clone());
            ctx.track_stash(&stash);
            factory(stash)
        }))
    }

    /// Supervise `behavior`: add strategies with
    /// [`Supervise::on_failure`](crate::Supervise::on_failure).
    pub fn supervise<P, B>(behavior: B) -> Supervise<P>
    where
        P: Message,
        B: IntoBehavior<P>,
    {
        Supervise::new(behavior.into_behavior())
    }
}
