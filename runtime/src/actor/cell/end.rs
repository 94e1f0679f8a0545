//! The end of an actor: `PostStop`, then telling its watchers and its parent, and
//! waking an ancestor the shutdown deadline left waiting.
//!
//! `tell_the_end`, in this order: cancel the timers `PostStop` may have started;
//! close the user lane, only when the end came another way than `begin_stop`, which
//! closed it already (a second close was measurable on skynet); drop the actor's own
//! watches; free its name (before anyone hears, so a successor can take it on
//! `Terminated`); close the system lane and tell every watcher, queued ones too;
//! count the actor out of the live actors (`cell_ended`, before the parent hears,
//! which is why `live_actors()` is settled when `terminate` returns); then tell the
//! parent (`child_ended`, or `ChildFailed` with the failure to escalate), or for a
//! guardian `guardian_stopped`. A task that ends any other way (aborted, dropped with
//! its runtime, a panic outside a handler) still runs it, from
//! `Drop for CellState`.
//!
//! `close_user_lane` letters, in the order they came, what every live stash handle
//! holds, then the batch, then what is still queued (`RecipientStopped`).

use crate::actor::behavior::Behavior;
use crate::actor::incarnation::Running;
use crate::actor::lanes::Envelope;
use crate::actor::signal::Signal;
use crate::actor::{AnyActorRef, CellCore, Parent};
use crate::ground::events::DeadLetterReason;
use crate::ground::failure::Failure;
use crate::ground::message::Message;
use crate::mailbox::SystemMessage;

use super::{CellState, Phase};

/// `PostStop`, the last signal an actor sees: one value for every actor, so that a
/// handler that answers at once needs nothing allocated and nothing kept across an
/// `await`.
pub(super) static POST_STOP: Signal = Signal::PostStop;

impl<P: Message> CellState<P> {
    /// Whether the actor is to see `PostStop` now that every child has stopped: not
    /// when it was given up on at the shutdown deadline, as its parent has gone on
    /// without it, and a `PostStop` now would come after its parent's.
    pub(super) fn sees_post_stop(&self) -> bool {
        !self.cell.core.is_abandoned()
    }

    /// Every child has stopped and `PostStop` has been handled (`None`: skipped):
    /// tell the watchers and the parent.
    pub(super) fn finish(&mut self, post_stop: Option<Result<Behavior<P>, Failure>>) {
        if let Some(Err(failure)) = post_stop {
            tracing::warn!(error = %failure, "PostStop handler failed");
        }
        // What the actor held goes with it: a request from another system among it
        // tells its asker that the target stopped, as a local asker learns.
        let me = crate::mailbox::UnusedPromise::Stopped(self.cell.core.uid());
        crate::mailbox::dropping_promises(me, || self.running = Running::Idle);
        self.tell_the_end();
    }

    /// The actor has ended: close everything, and tell the watchers and the parent.
    /// Runs once, from `finish`, or from `drop` for a task that ended any other way
    /// (cancelled at the shutdown deadline, or a panic outside every handler).
    pub(super) fn tell_the_end(&mut self) {
        // A stop closed the user lane as it began (`begin_stop`), and nothing is
        // queued there since: only an end that came any other way closes it here.
        let lane_closed = self.phase == Phase::Stopping;
        self.phase = Phase::Finished;
        self.cell.core.set_stopping();
        // A `PostStop` handler may have started a timer.
        self.ctx.cancel_timers();
        if !lane_closed {
            self.close_user_lane();
        }
        self.ctx.unwatch_all();
        let me = self.ctx.self_ref().erase();
        let core = &self.cell.core;
        // The name is free before anyone hears of the end: a watcher that spawns a
        // successor under it on `Terminated` is never refused. The actor stays listed
        // until its watchers have been told, so its parent cannot end before them.
        if let Parent::Cell(parent) = core.parent()
            && !core.is_anonymous()
            && let Some(parent) = parent.local()
        {
            parent.children().release_name(&me);
        }
        for message in core.lane().close() {
            if let SystemMessage::Watch(watcher) = message {
                let _ = watcher.send_system(SystemMessage::Terminated(me.clone()));
            }
        }
        let mut escalate = None;
        if let Some(rare) = self.rare.take() {
            let held_watchers = rare.held.into_iter().filter_map(|message| match message {
                SystemMessage::Watch(watcher) => Some(watcher),
                _ => None,
            });
            for watcher in rare.watchers.into_iter().chain(held_watchers) {
                let _ = watcher.send_system(SystemMessage::Terminated(me.clone()));
            }
            escalate = rare.escalate;
        }
        // The actor counts as live until here, so whoever learns of its end below
        // (its parent, and through it `terminate`) sees the count without it.
        core.system().cell_ended();
        match core.parent() {
            Parent::Cell(parent) => {
                // One the deadline gave up on stays listed while children of its own
                // are still stopping: its parent waits for them.
                if (!core.is_abandoned() || core.children().is_empty())
                    && let Some(parent) = parent.local()
                {
                    parent.children().remove(&me);
                }
                match escalate {
                    Some(failure) => {
                        let failure = failure.climb(core.path());
                        let message = SystemMessage::ChildFailed {
                            child: me.clone(),
                            failure,
                        };
                        let _ = parent.send_system(message);
                    }
                    // A parent that waits for its children is woken to look again; one
                    // that does not has nothing to do.
                    None => {
                        if parent.local().is_some_and(CellCore::child_ended) {
                            parent.wake();
                        }
                    }
                }
                wake_waiting_ancestor(parent);
            }
            Parent::System => core.system().guardian_stopped(core.path()),
        }
    }

    /// Close the user lane and turn what it still holds into dead letters.
    pub(super) fn close_user_lane(&mut self) {
        // A request from another system that goes with the actor tells its asker
        // that the target stopped.
        let me = crate::mailbox::UnusedPromise::Stopped(self.cell.core.uid());
        // What a stash holds arrived before what is queued, and is lettered first,
        // even while a clone of the buffer lives on elsewhere.
        crate::mailbox::dropping_promises(me, || {
            self.ctx.letter_stashes();
            self.letter_what_is_queued();
        });
    }

    fn letter_what_is_queued(&mut self) {
        let batch = self.batch.take().map(|batch| *batch).unwrap_or_default();
        for envelope in batch.into_iter().chain(self.cell.user.close()) {
            match envelope {
                // A request asked of another actor and forwarded here fails its
                // ask at once too (S52, S23).
                Envelope::Message(message) => self.cell.core.system().dead_letter(
                    message.refuse_dropped(crate::ground::message::Dropped::HolderStopped),
                    self.cell.core.path(),
                    DeadLetterReason::RecipientStopped,
                ),
                Envelope::Adapted(adapted) => {
                    (*adapted).dead_letter(DeadLetterReason::RecipientStopped);
                }
                Envelope::Tick(_) | Envelope::Run(_) => {}
            }
        }
    }
}

/// When `parent` was abandoned at the shutdown deadline, it reads nothing any more:
/// wake its nearest ancestor that still waits, which may now be settled.
fn wake_waiting_ancestor(parent: &AnyActorRef) {
    // Parents are actors of this process: each has a local core.
    let mut above = parent.clone();
    while let Some(core) = above.local()
        && core.is_abandoned()
    {
        let Parent::Cell(next) = core.parent() else {
            return;
        };
        let next = next.clone();
        if next.local().is_some_and(|core| !core.is_abandoned()) {
            next.wake();
            return;
        }
        above = next;
    }
}
