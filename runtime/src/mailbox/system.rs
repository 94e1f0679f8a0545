//! The system lane: signals and lifecycle commands (watch, stop, child events).
//!
//! It is rare traffic, so it is a locked deque behind an atomic flag: the cell checks
//! one flag per user message, and only takes the lock when something is there. A stop
//! asked while nothing is queued is a bit in that flag byte, not a queued message.
//!
//! # The flag byte
//!
//! One `AtomicU8` says whether the deque holds anything and doubles as the cell's state
//! bits, which saves a word per actor:
//!
//! | bit | meaning |
//! |---|---|
//! | `PENDING` | the deque holds messages |
//! | `STOP` | a stop asked while nothing was queued (no lock, no allocation); `pop` returns it before the deque. With messages pending, `Stop` is queued behind them, keeping one sender's order |
//! | `IN_HANDLER` | the task awaits an `async` handler, or runs a signal handler |
//! | `CHILD_ENDED` | a child ended since the actor last looked (`CellCore::look_at_children` clears it): only the first such end wakes the parent |
//! | `STOPPING` | the actor has begun to stop (a promise has it from birth): timers refuse to arm, tells are refused without the mailbox's lock, an ask tells `TargetTerminated` from `Unanswered` |
//! | `NEVER_RAN` | the task's future was dropped before it ran; `spawn_child` answers `SpawnError::RuntimeShutDown` |
//! | `ABANDONED` | termination gave up on this actor at the deadline; its parent no longer waits for it |
//! | `WAITING_FOR_CHILDREN` | stopping or restarting; only then does `CellCore::child_ended` wake it |
//!
//! Beside the byte, in what would be padding: the `LaneKind` (`Actor`, `Promise`,
//! `Adapter`, `Remote`, fixed at creation; `is_stopping_actor` reads it with
//! `STOPPING`), the user lane's reader-waiting mark, and `parked` (the task returned
//! `Pending` outside every handler; only the cell writes it). Neither parked nor
//! `IN_HANDLER` means a synchronous handler runs: `CellCore::is_busy`.
//!
//! # Messages
//!
//! `Stop`, `Watch`, `WatchFor` (a probe watching for a test), `Unwatch`, `Terminated`,
//! `ChildFailed`, `MailboxOverflowed` (a bounded mailbox under `Fail` refused a tell)
//! and `TurnOutcome`: a request was dropped unanswered in the middle of the target's
//! turn, and the cell tells its `TurnWaiter` whether it is stopping once the turn's
//! outcome (a failure's decision too) is carried out. The waiter is `Local` for an ask
//! of this process and `Peer` for a peer's, whose refusal goes back over the link; a
//! waiter dropped untold says the actor stopped.
//!
//! `close` marks the lane closed (later pushes are handed back, which is how a watch of
//! a dead actor answers `Terminated` at once) and wakes the `end_notice` asks wait on.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::ground::failure::Failure;
use crate::mailbox::Identity;

/// A command or notification on an actor's system lane.
#[derive(Debug)]
pub(crate) enum SystemMessage {
    /// Stop: from the parent, from `terminate()`, or from `ctx.stop(child)`.
    Stop,
    /// The sender wants `Terminated` when this actor stops.
    Watch(Identity),
    /// Watch this actor on the receiver's behalf (a test probe, told from outside).
    #[cfg(feature = "testkit")]
    WatchFor(Identity),
    /// The sender no longer wants `Terminated`.
    Unwatch(Identity),
    /// An actor this one watches has stopped.
    Terminated(Identity),
    /// A child stopped with a failure it escalated to this actor.
    ChildFailed {
        /// The child that escalated.
        child: Identity,
        /// What it failed with.
        failure: Failure,
    },
    /// A tell found the actor's bounded mailbox full, and its overflow strategy is
    /// to fail: the actor fails with [`MailboxOverflow`](crate::MailboxOverflow).
    MailboxOverflowed,
    /// A request was dropped unanswered in the middle of one of this actor's turns:
    /// once the turn's outcome is carried out (a failure's decision taken), the
    /// actor tells its asker whether it is stopping.
    TurnOutcome(TurnWaiter),
}

/// An asker whose request an actor dropped unanswered in the middle of a turn, and
/// who waits to hear whether that turn stops the actor: its ask then fails with
/// `TargetTerminated`, else with `Unanswered`. Dropped untold (the actor ended with
/// it queued), it says that the actor stopped.
#[derive(Debug)]
pub(crate) enum TurnWaiter {
    /// An ask of this process, waiting on its side of a channel.
    Local(tokio::sync::oneshot::Sender<bool>),
    /// An ask of another system, whose refusal goes back over the link.
    Peer(Box<dyn crate::mailbox::OwedTurn>),
}

impl TurnWaiter {
    /// Tell the asker whether the actor is `stopping`, now that its turn's outcome
    /// is carried out.
    pub(crate) fn tell(self, stopping: bool) {
        match self {
            Self::Local(asker) => {
                // An asker that gave up (its ask was dropped) needs no answer.
                let _ = asker.send(stopping);
            }
            Self::Peer(owed) => owed.send(stopping),
        }
    }
}

/// The system lane: a locked queue, allocated on first use, with a flag that is read
/// without the lock.
#[derive(Debug, Default)]
pub(crate) struct SystemLane {
    queue: Mutex<SystemQueue>,
    /// `PENDING` while messages are queued. The cell keeps its `IN_HANDLER` bit in
    /// the same byte, which saves a word in every actor.
    flags: AtomicU8,
    /// Set while the cell waits for something to do (its task returned `Pending`
    /// outside every handler); cleared when it runs again. Only the cell writes it,
    /// so plain stores do, where a bit in `flags` would cost a locked instruction on
    /// every wake-up. An actor that is neither parked nor in an `async` handler is
    /// running a synchronous one. It sits in what would be padding.
    parked: AtomicBool,
    /// Set, under the user lane's lock, when the reader has emptied its mailbox; the
    /// next push clears it (under the same lock) and wakes the task. The reader reads
    /// it without the lock: an actor that has handled its last message finds its
    /// mailbox still empty without locking it. It lives here because here it fills
    /// padding; the user lane is sized to the byte.
    reader_waiting: AtomicBool,
    /// What kind of target the lane belongs to, never changed: what tells an adapter
    /// from other targets, and an actor that has begun to stop from a promise (which
    /// counts as stopping from birth), without a lock. Also in padding: a third kind
    /// of `Parent` would have cost every cell a word.
    kind: LaneKind,
}

/// The kind of target a system lane belongs to.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LaneKind {
    #[default]
    Actor,
    Promise,
    Adapter,
    /// A ref to an actor of another system.
    Remote,
    /// A narrowed ref: the same actor, of a narrower protocol (`ActorRef::narrow`).
    Narrowed,
}

const PENDING: u8 = 1;
/// Set while the actor awaits an `async` handler.
pub(crate) const IN_HANDLER: u8 = 2;
/// Set once the actor has begun to stop: it takes no more user messages.
pub(crate) const STOPPING: u8 = 4;
/// Set when the task was dropped before it ever ran: its runtime had shut down.
pub(crate) const NEVER_RAN: u8 = 8;
/// Set by the first child that ends after the actor last looked at its children:
/// later ones find it set and do not wake the actor again.
const CHILD_ENDED: u8 = 16;
/// Set by the shutdown deadline on an actor it gave up on: still in a handler when the
/// deadline passed. Its parent no longer waits for it, only for its children.
pub(crate) const ABANDONED: u8 = 32;
/// A stop was asked while nothing else was queued: a stop costs a bit, not a queued
/// message (no lock, no allocation). Read before the queue, as it came before it.
const STOP: u8 = 64;
/// Set while the actor, stopping or restarting, waits for its children to end: a
/// child that ends wakes it only then.
pub(crate) const WAITING_FOR_CHILDREN: u8 = 128;

#[derive(Debug, Default)]
struct SystemQueue {
    // Boxed: an absent box is one word in every actor's cell; the queue and the end
    // notice are allocated the first time one of them is needed.
    used: Option<Box<Used>>,
    closed: bool,
}

#[derive(Debug, Default)]
struct Used {
    items: VecDeque<SystemMessage>,
    /// Woken when the lane closes (the actor has ended): what an ask to this actor
    /// waits on besides its answer.
    end: Option<Arc<Notify>>,
}

impl SystemLane {
    /// A lane closed from the start, with `flags` set: a promise's, which no system
    /// message ever reaches. Made without taking its lock.
    pub(crate) fn closed(flags: u8) -> Self {
        Self {
            queue: Mutex::new(SystemQueue {
                used: None,
                closed: true,
            }),
            flags: AtomicU8::new(flags),
            parked: AtomicBool::new(true),
            reader_waiting: AtomicBool::new(false),
            kind: LaneKind::Promise,
        }
    }

    fn lock(&self) -> MutexGuard<'_, SystemQueue> {
        // A panic while this lock is held can only come from a bug in the runtime
        // (the critical sections hold no user code), so a poisoned lock still holds
        // consistent data and is used as it is.
        self.queue
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Queue a message, or hand it back if the lane has closed.
    pub(crate) fn push(&self, message: SystemMessage) -> Result<(), SystemMessage> {
        let mut queue = self.lock();
        if queue.closed {
            return Err(message);
        }
        queue.used.get_or_insert_default().items.push_back(message);
        self.flags.fetch_or(PENDING, Ordering::Release);
        Ok(())
    }

    /// Ask the actor to stop. Without a lock or an allocation when nothing else is
    /// queued; behind what is queued otherwise, so one sender's messages keep their
    /// order. Asking an actor that has stopped does nothing.
    pub(crate) fn request_stop(&self) {
        if self.flags.load(Ordering::Acquire) & PENDING == 0 {
            self.flags.fetch_or(STOP, Ordering::AcqRel);
        } else {
            let _ = self.push(SystemMessage::Stop);
        }
    }

    /// Take the next message, if any.
    #[inline(always)]
    pub(crate) fn pop(&self) -> Option<SystemMessage> {
        if self.flags.load(Ordering::Acquire) & (PENDING | STOP) == 0 {
            return None;
        }
        self.pop_slow()
    }

    #[cold]
    fn pop_slow(&self) -> Option<SystemMessage> {
        if self.flags.fetch_and(!STOP, Ordering::AcqRel) & STOP != 0 {
            return Some(SystemMessage::Stop);
        }
        self.pop_locked()
    }

    fn pop_locked(&self) -> Option<SystemMessage> {
        let mut queue = self.lock();
        let items = &mut queue.used.as_mut()?.items;
        let message = items.pop_front();
        if items.is_empty() {
            self.flags.fetch_and(!PENDING, Ordering::Release);
        }
        message
    }

    /// Set or clear one of the cell's own bits (`IN_HANDLER`).
    pub(crate) fn set_flag(&self, flag: u8, on: bool) {
        if on {
            self.flags.fetch_or(flag, Ordering::Release);
        } else {
            self.flags.fetch_and(!flag, Ordering::Release);
        }
    }

    /// A child has ended: whether it is the first since the actor last looked, and
    /// so the one to wake it.
    pub(crate) fn note_child_ended(&self) -> bool {
        self.flags.fetch_or(CHILD_ENDED, Ordering::AcqRel) & CHILD_ENDED == 0
    }

    /// The actor is about to look at its children.
    pub(crate) fn clear_child_ended(&self) {
        self.flags.fetch_and(!CHILD_ENDED, Ordering::AcqRel);
    }

    /// Whether one of the cell's own bits is set.
    pub(crate) fn has_flag(&self, flag: u8) -> bool {
        self.flags.load(Ordering::Acquire) & flag != 0
    }

    /// The cell waits for something to do.
    #[inline(always)]
    pub(crate) fn park(&self) {
        self.parked.store(true, Ordering::Release);
    }

    /// The cell runs again.
    #[inline(always)]
    pub(crate) fn unpark(&self) {
        self.parked.store(false, Ordering::Release);
    }

    /// A message adapter's lane: closed from the start (it takes no system messages).
    /// The lane of an actor that has stopped before its ref was made (a ref a peer
    /// sent back, to an incarnation that is gone): it takes nothing, and counts as
    /// stopped.
    pub(crate) fn gone() -> Self {
        Self {
            kind: LaneKind::Actor,
            ..Self::closed(STOPPING)
        }
    }

    pub(crate) fn adapter() -> Self {
        Self {
            kind: LaneKind::Adapter,
            ..Self::closed(0)
        }
    }

    /// A narrowed ref's lane: closed (the actor's own lane takes its system
    /// messages).
    pub(crate) fn narrowed() -> Self {
        Self {
            kind: LaneKind::Narrowed,
            ..Self::closed(0)
        }
    }

    /// The lane of a ref to an actor of another system: closed here (its system
    /// messages would go over the link).
    pub(crate) fn remote() -> Self {
        Self {
            kind: LaneKind::Remote,
            ..Self::closed(0)
        }
    }

    /// Whether this is the lane of a ref to an actor of another system.
    pub(crate) fn is_remote(&self) -> bool {
        self.kind == LaneKind::Remote
    }

    /// Whether this is an actor's lane (not a promise's, an adapter's or a remote
    /// ref's).
    pub(crate) fn is_actor(&self) -> bool {
        self.kind == LaneKind::Actor
    }

    /// Whether this is the lane of an ask's promise.
    pub(crate) fn is_promise(&self) -> bool {
        self.kind == LaneKind::Promise
    }

    /// Whether this is a message adapter's lane.
    pub(crate) fn is_adapter(&self) -> bool {
        self.kind == LaneKind::Adapter
    }

    /// Whether this is a narrowed ref's lane.
    pub(crate) fn is_narrowed(&self) -> bool {
        self.kind == LaneKind::Narrowed
    }

    /// Whether this is an actor that has begun to stop: its mailbox takes nothing
    /// more, which a sender can tell from this byte without the mailbox's lock.
    #[inline(always)]
    pub(crate) fn is_stopping_actor(&self) -> bool {
        self.kind == LaneKind::Actor && self.flags.load(Ordering::Acquire) & STOPPING != 0
    }

    /// The user lane's reader-waiting mark (see the field).
    #[inline(always)]
    pub(crate) fn reader_waiting(&self) -> &AtomicBool {
        &self.reader_waiting
    }

    /// Whether the cell waits for something to do.
    pub(crate) fn is_parked(&self) -> bool {
        self.parked.load(Ordering::Acquire)
    }

    /// Whether the lane has closed: the actor has stopped.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Something to wait on for the actor's end; `None` if it has ended already. After
    /// waiting has begun (`Notified::enable`), check [`is_closed`](Self::is_closed)
    /// once more: an end between the two would not wake it.
    pub(crate) fn end_notice(&self) -> Option<Arc<Notify>> {
        let mut queue = self.lock();
        if queue.closed {
            return None;
        }
        let used = queue.used.get_or_insert_default();
        Some(used.end.get_or_insert_with(Default::default).clone())
    }

    /// Close the lane, wake whoever waits for the end, and take what was still queued.
    pub(crate) fn close(&self) -> VecDeque<SystemMessage> {
        let used = {
            let mut queue = self.lock();
            queue.closed = true;
            self.flags.fetch_and(!PENDING, Ordering::Release);
            queue.used.take()
        };
        let Some(used) = used else {
            return VecDeque::new();
        };
        if let Some(end) = &used.end {
            end.notify_waiters();
        }
        used.items
    }
}
