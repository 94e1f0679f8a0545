//! The running incarnation of an actor: what a behavior became when it started, and
//! how a message or a signal reaches it. Shared by the cell task and by the
//! synchronous `BehaviorTestKit`, so both run a behavior the same way.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::actor::context::ActorContext;
use crate::behavior::{Actor, Behavior, Behaviors, HandledKind, Kind, Receive, StartedKind};
use crate::failure::{CatchPanic, Failure, InvalidBehavior, RestartWithoutFactory};
use crate::message::Message;
use crate::signal::Signal;
use crate::supervision::Supervise;

/// The running incarnation.
pub(crate) enum Running<P: Message> {
    /// The behavior the actor was spawned with, before the task first runs.
    Unstarted(Behavior<P>),
    /// Between incarnations, or stopped.
    Idle,
    Receive(Receive<P>),
    Actor(Box<dyn Actor<Msg = P>>),
    Empty,
    Ignore,
}

/// What starting a behavior led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Started {
    /// An incarnation runs.
    Running,
    /// The behavior was `stopped`: the actor is to stop.
    Stopped,
}

pub(crate) type HandlerFuture<'a, P> =
    Pin<Box<dyn Future<Output = Result<Behavior<P>, Failure>> + Send + 'a>>;

impl<P: Message> Running<P> {
    /// Start `behavior`: run its setups, report each `supervise` wrapper met on the
    /// way to `supervised`, and install what it builds.
    pub(crate) fn start(
        &mut self,
        ctx: &mut ActorContext<P>,
        behavior: Behavior<P>,
        supervised: &mut dyn FnMut(Arc<Supervise<P>>),
    ) -> Result<Started, Failure> {
        let mut next = behavior;
        loop {
            *self = match next.kind {
                Kind::Setup(factory) => match run_setup(|| factory(ctx))? {
                    StartedKind::Behavior(behavior) => {
                        next = behavior;
                        continue;
                    }
                    StartedKind::Actor(actor) => Running::Actor(actor),
                },
                Kind::SetupOnce(setup) => {
                    let factory = setup
                        .take()
                        .ok_or_else(|| Failure::new(RestartWithoutFactory))?;
                    match run_setup(|| factory(ctx))? {
                        StartedKind::Behavior(behavior) => {
                            next = behavior;
                            continue;
                        }
                        StartedKind::Actor(actor) => Running::Actor(actor),
                    }
                }
                Kind::Supervise(spec) => {
                    next = spec.inner.clone();
                    supervised(spec);
                    continue;
                }
                Kind::Actor(factory) => {
                    let actor = catch_unwind(AssertUnwindSafe(|| factory()))
                        .map_err(Failure::from_panic)?;
                    Running::Actor(actor)
                }
                Kind::Receive(receive) => Running::Receive(receive),
                Kind::Empty => Running::Empty,
                Kind::Ignore => Running::Ignore,
                Kind::Stopped => return Ok(Started::Stopped),
                Kind::Same | Kind::Unhandled => {
                    return Err(Failure::new(InvalidBehavior(
                        "an actor cannot start as `same` or `unhandled`: give it a behavior that handles messages",
                    )));
                }
            };
            return Ok(Started::Running);
        }
    }

    /// Deliver a signal to the running incarnation.
    pub(crate) async fn signal(
        &mut self,
        ctx: &mut ActorContext<P>,
        signal: Signal,
    ) -> Result<Behavior<P>, Failure> {
        match self {
            Running::Receive(receive) => {
                catch_unwind(AssertUnwindSafe(|| receive.signal(ctx, &signal)))
                    .unwrap_or_else(|panic| Err(Failure::from_panic(panic)))
            }
            Running::Actor(actor) => {
                let signal = &signal;
                let call = move || {
                    let (actor, ctx) = (actor, ctx);
                    actor.signal(ctx, signal).0
                };
                match catch_unwind(AssertUnwindSafe(call)) {
                    Ok(HandledKind::Ready(outcome)) => outcome,
                    Ok(HandledKind::Pending(future)) => Guarded::new(future).await,
                    Err(panic) => Err(Failure::from_panic(panic)),
                }
            }
            Running::Empty | Running::Ignore | Running::Idle | Running::Unstarted(_) => {
                Ok(Behaviors::unhandled())
            }
        }
    }
}

/// Run a setup factory; a panic in it is a failure.
fn run_setup<P: Message>(
    factory: impl FnOnce() -> Result<crate::behavior::Started<P>, Failure>,
) -> Result<StartedKind<P>, Failure> {
    let started = catch_unwind(AssertUnwindSafe(factory)).map_err(Failure::from_panic)??;
    Ok(started.0)
}

/// What handing a message to the running incarnation gave.
pub(crate) enum Dispatched<'a, P: Message> {
    /// The handler answered "the same": nothing to apply. Told apart early, because it
    /// is almost every message, and moving the whole answer around costs more than
    /// handling it.
    Same,
    /// The handler's answer.
    Done(Result<Behavior<P>, Failure>),
    /// The future of an `async` handler, borrowing the actor and its context.
    Pending(HandlerFuture<'a, P>),
    /// No incarnation is running: the message comes back.
    Nowhere(P),
    /// The behavior handles no message (`Behaviors::empty`): the message comes back.
    Unhandled(P),
}

impl<P: Message> Running<P> {
    /// Hand `message` to the running incarnation. It borrows only the incarnation and
    /// the context, so the cell can apply the answer once a pending handler is done.
    #[inline]
    pub(crate) fn dispatch<'a>(
        &'a mut self,
        ctx: &'a mut ActorContext<P>,
        message: P,
    ) -> Dispatched<'a, P> {
        let outcome = match self {
            Running::Receive(receive) => {
                match catch_unwind(AssertUnwindSafe(move || receive.message(ctx, message))) {
                    Ok(HandledKind::Ready(outcome)) => outcome,
                    Ok(HandledKind::Pending(future)) => return Dispatched::Pending(future),
                    Err(panic) => Err(Failure::from_panic(panic)),
                }
            }
            Running::Actor(actor) => {
                // Moving the borrows in makes the closure `FnOnce`, so what it returns may
                // keep borrowing the actor and its context.
                let call = move || {
                    let (actor, ctx) = (actor, ctx);
                    actor.handle(ctx, message).0
                };
                match catch_unwind(AssertUnwindSafe(call)) {
                    Ok(HandledKind::Ready(outcome)) => outcome,
                    Ok(HandledKind::Pending(future)) => return Dispatched::Pending(future),
                    Err(panic) => Err(Failure::from_panic(panic)),
                }
            }
            Running::Empty => return Dispatched::Unhandled(message),
            Running::Ignore => return Dispatched::Same,
            Running::Idle | Running::Unstarted(_) => return Dispatched::Nowhere(message),
        };
        match outcome {
            Ok(Behavior { kind: Kind::Same }) => Dispatched::Same,
            outcome => Dispatched::Done(outcome),
        }
    }
}

/// A handler's future, with a panic in it turned into a failure.
pub(crate) struct Guarded<'a, P: Message>(CatchPanic<HandlerFuture<'a, P>>);

impl<'a, P: Message> Guarded<'a, P> {
    pub(crate) fn new(future: HandlerFuture<'a, P>) -> Self {
        Self(CatchPanic(future))
    }
}

impl<P: Message> Future for Guarded<'_, P> {
    type Output = Result<Behavior<P>, Failure>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|outcome| outcome.unwrap_or_else(|panic| Err(Failure::from_panic(panic))))
    }
}
