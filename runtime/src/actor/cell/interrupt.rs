//! Awaiting an `async` handler while the system lane is still read: what lets a stop
//! or an escalation interrupt a handler where it awaits.
//!
//! An `async` handler's future borrows the actor and its context, so it is awaited in
//! place, as `Answer::Pending(Interruptible { .. })`, which polls the handler and then
//! drains the system lane. A `Stop`, or a `ChildFailed` from a current child, ends the
//! await with `Awaited::Interrupted`: the future is dropped at its `.await` (its locals
//! drop, the rest never runs, the message is not redelivered), and the interrupting
//! message goes to the front of `Rare::held`, read next. Anything else (`Watch`,
//! `Terminated`, a stale `ChildFailed`) is appended to `Rare::held` and handled after
//! the handler, in order. `Terminated` and `ChildFailed` signal handlers are awaited the
//! same way (a second escalation does not interrupt a `ChildFailed` handler);
//! `PreRestart` and `PostStop` run to their end; synchronous handlers cannot be
//! interrupted.
//!
//! `Interruptible` is a hand-written future, not an `async fn`: it lives inside every
//! actor's task future, which is sized for its largest state, and an `async fn` kept
//! the dispatch result across the await (it made every actor larger).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::Rare;
use crate::actor::LocalCell;
use crate::actor::behavior::Behavior;
use crate::actor::incarnation::Guarded;
use crate::ground::failure::Failure;
use crate::ground::message::Message;
use crate::mailbox::{SystemMessage, UnusedPromise, dropping_promises};

/// A handler's answer: there already, or the future of an `async` handler.
pub(super) enum Answer<'a, P: Message> {
    Ready(Option<Result<Behavior<P>, Failure>>),
    Pending(Interruptible<'a, P, Guarded<'a, P>>),
}

impl<P: Message> Future for Answer<'_, P> {
    type Output = Awaited<P>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Awaited<P>> {
        let this = self.get_mut();
        let awaited = match this {
            Answer::Ready(outcome) => {
                return match outcome.take() {
                    Some(outcome) => Poll::Ready(Awaited::Done(outcome)),
                    // Polled again after it answered: an answer is given once.
                    None => Poll::Pending,
                };
            }
            Answer::Pending(interruptible) => {
                let awaited = Pin::new(&mut *interruptible).poll(cx);
                if awaited.is_ready() {
                    interruptible.cell.core.set_in_handler(false);
                }
                (awaited, interruptible.cell.core.uid())
            }
        };
        let (awaited, me) = awaited;
        if let Poll::Ready(Awaited::Interrupted(SystemMessage::Stop)) = &awaited {
            // The handler's future goes here, as its actor stops: a request from
            // another system that it held tells its asker the target stopped, as a
            // local asker learns.
            dropping_promises(UnusedPromise::Stopped(me), || *this = Answer::Ready(None));
        }
        awaited
    }
}

/// What awaiting an `async` handler came to.
pub(super) enum Awaited<P: Message> {
    /// The handler finished.
    Done(Result<Behavior<P>, Failure>),
    /// A stop, or a child's escalation, came first: the handler's future was dropped
    /// at the point where it awaited, and this is what came.
    Interrupted(SystemMessage),
}

/// Awaits `handler` while still reading the actor's system lane, so that an `async`
/// handler cannot hold off its actor's stop.
///
/// A `Stop` (from `ctx.stop`, the parent stopping or restarting, or termination)
/// drops the handler's future at the point where it awaits, and so does a current
/// child's escalation when `escalations_interrupt` (the escalation is the actor's own
/// failure: supervision decides on it at once). Anything else (a watch, a watched
/// actor's end) is held and read after the handler, in the order it came.
///
/// A future of its own rather than an `async fn`: it lives inside every actor's task
/// while an `async` handler runs, so it is kept to the handler and three words.
pub(super) struct Interruptible<'a, P: Message, F> {
    pub(super) handler: F,
    pub(super) cell: &'a LocalCell<P>,
    pub(super) rare: &'a mut Option<Box<Rare<P>>>,
    pub(super) escalations_interrupt: bool,
}

impl<P: Message, F> Future for Interruptible<'_, P, F>
where
    F: Future<Output = Result<Behavior<P>, Failure>> + Unpin,
{
    type Output = Awaited<P>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Awaited<P>> {
        let this = self.get_mut();
        if let Poll::Ready(outcome) = Pin::new(&mut this.handler).poll(cx) {
            return Poll::Ready(Awaited::Done(outcome));
        }
        let lane = this.cell.core.lane();
        loop {
            let message = match lane.pop() {
                Some(message) => message,
                None => {
                    // Register, then look once more: a push between the two looks
                    // wakes the task.
                    this.cell.user.register(cx.waker());
                    match lane.pop() {
                        Some(message) => message,
                        None => return Poll::Pending,
                    }
                }
            };
            match message {
                SystemMessage::Stop => return Poll::Ready(Awaited::Interrupted(message)),
                SystemMessage::ChildFailed { ref child, .. } if this.escalations_interrupt => {
                    let stale = this
                        .rare
                        .as_ref()
                        .is_some_and(|rare| child.uid() < rare.children_since);
                    if !stale {
                        return Poll::Ready(Awaited::Interrupted(message));
                    }
                    this.rare
                        .get_or_insert_with(Rare::boxed)
                        .held
                        .push_back(message);
                }
                message => this
                    .rare
                    .get_or_insert_with(Rare::boxed)
                    .held
                    .push_back(message),
            }
        }
    }
}
