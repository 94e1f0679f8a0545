//! The running incarnation of an actor: what a behavior became when it started, how
//! a message or a signal reaches it, and what its answer means ([`NextStep`],
//! [`AfterSignal`]). Shared by the cell task and by the synchronous
//! `BehaviorTestKit`, so both run a behavior, and read its answers, the same way.
//!
//! # Stash replay
//!
//! `unstash_all(next)` only returns a behavior of `Kind::Unstash` (a clone of the
//! buffer and `next`). Whatever reads a handler's answer replays it: `NextStep::of`
//! (and `Running::start`, for a setup that answers with it) takes the held messages out
//! and pushes them, in order, onto the front of the reader's front buffer, then carries
//! on with `next`. For the cell task that buffer is its `Batch`: the replay sits ahead
//! of what the reader took out of the mailbox, which sits ahead of what is still queued,
//! and no lock is taken. Replayed messages are then ordinary envelopes: the system lane
//! is read before each, so a stop is honoured between two of them, and the end letters
//! what is left with the batch. The `BehaviorTestKit`'s `DetachedMailbox` keeps the
//! same kind of front buffer and reads it first, so the kit replays as a live actor
//! does.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::actor::AnyActorRef;
use crate::actor::behavior::{Actor, Behavior, Behaviors, HandledKind, Kind, Receive, StartedKind};
use crate::actor::context::ActorContext;
use crate::actor::lanes::Batch;
use crate::actor::signal::{DeathPact, Signal};
use crate::actor::supervision::Supervise;
use crate::ground::failure::{CatchPanic, Failure, InvalidBehavior, RestartWithoutFactory};
use crate::ground::message::Message;

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
    /// way to `supervised`, and install what it builds. A stash replayed on the way
    /// (a setup that answered with `unstash_all`) goes to `front`, the reader's front
    /// buffer.
    pub(crate) fn start(
        &mut self,
        ctx: &mut ActorContext<P>,
        behavior: Behavior<P>,
        front: &mut Batch<P>,
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
                Kind::Unstash(unstash) => {
                    next = unstash.replay(front);
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
            if let Running::Actor(actor) = self {
                catch_unwind(AssertUnwindSafe(|| actor.started(ctx)))
                    .map_err(Failure::from_panic)??;
            }
            return Ok(Started::Running);
        }
    }

    /// Deliver a signal to the running incarnation.
    pub(crate) async fn signal(
        &mut self,
        ctx: &mut ActorContext<P>,
        signal: Signal,
    ) -> Result<Behavior<P>, Failure> {
        match self.signal_now(ctx, &signal) {
            SignalAnswer::Ready(outcome) => outcome,
            SignalAnswer::Pending(future) => future.await,
        }
    }

    /// Hand a signal to the running incarnation: its answer when the handler gave it
    /// at once (a `Receive` always does), or the future of an `async` one.
    pub(crate) fn signal_now<'a>(
        &'a mut self,
        ctx: &'a mut ActorContext<P>,
        signal: &'a Signal,
    ) -> SignalAnswer<'a, P> {
        let outcome = match self {
            Running::Receive(receive) => {
                catch_unwind(AssertUnwindSafe(|| receive.signal(ctx, signal)))
                    .unwrap_or_else(|panic| Err(Failure::from_panic(panic)))
            }
            Running::Actor(actor) => {
                let call = move || {
                    let (actor, ctx) = (actor, ctx);
                    actor.signal(ctx, signal).0
                };
                match catch_unwind(AssertUnwindSafe(call)) {
                    Ok(HandledKind::Ready(outcome)) => outcome,
                    Ok(HandledKind::Pending(future)) => {
                        return SignalAnswer::Pending(Guarded::new(future));
                    }
                    Err(panic) => Err(Failure::from_panic(panic)),
                }
            }
            Running::Empty | Running::Ignore | Running::Idle | Running::Unstarted(_) => {
                Ok(Behaviors::unhandled())
            }
        };
        SignalAnswer::Ready(outcome)
    }
}

/// What handing a signal to the running incarnation gave.
pub(crate) enum SignalAnswer<'a, P: Message> {
    /// The handler's answer.
    Ready(Result<Behavior<P>, Failure>),
    /// An `async` handler's future, which borrows the actor, its context and the
    /// signal.
    Pending(Guarded<'a, P>),
}

/// Run a setup factory; a panic in it is a failure.
fn run_setup<P: Message>(
    factory: impl FnOnce() -> Result<crate::actor::behavior::Started<P>, Failure>,
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
        if matches!(outcome, Ok(Behavior { kind: Kind::Same })) {
            // `same` owns nothing: forgetting it skips a call to the answer's drop
            // glue on almost every message.
            std::mem::forget(outcome);
            return Dispatched::Same;
        }
        Dispatched::Done(outcome)
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

/// What a handler's answer asks of the actor. Read here once, for the cell and for
/// the test kit, which then each carry it out in their own way.
pub(crate) enum NextStep<P: Message> {
    /// Go on with the same behavior.
    Same,
    /// The message was not handled: the type to name in its dead letter (an
    /// `#[actor]` handler names the message it consumed; otherwise the protocol is
    /// all there is to name).
    Unhandled(&'static str),
    /// Stop.
    Stop,
    /// Go on with another behavior, to be started with [`Running::start`].
    Switch(Behavior<P>),
}

impl<P: Message> NextStep<P> {
    /// What `next`, a handler's answer, asks for. An answer built by
    /// `StashBuffer::unstash_all` replays the stash into `front`, the reader's front
    /// buffer (read before the mailbox, so the replay comes before anything queued),
    /// and then asks for what its inner behavior asks for.
    #[inline]
    pub(crate) fn of(next: Behavior<P>, front: &mut Batch<P>) -> Self {
        let mut next = next;
        loop {
            return match next.kind {
                Kind::Same => NextStep::Same,
                Kind::Unhandled => NextStep::Unhandled(
                    crate::actor::reply::take_unhandled().unwrap_or(std::any::type_name::<P>()),
                ),
                Kind::Stopped => NextStep::Stop,
                Kind::Unstash(unstash) => {
                    next = unstash.replay(front);
                    continue;
                }
                kind => NextStep::Switch(Behavior::from_kind(kind)),
            };
        }
    }
}

/// What the answer to a signal comes to beyond the behavior it returns, the same for
/// the cell and the test kit: a `Terminated` left unhandled is a death pact, and after
/// a child's escalation the behavior fails, with its handler's own failure or else
/// the child's. Taken from the signal before the signal is handed over.
pub(crate) enum AfterSignal {
    /// A watched actor ended.
    Terminated(AnyActorRef),
    /// A child escalated this failure.
    ChildFailed(Failure),
    /// Any other signal: its answer stands as it is.
    Other,
}

impl AfterSignal {
    pub(crate) fn of(signal: &Signal) -> Self {
        match signal {
            Signal::Terminated(end) => AfterSignal::Terminated(end.actor().clone()),
            Signal::ChildFailed(failed) => AfterSignal::ChildFailed(failed.failure().clone()),
            _ => AfterSignal::Other,
        }
    }

    /// The answer to the signal, with these rules applied.
    pub(crate) fn answer<P: Message>(
        self,
        outcome: Result<Behavior<P>, Failure>,
    ) -> Result<Behavior<P>, Failure> {
        match (self, outcome) {
            (AfterSignal::Terminated(actor), Ok(next)) if next.is_unhandled() => {
                Err(Failure::new(DeathPact { actor }))
            }
            (AfterSignal::ChildFailed(failure), Ok(_)) => Err(failure),
            (_, outcome) => outcome,
        }
    }
}
