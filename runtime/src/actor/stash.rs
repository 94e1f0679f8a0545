//! The stash: messages an actor cannot handle yet, held aside and replayed later.
//!
//! An actor that must load something before it can work has three choices, and
//! only one is good. Dropping what arrives loses work. Waiting for the load inside a
//! handler leaves the actor unable to answer anything, a stop included. The third
//! is to take the messages, hold them aside, and replay them once the actor is
//! ready: [`Behaviors::with_stash`] gives a behavior a [`StashBuffer`] to hold them
//! in, and [`StashBuffer::unstash_all`] switches to the next behavior and replays
//! them in one answer.
//!
//! - **Bounded (S26).** The capacity is required, and 0 is refused
//!   ([`InvalidStash`]). Stashing into a full stash is an error in the actor that
//!   stashed ([`StashOverflow`]): returned by [`StashBuffer::stash`], so `?` in a
//!   handler fails the actor under its supervision. The message that did not fit is
//!   a dead letter ([`DeadLetterReason::StashFull`]).
//! - **Replayed at the front (S27).** The held messages go back to the front of the
//!   mailbox, in the order they arrived, ahead of everything that arrived while they
//!   were held: ahead of what queued up while the unstashing handler ran, too. The
//!   actor stays an ordinary actor while it replays: a system message (a stop, a
//!   watched actor's end) still outranks the replayed messages, so a stop during a
//!   replay is honoured, and what was not replayed yet becomes dead letters
//!   ([`DeadLetterReason::RecipientStopped`]).
//! - **Owned by the incarnation.** The buffer belongs to what `with_stash` started.
//!   When that is replaced, what it still holds becomes dead letters: a restart of
//!   a `supervise(..)` around `with_stash` starts it again with an empty stash
//!   ([`DeadLetterReason::StashDiscarded`]), and a stop ends it
//!   ([`DeadLetterReason::RecipientStopped`]). A `supervise(..)` *inside*
//!   `with_stash` restarts only what is inside, and the stash outlives that restart,
//!   as any value made outside the supervised behavior does. A clone of the buffer
//!   kept elsewhere (a task, another actor) does not change what a stop does: the
//!   held messages are lettered at the stop, and a message stashed into the clone
//!   afterwards is a dead letter at once. It does keep a buffer a restart replaced:
//!   what that one holds is lettered (`StashDiscarded`) when its last clone is
//!   dropped.
//! - **Asks keep their answer.** A stashed message is kept whole: a request stashed
//!   with its `reply_to` ref (or, for a protocol `#[actor]` generates, with the
//!   reply slot beside it) is answered to whoever asked once it is replayed.
//!
//! # Examples
//!
//! A greeter that cannot greet until its template has arrived:
//!
//! ```
//! use tapio::prelude::*;
//! use tapio::{InvalidStash, StashBuffer};
//!
//! #[message]
//! pub enum Greeter {
//!     Greet { whom: String, reply_to: ActorRef<String> },
//!     Loaded(String),
//! }
//!
//! fn loading(stash: StashBuffer<Greeter>) -> Behavior<Greeter> {
//!     Behaviors::receive_message(move |message: Greeter| match message {
//!         // One answer switches to `ready` and replays what was held.
//!         Greeter::Loaded(template) => Ok(stash.unstash_all(ready(template))),
//!         // Not ready: hold it. A full stash fails the actor.
//!         greet => stash.stash(greet).map(|()| Behaviors::same()),
//!     })
//!     .into()
//! }
//!
//! fn ready(template: String) -> Behavior<Greeter> {
//!     Behaviors::receive_message(move |message: Greeter| {
//!         if let Greeter::Greet { whom, reply_to } = message {
//!             reply_to.tell(template.replace("{}", &whom));
//!         }
//!     })
//!     .into()
//! }
//!
//! fn greeter() -> Result<Behavior<Greeter>, InvalidStash> {
//!     Behaviors::with_stash(16, loading)
//! }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let system = ActorSystem::new("stash")?;
//! # let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
//! # let reader = system.spawn(Behaviors::receive_message(move |s: String| { let _ = tx.send(s); }), "reader")?;
//! let desk = system.spawn(greeter()?, "greeter")?;
//! desk.tell(Greeter::Greet { whom: "ada".into(), reply_to: reader.clone() });
//! desk.tell(Greeter::Loaded("hello, {}!".into()));
//! desk.tell(Greeter::Greet { whom: "grace".into(), reply_to: reader });
//! # assert_eq!(rx.recv().await.as_deref(), Some("hello, ada!"));
//! # assert_eq!(rx.recv().await.as_deref(), Some("hello, grace!"));
//! # system.terminate().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Struct actors
//!
//! An `#[actor]` holds its buffer in a field, built by the `with_stash` factory
//! (which may return an actor value, as a setup factory may), and replays with
//! `unstash_all(Behaviors::same())` to stay the same actor:
//!
//! ```
//! use tapio::prelude::*;
//! use tapio::{StashBuffer, StashOverflow};
//!
//! #[message]
//! pub struct Greet(pub String);
//! #[message]
//! pub struct Loaded(pub String);
//!
//! pub struct Greeter {
//!     template: Option<String>,
//!     stash: StashBuffer<GreeterMsg>,
//! }
//!
//! #[actor]
//! impl Greeter {
//!     fn greet(&mut self, Greet(whom): Greet) -> Result<(), StashOverflow> {
//!         match &self.template {
//!             Some(template) => tracing::info!("{}", template.replace("{}", &whom)),
//!             // Stashed as the protocol value a `tell` would have queued.
//!             None => self.stash.stash(Greet(whom))?,
//!         }
//!         Ok(())
//!     }
//!
//!     fn loaded(&mut self, Loaded(template): Loaded) -> Behavior<GreeterMsg> {
//!         self.template = Some(template);
//!         self.stash.unstash_all(Behaviors::same())
//!     }
//! }
//!
//! let greeter = Behaviors::with_stash(8, |stash| Greeter { template: None, stash });
//! assert!(greeter.is_ok());
//! ```
//!
//! A request an `#[actor]` handler answers by returning the reply cannot be stashed
//! from that handler: the generated code sends what the handler returns. Give such
//! a request a `reply_to: ActorRef<_>` field (asked with
//! [`ask_with`](crate::ActorRef::ask_with)) and handle it as a plain message, or
//! match the protocol enum, reply slot included, in a functional behavior.
//!
//! [`Behaviors::with_stash`]: crate::Behaviors::with_stash
//! [`DeadLetterReason::StashFull`]: crate::DeadLetterReason::StashFull
//! [`DeadLetterReason::StashDiscarded`]: crate::DeadLetterReason::StashDiscarded
//! [`DeadLetterReason::RecipientStopped`]: crate::DeadLetterReason::RecipientStopped
//!
//! # Inside
//!
//! A `StashBuffer` is an `Arc<Mutex<Held>>`: the held messages, the capacity and the
//! owner's self ref. Only the owner's task touches it, so the lock is never contended;
//! it is a lock because handler closures must be `Sync`. `stash(m)` wraps `m` as a tell
//! would (`P::wrap`). `Drop for Held` letters what it still holds (`RecipientStopped`
//! once the owner is stopping, `StashDiscarded` otherwise). Since a clone can outlive the
//! actor, the stop does not wait for that drop: `with_stash` gives the context a
//! `StashHandle` (a `Weak` on the buffer), and the cell letters what every live handle's
//! buffer holds as it closes its user lane, before what is queued there. The replay
//! itself is done by whatever reads a handler's answer (`NextStep::of`, in the private
//! `actor::incarnation`), into the reader's front buffer.

use std::collections::VecDeque;
use std::fmt;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::actor::ActorRef;
use crate::actor::behavior::{Behavior, IntoBehavior, Kind};
use crate::actor::lanes::{Batch, Envelope};
use crate::ground::events::DeadLetterReason;
use crate::ground::message::{Accepts, Message};
use crate::mailbox::{UnusedPromise, dropping_promises};

/// A stash of no room, refused when the behavior is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidStash {
    /// A capacity of 0 would refuse the first message stashed.
    #[error(
        "a stash needs a capacity of at least 1: give `Behaviors::with_stash` the most messages the actor may hold while it is not ready"
    )]
    ZeroCapacity,
}

/// The failure of an actor that stashed a message into a full stash. Supervision
/// matches it like any failure (`on_failure::<StashOverflow>(..)`); the message that
/// did not fit is a dead letter ([`StashFull`](crate::DeadLetterReason::StashFull)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the stash was full ({capacity} messages) when the actor stashed another, which is now a dead letter: unstash sooner, give `with_stash` more room, or check `is_full()` before stashing and decide what to drop"
)]
pub struct StashOverflow {
    capacity: usize,
}

impl StashOverflow {
    /// The stash's capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

/// Holds messages an actor cannot handle yet, to replay them later at the front of
/// its mailbox (see the [module docs](self)). Get one from
/// [`Behaviors::with_stash`](crate::Behaviors::with_stash).
///
/// Cheap to clone: every clone is the same buffer, so a handler closure can keep
/// one and an `async` handler can take one into its future.
pub struct StashBuffer<P: Message> {
    held: Arc<Mutex<Held<P>>>,
}

/// What a buffer holds, and whose it is.
struct Held<P: Message> {
    messages: VecDeque<P>,
    capacity: NonZeroUsize,
    /// The actor that stashes: dead letters name it.
    owner: ActorRef<P>,
}

impl<P: Message> Clone for StashBuffer<P> {
    fn clone(&self) -> Self {
        Self {
            held: self.held.clone(),
        }
    }
}

impl<P: Message> StashBuffer<P> {
    /// An empty buffer of `capacity` for the actor `owner`.
    pub(crate) fn new(capacity: NonZeroUsize, owner: ActorRef<P>) -> Self {
        Self {
            held: Arc::new(Mutex::new(Held {
                messages: VecDeque::new(),
                capacity,
                owner,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Held<P>> {
        // No user code runs under this lock (a message's drop aside), so a poisoned
        // lock still holds consistent data.
        self.held
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Hold `message` until [`unstash_all`](Self::unstash_all) replays it. It is
    /// kept as the protocol value a `tell` of it would have queued.
    ///
    /// # Errors
    ///
    /// [`StashOverflow`] when the stash holds [`capacity`](Self::capacity) messages
    /// already. `message` is then a dead letter
    /// ([`StashFull`](crate::DeadLetterReason::StashFull)); return the error from the
    /// handler (`?`) to fail the actor, under its supervision.
    ///
    /// Stashed through a clone once the actor has stopped, `message` is not held
    /// (nothing would replay it): it is a dead letter at once
    /// ([`RecipientStopped`](crate::DeadLetterReason::RecipientStopped)), and this
    /// returns `Ok`, as a tell to a stopped actor does not fail.
    pub fn stash<M>(&self, message: M) -> Result<(), StashOverflow>
    where
        M: Message,
        P: Accepts<M>,
    {
        let mut held = self.lock();
        if held.owner.core().is_stopping() {
            // A clone kept past the actor's stop: nothing will ever replay it.
            let owner = held.owner.clone();
            drop(held);
            letter_all(&owner, [message]);
            return Ok(());
        }
        let capacity = held.capacity.get();
        if held.messages.len() < capacity {
            held.messages.push_back(P::wrap(message));
            return Ok(());
        }
        let owner = held.owner.clone();
        drop(held);
        let core = owner.core();
        core.system()
            .dead_letter(message, core.path(), DeadLetterReason::StashFull);
        Err(StashOverflow { capacity })
    }

    /// Switch to `next` and replay every held message at the front of the mailbox,
    /// in the order they arrived: return what this returns from a handler (or a
    /// signal handler). The messages are taken when the answer is applied, so one
    /// stashed later in the same handler is replayed too.
    ///
    /// `next` may be [`Behaviors::same`](crate::Behaviors::same) (replay and stay,
    /// as a struct actor does), another behavior, or
    /// [`Behaviors::stopped`](crate::Behaviors::stopped) (the held messages then
    /// become dead letters as the actor stops).
    ///
    /// Replayed messages go through the mailbox, not a loop in this call: each is
    /// handled as the next message by whatever behavior is current then, and a
    /// system message arriving meanwhile is read first, so a stop cuts the replay
    /// short.
    #[must_use = "nothing is replayed unless a handler returns this behavior"]
    pub fn unstash_all(&self, next: impl IntoBehavior<P>) -> Behavior<P> {
        Behavior::from_kind(Kind::Unstash(Box::new(Unstash {
            stash: self.clone(),
            next: next.into_behavior(),
        })))
    }

    /// How many messages are held.
    pub fn len(&self) -> usize {
        self.lock().messages.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.lock().messages.is_empty()
    }

    /// Whether the next [`stash`](Self::stash) would overflow.
    pub fn is_full(&self) -> bool {
        let held = self.lock();
        held.messages.len() >= held.capacity.get()
    }

    /// The most messages the stash holds.
    pub fn capacity(&self) -> usize {
        self.lock().capacity.get()
    }

    /// Every held message, oldest first, taken out.
    fn take_all(&self) -> VecDeque<P> {
        std::mem::take(&mut self.lock().messages)
    }

    /// The handle the actor's context keeps, to letter what the buffer holds when
    /// the actor stops.
    pub(crate) fn handle(&self) -> StashHandle<P> {
        StashHandle(Arc::downgrade(&self.held))
    }
}

/// What an actor's context keeps of a stash `with_stash` gave it: at the stop, what
/// the buffer still holds becomes dead letters at once, even while a clone of the
/// buffer lives on elsewhere (a task, another actor), which would otherwise keep
/// the messages, and the asks among them, until it is dropped.
pub(crate) struct StashHandle<P: Message>(Weak<Mutex<Held<P>>>);

impl<P: Message> StashHandle<P> {
    /// Whether some clone of the buffer is still alive.
    pub(crate) fn is_live(&self) -> bool {
        self.0.strong_count() > 0
    }

    /// The actor is stopping: turn what the buffer holds into dead letters
    /// ([`RecipientStopped`](DeadLetterReason::RecipientStopped)), oldest first
    /// (see `letter_all`).
    pub(crate) fn letter_held(&self) {
        let Some(held) = self.0.upgrade() else {
            return;
        };
        let buffer = StashBuffer { held };
        let (messages, owner) = {
            let mut held = buffer.lock();
            (std::mem::take(&mut held.messages), held.owner.clone())
        };
        letter_all(&owner, messages);
    }
}

impl<P: Message> fmt::Debug for StashBuffer<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let held = self.lock();
        f.debug_struct("StashBuffer")
            .field("len", &held.messages.len())
            .field("capacity", &held.capacity)
            .finish()
    }
}

impl<P: Message> Drop for Held<P> {
    /// The incarnation that stashed is gone (a restart, a switch that kept no clone,
    /// or the stop): what it held goes nowhere, and is published as such.
    fn drop(&mut self) {
        if !self.messages.is_empty() {
            letter_all(&self.owner, self.messages.drain(..));
        }
    }
}

/// `messages`, stashed for `owner` and never to be replayed, as dead letters in
/// order: `RecipientStopped` once it stops, else (a restart or a switch discarded
/// them) `StashDiscarded`. A request from another system among them tells its
/// asker as a local one's ask learns it.
fn letter_all<P: Message, M: Message>(owner: &ActorRef<P>, messages: impl IntoIterator<Item = M>) {
    let core = owner.core();
    let (reason, promises) = if core.is_stopping() {
        (
            DeadLetterReason::RecipientStopped,
            UnusedPromise::Stopped(core.uid()),
        )
    } else {
        (DeadLetterReason::StashDiscarded, UnusedPromise::Unanswered)
    };
    dropping_promises(promises, || {
        for message in messages {
            core.system()
                .dead_letter(message, core.path(), reason.clone());
        }
    });
}

/// The answer [`StashBuffer::unstash_all`] builds: replay, then go on as `next`.
pub(crate) struct Unstash<P: Message> {
    stash: StashBuffer<P>,
    next: Behavior<P>,
}

impl<P: Message> Clone for Unstash<P> {
    fn clone(&self) -> Self {
        Self {
            stash: self.stash.clone(),
            next: self.next.clone(),
        }
    }
}

impl<P: Message> Unstash<P> {
    /// Put what the stash holds in front of everything in `front`, the reader's
    /// front buffer (read before the mailbox), and return what comes next.
    pub(crate) fn replay(self, front: &mut Batch<P>) -> Behavior<P> {
        let held = self.stash.take_all();
        if !held.is_empty() {
            let front = front.get_or_insert_with(Box::default);
            front.reserve(held.len());
            for message in held.into_iter().rev() {
                front.push_front(Envelope::Message(message));
            }
        }
        self.next
    }
}
