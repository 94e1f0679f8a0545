//! Actor references, paths and the cell that runs an actor.
//!
//! An [`ActorRef<P>`] is the only way to reach an actor: it is typed by the actor's
//! protocol `P`, so [`ActorRef::tell`] accepts exactly the messages `P` accepts. It is
//! cheap to clone (one reference count), `Send + Sync`, and compares and hashes by
//! the actor's address, path and incarnation uid, which is also how it prints.
//!
//! [`AnyActorRef`] is the same identity with the protocol erased: what
//! [`Terminated`](crate::Terminated) carries, and what a watch is about.
//!
//! # Targets
//!
//! `ActorRef { target: Target<P> }`, and `Target` has one variant,
//! `Local(Arc<LocalCell<P>>)`: a ref is one pointer wide, and so is
//! `Option<ActorRef<_>>`. Refs ride in messages (one in every request), so their size
//! is paid everywhere; a second variant would have to stay one pointer wide (behind an
//! `Arc`, say). A ref to another system's actor needs none: it is a `LocalCell` too.
//! `AnyActorRef` is an `Arc<dyn AnyCell>`, two words.
//!
//! Every target is a `LocalCell`, a `CellCore` (identity, system lane, children) and a
//! user lane, and the user lane is its kind: an actor's mailbox, a promise's
//! `AnswerSlot`, an adapter's slot or a remote ref's `Outbox` (`remote/lane.rs`'s `RemoteSlot`; with the matching
//! `LaneKind` beside the system lane's flags, read without a lock). The untyped side,
//! `AnyCell`, is a set of capabilities rather than a way to the core (`path`, `uid`,
//! `send_system`, `request_stop`, `is_stopping`, `has_ended`, `end_notice`, `wake`,
//! `owner`, `outbox`, the promise's `awaits_answer`, `request_lost`
//! and `request_refused`, `deliver_wire`, `into_any`), plus `local`, which hands out the
//! core for the tree's bookkeeping. Code that is not about the tree (ask, watch, dead
//! letters, `ActorSystem::stop`) uses the capabilities.
//!
//! `ActorRef::run_in` queues a closure as `Envelope::Run`, run inside the actor in
//! order with its messages; routers resize their pool through it.
//!
//! Layer: actor (rank 2). Imports ground, the mailbox and its own folder; reaches a
//! remote ref only through the mailbox's `Outbox` seam. See `.ci/layers.py`.

pub(crate) mod adapter;
mod any_ref;
pub(crate) mod behavior;
pub mod blocking;
mod cell;
pub(crate) mod context;
mod core;
pub(crate) mod effects;
pub(crate) mod incarnation;
pub(crate) mod lanes;
mod narrow;
mod offer;
pub(crate) mod promise;
pub(crate) mod reply;
pub(crate) mod signal;
pub(crate) mod spawn;
pub mod stash;
pub mod supervision;
pub(crate) mod system;
pub mod timer;

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use tokio::sync::Notify;

use crate::actor::lanes::{Envelope, Sent, UserLane};
use crate::ground::events::DeadLetterReason;
use crate::ground::message::{Accepts, Message};
use crate::mailbox::SystemMessage;

pub use self::any_ref::AnyActorRef;
pub(crate) use self::core::{CellCore, Parent};
pub use self::offer::Offer;
pub(crate) use self::system::SystemShared;
pub use self::system::{ActorSystem, Settings};
pub(crate) use crate::ground::path::{ActorPath, Address};
pub(crate) use crate::ground::path::{AnonymousName, validate_name, validate_segment};

/// The shared half of an actor: its identity, its system lane and its user lane. The
/// cell task owns the rest.
///
/// Aligned to 16 bytes, so its allocation (with the `Arc` counts) is a multiple of 16:
/// with glibc's allocator, a 168-byte cell cost about 110 bytes more per idle actor in
/// the bench than the same cell padded to 176 (595 against 709 B, same run); the
/// allocator's size classes are the likely cause, not pinned down further. Measure
/// `core spawn` in `bench/` before changing the cell's fields.
#[repr(align(16))]
pub(crate) struct LocalCell<P: Message> {
    pub(crate) core: CellCore,
    pub(crate) user: UserLane<P>,
}

/// What every target of a ref can do, whatever its protocol and wherever it runs:
/// the untyped half of a ref, as a set of capabilities. A local actor, an ask's
/// promise, a message adapter and a ref to another system's actor are all cells of
/// this process, which hand out their [`CellCore`]; a remote ref's cell is one whose
/// lane holds an `Outbox` (`remote/lane.rs`: it sends frames over its peer's link),
/// and no parent's table holds it.
pub(crate) trait AnyCell: Send + Sync + 'static {
    /// Its path.
    fn path(&self) -> &ActorPath;

    /// Its incarnation uid.
    fn uid(&self) -> u64;

    /// The system it was made in.
    fn system(&self) -> &Arc<SystemShared>;

    /// Put a message on its system lane, and wake it; hands the message back if the
    /// target has stopped or takes no system messages.
    fn send_system(&self, message: SystemMessage) -> Result<(), SystemMessage>;

    /// Ask it to stop; nothing happens if it has stopped already.
    fn request_stop(&self);

    /// Whether it has begun to stop (or has stopped, or never ran: a promise).
    fn is_stopping(&self) -> bool;

    /// Whether it has ended.
    fn has_ended(&self) -> bool;

    /// Something to wait on for its end; `None` if it has ended already. After waiting
    /// has begun (`Notified::enable`), check [`has_ended`](Self::has_ended) once more.
    fn end_notice(&self) -> Option<Arc<Notify>>;

    /// Wake its task if it waits (its waker is kept in its mailbox).
    fn wake(&self);

    /// For a message adapter, the actor it belongs to.
    fn owner(&self) -> Option<AnyActorRef>;

    /// The cell's shared core, for the tree's bookkeeping (parents and children,
    /// shutdown): a target of this process only.
    fn local(&self) -> Option<&CellCore>;

    /// The cell as `Any`, to find its protocol again.
    fn into_any(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync>;

    /// Whether this is an ask's promise whose asker still waits.
    fn awaits_answer(&self) -> bool;

    /// For a ref to an actor of another system, where it lives and the association
    /// that reaches it.
    fn outbox(&self) -> Option<Arc<dyn crate::mailbox::Outbox>>;

    /// For an ask's promise: its request was given up on the link, so the ask
    /// fails at once with `Unreachable`. Nothing for any other cell.
    fn request_lost(&self);

    /// For an ask's promise: the asked actor's system refused the request, and
    /// said why in a `!refused` frame; the ask fails at once. Nothing for any other
    /// cell.
    fn request_refused(&self, refusal: crate::actor::promise::Refusal);

    /// Decode a payload from a peer into the target's protocol and deliver it.
    fn deliver_wire(
        &self,
        key: &str,
        bytes: &[u8],
        ctx: &crate::ground::codec::WireContext<'_>,
    ) -> Result<(), crate::ground::codec::Undelivered>;
}

/// What the mailbox carries of this layer (its `Carried` seam): the identity that
/// system messages and adapters name.
impl crate::mailbox::Carried for crate::mailbox::Above {
    type Identity = AnyActorRef;
}

impl<P: Message> LocalCell<P> {
    /// Put an envelope on the user lane. A message the actor can no longer take, or
    /// that its full mailbox refuses or pushes out, becomes a dead letter; `false`
    /// says the envelope itself could not be queued.
    #[inline]
    pub(crate) fn deliver(&self, envelope: Envelope<P>) -> bool {
        matches!(self.deliver_to(envelope), Delivery::Queued)
    }

    /// [`deliver`](Self::deliver), saying why an envelope was not queued.
    #[inline]
    pub(crate) fn deliver_to(&self, envelope: Envelope<P>) -> Delivery {
        let lane = self.core.lane();
        if lane.is_stopping_actor() {
            // Refused without the mailbox's lock: a tell to a stopped actor costs a
            // load, and its dead letter nothing more when nobody subscribes.
            return self.deliver_slow(Sent::Refused(envelope));
        }
        match self.user.send(envelope, lane.reader_waiting()) {
            Sent::Queued => Delivery::Queued,
            sent => self.deliver_slow(sent),
        }
    }

    #[cold]
    fn deliver_slow(&self, sent: Sent<P>) -> Delivery {
        let system = self.core.system();
        let path = self.core.path();
        match sent {
            Sent::Queued => Delivery::Queued,
            Sent::PushedOut(oldest) => {
                // Its ask, if it is a request, fails at once (S54).
                let oldest = oldest.refuse_dropped(crate::ground::message::Dropped::PushedOut);
                system.dead_letter(oldest, path, DeadLetterReason::PushedOut);
                Delivery::Queued
            }
            Sent::Full { message, fail } => {
                system.dead_letter(message, path, DeadLetterReason::MailboxFull);
                if fail
                    && self
                        .core
                        .lane()
                        .push(SystemMessage::MailboxOverflowed)
                        .is_ok()
                {
                    self.user.wake();
                }
                Delivery::Full
            }
            Sent::Refused(Envelope::Message(message)) => {
                system.dead_letter(message, path, DeadLetterReason::RecipientStopped);
                Delivery::Refused
            }
            // A tick of a timer whose actor has stopped: the timer is gone with it;
            // work for an actor that has stopped has nothing to run in.
            Sent::Refused(Envelope::Tick(_) | Envelope::Run(_)) => Delivery::Refused,
            // What an adapter passed on to an owner that has stopped: a dead letter
            // naming the adapter.
            Sent::Refused(Envelope::Adapted(adapted)) => {
                (*adapted).dead_letter(DeadLetterReason::RecipientStopped);
                Delivery::Refused
            }
            Sent::DeadLettered => Delivery::Refused,
            Sent::FullThere => Delivery::Full,
            Sent::Unwanted(answer, reason) => {
                system.dead_letter(answer, path, reason);
                Delivery::Refused
            }
        }
    }
}

/// What became of an envelope handed to a cell. Whatever was not queued is a dead
/// letter already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Queued (under drop-oldest, perhaps by pushing the oldest message out).
    Queued,
    /// Refused by a full bounded mailbox (drop-new, or fail).
    Full,
    /// Refused for any other reason: the actor has stopped, the ref's peer cannot
    /// be reached, an adapter's owner has stopped.
    Refused,
}

impl<P: Message> AnyCell for LocalCell<P> {
    fn into_any(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }

    fn awaits_answer(&self) -> bool {
        self.user.awaits_answer()
    }
    fn deliver_wire(
        &self,
        key: &str,
        bytes: &[u8],
        ctx: &crate::ground::codec::WireContext<'_>,
    ) -> Result<(), crate::ground::codec::Undelivered> {
        use crate::ground::codec::Undelivered;
        use crate::ground::codec::WireProblem;
        // Refused before decoding: the frame's letter names the peer.
        if self.core.lane().is_stopping_actor() {
            return Err(WireProblem::RecipientStopped.into());
        }
        let message = P::decode_wire(key, bytes, ctx)?;
        // Whatever was not queued is a dead letter already, with the mailbox's
        // reason: `deliver_parts` adds none of its own.
        let lettered = |problem| {
            Err(Undelivered {
                problem,
                lettered: true,
            })
        };
        match self.deliver_to(Envelope::Message(message)) {
            Delivery::Queued => Ok(()),
            Delivery::Full => lettered(WireProblem::MailboxFull),
            Delivery::Refused => lettered(WireProblem::RecipientStopped),
        }
    }

    fn path(&self) -> &ActorPath {
        self.core.path()
    }

    fn uid(&self) -> u64 {
        self.core.uid()
    }

    fn system(&self) -> &Arc<SystemShared> {
        self.core.system()
    }

    fn send_system(&self, message: SystemMessage) -> Result<(), SystemMessage> {
        if self.core.lane().is_promise() {
            // A promise has no task to read its system lane. What it hears is the
            // end of the remote target it watches for a slow ask: the ask fails.
            if let SystemMessage::Terminated(target) = message {
                use crate::actor::promise::Refusal;
                // The end of the whole session (the peer given up on, or its
                // system gone) is `Unreachable`, as the ask's own wait says (S44).
                let session_over = target.outbox().is_some_and(|outbox| outbox.session_over());
                self.user.refuse_answer(if session_over {
                    Refusal::Unreachable
                } else {
                    Refusal::TargetTerminated
                });
            }
            return Ok(());
        }
        self.core.lane().push(message)?;
        self.user.wake();
        Ok(())
    }

    fn request_stop(&self) {
        self.core.lane().request_stop();
        self.user.wake();
    }

    fn is_stopping(&self) -> bool {
        match self.owner() {
            Some(owner) => owner.is_stopping(),
            None => self.core.is_stopping(),
        }
    }

    fn has_ended(&self) -> bool {
        if self.core.lane().is_remote() {
            // Another system's actor: its end is known here as a watch's
            // `Terminated`; a ref whose session ended names nothing any more.
            return self
                .user
                .outbox()
                .is_none_or(|outbox| outbox.session_over());
        }
        match self.owner() {
            Some(owner) => owner.has_ended(),
            None => self.core.lane().is_closed(),
        }
    }

    fn end_notice(&self) -> Option<Arc<Notify>> {
        match self.owner() {
            Some(owner) => owner.end_notice(),
            None => self.core.lane().end_notice(),
        }
    }

    fn wake(&self) {
        self.user.wake();
    }

    fn request_lost(&self) {
        self.request_refused(crate::actor::promise::Refusal::Unreachable);
    }

    fn request_refused(&self, refusal: crate::actor::promise::Refusal) {
        if self.core.lane().is_promise() {
            self.user.refuse_answer(refusal);
        }
    }

    fn outbox(&self) -> Option<Arc<dyn crate::mailbox::Outbox>> {
        if !self.core.lane().is_remote() {
            return None;
        }
        self.user.outbox()
    }

    fn owner(&self) -> Option<AnyActorRef> {
        // Only an adapter's or a narrowed ref's lane is asked (it takes the lane's
        // lock).
        if !self.core.is_adapter() && !self.core.lane().is_narrowed() {
            return None;
        }
        self.user.adapter_owner()
    }

    fn local(&self) -> Option<&CellCore> {
        Some(&self.core)
    }
}

/// A reference to an actor whose protocol is `P`.
///
/// It hashes and compares by the actor's identity (address, path, uid) only, so it is
/// a sound key for a map or a set. Clippy's `mutable_key_type` lint sees the mailbox
/// behind it and cannot tell; add `ignore-interior-mutability = ["tapio::ActorRef",
/// "tapio::AnyActorRef"]` to your `clippy.toml`.
///
/// # Examples
///
/// ```
/// use tapio::prelude::*;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let system = ActorSystem::new("refs")?;
/// let (seen, mut rx) = tokio::sync::mpsc::unbounded_channel();
/// let echo = system.spawn(
///     Behaviors::receive_message(move |n: u64| {
///         let _ = seen.send(n);
///     }),
///     "echo",
/// )?;
/// echo.tell(42_u64);
/// assert_eq!(rx.recv().await, Some(42));
/// assert_eq!(echo.path().to_string(), "/user/echo");
/// assert!(echo.to_string().starts_with("tapio://refs/user/echo#"));
/// system.terminate().await;
/// # Ok(())
/// # }
/// ```
pub struct ActorRef<P: Message> {
    target: Target<P>,
}

/// What a ref reaches. A promise (an ask's reply ref) is a cell too, one without a
/// task whose lane takes a single answer, so it is an `ActorRef` like any other and a
/// ref stays one pointer wide.
enum Target<P: Message> {
    Local(Arc<LocalCell<P>>),
}

impl<P: Message> ActorRef<P> {
    pub(crate) fn local(cell: Arc<LocalCell<P>>) -> Self {
        Self {
            target: Target::Local(cell),
        }
    }

    /// Send a message. Never blocks, never fails: a message the actor can no longer
    /// take becomes a [`DeadLetter`](crate::DeadLetter) on the system's event stream.
    /// It may be called from any thread, one a tokio runtime drives or not: the
    /// actor, and for a peer's actor the connection that dials it, run on the
    /// runtime the system was built in.
    ///
    /// Only messages the protocol accepts compile:
    ///
    /// ```compile_fail
    /// use tapio::prelude::*;
    /// #[message] pub struct Shelf;
    /// fn send(counter: ActorRef<u64>) {
    ///     counter.tell(Shelf); // error: `u64` does not accept `Shelf`
    /// }
    /// ```
    #[inline]
    pub fn tell<M>(&self, message: M)
    where
        M: Message,
        P: Accepts<M>,
    {
        self.deliver(P::wrap(message));
    }

    #[inline]
    pub(crate) fn deliver(&self, message: P) {
        self.try_deliver(message);
    }

    /// Refuse the request this ref (an ask's promise) is the answer to: the ask
    /// fails at once with `refusal`. A ref to an actor has nothing to refuse.
    pub(crate) fn refuse_answer(&self, refusal: crate::actor::promise::Refusal) {
        match &self.target {
            Target::Local(cell) => cell.user.refuse_answer(refusal),
        }
    }

    /// Deliver a message; `false` if the target could not take it (it became a dead
    /// letter).
    #[inline]
    pub(crate) fn try_deliver(&self, message: P) -> bool {
        match &self.target {
            Target::Local(cell) => cell.deliver(Envelope::Message(message)),
        }
    }

    /// [`try_deliver`](Self::try_deliver), saying why a message was not queued.
    pub(crate) fn deliver_to(&self, message: P) -> Delivery {
        match &self.target {
            Target::Local(cell) => cell.deliver_to(Envelope::Message(message)),
        }
    }

    /// Queue `work` to run inside the actor, on its user lane, in order with its
    /// messages: `Ok(Some(message))` is then handled as `message`, `Ok(None)` is
    /// nothing more, and an error or a panic is the actor's failure, under its
    /// supervision. `false` if the actor has stopped (the work is dropped unrun).
    pub(crate) fn run_in<F>(&self, work: F) -> bool
    where
        F: FnOnce(&mut crate::actor::context::ActorContext<P>) -> Result<Option<P>, crate::Failure>
            + Send
            + 'static,
    {
        match &self.target {
            Target::Local(cell) => cell.deliver(Envelope::Run(Box::new(Box::new(work)))),
        }
    }

    /// The cell of an actor's own ref, which is always one of this process.
    pub(crate) fn own_cell(&self) -> &Arc<LocalCell<P>> {
        match &self.target {
            Target::Local(cell) => cell,
        }
    }

    /// The cell behind a local ref.
    pub(crate) fn local_cell(&self) -> Option<&Arc<LocalCell<P>>> {
        match &self.target {
            Target::Local(cell) => Some(cell),
        }
    }

    /// The actor's path, such as `/user/counter`; a promise's is
    /// `/system/promises/{uid}`.
    pub fn path(&self) -> &ActorPath {
        self.core().path()
    }

    /// The incarnation uid: two actors spawned one after the other under the same
    /// path have different uids, and a ref names exactly one of them.
    pub fn uid(&self) -> u64 {
        match &self.target {
            Target::Local(cell) => cell.core.uid(),
        }
    }

    /// The shared part of the actor's cell.
    pub(crate) fn core(&self) -> &CellCore {
        match &self.target {
            Target::Local(cell) => &cell.core,
        }
    }

    /// The cell, with its protocol erased.
    pub(crate) fn cell(&self) -> Arc<dyn AnyCell> {
        match &self.target {
            Target::Local(cell) => cell.clone(),
        }
    }

    /// The same actor, with its protocol erased. A promise erased is a stopped actor:
    /// watching it reports `Terminated` at once.
    pub fn erase(&self) -> AnyActorRef {
        let cell = match &self.target {
            Target::Local(cell) => cell.clone() as Arc<dyn AnyCell>,
        };
        AnyActorRef::from_cell(cell)
    }
}

impl<P: Message> Clone for ActorRef<P> {
    #[inline]
    fn clone(&self) -> Self {
        match &self.target {
            Target::Local(cell) => Self::local(cell.clone()),
        }
    }
}

impl<P: Message> PartialEq for ActorRef<P> {
    fn eq(&self, other: &Self) -> bool {
        self.uid() == other.uid() && self.path() == other.path()
    }
}

impl<P: Message> Eq for ActorRef<P> {}

impl<P: Message> Hash for ActorRef<P> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.path().hash(state);
        self.uid().hash(state);
    }
}

impl<P: Message> fmt::Display for ActorRef<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.path().to_uri(), self.uid())
    }
}

impl<P: Message> fmt::Debug for ActorRef<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ActorRef({self})")
    }
}

impl<P: Message> Message for ActorRef<P> {
    type ReplySlot = crate::NoReply;
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::prelude::*;
    use crate::testkit::TestProbe;

    const WAIT: Duration = Duration::from_secs(5);

    // What every actor pays: the bench measured a third kind of `Parent` (a word more
    // in the core, the cell padded from 176 to 192 bytes) at about 70 B more per
    // actor, and a 24-byte envelope at ~25% more per message on one thread.
    #[test]
    fn the_cell_and_the_envelope_keep_their_size() {
        use crate::actor::lanes::Envelope;
        assert!(std::mem::size_of::<super::LocalCell<u64>>() <= 176);
        assert_eq!(std::mem::size_of::<Envelope<u64>>(), 16);
        assert_eq!(std::mem::size_of::<super::Parent>(), 16);
    }

    #[tokio::test]
    async fn work_run_in_an_actor_keeps_its_place_among_the_messages() {
        let system = ActorSystem::new("run-in").unwrap();
        let probe = TestProbe::<u32>::new(&system);
        let seen = probe.actor_ref().clone();
        let actor = system
            .spawn(Behaviors::receive_message(move |n: u32| seen.tell(n)), "a")
            .unwrap();
        let mut probe = probe;
        actor.tell(1);
        assert!(actor.run_in(|_| Ok(Some(2))));
        assert!(actor.run_in(|_| Ok(None)));
        actor.tell(3);
        for expected in 1..=3 {
            assert_eq!(probe.expect_message(WAIT).await, expected);
        }
        system.terminate().await;
    }

    #[tokio::test]
    async fn failing_work_is_the_actor_s_failure_and_a_stopped_actor_runs_none() {
        let system = ActorSystem::new("run-in-fails").unwrap();
        let mut probe = TestProbe::<u32>::new(&system);
        let actor = system
            .spawn(Behaviors::receive_message(|_: u32| {}), "a")
            .unwrap();
        probe.watch(&actor);
        assert!(actor.run_in(|_| panic!("inside the actor")));
        probe.expect_terminated(&actor, WAIT).await;
        assert!(!actor.run_in(|_| Ok(None)));
        system.terminate().await;
    }
}
