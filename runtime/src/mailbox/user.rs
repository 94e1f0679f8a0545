//! The user lane: an actor's mailbox, or the slot an ask's one answer goes to.
//!
//! The mailbox is built for its one reader: a `VecDeque` behind a lock (a `SpinLock`, see `lock`),
//! with the task's waker inside the same lock. The task leaves its waker there once
//! (a tokio task's waker does not change); when the reader finds the queue empty it
//! marks itself waiting, and only the first push after that wakes it (after the lock
//! is released), so a burst wakes the reader once, and a push while the actor awaits
//! an `async` handler wakes nobody. What comes on the system lane wakes the task
//! through the same waker.
//!
//! A reader that finds more than one envelope queued in an unbounded mailbox takes
//! them all at once, into a batch its task keeps: it then reads the batch without
//! the lock, and producers and reader stop fighting over the lock's cache line on
//! every message. A bounded mailbox is read one envelope at a time, so that what
//! counts against its bound is exactly what is queued. The batch's buffer, once
//! read, goes back to the queue at the next backlog in exchange for the one that
//! backlog filled, so a steady run of small backlogs allocates nothing; either
//! buffer is given back when the reader finds it empty after a burst.
//!
//! Bounded, the same lock keeps the producers that wait in `offer`, first come first
//! served: each message the reader takes out wakes the first of them.
//!
//! # Layout
//!
//! `UserLane` is one lock around an enum (`Lane`): an actor's `Queue`, a promise's
//! `AnswerSlot`, an adapter's slot or a remote ref's `Outbox` (the seam `remote/` implements). One lock around the
//! enum, not an enum of locks: the enum's tag then fits in the `VecDeque`'s niche, which
//! keeps the cell within its size guard. A `Queue` holds the deque (no allocation
//! before the first send), the task's waker, the bound (`capacity`, 0 for none, and the
//! `OverflowStrategy`), the offers waiting for room (boxed when the first one waits),
//! and the flags `overflow_reported` and `closed`. The reader's waiting mark is not in
//! here: it is an `AtomicBool` in the system lane's padding, passed to `send`, `offer`
//! and `poll_next`.
//!
//! `send` is a small inline function for the common case (an actor's queue with room);
//! everything else is the cold `send_slow`. The split matters as much as the lock: a
//! larger `send` spilled its result through the stack on every tell.
//!
//! # Waking
//!
//! The waker is kept once (`keep_waker`; `will_wake` spares a clone) and dropped at
//! `close`, so refs that outlive the task do not keep its memory. The reader sets the
//! mark under the lock when it takes the last envelope or finds the queue empty; back
//! from a handler it reads the mark without the lock (still set means still empty). A
//! reader that takes a backlog into its batch is not marked, so producers feeding a
//! busy reader wake nobody. System-lane traffic wakes the task through `UserLane::wake`.
//!
//! # Buffers, bounds, offers, close
//!
//! - A buffer larger than `KEEP_ROOM` envelopes is dropped rather than kept for the next
//!   swap (`keep_for_next`): memory goes back after a burst.
//! - A full bounded queue: `DropNew` hands the message back (`Sent::Full`);
//!   `DropOldest` pushes the oldest *message* out (`Sent::PushedOut`; ticks and `Run`
//!   work stay); `Fail` hands it back and, the first time since the actor last handled a
//!   message, `LocalCell::deliver_slow` pushes `SystemMessage::MailboxOverflowed`, on
//!   which the cell calls `overflow_handled` and fails with `MailboxOverflow`. Ticks,
//!   `Run` work and adapted messages are never refused by the bound.
//! - Offers are served in the order they began to wait: `offer` queues only when there
//!   is room and no offer is ahead (`offers_ahead`), else it waits in line with a ticket
//!   (`wait_for_room`). Each envelope the reader takes out wakes the first in line
//!   (`first_offer`); a dropped `Offer` leaves the line (`cancel_offer`) and passes the
//!   wake on if it was first.
//! - `close` marks the queue closed (later sends are `Sent::Refused`, and the sender
//!   dead-letters them), wakes every waiting offer, and returns what was queued, which
//!   the cell letters after its batch (`close_user_lane` in `actor/cell/end.rs`).

use std::collections::VecDeque;
use std::mem;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};

use tokio::sync::oneshot;

use crate::ground::events::DeadLetterReason;
use crate::ground::message::Message;
use crate::mailbox::answer::{AnswerSlot, Look};
use crate::mailbox::lock::{SpinGuard, SpinLock};
use crate::mailbox::{Answer, Refusal};
use crate::mailbox::{Envelope, MailboxConfig, Outbox, OverflowStrategy};

/// A deque whose buffer grew beyond this many envelopes (a burst) is given back when
/// the reader next finds it empty. Below it the buffer stays, so steady traffic does
/// not allocate.
const KEEP_ROOM: usize = 32;

/// The reader's front buffer, read before the mailbox: what it took out of an
/// unbounded mailbox in one go, and a stash it replays, put in front of that. Kept by
/// the actor's task (boxed: one word in the task until a backlog first builds up),
/// or by a test kit's reader.
pub(crate) type Batch<P, C> = Option<Box<VecDeque<Envelope<P, C>>>>;

/// The reader has read all of its batch: the batch's buffer stays for the next
/// backlog, unless a burst left it larger than [`KEEP_ROOM`].
fn keep_for_next<P: Message, C>(batch: &mut Batch<P, C>) {
    if batch
        .as_ref()
        .is_some_and(|taken| taken.capacity() > KEEP_ROOM)
    {
        *batch = None;
    }
}

/// The user lane: for an actor, its mailbox; for an ask's promise, the slot its one
/// answer goes to. One lock around either, so the lane is no bigger than the
/// mailbox: a lock around an enum lets the enum keep its tag in the queue's niche,
/// where an enum of two locks would need a word of its own.
pub(crate) struct UserLane<P: Message, C> {
    lane: SpinLock<Lane<P, C>>,
}

enum Lane<P: Message, C> {
    Actor(Queue<P, C>),
    Answer(AnswerSlot<P>),
    Adapter(AdapterSlot<P>),
    Remote(Arc<dyn Outbox>),
}

/// A message adapter's lane: what is told to it goes on to its owner.
pub(crate) struct AdapterSlot<F: Message> {
    forward: Box<dyn Forward<F>>,
}

/// How an adapter reaches its owner (whose protocol its own type does not name), or
/// a narrowed ref its actor.
pub(crate) trait Forward<F: Message>: Send + Sync + 'static {
    /// Hand `message` to the owner, to be translated there (an adapter) or as it is
    /// (a narrowed ref). What was not queued is a dead letter already.
    fn forward(&self, message: F) -> Passed;

    /// The owner.
    fn owner(&self) -> crate::mailbox::Identity;
}

/// What became of a message an adapter or a narrowed ref passed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Passed {
    /// Queued by the actor it was passed to.
    Queued,
    /// Refused by that actor's full bounded mailbox.
    Full,
    /// Refused otherwise: that actor has stopped.
    Refused,
}

impl<F: Message> AdapterSlot<F> {
    pub(crate) fn new(forward: Box<dyn Forward<F>>) -> Self {
        Self { forward }
    }
}

struct Queue<P: Message, C> {
    items: VecDeque<Envelope<P, C>>,
    /// The task's waker, kept from its first wait until the actor ends.
    waker: Option<Waker>,
    /// Producers waiting in `offer` for room; allocated when the first has to wait.
    offers: Option<Box<Offers>>,
    /// The bound; 0 for none.
    capacity: u32,
    overflow: OverflowStrategy,
    /// A tell found the mailbox full under `Fail`, and the actor has not handled the
    /// failure yet: later refusals are dead letters only.
    overflow_reported: bool,
    closed: bool,
}

/// Producers waiting for room, oldest first, each by the ticket its `offer` holds.
#[derive(Default)]
struct Offers {
    waiting: VecDeque<(u64, Waker)>,
    next_ticket: u64,
}

/// What a send did.
pub(crate) enum Sent<P: Message, C> {
    /// Queued.
    Queued,
    /// Queued, and the oldest queued message was pushed out to make room for it.
    PushedOut(P),
    /// The bounded mailbox is full: the message comes back. `fail`: this is the
    /// first refusal since the actor last failed for one, so it must fail now.
    Full { message: P, fail: bool },
    /// The actor has stopped: the envelope comes back.
    Refused(Envelope<P, C>),
    /// An answer nobody takes any more: it comes back, with why.
    Unwanted(P, DeadLetterReason),
    /// Passed on by an adapter to an owner that had stopped: dead-lettered already.
    DeadLettered,
    /// Passed on by a narrowed ref to its actor, whose full bounded mailbox
    /// refused it: dead-lettered already.
    FullThere,
}

/// What one look by an `offer` found.
pub(crate) enum Offered<P: Message> {
    Accepted,
    /// Full: the offer waits, with the ticket it holds.
    Waiting(P, u64),
    /// The actor has stopped, or (for a promise) nobody takes the answer.
    Refused(P, DeadLetterReason),
    /// Not accepted, and dead-lettered already (an adapter whose owner stopped).
    Gone,
}

impl<P: Message, C> UserLane<P, C> {
    /// An actor's lane: a mailbox built as `config` says.
    pub(crate) fn actor(config: MailboxConfig) -> Self {
        Self::from(Lane::Actor(Queue {
            items: VecDeque::new(),
            waker: None,
            offers: None,
            capacity: config.raw_capacity(),
            overflow: config.overflow(),
            overflow_reported: false,
            closed: false,
        }))
    }

    /// The lane of an ask's promise.
    pub(crate) fn answer(slot: AnswerSlot<P>) -> Self {
        Self::from(Lane::Answer(slot))
    }

    /// The lane of a message adapter.
    pub(crate) fn adapter(slot: AdapterSlot<P>) -> Self {
        Self::from(Lane::Adapter(slot))
    }

    /// Whether this is a promise's lane whose asker still waits for the answer.
    pub(crate) fn awaits_answer(&self) -> bool {
        match &*self.lock() {
            Lane::Answer(slot) => slot.awaited(),
            _ => false,
        }
    }

    /// The lane of a ref to an actor of another system.
    pub(crate) fn remote(outbox: Arc<dyn Outbox>) -> Self {
        Self::from(Lane::Remote(outbox))
    }

    /// The outbox, for a ref to an actor of another system.
    pub(crate) fn outbox(&self) -> Option<Arc<dyn Outbox>> {
        match &*self.lock() {
            Lane::Remote(slot) => Some(slot.clone()),
            _ => None,
        }
    }

    /// The owner, for a message adapter's lane; the actor, for a narrowed ref's.
    pub(crate) fn adapter_owner(&self) -> Option<crate::mailbox::Identity> {
        match &*self.lock() {
            Lane::Adapter(slot) => Some(slot.forward.owner()),
            _ => None,
        }
    }

    fn from(lane: Lane<P, C>) -> Self {
        Self {
            lane: SpinLock::new(lane),
        }
    }

    #[inline]
    fn lock(&self) -> SpinGuard<'_, Lane<P, C>> {
        self.lane.lock()
    }

    /// Refuse the request whose answer this lane awaits (a promise's lane); any
    /// other lane has no answer to refuse.
    pub(crate) fn refuse_answer(&self, refusal: Refusal) {
        let remote = match &mut *self.lock() {
            Lane::Answer(slot) => {
                slot.refuse(refusal);
                return;
            }
            // A promise on another system: the refusal goes back over the link.
            Lane::Remote(slot) => slot.clone(),
            Lane::Actor(_) | Lane::Adapter(_) => return,
        };
        remote.refuse(refusal);
    }

    /// Queue an envelope; `waiting` is the reader-waiting mark kept beside the system
    /// lane (see `SystemLane::reader_waiting`).
    ///
    /// The common case (an actor's open mailbox with room) is kept small, and hands
    /// back no more than `Sent::Queued`: every other case is in `send_slow`.
    #[inline]
    pub(crate) fn send(&self, envelope: Envelope<P, C>, waiting: &AtomicBool) -> Sent<P, C> {
        let mut lane = self.lock();
        let Lane::Actor(queue) = &mut *lane else {
            return Self::send_slow(lane, envelope, waiting);
        };
        if queue.closed || queue.is_full() {
            return Self::send_slow(lane, envelope, waiting);
        }
        queue.items.push_back(envelope);
        let waker = queue.wake_reader(waiting);
        drop(lane);
        if let Some(waker) = waker {
            waker.wake();
        }
        Sent::Queued
    }

    /// What `send` does with a lane that is not an open actor mailbox with room.
    #[cold]
    #[inline(never)]
    fn send_slow(
        mut lane: SpinGuard<'_, Lane<P, C>>,
        envelope: Envelope<P, C>,
        waiting: &AtomicBool,
    ) -> Sent<P, C> {
        let queue = match &mut *lane {
            Lane::Actor(queue) => queue,
            Lane::Answer(slot) => return slot.send(envelope),
            Lane::Adapter(slot) => return slot.send(envelope),
            Lane::Remote(slot) => {
                // Encoding runs the message's `Serialize`: not under the lock.
                let outbox = slot.clone();
                drop(lane);
                let message = match envelope {
                    Envelope::Message(message) => message,
                    other => return Sent::Refused(other),
                };
                let mut encode = || message.encode_wire();
                return match outbox.send(std::any::type_name::<P>(), &mut encode) {
                    Ok(()) => Sent::Queued,
                    Err(reason) => Sent::Unwanted(message, reason),
                };
            }
        };
        if queue.closed {
            return Sent::Refused(envelope);
        }
        let mut sent = Sent::Queued;
        let full = queue.is_full();
        let envelope = match envelope {
            Envelope::Message(message) if full => match queue.overflow {
                OverflowStrategy::DropNew => {
                    return Sent::Full {
                        message,
                        fail: false,
                    };
                }
                OverflowStrategy::Fail => {
                    let fail = !mem::replace(&mut queue.overflow_reported, true);
                    return Sent::Full { message, fail };
                }
                OverflowStrategy::DropOldest => {
                    if let Some(oldest) = queue.take_oldest_message() {
                        sent = Sent::PushedOut(oldest);
                    }
                    Envelope::Message(message)
                }
            },
            // Ticks and internal work are never refused by the bound.
            envelope => envelope,
        };
        queue.items.push_back(envelope);
        let waker = queue.wake_reader(waiting);
        drop(lane);
        if let Some(waker) = waker {
            waker.wake();
        }
        sent
    }

    /// The next envelope for the reader, or `Pending` with the reader marked as
    /// waiting, to be woken by the next push. `batch` is the reader's own: read
    /// first, and filled with the whole backlog of an unbounded mailbox. The reader
    /// is marked waiting as soon as it empties the queue, so when it comes back after
    /// handling what it took, an untouched mark says the queue is still empty, read
    /// without the lock.
    #[inline]
    pub(crate) fn poll_next(
        &self,
        cx: &Context<'_>,
        batch: &mut Batch<P, C>,
        waiting: &AtomicBool,
    ) -> Poll<Envelope<P, C>> {
        if let Some(taken) = batch
            && let Some(envelope) = taken.pop_front()
        {
            return Poll::Ready(envelope);
        }
        if waiting.load(Ordering::Acquire) {
            keep_for_next(batch);
            return Poll::Pending;
        }
        let (envelope, offer) = {
            let mut lane = self.lock();
            let Lane::Actor(queue) = &mut *lane else {
                return Poll::Pending;
            };
            let Some(envelope) = queue.items.pop_front() else {
                queue.wait(cx.waker(), waiting);
                drop(lane);
                keep_for_next(batch);
                return Poll::Pending;
            };
            // Room made in a bounded queue: the offer at the front of the line is woken.
            let offer = if queue.capacity != 0 {
                queue.first_offer()
            } else {
                None
            };
            if queue.items.is_empty() {
                // It took the last one: marked waiting now, it comes back to find the
                // mark untouched, or cleared by a push.
                queue.wait(cx.waker(), waiting);
            } else if queue.capacity == 0 {
                // A backlog: taken whole. Not marked waiting, so the producers
                // feeding it do not wake a reader that is busy; it locks again when
                // the batch is done. The queue gets the batch's empty buffer in
                // exchange, so the two buffers go back and forth, and a steady
                // trickle of small backlogs allocates nothing.
                let taken = batch.get_or_insert_with(Box::default);
                mem::swap(&mut **taken, &mut queue.items);
            }
            (envelope, offer)
        };
        if let Some(offer) = offer {
            offer.wake();
        }
        Poll::Ready(envelope)
    }

    /// The next envelope, if one is queued (the test kit's detached reader).
    #[cfg(feature = "testkit")]
    pub(crate) fn try_next(&self) -> Option<Envelope<P, C>> {
        let (envelope, offer) = {
            let mut lane = self.lock();
            let Lane::Actor(queue) = &mut *lane else {
                return None;
            };
            let envelope = queue.items.pop_front()?;
            (envelope, queue.first_offer())
        };
        if let Some(offer) = offer {
            offer.wake();
        }
        Some(envelope)
    }

    /// Keep the task's waker, for [`wake`](Self::wake) (and the reader's next wait).
    pub(crate) fn register(&self, waker: &Waker) {
        if let Lane::Actor(queue) = &mut *self.lock() {
            queue.keep_waker(waker);
        }
    }

    /// Wake the task, whatever it waits for (something came on its system lane). A
    /// promise has no task.
    pub(crate) fn wake(&self) {
        let waker = match &*self.lock() {
            Lane::Actor(queue) => queue.waker.clone(),
            Lane::Answer(_) | Lane::Adapter(_) | Lane::Remote(_) => None,
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// One look by an `offer` holding `ticket` (none on its first look): queue the
    /// message if there is room, or wait in line. A promise takes or refuses its
    /// answer at once.
    pub(crate) fn offer(
        &self,
        message: P,
        ticket: Option<u64>,
        waker: &Waker,
        waiting: &AtomicBool,
    ) -> Offered<P> {
        let woken = {
            let mut lane = self.lock();
            let queue = match &mut *lane {
                Lane::Actor(queue) => queue,
                Lane::Answer(slot) => {
                    return match slot.answer(message) {
                        Ok(()) => Offered::Accepted,
                        Err((answer, reason)) => Offered::Refused(answer, reason),
                    };
                }
                // The owner's mailbox takes what an adapter hands it whatever its bound.
                Lane::Adapter(slot) => {
                    return match slot.send(Envelope::<P, C>::Message(message)) {
                        Sent::Queued => Offered::Accepted,
                        _ => Offered::Gone,
                    };
                }
                Lane::Remote(slot) => {
                    return Offered::Refused(message, slot.no_link());
                }
            };
            if queue.closed {
                queue.forget_offer(ticket);
                return Offered::Refused(message, DeadLetterReason::RecipientStopped);
            }
            // Served in the order they began to wait: an offer takes room only from
            // the front of the line, so a later (or a brand-new) offer polled first
            // cannot take the room an earlier one was woken for.
            if queue.room() == 0 || queue.offers_ahead(ticket) > 0 {
                let ticket = queue.wait_for_room(ticket, waker);
                return Offered::Waiting(message, ticket);
            }
            queue.forget_offer(ticket);
            queue.items.push_back(Envelope::Message(message));
            // Room left over is the next offer's.
            (queue.wake_reader(waiting), queue.first_offer())
        };
        if let Some(waker) = woken.0 {
            waker.wake();
        }
        if let Some(next) = woken.1 {
            next.wake();
        }
        Offered::Accepted
    }

    /// An `offer` holding `ticket` is dropped before its message was taken: out of
    /// the line, and if it had been woken for room it did not use, the offer that
    /// room now falls to is woken instead.
    pub(crate) fn cancel_offer(&self, ticket: u64) {
        let next = {
            let mut lane = self.lock();
            let Lane::Actor(queue) = &mut *lane else {
                return;
            };
            let room = queue.room();
            let Some(offers) = queue.offers.as_mut() else {
                return;
            };
            let Some(at) = offers.waiting.iter().position(|(held, _)| *held == ticket) else {
                return;
            };
            offers.waiting.remove(at);
            if at > 0 || room == 0 {
                return;
            }
            queue.first_offer()
        };
        if let Some(next) = next {
            next.wake();
        }
    }

    /// Close the mailbox for good: later sends are refused. Returns what was queued,
    /// drops the task's waker (refs that outlive the task do not keep it), and wakes
    /// the offers waiting for room (they find it closed).
    pub(crate) fn close(&self) -> VecDeque<Envelope<P, C>> {
        let (items, waker, offers) = {
            let mut lane = self.lock();
            let Lane::Actor(queue) = &mut *lane else {
                return VecDeque::new();
            };
            queue.closed = true;
            (
                mem::take(&mut queue.items),
                queue.waker.take(),
                queue.offers.take(),
            )
        };
        drop(waker);
        for (_, offer) in offers.into_iter().flat_map(|offers| offers.waiting) {
            offer.wake();
        }
        items
    }

    /// The actor has handled (or set aside) the overflow it was told of: the next
    /// refusal fails it again. Returns the mailbox's capacity.
    pub(crate) fn overflow_handled(&self) -> usize {
        match &mut *self.lock() {
            Lane::Actor(queue) => {
                queue.overflow_reported = false;
                queue.capacity as usize
            }
            Lane::Answer(_) | Lane::Adapter(_) | Lane::Remote(_) => 0,
        }
    }
}

impl<P: Message, C> Queue<P, C> {
    #[inline]
    fn is_full(&self) -> bool {
        self.capacity != 0 && self.items.len() >= self.capacity as usize
    }

    /// The waker to wake the reader with, if it waits; it waits no more.
    #[inline]
    fn wake_reader(&mut self, waiting: &AtomicBool) -> Option<Waker> {
        if !waiting.load(Ordering::Relaxed) {
            return None;
        }
        waiting.store(false, Ordering::Release);
        self.waker.clone()
    }

    /// The reader has emptied the queue: keep its waker, mark it waiting, and give
    /// back a buffer a burst left large.
    fn wait(&mut self, waker: &Waker, waiting: &AtomicBool) {
        if self.items.capacity() > KEEP_ROOM {
            self.items = VecDeque::new();
        }
        self.keep_waker(waker);
        waiting.store(true, Ordering::Release);
    }

    fn keep_waker(&mut self, waker: &Waker) {
        if !self
            .waker
            .as_ref()
            .is_some_and(|kept| kept.will_wake(waker))
        {
            self.waker = Some(waker.clone());
        }
    }

    /// Take the oldest queued message out (ticks and internal work stay).
    fn take_oldest_message(&mut self) -> Option<P> {
        let at = self
            .items
            .iter()
            .position(|envelope| matches!(envelope, Envelope::Message(_)))?;
        match self.items.remove(at) {
            Some(Envelope::Message(message)) => Some(message),
            _ => None,
        }
    }

    /// How many more messages the queue takes before it is full.
    fn room(&self) -> usize {
        if self.capacity == 0 {
            return usize::MAX;
        }
        (self.capacity as usize).saturating_sub(self.items.len())
    }

    /// How many offers are in line ahead of the one holding `ticket`: all of them
    /// for an offer not in line yet.
    fn offers_ahead(&self, ticket: Option<u64>) -> usize {
        let Some(offers) = &self.offers else {
            return 0;
        };
        ticket
            .and_then(|ticket| offers.waiting.iter().position(|(held, _)| *held == ticket))
            .unwrap_or(offers.waiting.len())
    }

    /// The offer at the front of the line, to be woken, if there is room for it. It
    /// stays in line until it takes the room (or is dropped), so an offer that finds
    /// the room taken by a tell waits on where it was.
    fn first_offer(&self) -> Option<Waker> {
        if self.room() == 0 {
            return None;
        }
        let (_, waker) = self.offers.as_ref()?.waiting.front()?;
        Some(waker.clone())
    }

    /// Put the offer holding `ticket` in line, at the back when it is new, or update
    /// its waker where it stands.
    fn wait_for_room(&mut self, ticket: Option<u64>, waker: &Waker) -> u64 {
        let offers = self.offers.get_or_insert_with(Box::default);
        if let Some(ticket) = ticket
            && let Some((_, kept)) = offers.waiting.iter_mut().find(|(held, _)| *held == ticket)
        {
            if !kept.will_wake(waker) {
                *kept = waker.clone();
            }
            return ticket;
        }
        let ticket = offers.next_ticket;
        offers.next_ticket += 1;
        offers.waiting.push_back((ticket, waker.clone()));
        ticket
    }

    fn forget_offer(&mut self, ticket: Option<u64>) {
        if let (Some(ticket), Some(offers)) = (ticket, self.offers.as_mut()) {
            offers.waiting.retain(|(held, _)| *held != ticket);
        }
    }
}

impl<P: Message, C> UserLane<P, C> {
    /// The asker's look into its promise's slot; `alone` says whether the asker holds
    /// the only ref to the promise. Asked under the lock, so an answer given before
    /// the last other ref went is seen.
    pub(crate) fn look_for_answer(&self, alone: impl FnOnce() -> bool) -> Look<P> {
        match &mut *self.lock() {
            Lane::Answer(slot) => slot.look(alone),
            _ => Look::Dropped,
        }
    }

    /// The asker waits on `sender`'s channel from now on: an answer kept already goes
    /// there at once.
    pub(crate) fn forward_answer(&self, sender: oneshot::Sender<Answer<P>>) {
        if let Lane::Answer(slot) = &mut *self.lock() {
            slot.forward(sender);
        }
    }

    /// The asker gave up while it held the promise: a later answer is a dead letter,
    /// and so is one that came and was not taken, which this returns.
    pub(crate) fn asker_gone(&self) -> Option<P> {
        match &mut *self.lock() {
            Lane::Answer(slot) => slot.asker_gone(),
            _ => None,
        }
    }
}

impl<F: Message> AdapterSlot<F> {
    fn send<C>(&self, envelope: Envelope<F, C>) -> Sent<F, C> {
        match envelope {
            Envelope::Message(message) => match self.forward.forward(message) {
                Passed::Queued => Sent::Queued,
                Passed::Full => Sent::FullThere,
                Passed::Refused => Sent::DeadLettered,
            },
            other => Sent::Refused(other),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn lane_with(sent: std::ops::Range<u64>, lane: &UserLane<u64, ()>, waiting: &AtomicBool) {
        for n in sent {
            assert!(matches!(
                lane.send(Envelope::Message(n), waiting),
                Sent::Queued
            ));
        }
    }

    /// Read everything queued, through the batch, until the reader would wait.
    fn read_all(
        lane: &UserLane<u64, ()>,
        batch: &mut Batch<u64, ()>,
        waiting: &AtomicBool,
    ) -> Vec<u64> {
        let cx = Context::from_waker(Waker::noop());
        let mut read = Vec::new();
        while let Poll::Ready(envelope) = lane.poll_next(&cx, batch, waiting) {
            let Envelope::Message(n) = envelope else {
                panic!("only messages were sent");
            };
            read.push(n);
        }
        read
    }

    fn queue_room(lane: &UserLane<u64, ()>) -> usize {
        match &*lane.lock() {
            Lane::Actor(queue) => queue.items.capacity(),
            _ => panic!("an actor's lane"),
        }
    }

    #[test]
    fn small_backlogs_reuse_the_two_buffers() {
        let lane = UserLane::<u64, ()>::actor(MailboxConfig::unbounded());
        let waiting = AtomicBool::new(false);
        let mut batch: Batch<u64, ()> = None;

        lane_with(0..3, &lane, &waiting);
        assert_eq!(read_all(&lane, &mut batch, &waiting), [0, 1, 2]);
        // The backlog was taken whole; its buffer stays with the reader, and the
        // queue got the batch's (then empty) buffer in exchange.
        let kept = batch
            .as_ref()
            .expect("the batch's buffer is kept")
            .capacity();
        assert!(kept >= 3, "{kept}");

        lane_with(3..6, &lane, &waiting);
        let queued_in = queue_room(&lane);
        assert_eq!(read_all(&lane, &mut batch, &waiting), [3, 4, 5]);
        // The second backlog went into the kept buffer, and the queue has the one
        // the first backlog was queued in: both buffers go back and forth.
        assert_eq!(
            batch.as_ref().map(|taken| taken.capacity()),
            Some(queued_in)
        );
        assert_eq!(queue_room(&lane), kept);
    }

    #[test]
    fn a_burst_gives_both_buffers_back() {
        let lane = UserLane::<u64, ()>::actor(MailboxConfig::unbounded());
        let waiting = AtomicBool::new(false);
        let mut batch: Batch<u64, ()> = None;

        lane_with(0..(KEEP_ROOM as u64 * 4), &lane, &waiting);
        let read = read_all(&lane, &mut batch, &waiting);
        assert_eq!(read.len(), KEEP_ROOM * 4);
        assert!(read.windows(2).all(|pair| pair[0] + 1 == pair[1]));
        assert!(batch.is_none(), "a burst's buffer is given back");
        assert!(queue_room(&lane) <= KEEP_ROOM);
    }
}
