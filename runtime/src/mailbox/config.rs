//! What a user chooses about a mailbox at spawn: unbounded, or bounded with a
//! strategy for a full one; and the errors that go with it.

use std::fmt;

/// How an actor's mailbox is built, chosen when it is spawned
/// ([`ActorSystem::spawn_with`](crate::ActorSystem::spawn_with),
/// [`ActorContext::spawn_with`](crate::ActorContext::spawn_with)).
///
/// Unbounded by default. A bounded mailbox holds at most `capacity` messages, and
/// its [`OverflowStrategy`] says what a [`tell`](crate::ActorRef::tell) to a full one
/// does; [`offer`](crate::ActorRef::offer) waits for room instead, whatever the
/// strategy. Whatever a strategy drops is a [`DeadLetter`](crate::DeadLetter) with
/// its reason. The actor's own timer ticks, what comes through its message
/// adapters and the runtime's internal work are never refused by the bound, and
/// never pushed out by [`OverflowStrategy::DropOldest`]: while queued they take room
/// like a message, so a mailbox may hold more than `capacity` of them.
///
/// # Examples
///
/// ```
/// use tapio::{MailboxConfig, OverflowStrategy};
///
/// let config = MailboxConfig::bounded(64, OverflowStrategy::DropOldest)?;
/// assert_eq!(config.capacity(), Some(64));
/// assert!(MailboxConfig::bounded(0, OverflowStrategy::DropNew).is_err());
/// # Ok::<(), tapio::InvalidMailbox>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MailboxConfig {
    /// 0 for no bound.
    capacity: u32,
    overflow: OverflowStrategy,
}

/// What a [`tell`](crate::ActorRef::tell) to a full bounded mailbox does. A tell
/// never blocks: each strategy decides at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum OverflowStrategy {
    /// Refuse the new message (a dead letter, [`DeadLetterReason::MailboxFull`]), and
    /// fail the actor with [`MailboxOverflow`], under its supervision: a restart keeps
    /// what is queued, a stop turns it into dead letters. One failure per overflow:
    /// tells refused before the actor has handled it only become dead letters. The
    /// failure is decided between messages: a handler in hand, an `async` one that
    /// awaits included, runs to its end first (it is not dropped as a stop would
    /// drop it).
    ///
    /// [`DeadLetterReason::MailboxFull`]: crate::DeadLetterReason::MailboxFull
    #[default]
    Fail,
    /// Refuse the new message: it becomes a dead letter
    /// ([`DeadLetterReason::MailboxFull`](crate::DeadLetterReason::MailboxFull)); what
    /// is queued stays.
    DropNew,
    /// Take the new message, and push the oldest queued message out to make room: it
    /// becomes a dead letter
    /// ([`DeadLetterReason::PushedOut`](crate::DeadLetterReason::PushedOut)). Only a
    /// message told to the actor is pushed out, never a timer tick or what came
    /// through a message adapter: when nothing else is queued, the new message is
    /// taken beyond the bound.
    DropOldest,
}

impl MailboxConfig {
    /// The largest capacity a bounded mailbox may have.
    pub const MAX_CAPACITY: usize = u32::MAX as usize;

    /// A mailbox with no bound: a tell always queues.
    pub const fn unbounded() -> Self {
        Self {
            capacity: 0,
            overflow: OverflowStrategy::Fail,
        }
    }

    /// A mailbox that holds at most `capacity` messages; `overflow` says what a tell
    /// to a full one does.
    ///
    /// # Errors
    ///
    /// [`InvalidMailbox::ZeroCapacity`] for 0, [`InvalidMailbox::TooLarge`] above
    /// [`MAX_CAPACITY`](Self::MAX_CAPACITY).
    pub fn bounded(capacity: usize, overflow: OverflowStrategy) -> Result<Self, InvalidMailbox> {
        if capacity == 0 {
            return Err(InvalidMailbox::ZeroCapacity);
        }
        let Ok(capacity) = u32::try_from(capacity) else {
            return Err(InvalidMailbox::TooLarge { capacity });
        };
        Ok(Self { capacity, overflow })
    }

    /// The bound, or `None` for an unbounded mailbox.
    pub fn capacity(&self) -> Option<usize> {
        (self.capacity != 0).then_some(self.capacity as usize)
    }

    /// What a tell to a full mailbox does (meaningless when unbounded).
    pub fn overflow(&self) -> OverflowStrategy {
        self.overflow
    }

    pub(crate) fn raw_capacity(&self) -> u32 {
        self.capacity
    }
}

/// A mailbox that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidMailbox {
    /// A bound of 0 would refuse every message.
    #[error(
        "a bounded mailbox needs a capacity of at least 1; for no bound, use MailboxConfig::unbounded()"
    )]
    ZeroCapacity,
    /// More than [`MailboxConfig::MAX_CAPACITY`].
    #[error(
        "a mailbox capacity of {capacity} is above the largest allowed ({}); for no bound, use MailboxConfig::unbounded()",
        MailboxConfig::MAX_CAPACITY
    )]
    TooLarge {
        /// The capacity asked for.
        capacity: usize,
    },
}

/// The failure of an actor whose bounded mailbox, with [`OverflowStrategy::Fail`],
/// was full when a message was told to it (or a request asked of it, which fails
/// its ask with [`AskError::MailboxFull`](crate::AskError::MailboxFull)). Supervision matches it like any failure
/// (`on_failure::<MailboxOverflow>(..)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailboxOverflow {
    capacity: usize,
}

impl MailboxOverflow {
    pub(crate) fn new(capacity: usize) -> Self {
        Self { capacity }
    }

    /// The mailbox's capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

impl fmt::Display for MailboxOverflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the mailbox was full ({} messages) when a message was told to it, and its \
             overflow strategy is Fail; the message is a dead letter. Give it more \
             capacity, have producers use `offer`, or choose DropNew or DropOldest",
            self.capacity
        )
    }
}

impl std::error::Error for MailboxOverflow {}
