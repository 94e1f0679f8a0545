//! `BehaviorTestKit`: a behavior run synchronously, one message or signal at a time.
//!
//! The kit runs the cell's own `Running`, `NextStep::of` and `AfterSignal` on a detached
//! system with no runtime, with the context's effects recorded (`recorder`) rather than
//! done; `DetachedMailbox` is its mailbox, with a front buffer for stash replays.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::actor::ActorSystem;
use crate::actor::behavior::{Behavior, IntoBehavior};
use crate::actor::context::ActorContext;
use crate::actor::effects::Effects;
use crate::actor::incarnation::{AfterSignal, Dispatched, Guarded, NextStep, Running, Started};
use crate::actor::lanes::{Batch, Envelope};
use crate::actor::signal::Signal;
use crate::actor::system::{Outer, SystemShared};
use crate::actor::timer::{TimerKey, TimerMode};
use crate::actor::{ActorPath, ActorRef, Address, AnyActorRef, LocalCell, Parent};
use crate::ground::failure::Failure;
use crate::ground::message::{Accepts, Message};
use crate::net::remote::links::Links;
use crate::testkit::recorder::{Recording, detached_cell};

/// Something a behavior did through its context, recorded by a [`BehaviorTestKit`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Effect {
    /// `ctx.spawn(behavior, name)`.
    Spawned {
        /// The child's name.
        name: String,
    },
    /// `ctx.spawn_anonymous(behavior)`, with the name it was given.
    SpawnedAnonymous {
        /// The child's name.
        name: String,
    },
    /// `ctx.stop(child)`.
    Stopped {
        /// The child's name.
        name: String,
    },
    /// `ctx.watch(actor)`.
    Watched {
        /// The watched actor.
        actor: AnyActorRef,
    },
    /// `ctx.unwatch(actor)`.
    Unwatched {
        /// The actor no longer watched.
        actor: AnyActorRef,
    },
    /// A timer started (or restarted: starting a key again replaces the timer).
    TimerStarted {
        /// The timer's key.
        key: TimerKey,
        /// Single, fixed-delay or fixed-rate.
        mode: TimerMode,
        /// The delay, or the interval of a repeating timer.
        delay: Duration,
    },
    /// A running timer cancelled, by its key or because a new timer took its key.
    TimerCancelled {
        /// The timer's key.
        key: TimerKey,
    },
}

/// What a behavior answered with, as a [`BehaviorTestKit`] saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// `Behaviors::same()` (or `()`).
    Same,
    /// Another behavior, which is now the current one.
    Switched,
    /// `Behaviors::stopped()`: the behavior saw `PostStop` and takes no more messages.
    Stopped,
    /// `Behaviors::unhandled()`: a real actor would have dead-lettered the message.
    Unhandled,
}

/// Why a [`BehaviorTestKit`] could not hand over a child's kit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TestKitError {
    /// No live child has that name.
    #[error("the behavior has no live child named {name:?}: check the `Spawned` effects")]
    NoSuchChild {
        /// The name asked for.
        name: String,
    },
    /// The child's protocol is not the one asked for.
    #[error("the child {name:?} has protocol `{actual}`, not `{expected}`")]
    WrongProtocol {
        /// The child's name.
        name: String,
        /// The protocol asked for.
        expected: &'static str,
        /// The child's protocol.
        actual: &'static str,
    },
    /// The child's kit was handed over already.
    #[error("the test kit of the child {name:?} was taken already; keep the first one")]
    AlreadyTaken {
        /// The child's name.
        name: String,
    },
}

/// Runs a behavior synchronously, without a scheduler or a runtime, one message or
/// signal at a time, and records what it does through its context.
///
/// - [`run`](Self::run) hands it a message and returns its [`Outcome`]; a failing
///   handler's error comes back as `Err` (supervision strategies are not applied:
///   test those with a real system and a [`TestProbe`](crate::testkit::TestProbe)).
/// - [`effects`](Self::effects) returns what it did: children spawned and stopped,
///   actors watched and unwatched.
/// - Children are not started: each gets a mailbox that collects what is sent to it,
///   and [`child_kit`](Self::child_kit) turns it into a kit of its own.
/// - What the behavior sends to its own ref waits in [`take_queued`](Self::take_queued)
///   or is run by [`run_queued`](Self::run_queued); what it sends to a
///   [`TestInbox`](crate::testkit::TestInbox) waits there.
/// - A stash works as in a running actor: what `unstash_all` replays goes in front
///   of everything else, and is handled first by the next [`run`](Self::run) or
///   [`run_queued`](Self::run_queued).
///
/// An `async` handler is polled once by [`run`](Self::run); one that waits for
/// something outside the actor needs [`run_async`](Self::run_async) inside a runtime.
///
/// # Examples
///
/// ```
/// use tapio::prelude::*;
/// use tapio::testkit::{BehaviorTestKit, Effect, Outcome};
///
/// #[message]
/// pub struct Hire(pub String);
///
/// let boss = Behaviors::receive(|ctx, Hire(name): Hire| {
///     ctx.spawn(Behaviors::ignore::<u64>(), &name).map(|_| ())
/// });
/// let mut kit = BehaviorTestKit::new(boss);
/// assert_eq!(kit.run(Hire("ada".into())), Ok(Outcome::Same));
/// assert_eq!(kit.effects(), [Effect::Spawned { name: "ada".into() }]);
/// // A second child with the same name is refused, as it would be for real.
/// assert!(kit.run(Hire("ada".into())).is_err());
/// ```
pub struct BehaviorTestKit<P: Message> {
    ctx: ActorContext<P>,
    /// What the context records: the kit's side of the context's seam.
    recording: Arc<Recording>,
    running: Running<P>,
    mailbox: DetachedMailbox<P>,
    alive: bool,
}

impl<P: Message> BehaviorTestKit<P> {
    /// Start `behavior` (its setup runs now) as `/user/testkit`.
    ///
    /// # Panics
    ///
    /// If the setup fails; use [`try_new`](Self::try_new) to get the failure instead.
    pub fn new(behavior: impl IntoBehavior<P>) -> Self {
        match Self::try_new(behavior) {
            Ok(kit) => kit,
            Err(failure) => panic!("the behavior under test failed to start: {failure}"),
        }
    }

    /// Start `behavior`, or return the failure of its setup.
    ///
    /// # Errors
    ///
    /// The failure of the behavior's setup.
    pub fn try_new(behavior: impl IntoBehavior<P>) -> Result<Self, Failure> {
        let system = ActorSystem::detached(
            "testkit",
            Outer {
                remote: Box::new(Links::default()),
                terminate: SystemShared::begin_termination,
            },
        );
        let path = ActorPath::root(Address::local("testkit"))
            .child("user")
            .child("testkit");
        let cell = detached_cell::<P>(&system, path, Parent::System);
        Self::start(cell, behavior.into_behavior())
    }

    fn start(cell: Arc<LocalCell<P>>, behavior: Behavior<P>) -> Result<Self, Failure> {
        let recording = Recording::new();
        let effects = Effects::Recorded(recording.clone());
        let mut kit = Self {
            ctx: ActorContext::with_effects(ActorRef::local(cell.clone()), effects),
            recording,
            running: Running::Idle,
            mailbox: DetachedMailbox::new(cell),
            alive: true,
        };
        let front = kit.mailbox.front();
        if kit
            .running
            .start(&mut kit.ctx, behavior, front, &mut |_| {})?
            == Started::Stopped
        {
            kit.stop();
        }
        Ok(kit)
    }

    /// The ref of the behavior under test. What is sent to it waits in
    /// [`take_queued`](Self::take_queued).
    pub fn self_ref(&self) -> &ActorRef<P> {
        self.ctx.self_ref()
    }

    /// Whether the behavior has not stopped.
    pub fn is_alive(&self) -> bool {
        self.alive
    }

    /// Hand the behavior one message, and return its outcome.
    ///
    /// Messages a stash replayed (`unstash_all`) are handled first, in order, as a
    /// running actor handles them before anything that arrives after the replay. If
    /// one of them stops the behavior, `message` is not handled and the outcome is
    /// [`Outcome::Stopped`].
    ///
    /// # Errors
    ///
    /// The failure of the handler: the error it returned, or its panic. When a
    /// replayed message fails, its failure is returned and `message` waits after the
    /// rest of the replay, for [`run_queued`](Self::run_queued).
    ///
    /// # Panics
    ///
    /// If the behavior has stopped, or an `async` handler does not finish in one poll.
    pub fn run<M>(&mut self, message: M) -> Result<Outcome, Failure>
    where
        M: Message,
        P: Accepts<M>,
    {
        self.assert_alive();
        let message = P::wrap(message);
        while let Some(earlier) = self.mailbox.next_in_front() {
            if let Err(failure) = self.run_one(earlier) {
                self.mailbox.put_after_front(message);
                return Err(failure);
            }
            if !self.alive {
                return Ok(Outcome::Stopped);
            }
        }
        self.run_one(message)
    }

    /// Hand the behavior one message, awaiting an `async` handler to the end. A
    /// replay is handled first, as by [`run`](Self::run).
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run).
    ///
    /// # Panics
    ///
    /// If the behavior has stopped.
    pub async fn run_async<M>(&mut self, message: M) -> Result<Outcome, Failure>
    where
        M: Message,
        P: Accepts<M>,
    {
        self.assert_alive();
        let message = P::wrap(message);
        while let Some(earlier) = self.mailbox.next_in_front() {
            if let Err(failure) = self.run_one_async(earlier).await {
                self.mailbox.put_after_front(message);
                return Err(failure);
            }
            if !self.alive {
                return Ok(Outcome::Stopped);
            }
        }
        self.run_one_async(message).await
    }

    /// Run every message waiting for the behavior, in order, until none is left or
    /// a handler fails: a replayed stash first, then what was sent to its own ref.
    /// Returns how many ran.
    ///
    /// # Errors
    ///
    /// The first failure.
    pub fn run_queued(&mut self) -> Result<usize, Failure> {
        let mut ran = 0;
        while self.alive {
            // What came through a message adapter is translated here, as a running
            // actor translates it on its user lane.
            let Some(message) = self.mailbox.next(&mut self.ctx)? else {
                break;
            };
            self.run_one(message)?;
            ran += 1;
        }
        Ok(ran)
    }

    /// Handle one message, polling an `async` handler once.
    fn run_one(&mut self, message: P) -> Result<Outcome, Failure> {
        let outcome = match self.dispatch(message) {
            Ok(outcome) => outcome,
            Err(future) => poll_once(future, "message handler"),
        };
        self.apply(outcome)
    }

    /// Handle one message, awaiting an `async` handler to its end.
    async fn run_one_async(&mut self, message: P) -> Result<Outcome, Failure> {
        let outcome = match self.dispatch(message) {
            Ok(outcome) => outcome,
            Err(future) => future.await,
        };
        let outcome = self.resolve(outcome)?;
        if outcome == Outcome::Stopped {
            self.post_stop().await;
        }
        Ok(outcome)
    }

    /// The messages waiting for the behavior (a replayed stash first), taken without
    /// running them. What came through a message adapter is not translated here (the
    /// translation runs in the actor, as the first step of handling it): it stays
    /// queued, in order, for [`run_queued`](Self::run_queued).
    pub fn take_queued(&mut self) -> Vec<P> {
        self.mailbox.take_queued()
    }

    /// Hand the behavior a signal, such as `Signal::Terminated(..)`.
    ///
    /// # Errors
    ///
    /// The failure of the signal handler; a `Terminated` left unhandled, as a
    /// [`DeathPact`](crate::DeathPact); and for `Signal::ChildFailed`, always the
    /// child's failure (or the handler's own), which a running actor's supervision
    /// would decide on.
    ///
    /// # Panics
    ///
    /// If the behavior has stopped, or an `async` signal handler does not finish in one
    /// poll.
    pub fn signal(&mut self, signal: Signal) -> Result<Outcome, Failure> {
        self.assert_alive();
        // The running actor's rules: a death pact, the failure after an escalation.
        let after = AfterSignal::of(&signal);
        let outcome = poll_once(
            Box::pin(self.running.signal(&mut self.ctx, signal)),
            "signal handler",
        );
        self.apply(after.answer(outcome))
    }

    /// The effects recorded since the last call, oldest first.
    pub fn effects(&mut self) -> Vec<Effect> {
        self.recording.take()
    }

    /// Take the oldest recorded effect and check it is `expected`.
    ///
    /// # Panics
    ///
    /// If it is not, or there is none; the message lists what was recorded.
    pub fn expect_effect(&mut self, expected: Effect) {
        let mut effects = self.effects();
        if effects.first() != Some(&expected) {
            panic!("expected the effect {expected:?}, but the behavior recorded {effects:?}");
        }
        effects.remove(0);
        self.recording.put_back(effects);
    }

    /// A kit for the child named `name`, running the behavior it was spawned with.
    /// Messages sent to the child so far wait in its queue.
    ///
    /// # Errors
    ///
    /// [`TestKitError`] when there is no such child, its protocol is not `Q`, or its
    /// kit was taken already. A failing child setup is reported by the `Result`
    /// inside.
    pub fn child_kit<Q: Message>(
        &mut self,
        name: &str,
    ) -> Result<Result<BehaviorTestKit<Q>, Failure>, TestKitError> {
        let mut children = self.recording.children();
        let child = children
            .iter_mut()
            .find(|child| child.actor.path().name() == name)
            .ok_or_else(|| TestKitError::NoSuchChild { name: name.into() })?;
        let wrong = || TestKitError::WrongProtocol {
            name: name.into(),
            expected: std::any::type_name::<Q>(),
            actual: child.protocol,
        };
        let cell = child
            .cell
            .downcast_ref::<Arc<LocalCell<Q>>>()
            .cloned()
            .ok_or_else(wrong)?;
        let behavior = child
            .behavior
            .take()
            .ok_or_else(|| TestKitError::AlreadyTaken { name: name.into() })?;
        let behavior = match behavior.downcast::<Behavior<Q>>() {
            Ok(behavior) => *behavior,
            Err(behavior) => {
                child.behavior = Some(behavior);
                return Err(TestKitError::WrongProtocol {
                    name: name.into(),
                    expected: std::any::type_name::<Q>(),
                    actual: child.protocol,
                });
            }
        };
        drop(children);
        Ok(BehaviorTestKit::start(cell, behavior))
    }

    fn assert_alive(&self) {
        assert!(
            self.alive,
            "the behavior under test has stopped and takes no more messages or signals"
        );
    }

    /// The handler's answer, or the future of an `async` handler.
    fn dispatch(&mut self, message: P) -> Result<Result<Behavior<P>, Failure>, Guarded<'_, P>> {
        self.assert_alive();
        match self.running.dispatch(&mut self.ctx, message) {
            Dispatched::Same => Ok(Ok(crate::Behaviors::same())),
            Dispatched::Done(outcome) => Ok(outcome),
            Dispatched::Pending(future) => Err(Guarded::new(future)),
            // Only reachable after a stop, which `assert_alive` rules out.
            Dispatched::Nowhere(_) => Ok(Ok(crate::Behaviors::same())),
            Dispatched::Unhandled(_) => Ok(Ok(crate::Behaviors::unhandled())),
        }
    }

    /// Apply an answer, delivering `PostStop` (polled once) if it stops the behavior.
    fn apply(&mut self, outcome: Result<Behavior<P>, Failure>) -> Result<Outcome, Failure> {
        let outcome = self.resolve(outcome)?;
        if outcome == Outcome::Stopped {
            self.stop();
        }
        Ok(outcome)
    }

    /// What an answer comes to, read as the cell reads it; a switch starts the new
    /// behavior (with no supervision: the kit applies none).
    fn resolve(&mut self, outcome: Result<Behavior<P>, Failure>) -> Result<Outcome, Failure> {
        Ok(match NextStep::of(outcome?, self.mailbox.front()) {
            NextStep::Same => Outcome::Same,
            // Nothing is published here: a test sees the outcome instead.
            NextStep::Unhandled(_) => Outcome::Unhandled,
            NextStep::Stop => Outcome::Stopped,
            NextStep::Switch(behavior) => {
                let front = self.mailbox.front();
                match self
                    .running
                    .start(&mut self.ctx, behavior, front, &mut |_| {})?
                {
                    Started::Running => Outcome::Switched,
                    Started::Stopped => Outcome::Stopped,
                }
            }
        })
    }

    /// `PostStop` (polled once), then no more.
    fn stop(&mut self) {
        let _ = poll_once(
            Box::pin(self.running.signal(&mut self.ctx, Signal::PostStop)),
            "PostStop handler",
        );
        self.running = Running::Idle;
        self.alive = false;
    }

    /// `PostStop`, awaited to its end, then no more.
    async fn post_stop(&mut self) {
        let _ = self.running.signal(&mut self.ctx, Signal::PostStop).await;
        self.running = Running::Idle;
        self.alive = false;
    }
}

impl<P: Message> Drop for BehaviorTestKit<P> {
    fn drop(&mut self) {
        // The children are listed in the cell's table, as a running actor's are, and
        // each names the cell as its parent; no task will end them and take them off,
        // so unlist them here, or the cells would keep each other alive.
        drop(self.ctx.self_ref().core().children().drain());
    }
}

impl<P: Message> fmt::Debug for BehaviorTestKit<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BehaviorTestKit")
            .field("self", self.ctx.self_ref())
            .field("alive", &self.alive)
            .finish_non_exhaustive()
    }
}

/// Poll a future once, without a runtime.
///
/// # Panics
///
/// If it is not done after that poll: it waits for something outside the actor.
fn poll_once<F: Future>(future: F, what: &str) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!(
            "the {what} awaited something outside the actor and did not finish in one poll: use `run_async` inside a runtime"
        ),
    }
}

/// The mailbox of a cell without a task, read by a test: like a running actor's
/// reader, its front buffer first, then the mailbox.
pub(crate) struct DetachedMailbox<M: Message> {
    cell: Arc<LocalCell<M>>,
    /// The reader's front buffer, as a cell task keeps one: a replayed stash, or a
    /// message looked at and put back.
    front: Batch<M>,
}

impl<M: Message> DetachedMailbox<M> {
    pub(crate) fn new(cell: Arc<LocalCell<M>>) -> Self {
        Self { cell, front: None }
    }

    /// The next message: the front buffer first, then the mailbox, with what came
    /// through a message adapter translated by `ctx` (a failed translation is the
    /// behavior's failure). A detached cell runs no timers: ticks and queued work are
    /// passed over.
    pub(crate) fn next(&mut self, ctx: &mut ActorContext<M>) -> Result<Option<M>, Failure> {
        while let Some(envelope) = self.next_envelope() {
            match envelope {
                Envelope::Message(message) => return Ok(Some(message)),
                Envelope::Adapted(adapted) => {
                    if let Some(message) = (*adapted).adapt(ctx)? {
                        return Ok(Some(message));
                    }
                }
                Envelope::Tick(_) | Envelope::Run(_) => {}
            }
        }
        Ok(None)
    }

    /// The next message as it was queued, without translating anything.
    pub(crate) fn next_queued(&mut self) -> Option<M> {
        self.next_in_front().or_else(|| {
            loop {
                if let Envelope::Message(message) = self.cell.user.try_next()? {
                    return Some(message);
                }
            }
        })
    }

    /// Every message queued as it was (front buffer first), without translating
    /// anything: what came through an adapter stays, in order, in the front buffer
    /// for [`next`](Self::next) to translate. Ticks and queued work are passed over,
    /// as `next` does.
    pub(crate) fn take_queued(&mut self) -> Vec<M> {
        let mut taken = Vec::new();
        let mut kept = std::collections::VecDeque::new();
        let front = self.front.take().map(|front| *front).unwrap_or_default();
        let queued = std::iter::from_fn(|| self.cell.user.try_next());
        for envelope in front.into_iter().chain(queued) {
            match envelope {
                Envelope::Message(message) => taken.push(message),
                adapted @ Envelope::Adapted(_) => kept.push_back(adapted),
                Envelope::Tick(_) | Envelope::Run(_) => {}
            }
        }
        if !kept.is_empty() {
            self.front = Some(Box::new(kept));
        }
        taken
    }

    /// The next envelope: the front buffer's first, then the mailbox's.
    fn next_envelope(&mut self) -> Option<Envelope<M>> {
        if let Some(front) = self.front.as_mut() {
            if let Some(envelope) = front.pop_front() {
                return Some(envelope);
            }
            self.front = None;
        }
        self.cell.user.try_next()
    }

    /// The next message of the front buffer, if it holds one.
    fn next_in_front(&mut self) -> Option<M> {
        let front = self.front.as_mut()?;
        while let Some(envelope) = front.pop_front() {
            if let Envelope::Message(message) = envelope {
                return Some(message);
            }
        }
        self.front = None;
        None
    }

    pub(crate) fn put_front(&mut self, message: M) {
        self.front
            .get_or_insert_with(Box::default)
            .push_front(Envelope::Message(message));
    }

    /// Queue `message` after what the front buffer holds, ahead of the mailbox.
    fn put_after_front(&mut self, message: M) {
        self.front
            .get_or_insert_with(Box::default)
            .push_back(Envelope::Message(message));
    }

    /// The front buffer, for the shared start and answer code to replay a stash into.
    fn front(&mut self) -> &mut Batch<M> {
        &mut self.front
    }
}
