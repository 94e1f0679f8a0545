//! The system's event stream: typed publish and subscribe, and dead letters.
//!
//! Anyone can subscribe to events of one type with [`EventStream::subscribe`] and
//! read them from the returned [`Subscription`]. Dropping the subscription, or calling
//! [`Subscription::unsubscribe`], ends it. The runtime publishes [`DeadLetter`]s here.
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
//! system.terminate().await;
//! # Ok(())
//! # }
//! ```

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use crate::actor::ActorPath;
use crate::message::Payload;

/// Something that can be published on the event stream: each subscriber gets a clone.
pub trait Event: Clone + Send + 'static {}

impl<T: Clone + Send + 'static> Event for T {}

/// Typed publish and subscribe, one per actor system.
#[derive(Clone, Default)]
pub struct EventStream {
    shared: Arc<StreamShared>,
}

#[derive(Default)]
struct StreamShared {
    subscribers: Mutex<HashMap<TypeId, Vec<Subscriber>>>,
    next_id: AtomicU64,
}

struct Subscriber {
    id: u64,
    sender: Box<dyn Any + Send>,
}

impl StreamShared {
    fn lock(&self) -> MutexGuard<'_, HashMap<TypeId, Vec<Subscriber>>> {
        // No user code runs under this lock (an event is cloned and sent after it is
        // released), so poison carries no broken invariant.
        self.subscribers
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl EventStream {
    /// Receive every event of type `E` published from now on, until the
    /// subscription is dropped.
    pub fn subscribe<E: Event>(&self) -> Subscription<E> {
        let (sender, receiver) = mpsc::unbounded_channel::<E>();
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        self.shared
            .lock()
            .entry(TypeId::of::<E>())
            .or_default()
            .push(Subscriber {
                id,
                sender: Box::new(sender),
            });
        Subscription {
            receiver,
            id,
            stream: Arc::downgrade(&self.shared),
            _event: PhantomData,
        }
    }

    /// Publish an event to every current subscriber of its type. Returns how many
    /// subscribers it reached.
    pub fn publish<E: Event>(&self, event: E) -> usize {
        // The senders are copied out, so the event's own `Clone` runs without the
        // lock: it may publish or subscribe in turn.
        let senders: Vec<(u64, UnboundedSender<E>)> = {
            let map = self.shared.lock();
            let Some(subscribers) = map.get(&TypeId::of::<E>()) else {
                return 0;
            };
            subscribers
                .iter()
                .filter_map(|s| {
                    Some((s.id, s.sender.downcast_ref::<UnboundedSender<E>>()?.clone()))
                })
                .collect()
        };
        let mut reached = 0;
        let mut gone = Vec::new();
        for (id, sender) in senders {
            if sender.send(event.clone()).is_ok() {
                reached += 1;
            } else {
                gone.push(id);
            }
        }
        for id in gone {
            Self::unsubscribe(&self.shared, TypeId::of::<E>(), id);
        }
        reached
    }

    /// How many subscriptions to `E` are open.
    pub fn subscriber_count<E: Event>(&self) -> usize {
        self.shared
            .lock()
            .get(&TypeId::of::<E>())
            .map_or(0, Vec::len)
    }

    fn unsubscribe(shared: &StreamShared, type_id: TypeId, id: u64) {
        let mut map = shared.lock();
        if let Some(subscribers) = map.get_mut(&type_id) {
            subscribers.retain(|s| s.id != id);
            if subscribers.is_empty() {
                map.remove(&type_id);
            }
        }
    }
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let types = self.shared.lock().len();
        f.debug_struct("EventStream")
            .field("event_types", &types)
            .finish()
    }
}

/// A subscription to events of type `E`. Dropping it unsubscribes.
///
/// # Cancel safety
///
/// [`Subscription::recv`] is cancel safe: an event is taken off the subscription only
/// when the future completes.
pub struct Subscription<E: Event> {
    receiver: UnboundedReceiver<E>,
    id: u64,
    stream: Weak<StreamShared>,
    _event: PhantomData<fn() -> E>,
}

impl<E: Event> Subscription<E> {
    /// The next event. `None` once the system that owns the stream is gone.
    pub async fn recv(&mut self) -> Option<E> {
        self.receiver.recv().await
    }

    /// The next event if one is already waiting.
    pub fn try_recv(&mut self) -> Option<E> {
        self.receiver.try_recv().ok()
    }

    /// End the subscription now; the same as dropping it.
    pub fn unsubscribe(self) {}
}

impl<E: Event> Drop for Subscription<E> {
    fn drop(&mut self) {
        if let Some(shared) = self.stream.upgrade() {
            EventStream::unsubscribe(&shared, TypeId::of::<E>(), self.id);
        }
    }
}

impl<E: Event> fmt::Debug for Subscription<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("event", &std::any::type_name::<E>())
            .finish()
    }
}

/// Why a message became a dead letter.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

impl fmt::Display for DeadLetterReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::RecipientStopped => "the recipient has stopped",
            Self::Unhandled => "the recipient did not handle it",
            Self::NoReplyExpected => "a reply to a request that was told, so nobody awaits it",
            Self::AskEnded => "the ask it answers has ended",
            Self::AlreadyAnswered => "the ask it answers had its answer already",
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
        crate::message::short_name(self.message_type)
    }

    /// Whether the message is an `M`.
    pub fn is<M: 'static>(&self) -> bool {
        self.lock().as_ref().is_some_and(|p| p.is::<M>())
    }

    /// Take the message out, if it is an `M` and nobody took it yet.
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
mod tests {
    use super::*;

    #[test]
    fn each_subscriber_of_a_type_gets_each_event_and_others_do_not() {
        let stream = EventStream::default();
        let mut a = stream.subscribe::<u32>();
        let mut b = stream.subscribe::<u32>();
        let mut other = stream.subscribe::<String>();
        assert_eq!(stream.publish(7_u32), 2);
        assert_eq!(a.try_recv(), Some(7));
        assert_eq!(b.try_recv(), Some(7));
        assert_eq!(other.try_recv(), None);
    }

    #[test]
    fn a_dropped_or_unsubscribed_subscription_receives_nothing_more() {
        let stream = EventStream::default();
        let a = stream.subscribe::<u32>();
        let b = stream.subscribe::<u32>();
        assert_eq!(stream.subscriber_count::<u32>(), 2);
        a.unsubscribe();
        drop(b);
        assert_eq!(stream.subscriber_count::<u32>(), 0);
        assert_eq!(stream.publish(1_u32), 0);
    }
}
