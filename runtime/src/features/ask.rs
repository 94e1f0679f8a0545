//! Ask: send one request and await one answer, with a deadline.
//!
//! [`ActorRef::ask`](crate::ActorRef::ask) sends a request declared with
//! `#[message(reply = T)]` and resolves to a `T`: the reply type is known statically,
//! so a caller that expects another type, or a handler that answers with one, does
//! not compile (S21). [`ActorRef::ask_with`](crate::ActorRef::ask_with) is the same
//! for a message that carries its reply ref in a field, the way the reference library
//! writes requests.
//!
//! The ref the answer goes to is a promise, not an actor: cheap, and registered
//! nowhere. The ways of not getting an answer are told apart:
//!
//! - [`AskError::Timeout`]: nothing came before the deadline (5 s unless
//!   [`Ask::timeout`] says otherwise). An answer that comes later is a dead letter
//!   ([`AskEnded`](crate::DeadLetterReason::AskEnded)) (S22).
//! - [`AskError::TargetTerminated`]: the target stopped before answering, and the ask
//!   fails at once instead of at the deadline (S23). The request carries the promise:
//!   a target that had stopped refuses it, and one that stops with the request still
//!   queued, or in hand, drops it, which fails the ask. An ask still waiting after a
//!   millisecond also watches its target, so it fails as soon as the target stops
//!   even when the reply ref lives on elsewhere (handed to another actor, or kept by
//!   a dead-letter subscriber). A request dropped in the middle of the target's
//!   turn (a handler that drops it and fails) is settled by how that turn ends:
//!   the ask asks the target, which answers once it has carried out the failure's
//!   decision, so a stop reads `TargetTerminated` on any number of threads.
//! - [`AskError::Unanswered`]: the request was dropped without an answer, for
//!   example by a protocol that does not carry the reply ref. A request sent to
//!   another system fails the same way, at once: when every ref to its promise
//!   there is dropped unused (never answered through, never passed on in a
//!   message), that system tells this one. As locally, a request whose handler
//!   drops it and fails is `TargetTerminated` when the failure stops the target,
//!   and `Unanswered` when the target goes on: that system tells once the
//!   target's supervision has decided.
//! - [`AskError::MailboxFull`]: the target's bounded mailbox was full and its
//!   overflow strategy (drop-new, or fail) refused the request; the ask fails at
//!   once (S29). Under drop-new the target runs on; under fail the overflow is the
//!   target's failure, as a tell's is (`MailboxOverflow`, under its supervision),
//!   and what it had queued stays for the next incarnation if it restarts. Under
//!   drop-oldest a request is taken, and one pushed out later fails its ask.
//! - [`AskError::PushedOut`]: the target's drop-oldest mailbox pushed the request
//!   out for a newer message; the ask fails at once (S54), whether or not anyone
//!   subscribes to dead letters. For [`ask_with`](crate::ActorRef::ask_with),
//!   whose reply ref is a field of the message, the mailbox cannot see the ref:
//!   that ask fails as `Unanswered` once nobody holds the message any more (a
//!   dead-letter subscriber that keeps the letter keeps it waiting, up to its
//!   deadline).
//! - [`AskError::Refused`]: the target lives in another system, which could not
//!   deliver the request (its key is not registered there, the target does not
//!   accept it, or it did not decode there); the ask fails at once.
//!
//! A quick answer costs no watch, no timer, no channel and no registration anywhere:
//! the promise is a task-less cell that keeps the answer until the ask takes it, and
//! no registry knows of it.
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//! use tapio::prelude::*;
//!
//! #[message]
//! pub struct Count(pub u64);
//!
//! #[message(reply = Count)]
//! pub struct GetCount;
//!
//! #[derive(Clone, Default)]
//! pub struct Counter(u64);
//!
//! #[actor]
//! impl Counter {
//!     fn get(&mut self, _: GetCount) -> Count {
//!         Count(self.0)
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let system = ActorSystem::new("asking")?;
//! let counter = system.spawn(Counter(3), "counter")?;
//! let Count(n) = counter.ask(GetCount).timeout(Duration::from_millis(100)).await?;
//! assert_eq!(n, 3);
//! system.terminate().await;
//! # Ok(())
//! # }
//! ```

// Layer: features (rank 3). Imports ground, the mailbox and the actor.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use std::sync::Arc;

use crate::actor::SystemShared;
use crate::actor::promise::{self, Answer, Refusal};
use crate::actor::reply::ReplyTo;
use crate::actor::reply::Request;
use crate::actor::{ActorPath, ActorRef, AnyActorRef, AnyCell, Delivery, LocalCell};
use crate::ground::events::DeadLetterReason;
use crate::ground::message::{Accepts, AnsweredBy, Message};
use crate::mailbox::{Look, SystemMessage, TurnWaiter};

/// Why an ask got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// No answer came before the deadline.
    #[error("{target} did not answer within {after:?}")]
    Timeout {
        /// The actor asked.
        target: ActorPath,
        /// The deadline.
        after: Duration,
    },
    /// The target is a message adapter: it translates what it is told for its owner
    /// and answers nothing itself. Ask the owner instead.
    #[error(
        "{target} is a message adapter and cannot be asked: it only passes messages on to its owner; ask the owner instead"
    )]
    Adapter {
        /// The adapter asked.
        target: ActorPath,
    },
    /// The target's bounded mailbox was full, and its overflow strategy (drop-new,
    /// or fail) refused the request, at once: the request is a dead letter
    /// (`MailboxFull`). Under drop-new the target runs on; under fail it also fails
    /// with [`MailboxOverflow`](crate::MailboxOverflow), under its supervision, as
    /// for a tell.
    #[error(
        "{target}'s bounded mailbox was full and refused the request: ask again once it has caught up, or give it more room (MailboxConfig::bounded)"
    )]
    MailboxFull {
        /// The actor asked.
        target: ActorPath,
    },
    /// The target's bounded mailbox is drop-oldest, and a newer message pushed the
    /// queued request out before the target took it: the request is a dead letter
    /// (`PushedOut`), and the ask fails at once (S54).
    #[error(
        "a newer message pushed the request out of {target}'s full drop-oldest mailbox before it was handled: ask again once it has caught up, give it more room (MailboxConfig::bounded), or use drop-new to refuse the newest instead"
    )]
    PushedOut {
        /// The actor asked.
        target: ActorPath,
    },
    /// The target stopped before it answered.
    #[error("{target} stopped before it answered")]
    TargetTerminated {
        /// The actor asked.
        target: ActorPath,
    },
    /// The target is a state machine whose current state does not handle the
    /// request: it was refused at once, rather than left to time out.
    #[error(
        "{target} refused the request in its state `{state}`, which does not handle it: ask when the actor is in a state that does, or handle it in `{state}`"
    )]
    NotHandled {
        /// The actor asked.
        target: ActorPath,
        /// The state it was in.
        state: &'static str,
    },
    /// The target lives in another system, and the request could not be sent
    /// there (see the dead letter for why: unreachable, a full outbound buffer, a
    /// message not registered for the wire).
    #[error(
        "the request could not be sent to {target}, on another system; its dead letter says why"
    )]
    Unreachable {
        /// The actor asked.
        target: ActorPath,
    },
    /// The target lives in another system, which could not deliver the request to
    /// it: the request's key is not registered there, the target's protocol does
    /// not accept it, or its payload did not decode there. The ask fails at once;
    /// that system publishes the request as a dead letter naming this one.
    #[error(
        "{target}'s system refused the request: {problem}; both systems must register the request's type under the same key, in versions that agree, and the target's protocol must accept it"
    )]
    Refused {
        /// The actor asked.
        target: ActorPath,
        /// What the other system found wrong.
        problem: crate::ground::codec::WireProblem,
    },
    /// The request was dropped without an answer.
    #[error(
        "{target} dropped the request without answering: does its protocol carry the reply (a `#[message(reply = ..)]` handled by `#[actor]`, or a `reply_to` field)?"
    )]
    Unanswered {
        /// The actor asked.
        target: ActorPath,
    },
}

/// An ask on its way: await it for the answer. The request was sent when the ask was
/// made; [`Ask::timeout`] sets the deadline (5 s by default), counted from when the
/// ask starts to wait: its first poll, or one turn of the scheduler later when the
/// answer did not come in that turn (a quick answer costs no clock reading and no
/// timer).
///
/// `Ask` is [`IntoFuture`], not a `Future`: it is a builder until it is awaited
/// (`.timeout(..)` takes it by value), and the future it turns into keeps the
/// promise, the deadline and, for a slow answer, the channel, which a builder that
/// can still be configured has no place for. `.await` turns it into its future
/// for you; where a `Future` is needed by name (`tokio::spawn`, `join!`, a
/// `Vec` of pending asks), call [`into_future`](IntoFuture::into_future):
///
/// ```
/// use std::future::IntoFuture;
/// use tapio::prelude::*;
///
/// #[message(reply = u64)]
/// pub struct Double(pub u64);
///
/// #[derive(Clone)]
/// pub struct Doubler;
///
/// #[actor]
/// impl Doubler {
///     fn double(&mut self, Double(n): Double) -> u64 {
///         n * 2
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let system = ActorSystem::new("asks")?;
/// let doubler = system.spawn(Doubler, "doubler")?;
/// let pending = tokio::spawn(doubler.ask(Double(21)).into_future());
/// assert_eq!(pending.await??, 42);
/// system.terminate().await;
/// # Ok(())
/// # }
/// ```
#[must_use = "an ask does nothing with its answer unless it is awaited"]
pub struct Ask<R: Message> {
    answer: Source<R>,
    target: AnyActorRef,
    /// Why the request could not be sent, if it could not: the ask fails at once.
    refused: Option<Refused>,
    timeout: Duration,
}

/// Why an ask's request was refused when it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refused {
    /// The target is a message adapter, which is never asked.
    Adapter,
    /// The target's full bounded mailbox refused it.
    MailboxFull,
    /// The target has stopped, or (another system's actor) cannot be reached.
    Gone,
}

impl Refused {
    /// What a delivery of the request says: `None` when it was queued.
    fn of(delivery: Delivery) -> Option<Self> {
        match delivery {
            Delivery::Queued => None,
            Delivery::Full => Some(Self::MailboxFull),
            Delivery::Refused => Some(Self::Gone),
        }
    }
}

/// Where an ask finds its answer.
enum Source<R: Message> {
    /// In the promise, which the ask holds while it waits on the request alone.
    Promise(Arc<LocalCell<R>>),
    /// Nowhere any more: taken, or handed over to a channel.
    Done,
}

impl<R: Message> Drop for Ask<R> {
    fn drop(&mut self) {
        // An answer that came and was not taken (the ask was dropped after it came)
        // is a dead letter, as one that comes later is (S22, S31).
        if let Source::Promise(promise) = &self.answer
            && let Some(answer) = promise.user.asker_gone()
        {
            let core = &promise.core;
            core.system()
                .dead_letter(answer, core.path(), DeadLetterReason::AskEnded);
        }
    }
}

/// The channel a slow ask's answer comes down. It is closed when the ask ends, so
/// that nothing falls between the two: an answer sent before that is the ask's (or a
/// dead letter, when the ask was dropped), and one sent after it is refused, and the
/// promise makes it a dead letter (`AskEnded`).
struct AnswerChannel<R: Message> {
    receiver: oneshot::Receiver<Answer<R>>,
    /// Where the answer of an ask dropped while it waited is lettered: the system
    /// and the promise's uid (its path is built only for a letter).
    letter_to: Option<(Arc<SystemShared>, u64)>,
}

impl<R: Message> AnswerChannel<R> {
    /// Close the channel, and take what was sent before it closed.
    fn last_look(&mut self) -> Option<Answer<R>> {
        self.receiver.close();
        self.receiver.try_recv().ok()
    }
}

impl<R: Message> Drop for AnswerChannel<R> {
    fn drop(&mut self) {
        if let Some(Ok(answer)) = self.last_look()
            && let Some((system, uid)) = &self.letter_to
        {
            let path = promise::path_of(system, *uid);
            system.dead_letter(answer, &path, DeadLetterReason::AskEnded);
        }
    }
}

/// How long an ask relies on its request alone to learn that the target stopped,
/// before it watches the target too.
const WATCH_AFTER: Duration = Duration::from_millis(1);

impl<R: Message> Ask<R> {
    /// The deadline unless one is given.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

    /// Wait at most `timeout` for the answer. A timeout too large to add to the
    /// clock (`Duration::MAX`) is no deadline: the ask waits for the answer, or for
    /// its target to stop.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The error for an answer channel that closed: the promise went away unanswered.
    /// A request dropped by a target that stops (or had stopped) was not refused: its
    /// target is gone.
    fn dropped(&self) -> AskError {
        let target = self.target.path().clone();
        if self.target.is_stopping() {
            AskError::TargetTerminated { target }
        } else {
            AskError::Unanswered { target }
        }
    }

    /// What came out of the promise: the answer, or the refusal by the target's
    /// current state.
    fn settled(target: &AnyActorRef, answer: Answer<R>) -> Result<R, AskError> {
        let target = || target.path().clone();
        answer.map_err(|refusal| match refusal {
            Refusal::NotHandled { state } => AskError::NotHandled {
                target: target(),
                state,
            },
            Refusal::Unreachable => AskError::Unreachable { target: target() },
            Refusal::TargetTerminated => AskError::TargetTerminated { target: target() },
            Refusal::Unanswered => AskError::Unanswered { target: target() },
            Refusal::MailboxFull => AskError::MailboxFull { target: target() },
            Refusal::PushedOut => AskError::PushedOut { target: target() },
            Refusal::Adapter => AskError::Adapter { target: target() },
            Refusal::Undeliverable(problem) => AskError::Refused {
                target: target(),
                problem: *problem,
            },
        })
    }

    /// The answer channel's outcome: the answer, its refusal, or why it closed.
    async fn received(
        &self,
        received: Result<Answer<R>, oneshot::error::RecvError>,
    ) -> Result<R, AskError> {
        match received {
            Ok(answer) => Self::settled(&self.target, answer),
            Err(_) => Err(self.dropped_after_turn().await),
        }
    }

    /// Whether the request was dropped by a target of this process in the middle of
    /// a turn, whose outcome (a failed handler's decision) is still to come.
    fn dropped_in_turn(&self) -> bool {
        self.target
            .local()
            .is_some_and(|core| core.lane().is_actor() && !core.lane().is_parked())
    }

    /// As `dropped`, but a target in the middle of a turn is asked, once it has
    /// carried out what the turn came to, whether it stops: a handler that drops the
    /// request and fails, under a decision to stop, is `TargetTerminated`, however
    /// the threads interleave. Waits at most the ask's timeout for that turn.
    async fn dropped_after_turn(&self) -> AskError {
        if self.dropped_in_turn() {
            let (asker, outcome) = oneshot::channel();
            if self
                .target
                .send_system(SystemMessage::TurnOutcome(TurnWaiter::Local(asker)))
                .is_ok()
            {
                let path = || self.target.path().clone();
                let waited =
                    match crate::ground::clock::deadline_after(Instant::now(), self.timeout) {
                        Some(deadline) => tokio::time::timeout_at(deadline, outcome).await.ok(),
                        None => Some(outcome.await),
                    };
                return match waited {
                    // It went on: the request was dropped unanswered.
                    Some(Ok(false)) | None => AskError::Unanswered { target: path() },
                    // It stops, or ended with the question unread.
                    Some(Ok(true) | Err(_)) => AskError::TargetTerminated { target: path() },
                };
            }
        }
        self.dropped()
    }

    /// A channel for the answer, which the promise forwards to from now on (at once,
    /// if it is there already); the ask lets the promise go, so that the channel
    /// closes when every other ref to it is gone.
    fn channel(&mut self) -> AnswerChannel<R> {
        let (sender, receiver) = oneshot::channel();
        let mut letter_to = None;
        if let Source::Promise(promise) = std::mem::replace(&mut self.answer, Source::Done) {
            letter_to = Some((promise.core.system().clone(), promise.core.uid()));
            promise.user.forward_answer(sender);
        }
        AnswerChannel {
            receiver,
            letter_to,
        }
    }

    /// Wait for an answer that did not come in the target's first turn: with the
    /// deadline armed, and after a millisecond a watch on the target as well, in case
    /// its reply ref lives on elsewhere.
    async fn wait_slow(mut self) -> Result<R, AskError> {
        // Another system's actor is watched over the link, by the promise, whose
        // ask then fails when it hears `Terminated` (see `LocalCell::send_system`).
        let promise = match &self.answer {
            Source::Promise(promise) if self.target.is_remote() => {
                Some(AnyActorRef::from_cell(promise.clone() as Arc<dyn AnyCell>))
            }
            _ => None,
        };
        let mut answer = self.channel();
        let timeout = self.timeout;
        let path = || self.target.path().clone();
        let timed_out = |answer: &mut AnswerChannel<R>| match answer.last_look() {
            Some(answer) => Self::settled(&self.target, answer),
            None => Err(AskError::Timeout {
                target: path(),
                after: timeout,
            }),
        };
        let start = Instant::now();
        let sleep = tokio::time::sleep_until(start + timeout.min(WATCH_AFTER));
        tokio::pin!(sleep);
        tokio::select! {
            biased;
            received = &mut answer.receiver => return self.received(received).await,
            () = &mut sleep => {}
        }
        if timeout <= WATCH_AFTER {
            return timed_out(&mut answer);
        }
        // A deadline too far for the clock never comes: the sleep stays unarmed.
        let deadline = crate::ground::clock::deadline_after(start, timeout);
        if let Some(deadline) = deadline {
            sleep.as_mut().reset(deadline);
        }
        let target = &self.target;
        let watch = promise.as_ref().zip(target.outbox());
        if let Some((promise, slot)) = &watch {
            slot.watch(promise, target);
        }
        let armed = deadline.is_some();
        let outcome = self
            .wait_watching(&mut answer, &mut sleep, armed, timeout)
            .await;
        if let Some((promise, slot)) = &watch {
            slot.unwatch(promise, &self.target);
        }
        outcome
    }

    /// The rest of a slow ask's wait, with the deadline `sleep` (when `armed`: not
    /// for one that never comes) and the target watched: the answer, the target's
    /// end, or the deadline.
    async fn wait_watching(
        &self,
        answer: &mut AnswerChannel<R>,
        sleep: &mut Pin<&mut tokio::time::Sleep>,
        armed: bool,
        timeout: Duration,
    ) -> Result<R, AskError> {
        let target = &self.target;
        let path = || target.path().clone();
        let timed_out = |answer: &mut AnswerChannel<R>| match answer.last_look() {
            Some(answer) => Self::settled(target, answer),
            None => Err(AskError::Timeout {
                target: path(),
                after: timeout,
            }),
        };
        // For another system's actor, the end of the session with its system: the
        // peer was given up on, or its system stopped (S44).
        let remote = target.is_remote();
        tokio::select! {
            biased;
            received = &mut answer.receiver => self.received(received).await,
            () = target.ended() => match answer.last_look() {
                // The target ended; an answer may have made it out just before.
                Some(answer) => Self::settled(target, answer),
                None if remote => Err(AskError::Unreachable { target: path() }),
                None => Err(AskError::TargetTerminated { target: path() }),
            },
            () = sleep.as_mut(), if armed => timed_out(answer),
        }
    }
}

/// What [`Ask`] turns into when awaited: resolves to the answer, or to why none came.
///
/// It first waits on the request alone, and gives the target one turn (the awaiting
/// task goes to the back of the run queue) before it arms the deadline: an answer
/// that comes in that turn costs no timer, no clock reading and no allocation. After
/// that it waits with the deadline, and after a millisecond with a watch on the
/// target as well.
///
/// # Cancel safety
///
/// Dropping it ends the ask: an answer that came and was not taken yet, or that
/// comes later, is a dead letter (`AskEnded`).
#[must_use = "futures do nothing unless polled"]
pub struct AskFuture<R: Message> {
    state: Waiting<R>,
}

enum Waiting<R: Message> {
    /// On the request alone; `yielded` once the target has had its turn.
    Quick { ask: Ask<R>, yielded: bool },
    /// With the deadline armed.
    Slow(Pin<Box<dyn Future<Output = Result<R, AskError>> + Send>>),
    /// For the moment the ask moves from the one to the other.
    Arming,
}

impl<R: Message> Future for AskFuture<R> {
    type Output = Result<R, AskError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Waiting::Quick { ask, yielded } = &mut this.state {
            if let Some(refused) = ask.refused {
                let target = ask.target.path().clone();
                return Poll::Ready(Err(match refused {
                    Refused::Adapter => AskError::Adapter { target },
                    Refused::MailboxFull => AskError::MailboxFull { target },
                    Refused::Gone if ask.target.is_remote() => AskError::Unreachable { target },
                    Refused::Gone => AskError::TargetTerminated { target },
                }));
            }
            // A look into the promise, which keeps the answer: the task is woken by
            // its own yield, so it leaves no waker, and the answer wakes nobody.
            let look = match &ask.answer {
                // Before its yield, an ask whose request is still held somewhere does
                // not take the lock to look: the answer has most likely not come (an
                // answer lets go of the request it answers).
                Source::Promise(promise) if !*yielded && Arc::strong_count(promise) > 1 => {
                    Look::Waiting
                }
                Source::Promise(promise) => promise::look(promise),
                Source::Done => Look::Dropped,
            };
            match look {
                Look::Answered(answer) => {
                    ask.answer = Source::Done;
                    return Poll::Ready(Ask::settled(&ask.target, answer));
                }
                Look::Dropped if !ask.dropped_in_turn() => {
                    return Poll::Ready(Err(ask.dropped()));
                }
                // Dropped in the middle of the target's turn: its outcome decides.
                Look::Dropped => {
                    if let Waiting::Quick { ask, .. } =
                        std::mem::replace(&mut this.state, Waiting::Arming)
                    {
                        this.state =
                            Waiting::Slow(Box::pin(
                                async move { Err(ask.dropped_after_turn().await) },
                            ));
                    }
                    return match &mut this.state {
                        Waiting::Slow(slow) => slow.as_mut().poll(cx),
                        Waiting::Quick { .. } | Waiting::Arming => Poll::Pending,
                    };
                }
                Look::Waiting if !*yielded => {
                    *yielded = true;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Look::Waiting => {}
            }
            if let Waiting::Quick { ask, .. } = std::mem::replace(&mut this.state, Waiting::Arming)
            {
                this.state = Waiting::Slow(Box::pin(ask.wait_slow()));
            }
        }
        match &mut this.state {
            Waiting::Slow(slow) => slow.as_mut().poll(cx),
            Waiting::Quick { .. } | Waiting::Arming => Poll::Pending,
        }
    }
}

impl<R: Message> IntoFuture for Ask<R> {
    type Output = Result<R, AskError>;
    type IntoFuture = AskFuture<R>;

    fn into_future(self) -> Self::IntoFuture {
        AskFuture {
            state: Waiting::Quick {
                ask: self,
                yielded: false,
            },
        }
    }
}

impl<R: Message> fmt::Debug for AskFuture<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("AskFuture");
        match &self.state {
            Waiting::Quick { ask, .. } => debug.field("ask", ask),
            Waiting::Slow(_) | Waiting::Arming => debug.field("deadline", &"armed"),
        };
        debug.finish()
    }
}

impl<R: Message> fmt::Debug for Ask<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ask")
            .field("target", &self.target)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Whether a ref to another system's actor names a message adapter there: its
/// last name is one only the runtime gives an adapter (`$adapter-7`).
fn names_adapter(target: &AnyActorRef) -> bool {
    target.path().name().starts_with("$adapter-")
}

impl<P: Message> ActorRef<P> {
    /// Send `request` and await its answer, of the type the request declares with
    /// `#[message(reply = T)]`.
    pub fn ask<M>(&self, request: M) -> Ask<M::Reply>
    where
        M: Request + AnsweredBy<P>,
    {
        let (reply_to, mut ask) = self.prepare_ask();
        if ask.refused.is_some() {
            return ask;
        }
        ask.refused = Refused::of(self.deliver_to(request.wrap_into(ReplyTo::to(reply_to))));
        ask
    }

    /// Build a request around a fresh reply ref, send it, and await what comes back to
    /// that ref: for messages that carry their reply ref in a field.
    ///
    /// ```
    /// # use std::time::Duration;
    /// use tapio::prelude::*;
    ///
    /// #[message]
    /// pub struct Lookup { pub title: String, pub reply_to: ActorRef<u32> }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let system = ActorSystem::new("desk")?;
    /// let desk = system.spawn(
    ///     Behaviors::receive_message(|lookup: Lookup| lookup.reply_to.tell(3_u32)),
    ///     "desk",
    /// )?;
    /// let shelf = desk
    ///     .ask_with(|reply_to| Lookup { title: "Dune".into(), reply_to })
    ///     .timeout(Duration::from_millis(50))
    ///     .await?;
    /// assert_eq!(shelf, 3);
    /// # system.terminate().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn ask_with<R, M, F>(&self, build: F) -> Ask<R>
    where
        R: Message,
        M: Message,
        P: Accepts<M>,
        F: FnOnce(ActorRef<R>) -> M,
    {
        let (reply_to, mut ask) = self.prepare_ask();
        if ask.refused.is_some() {
            return ask;
        }
        ask.refused = Refused::of(self.deliver_to(P::wrap(build(reply_to))));
        ask
    }

    /// A promise for the answer, and the ask that awaits it.
    fn prepare_ask<R: Message>(&self) -> (ActorRef<R>, Ask<R>) {
        let target = self.erase();
        // Read from the typed cell, without a call through the erased ref.
        let (system, adapter) = match self.local_cell() {
            Some(cell) => (
                cell.core.system(),
                cell.core.is_adapter() || (cell.core.lane().is_remote() && names_adapter(&target)),
            ),
            None => (target.system(), target.owner().is_some()),
        };
        let promise = promise::promise(system);
        // An adapter is not asked: the ask fails at once.
        let refused = adapter.then_some(Refused::Adapter);
        let reply_to = ActorRef::local(promise.clone());
        let ask = Ask {
            answer: Source::Promise(promise),
            target,
            refused,
            timeout: Ask::<R>::DEFAULT_TIMEOUT,
        };
        (reply_to, ask)
    }
}
