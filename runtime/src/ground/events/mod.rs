//! The system's event stream: typed publish and subscribe, and dead letters.
//!
//! Anyone can subscribe to events of one type with [`EventStream::subscribe`] and
//! read them from the returned [`Subscription`]. Dropping the subscription, or calling
//! [`Subscription::unsubscribe`], ends it. The runtime publishes [`DeadLetter`]s here.
//!
//! # Capacity and loss
//!
//! Each subscription buffers what it has not read yet, up to its capacity:
//! [`DEFAULT_CAPACITY`] events for [`EventStream::subscribe`], or what was asked of
//! [`EventStream::subscribe_with_capacity`]. Publishing never waits for a subscriber:
//! when a subscription's buffer is full, the new event is dropped for that subscription
//! alone, and its [`Subscription::lost`] count grows by one. So a subscriber that falls
//! behind costs at most its capacity in memory, and never slows down the actors whose
//! messages become dead letters; and what it did not get is counted, not silently gone.
//! [`Subscription::recv_with_loss`] reports each run of lost events as
//! [`Received::Lost`], where it happened in the stream; [`Subscription::recv`] skips
//! over it.
//!
//! The newest event is the one dropped, not the oldest buffered one: the first letters
//! of a storm are usually the ones that say what went wrong (what follows tends to
//! repeat them), an event a subscriber has in its buffer stays there until it reads
//! it, and a publisher only ever adds to a buffer, so it needs no lock on it.
//!
//! # Cost when nobody listens
//!
//! Dead letters have their own topic, so whether anyone wants them is one atomic
//! load. With no [`DeadLetter`] subscriber (and debug logging off, which would print
//! each letter), the runtime builds no letter at all: the message is dropped where it
//! was refused, with no lock taken and nothing allocated. Publishing any other event
//! type reads one atomic counter and returns while no other type has a subscriber;
//! once some do, it takes a short read lock to find the type's subscribers.
//!
//! With subscribers, publishing takes a read lock only for as long as it takes to copy
//! out the list of subscriptions (an `Arc`, replaced on subscribe and unsubscribe);
//! the event is cloned into each buffer after the lock is released.
//!
//! # Examples
//!
//! ```
//! use tapio::prelude::*;
//! use tapio::{DeadLetter, DeadLetterReason};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let system = ActorSystem::new("letters")?;
//! let mut letters = system.events().subscribe::<DeadLetter>();
//! let once = system.spawn(Behaviors::receive_message(|_: u64| Behaviors::stopped()), "once")?;
//! once.tell(1_u64);
//! once.tell(2_u64); // the actor stops after the first message, so this goes nowhere
//! let letter = letters.recv().await.ok_or("the stream closed")?;
//! assert_eq!(letter.take_message::<u64>(), Some(2));
//! assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
//! assert_eq!(letter.recipient().to_string(), "/user/once");
//! assert_eq!(letters.lost(), 0);
//! system.terminate().await;
//! # Ok(())
//! # }
//! ```
//!
//! A subscriber that falls behind learns how much it missed:
//!
//! ```
//! use tapio::events::{EventStream, Received};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let stream = EventStream::default();
//! let mut readings = stream.subscribe_with_capacity::<u32>(2)?;
//! for reading in 1..=5_u32 {
//!     stream.publish(reading);
//! }
//! assert_eq!(readings.lost(), 3);
//! assert!(matches!(readings.recv_with_loss().await, Some(Received::Event(1))));
//! assert!(matches!(readings.recv_with_loss().await, Some(Received::Event(2))));
//! assert!(matches!(readings.recv_with_loss().await, Some(Received::Lost(3))));
//! # Ok(())
//! # }
//! ```

// Layer: ground. Imports only ground (`path`, `message`, `codec`).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{
    Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak,
};

use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::mpsc::{self, Receiver, Sender};

use crate::ground::message::Payload;
use crate::ground::path::ActorPath;

/// How many unread events a subscription made with [`EventStream::subscribe`] holds
/// before it starts losing new ones.
///
/// Enough for a subscriber that reads as events come to ride out a burst; a
/// subscriber that expects longer pauses asks for more with
/// [`EventStream::subscribe_with_capacity`].
pub const DEFAULT_CAPACITY: usize = 1024;

/// The largest capacity a subscription can have.
pub const MAX_CAPACITY: usize = tokio::sync::Semaphore::MAX_PERMITS;

/// Something that can be published on the event stream: each subscriber gets a clone.
pub trait Event: Clone + Send + 'static {}

impl<T: Clone + Send + 'static> Event for T {}

/// A capacity a subscription cannot have. Nothing was subscribed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CapacityError {
    /// A capacity of zero: such a subscription would lose every event.
    #[error(
        "a subscription needs room for at least one event: with none it would lose every event"
    )]
    Zero,
    /// More than [`MAX_CAPACITY`].
    #[error("a subscription holds at most {max} events, not {requested}", max = MAX_CAPACITY)]
    TooLarge {
        /// The capacity asked for.
        requested: usize,
    },
}

/// What [`Subscription::recv_with_loss`] hands out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received<E> {
    /// The next event.
    Event(E),
    /// This many events were lost here, between the events received before and after
    /// it, because the subscription's buffer was full when they were published.
    Lost(u64),
}

/// Typed publish and subscribe, one per actor system.
#[derive(Clone, Default)]
pub struct EventStream {
    shared: Arc<StreamShared>,
}

#[derive(Default)]
struct StreamShared {
    /// Dead letters have their own topic, made with the stream, so that the runtime
    /// can tell whether anyone wants them with one atomic load.
    dead_letters: Topic<DeadLetter>,
    /// The topic of every other event type that ever had a subscriber: a
    /// `Topic<E>` under `TypeId::of::<E>()`.
    others: RwLock<HashMap<TypeId, Box<dyn Any + Send + Sync>>>,
    /// Open subscriptions across `others`: while it is zero, publishing an event
    /// other than a dead letter does not look into the map.
    others_open: AtomicUsize,
    next_id: AtomicU64,
}

/// The subscriptions to one event type.
struct Topic<E> {
    /// How many subscriptions are open: read before anything else, so publishing to
    /// nobody costs one load.
    open: AtomicUsize,
    /// Copied on write: a publisher clones the `Arc` under the read lock and hands
    /// the event out after releasing it.
    subscribers: RwLock<Arc<[Subscriber<E>]>>,
}

struct Subscriber<E> {
    id: u64,
    sender: Sender<Item<E>>,
    loss: Arc<Loss>,
}

/// What one subscription lost; shared by its publishers and its reader.
#[derive(Default)]
struct Loss {
    /// Every event lost so far.
    total: AtomicU64,
    /// Lost since the last event that got into the buffer: reported before the next
    /// one that does, or on its own once the reader has emptied the buffer.
    unreported: AtomicU64,
}

/// An event in a subscription's buffer, with the loss just before it.
struct Item<E> {
    lost_before: u64,
    event: E,
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    // No user code runs under the stream's locks (events are cloned, and old
    // subscriber lists dropped, after they are released), so poison carries no
    // broken invariant.
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

impl<E> Default for Topic<E> {
    fn default() -> Self {
        Self {
            open: AtomicUsize::new(0),
            subscribers: RwLock::new(Arc::from([])),
        }
    }
}

impl<E: Event> Topic<E> {
    fn add(&self, subscriber: Subscriber<E>) {
        let mut subscribers = write(&self.subscribers);
        let grown: Arc<[Subscriber<E>]> = subscribers
            .iter()
            .cloned()
            .chain(std::iter::once(subscriber))
            .collect();
        let old = std::mem::replace(&mut *subscribers, grown);
        self.open.fetch_add(1, Ordering::Release);
        drop(subscribers);
        drop(old);
    }

    /// Whether the subscription `id` was open.
    fn remove(&self, id: u64) -> bool {
        let mut subscribers = write(&self.subscribers);
        if !subscribers.iter().any(|s| s.id == id) {
            return false;
        }
        let shrunk: Arc<[Subscriber<E>]> =
            subscribers.iter().filter(|s| s.id != id).cloned().collect();
        let old = std::mem::replace(&mut *subscribers, shrunk);
        self.open.fetch_sub(1, Ordering::Release);
        drop(subscribers);
        drop(old);
        true
    }

    fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    fn snapshot(&self) -> Arc<[Subscriber<E>]> {
        Arc::clone(&read(&self.subscribers))
    }

    fn publish(&self, event: E) -> usize {
        if self.open() == 0 {
            return 0;
        }
        self.snapshot()
            .iter()
            .filter(|subscriber| subscriber.offer(&event))
            .count()
    }
}

impl<E: Event> Subscriber<E> {
    /// Put a clone of `event` in the buffer if it has room, or count it as lost.
    fn offer(&self, event: &E) -> bool {
        match self.sender.try_reserve() {
            Ok(permit) => {
                // Under concurrent publishers a loss may be reported an event or two
                // away from where it happened; it is never counted twice or missed.
                let lost_before = self.loss.unreported.swap(0, Ordering::AcqRel);
                permit.send(Item {
                    lost_before,
                    event: event.clone(),
                });
                true
            }
            Err(TrySendError::Full(())) => {
                self.loss.total.fetch_add(1, Ordering::Relaxed);
                self.loss.unreported.fetch_add(1, Ordering::AcqRel);
                false
            }
            // The subscription is being dropped; it removes itself.
            Err(TrySendError::Closed(())) => false,
        }
    }
}

impl<E> Clone for Subscriber<E> {
    fn clone(&self) -> Self {
        Self {
            id: self.id,
            sender: self.sender.clone(),
            loss: Arc::clone(&self.loss),
        }
    }
}

impl StreamShared {
    /// The dead letters' topic, if `E` is `DeadLetter`. Decided at compile time once
    /// `E` is known.
    fn dead_letters<E: Event>(&self) -> Option<&Topic<E>> {
        (&self.dead_letters as &dyn Any).downcast_ref::<Topic<E>>()
    }

    /// Run `f` on the topic of `E`, if it has one. Dead letters always have one.
    fn with_topic<E: Event, R>(&self, f: impl FnOnce(&Topic<E>) -> R) -> Option<R> {
        if let Some(topic) = self.dead_letters::<E>() {
            return Some(f(topic));
        }
        let others = read(&self.others);
        let topic = others.get(&TypeId::of::<E>())?.downcast_ref::<Topic<E>>()?;
        Some(f(topic))
    }

    fn subscribe<E: Event>(&self, subscriber: Subscriber<E>) {
        if let Some(topic) = self.dead_letters::<E>() {
            topic.add(subscriber);
            return;
        }
        let mut others = write(&self.others);
        let topic = others
            .entry(TypeId::of::<E>())
            .or_insert_with(|| Box::new(Topic::<E>::default()));
        if let Some(topic) = topic.downcast_ref::<Topic<E>>() {
            topic.add(subscriber);
            self.others_open.fetch_add(1, Ordering::Release);
        }
    }

    fn unsubscribe<E: Event>(&self, id: u64) {
        if let Some(topic) = self.dead_letters::<E>() {
            topic.remove(id);
        } else if self.with_topic::<E, _>(|topic| topic.remove(id)) == Some(true) {
            self.others_open.fetch_sub(1, Ordering::Release);
        }
    }

    fn publish<E: Event>(&self, event: E) -> usize {
        if let Some(topic) = self.dead_letters::<E>() {
            return topic.publish(event);
        }
        if self.others_open.load(Ordering::Acquire) == 0 {
            return 0;
        }
        // The subscriber list is copied out, so the event's own `Clone` runs without
        // a lock: it may publish or subscribe in turn.
        let Some(subscribers) = self.with_topic::<E, _>(Topic::snapshot) else {
            return 0;
        };
        subscribers.iter().filter(|s| s.offer(&event)).count()
    }
}

impl EventStream {
    /// Receive every event of type `E` published from now on, until the
    /// subscription is dropped. It buffers up to [`DEFAULT_CAPACITY`] unread events;
    /// see the [module docs](self) for what happens beyond that.
    pub fn subscribe<E: Event>(&self) -> Subscription<E> {
        self.open(DEFAULT_CAPACITY)
    }

    /// Like [`subscribe`](Self::subscribe), with room for `capacity` unread events.
    ///
    /// # Errors
    ///
    /// [`CapacityError::Zero`] when `capacity` is zero, and
    /// [`CapacityError::TooLarge`] when it is above [`MAX_CAPACITY`]; nothing is
    /// subscribed.
    pub fn subscribe_with_capacity<E: Event>(
        &self,
        capacity: usize,
    ) -> Result<Subscription<E>, CapacityError> {
        match capacity {
            0 => Err(CapacityError::Zero),
            requested if requested > MAX_CAPACITY => Err(CapacityError::TooLarge { requested }),
            _ => Ok(self.open(capacity)),
        }
    }

    fn open<E: Event>(&self, capacity: usize) -> Subscription<E> {
        let (sender, receiver) = mpsc::channel(capacity);
        let loss = Arc::new(Loss::default());
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        self.shared.subscribe(Subscriber {
            id,
            sender,
            loss: Arc::clone(&loss),
        });
        Subscription {
            receiver,
            loss,
            held: None,
            id,
            stream: Arc::downgrade(&self.shared),
        }
    }

    /// Publish an event to every current subscriber of its type. Returns how many
    /// subscriptions took it; one whose buffer is full counts it as lost instead.
    /// Never waits.
    pub fn publish<E: Event>(&self, event: E) -> usize {
        self.shared.publish(event)
    }

    /// How many subscriptions to `E` are open.
    pub fn subscriber_count<E: Event>(&self) -> usize {
        self.shared.with_topic::<E, _>(Topic::open).unwrap_or(0)
    }
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventStream")
            .field("dead_letter_subscribers", &self.shared.dead_letters.open())
            .field(
                "other_subscribers",
                &self.shared.others_open.load(Ordering::Acquire),
            )
            .finish()
    }
}

/// A subscription to events of type `E`. Dropping it unsubscribes.
///
/// It buffers unread events up to its [`capacity`](Self::capacity); events published
/// while it is full are lost to it, and counted by [`lost`](Self::lost).
///
/// # Cancel safety
///
/// [`Subscription::recv`] and [`Subscription::recv_with_loss`] are cancel safe: an
/// event, or a report of loss, is taken off the subscription only when the future
/// completes.
pub struct Subscription<E: Event> {
    receiver: Receiver<Item<E>>,
    loss: Arc<Loss>,
    /// The event that came after a loss which `recv_with_loss` has just reported.
    held: Option<E>,
    id: u64,
    stream: Weak<StreamShared>,
}

impl<E: Event> Subscription<E> {
    /// The next event, skipping over any loss (see [`lost`](Self::lost)). `None`
    /// once the system that owns the stream is gone and the buffer is empty.
    pub async fn recv(&mut self) -> Option<E> {
        if let Some(event) = self.held.take() {
            return Some(event);
        }
        self.receiver.recv().await.map(|item| item.event)
    }

    /// The next event if one is already waiting, skipping over any loss.
    pub fn try_recv(&mut self) -> Option<E> {
        if let Some(event) = self.held.take() {
            return Some(event);
        }
        self.receiver.try_recv().ok().map(|item| item.event)
    }

    /// The next event, or the number of events lost at this point in the stream
    /// because the buffer was full. `None` once the system that owns the stream is
    /// gone and everything, loss included, has been reported.
    pub async fn recv_with_loss(&mut self) -> Option<Received<E>> {
        if let Some(event) = self.held.take() {
            return Some(Received::Event(event));
        }
        let item = match self.receiver.try_recv() {
            Ok(item) => Some(item),
            // The buffer is empty: what was lost since the last event is reported now
            // rather than with an event that may never come.
            Err(_) => match self.trailing_loss() {
                Some(lost) => return Some(Received::Lost(lost)),
                None => self.receiver.recv().await,
            },
        };
        match item {
            Some(Item {
                lost_before: 0,
                event,
            }) => Some(Received::Event(event)),
            Some(Item { lost_before, event }) => {
                self.held = Some(event);
                Some(Received::Lost(lost_before))
            }
            None => self.trailing_loss().map(Received::Lost),
        }
    }

    fn trailing_loss(&self) -> Option<u64> {
        match self.loss.unreported.swap(0, Ordering::AcqRel) {
            0 => None,
            lost => Some(lost),
        }
    }

    /// How many events this subscription has lost so far because its buffer was full.
    /// It only grows; [`recv_with_loss`](Self::recv_with_loss) reports where.
    pub fn lost(&self) -> u64 {
        self.loss.total.load(Ordering::Acquire)
    }

    /// How many events are waiting to be read. At most [`capacity`](Self::capacity),
    /// plus the one event held back behind a loss that `recv_with_loss` just
    /// reported.
    pub fn buffered(&self) -> usize {
        self.receiver.len() + usize::from(self.held.is_some())
    }

    /// How many unread events the buffer holds before new ones are lost.
    pub fn capacity(&self) -> usize {
        self.receiver.max_capacity()
    }

    /// End the subscription now; the same as dropping it.
    pub fn unsubscribe(self) {}
}

impl<E: Event> Drop for Subscription<E> {
    fn drop(&mut self) {
        if let Some(shared) = self.stream.upgrade() {
            shared.unsubscribe::<E>(self.id);
        }
    }
}

impl<E: Event> fmt::Debug for Subscription<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("event", &std::any::type_name::<E>())
            .field("capacity", &self.capacity())
            .field("buffered", &self.buffered())
            .field("lost", &self.lost())
            .finish()
    }
}

/// Why a message became a dead letter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeadLetterReason {
    /// The recipient had stopped (or stopped before reading it).
    RecipientStopped,
    /// The recipient's behavior returned `unhandled` for it.
    Unhandled,
    /// A reply to a request that was told rather than asked, so nobody awaits it.
    NoReplyExpected,
    /// An answer to an ask that has ended: it timed out, or was dropped.
    AskEnded,
    /// A second answer to an ask that had its answer already.
    AlreadyAnswered,
    /// The recipient's bounded mailbox was full, and its overflow strategy refuses
    /// new messages ([`DropNew`](crate::OverflowStrategy::DropNew), or
    /// [`Fail`](crate::OverflowStrategy::Fail)).
    MailboxFull,
    /// Pushed out of a full bounded mailbox by a newer message
    /// ([`DropOldest`](crate::OverflowStrategy::DropOldest)).
    PushedOut,
    /// An [`offer_within`](crate::ActorRef::offer_within) found no room in time.
    OfferTimedOut,
    /// The recipient tried to stash it into a full stash, and failed with
    /// [`StashOverflow`](crate::StashOverflow).
    StashFull,
    /// The recipient held it in its stash, and the behavior that stashed it was
    /// replaced (by a restart, or a switch to a behavior that kept no handle on the
    /// stash) before it was replayed.
    StashDiscarded,
    /// The recipient is a state machine, and the state it was in (named here) does
    /// not handle the message: it refused it.
    NotHandledInState(&'static str),
    /// Sent to an actor of another system, to which this one has no link.
    NoLink {
        /// The system the recipient lives in.
        peer: crate::ground::path::Address,
    },
    /// Sent to an actor of another system that could not be reached (no connection,
    /// a refused handshake, a connection that broke).
    Unreachable {
        /// The system the recipient lives in.
        peer: crate::ground::path::Address,
    },
    /// Sent to an actor of another system whose listener refused the link for a
    /// reason this side can act on: the two speak different versions of the link
    /// protocol (`why` names both), or the listener reached named itself as
    /// another system than the one dialled (a relay, or a stale address).
    LinkRefused {
        /// The system the recipient lives in.
        peer: crate::ground::path::Address,
        /// What the handshake found, in words that say what to do.
        why: String,
    },
    /// Queued for, or in flight to, an actor of another system when the connection
    /// broke; the next message dials again (S39).
    ConnectionLost {
        /// The system the recipient lives in.
        peer: crate::ground::path::Address,
    },
    /// Sent to an actor of another system whose address is quarantined: the
    /// failure detector gave up on it (S42). Nothing dials it until
    /// `clear_quarantine`.
    Quarantined {
        /// The system the recipient lives in.
        peer: crate::ground::path::Address,
    },
    /// Sent through a ref bound to a session with another system that has ended
    /// (its system stopped, or it was quarantined and the quarantine cleared since):
    /// resolve the ref again (S43).
    SessionEnded {
        /// The system the recipient lives in.
        peer: crate::ground::path::Address,
    },
    /// Sent to an actor of another system while the outbound queue to it was full.
    OutboundFull {
        /// The system the recipient lives in.
        peer: crate::ground::path::Address,
    },
    /// The message could not cross a link: its type is not registered for the wire,
    /// or serde could not encode it.
    NotEncodable(String),
    /// A frame from a peer that could not be delivered (S37): the peer, and what
    /// was wrong.
    FromPeer {
        /// The system the frame came from.
        peer: crate::ground::path::Address,
        /// What was wrong with it.
        problem: crate::ground::codec::WireProblem,
    },
}

impl fmt::Display for DeadLetterReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::RecipientStopped => "the recipient has stopped",
            Self::Unhandled => "the recipient did not handle it",
            Self::NoReplyExpected => "a reply to a request that was told, so nobody awaits it",
            Self::AskEnded => "the ask it answers has ended",
            Self::AlreadyAnswered => "the ask it answers had its answer already",
            Self::MailboxFull => "the recipient's mailbox was full",
            Self::PushedOut => "a newer message pushed it out of the recipient's full mailbox",
            Self::OfferTimedOut => {
                "no room came in the recipient's mailbox before the offer's deadline"
            }
            Self::StashFull => "the recipient's stash was full when it tried to stash it",
            Self::StashDiscarded => {
                "the recipient held it in its stash and restarted (or dropped the stash) before replaying it"
            }
            Self::Unreachable { peer } => {
                return write!(f, "{peer} could not be reached");
            }
            Self::LinkRefused { peer, why } => {
                return write!(f, "the link to {peer} was refused: {why}");
            }
            Self::ConnectionLost { peer } => {
                return write!(f, "the connection to {peer} broke before it was sent");
            }
            Self::Quarantined { peer } => {
                return write!(f, "{peer} is quarantined: nothing is sent there until `clear_quarantine`");
            }
            Self::SessionEnded { peer } => {
                return write!(f, "the ref names a session with {peer} that has ended: resolve it again");
            }
            Self::OutboundFull { peer } => {
                return write!(f, "the outbound buffer to {peer} was full");
            }
            Self::NotEncodable(why) => {
                return write!(f, "it cannot cross a link: {why}");
            }
            Self::NoLink { peer } => {
                return write!(f, "this system has no link to {peer}");
            }
            Self::FromPeer { peer, problem } => {
                return write!(f, "refused from {peer}: {problem}");
            }
            Self::NotHandledInState(state) => {
                return write!(f, "the recipient's state `{state}` does not handle it");
            }
        })
    }
}

/// A message that went nowhere, with its recipient and the reason.
///
/// Every subscriber sees the same letter; the message inside can be taken out once,
/// by whichever subscriber calls [`DeadLetter::take_message`] first.
#[derive(Clone)]
pub struct DeadLetter {
    message_type: &'static str,
    message: Arc<Mutex<Option<Payload>>>,
    recipient: ActorPath,
    reason: DeadLetterReason,
}

impl DeadLetter {
    pub(crate) fn new(message: Payload, recipient: ActorPath, reason: DeadLetterReason) -> Self {
        Self {
            message_type: message.type_name(),
            message: Arc::new(Mutex::new(Some(message))),
            recipient,
            reason,
        }
    }

    /// A letter for a message whose value is gone (a handler consumed it and then
    /// returned `unhandled`): only its type is known.
    pub(crate) fn without_value(
        message_type: &'static str,
        recipient: ActorPath,
        reason: DeadLetterReason,
    ) -> Self {
        Self {
            message_type,
            message: Arc::new(Mutex::new(None)),
            recipient,
            reason,
        }
    }

    /// The type name of the message.
    pub fn message_type(&self) -> &'static str {
        self.message_type
    }

    /// The last segment of the message's type name, such as `Shelf`.
    pub fn short_message_type(&self) -> &'static str {
        crate::ground::message::short_name(self.message_type)
    }

    /// Whether the message is an `M`.
    pub fn is<M: 'static>(&self) -> bool {
        self.lock().as_ref().is_some_and(|p| p.is::<M>())
    }

    /// Take the message out, if it is an `M` and nobody took it yet.
    ///
    /// The message is the one that was told, whatever the recipient's shape: for
    /// an actor whose protocol `#[actor]` generates (a plain actor or a state
    /// machine), the message type itself (`Deposit`, never `AccountMsg`); for a
    /// functional actor whose protocol is your own enum, that enum; for an
    /// adapter, the foreign message it was given. So `take_message::<T>()` with
    /// the type the sender wrote after `tell(..)` reads it. An answer nobody took
    /// is the reply type.
    ///
    /// ```
    /// use tapio::prelude::*;
    /// use tapio::{DeadLetter, DeadLetterReason};
    ///
    /// #[message]
    /// pub struct Deposit(pub u64);
    ///
    /// #[derive(Clone, Default)]
    /// pub struct Account(u64);
    ///
    /// #[actor]
    /// impl Account {
    ///     fn deposit(&mut self, Deposit(n): Deposit) {
    ///         self.0 += n;
    ///     }
    /// }
    ///
    /// #[message]
    /// pub enum Light {
    ///     On,
    ///     Off,
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let system = ActorSystem::new("letters")?;
    /// let mut letters = system.events().subscribe::<DeadLetter>();
    /// let account = system.spawn(Account::default(), "account")?;
    /// let lamp = system.spawn(Behaviors::receive_message(|_: Light| Behaviors::stopped()), "lamp")?;
    /// for stopping in [account.erase(), lamp.erase()] {
    ///     system.stop(stopping)?;
    /// }
    /// # let mut probe = tapio::testkit::TestProbe::<u64>::new(&system);
    /// # probe.watch(&account);
    /// # probe.watch(&lamp);
    /// # probe.expect_terminated(&account, std::time::Duration::from_secs(5)).await;
    /// # probe.expect_terminated(&lamp, std::time::Duration::from_secs(5)).await;
    /// account.tell(Deposit(5));
    /// lamp.tell(Light::On);
    /// let first = letters.recv().await.ok_or("a letter")?;
    /// assert_eq!(first.reason(), &DeadLetterReason::RecipientStopped);
    /// assert_eq!(first.take_message::<Deposit>().map(|Deposit(n)| n), Some(5));
    /// let second = letters.recv().await.ok_or("a letter")?;
    /// assert!(matches!(second.take_message::<Light>(), Some(Light::On)));
    /// system.terminate().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn take_message<M: 'static>(&self) -> Option<M> {
        let mut slot = self.lock();
        match slot.take()?.downcast::<M>() {
            Ok(message) => Some(message),
            Err(payload) => {
                *slot = Some(payload);
                None
            }
        }
    }

    /// The path of the actor it was meant for.
    pub fn recipient(&self) -> &ActorPath {
        &self.recipient
    }

    /// Why it was not delivered.
    pub fn reason(&self) -> &DeadLetterReason {
        &self.reason
    }

    fn lock(&self) -> MutexGuard<'_, Option<Payload>> {
        self.message
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl fmt::Debug for DeadLetter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadLetter")
            .field("message", &self.message_type)
            .field("recipient", &self.recipient)
            .field("reason", &self.reason)
            .finish()
    }
}

impl fmt::Display for DeadLetter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "dead letter: {} to {} ({})",
            self.short_message_type(),
            self.recipient,
            self.reason
        )
    }
}

#[cfg(test)]
mod tests;
