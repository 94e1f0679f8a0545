//! The lane of a ref to an actor of another system: its messages are encoded and
//! queued on the association with that system. It implements the mailbox's seam
//! for a lane that is not local ([`Outbox`]); the mailbox never names what is here.
//!
//! A remote ref is a task-less cell (`CellCore::remote`, `Parent::System`) with a
//! closed system lane of kind `Remote`, in no parent's table, whose user lane holds a
//! `RemoteSlot` (as the mailbox's `Outbox`): the peer's address, the actor's path there as text, its uid, and the
//! association it was resolved into. Where a remote target differs, the code asks its
//! lane: `UserLane::send_slow` lets go of the lock and calls `Outbox::send`;
//! `offer` awaits `Association::offer` (room in the outbound queue); `Effects::watch`
//! and `unwatch` go over the link (`RemoteSlot::watch`); `has_ended` is the end of the
//! session, after which sends dead-letter and the ref must be resolved again.
//!
//! # A ref to a peer's promise dropped unused
//!
//! A slot for a path under `/system/promises/` (a peer's ask) that is dropped with
//! nothing sent through it, no refusal, and not written into a message (`used`) tells
//! the asker `Refusal::Unanswered` or `TargetTerminated`, so a remote ask fails as soon
//! as a local one would. Only to a peer this system is linked with
//! (`Association::has_been_used`), and only for a ref decoded from a frame delivered to
//! an actor here: the decode context gives its recipient's uid (`delivered_to`), and a
//! `Weak` to the recipient for refs delivered with a request. A ref dropped while a
//! decode is under way (the frame was refused, and the refusal says why), or decoded
//! for a dead letter's copy, says nothing. At the drop, `UNUSED_PROMISE` (set by a
//! stopping actor while it letters what it holds: `Stopped(uid)`) and the recipient
//! decide: gone or stopping is `TargetTerminated`; parked is `Unanswered`; in the middle
//! of a turn, the refusal is handed to the cell as an `OwedRefusal` in
//! `SystemMessage::TurnOutcome`, sent once the turn's outcome is carried out. None of
//! this is on the message path.
//!
//! Layer: network. Implements the mailbox's `Outbox`; imports anything below.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use crate::actor::SystemShared;
use crate::actor::promise::Refusal;
use crate::actor::{AnyActorRef, AnyCell};
use crate::ground::events::DeadLetterReason;
use crate::mailbox::{
    Encode, Outbox, OutboxWait, OwedTurn, SystemMessage, TurnWaiter, UnusedPromise, unused_promise,
};
use crate::net::remote::association::{Association, NotSent};
use crate::net::wire::is_decoding;

/// The lane of a ref to an actor of another system: what is told to it is encoded
/// and queued on the association with that system, in the session the ref was
/// resolved in. With no transport (a system without remote settings), every
/// message is a dead letter that names the peer.
pub(crate) struct RemoteSlot {
    /// The system the actor lives in.
    pub(crate) peer: crate::ground::path::Address,
    /// The actor's path there.
    pub(crate) path: String,
    /// Its incarnation.
    pub(crate) uid: u64,
    /// This system, whose links carry the frames.
    pub(crate) system: std::sync::Weak<SystemShared>,
    /// The association (and so the session) the ref is bound to; `None` without a
    /// transport.
    pub(crate) association: Option<Arc<Association>>,
    /// Whether a message went through the ref, a refusal went back, or the ref was
    /// sent on: a ref to a peer's promise dropped with none of these tells the
    /// asker that its request went unanswered (see `Drop`).
    pub(crate) used: AtomicBool,
    /// The uid of the actor of this system that the frame which carried the ref
    /// was delivered to: if that actor stops holding it, the asker hears that its
    /// target stopped. A ref not decoded from a delivered frame starts `used`.
    pub(crate) delivered_to: u64,
    /// That actor, for a ref to a peer's promise delivered to an actor: dropped
    /// unused while the actor is in the middle of a turn (its handler failed, say),
    /// the ref leaves it to the actor to say, once it has carried out what the turn
    /// came to, whether the target stopped (see `Drop`).
    pub(crate) recipient: Option<Weak<dyn AnyCell>>,
}

/// The refusal owed to a peer's ask whose promise ref was dropped unused while the
/// actor the request was delivered to was in the middle of a turn: it waits on that
/// actor's system lane, and the actor sends it once the turn's outcome is carried
/// out (a failure's decision taken), as `TargetTerminated` if it is stopping, else
/// `Unanswered`, as a local asker reads its target's state when it sees its
/// promise dropped. Dropped unsent (the actor ended with it queued), it says that
/// the target stopped.
pub(crate) struct OwedRefusal {
    /// The link to the asker's system; taken when the refusal is sent.
    association: Option<Arc<Association>>,
    /// The promise's path there.
    path: String,
    /// The promise's uid.
    uid: u64,
}

impl std::fmt::Debug for OwedRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwedRefusal")
            .field("path", &self.path)
            .field("uid", &self.uid)
            .finish_non_exhaustive()
    }
}

impl OwedTurn for OwedRefusal {
    /// Send it: the actor the request was delivered to is `stopping`, or not.
    fn send(mut self: Box<Self>, stopping: bool) {
        self.send_now(stopping);
    }
}

impl OwedRefusal {
    fn send_now(&mut self, stopping: bool) {
        let refusal = if stopping {
            Refusal::TargetTerminated
        } else {
            Refusal::Unanswered
        };
        if let (Some(association), Some(payload)) = (self.association.take(), refusal.to_wire()) {
            association.send_refusal(&self.path, self.uid, &payload);
        }
    }
}

impl Drop for OwedRefusal {
    fn drop(&mut self) {
        self.send_now(true);
    }
}

/// The path under which a system exports its asks' promises.
pub(crate) const PROMISES: &str = "/system/promises/";

impl Drop for RemoteSlot {
    /// A ref to a peer's promise that goes away unused was the request's only way
    /// back: the asker hears at once that no answer will come, as a local asker
    /// does, rather than at its deadline. `TargetTerminated` when the actor it was
    /// delivered to stops holding it, or has begun to stop; `Unanswered` when that
    /// actor is between turns (it goes on). Dropped in the middle of its turn (a
    /// handler that drops it, and may fail), the refusal waits on its system lane
    /// (`OwedRefusal`) until the turn's outcome, a failure's decision too, is
    /// carried out.
    fn drop(&mut self) {
        // Dropped while a frame is decoded or delivered: if the frame is refused,
        // its refusal says why.
        if *self.used.get_mut() || !self.path.starts_with(PROMISES) || is_decoding() {
            return;
        }
        // Only to a system this one is linked with: a ref a peer wrote, naming some
        // other address, must not make this system dial there.
        if !self
            .association
            .as_ref()
            .is_some_and(|association| association.has_been_used())
        {
            return;
        }
        let refusal = match unused_promise() {
            UnusedPromise::Stopped(uid) if uid != 0 && uid == self.delivered_to => {
                Refusal::TargetTerminated
            }
            UnusedPromise::Unanswered | UnusedPromise::Stopped(_) => match self.recipient_now() {
                Recipient::Stopping => Refusal::TargetTerminated,
                Recipient::Idle => Refusal::Unanswered,
                Recipient::InTurn(recipient) => {
                    // Its turn may yet decide to stop it (a failed handler dropped
                    // the request): it says which once it has carried that out.
                    let owed = OwedRefusal {
                        association: self.association.take(),
                        path: std::mem::take(&mut self.path),
                        uid: self.uid,
                    };
                    // Refused: its lane has closed since, so it has stopped, and the
                    // refusal handed back says so as it goes.
                    let _ = recipient
                        .send_system(SystemMessage::TurnOutcome(TurnWaiter::Peer(Box::new(owed))));
                    return;
                }
            },
        };
        self.refuse(refusal);
    }
}

/// What the actor a promise ref was delivered to is doing, as the ref is dropped.
enum Recipient {
    /// It has begun to stop, or has ended.
    Stopping,
    /// It waits for something to do, or it is not known (a ref not delivered to an
    /// actor): it dropped the request and goes on.
    Idle,
    /// It is in the middle of a turn, which may yet stop it.
    InTurn(Arc<dyn AnyCell>),
}

impl RemoteSlot {
    fn recipient_now(&self) -> Recipient {
        let Some(recipient) = &self.recipient else {
            return Recipient::Idle;
        };
        let Some(recipient) = recipient.upgrade() else {
            return Recipient::Stopping;
        };
        // Parked first: an actor stops (the flag) before it parks, so a parked one
        // read after shows its stop, if any; one not parked answers for itself.
        match recipient.local() {
            Some(core) if !core.lane().is_parked() => Recipient::InTurn(recipient),
            _ if recipient.is_stopping() => Recipient::Stopping,
            _ => Recipient::Idle,
        }
    }
}

impl Outbox for RemoteSlot {
    /// Without a link, `watcher` hears `Terminated` at once, as for an actor that
    /// has stopped (S41).
    fn watch(&self, watcher: &AnyActorRef, me: &AnyActorRef) {
        match &self.association {
            Some(association) => association.watch(watcher, me, &self.path, self.uid),
            None => {
                let _ = watcher.send_system(SystemMessage::Terminated(me.clone()));
            }
        }
    }

    fn unwatch(&self, watcher: &AnyActorRef, me: &AnyActorRef) {
        if let Some(association) = &self.association {
            association.unwatch(watcher, me, &self.path, self.uid);
        }
    }

    /// Without a link, or for a refusal only the asking side makes, nothing is
    /// sent, and the ask ends as it would have.
    fn refuse(&self, refusal: Refusal) {
        self.mark_used();
        if let (Some(association), Some(payload)) = (&self.association, refusal.to_wire()) {
            association.send_refusal(&self.path, self.uid, &payload);
        }
    }

    /// It was answered through, refused, or written into a message (whoever reads
    /// it there may answer).
    fn mark_used(&self) {
        self.used.store(true, Ordering::Relaxed);
    }

    fn no_link(&self) -> DeadLetterReason {
        DeadLetterReason::NoLink {
            peer: self.peer.clone(),
        }
    }

    fn session_over(&self) -> bool {
        self.association
            .as_ref()
            .is_none_or(|association| association.session().ended().is_some())
    }

    fn session_end(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            if let Some(association) = &self.association {
                association.session().wait_end().await;
            }
        })
    }

    fn send(&self, message_type: &'static str, encode: Encode<'_>) -> Result<(), DeadLetterReason> {
        self.mark_used();
        let sent = self
            .frame(message_type, encode)
            .and_then(|(association, frame, ask)| {
                association
                    .send(frame, true, ask)
                    .map_err(|not_sent| not_sent.reason(&self.peer))
            });
        if let Err(reason) = &sent {
            // An answer that cannot cross (over the frame limit, say) will never
            // reach the promise: its asker hears so at once, as for a request
            // dropped unanswered, rather than wait for its deadline; the answer
            // is this system's dead letter, which says why.
            if matches!(reason, DeadLetterReason::NotEncodable(_))
                && self.path.starts_with(PROMISES)
            {
                self.refuse(Refusal::Unanswered);
            }
        }
        sent
    }

    fn offer(
        &self,
        message_type: &'static str,
        encode: Encode<'_>,
    ) -> Result<OutboxWait, DeadLetterReason> {
        let (association, frame, ask) = self.frame(message_type, encode)?;
        let waiting = association.clone().offer(frame, ask);
        let peer = self.peer.clone();
        Ok(Box::pin(async move {
            waiting
                .await
                .map_err(|not_sent: NotSent| not_sent.reason(&peer))
        }))
    }

    #[cfg(test)]
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl RemoteSlot {
    /// The association to send a message through, its frame, and the uid of the
    /// ask's promise the frame carries (0: none); or why it cannot be sent.
    fn frame(
        &self,
        message_type: &'static str,
        encode: Encode<'_>,
    ) -> Result<(&Arc<Association>, Vec<u8>, u64), DeadLetterReason> {
        let system = self.system.upgrade().ok_or_else(|| self.no_link())?;
        let association = self.association.as_ref().ok_or_else(|| self.no_link())?;
        if let Some(end) = association.session().ended() {
            return Err(NotSent::Ended(end).reason(&self.peer));
        }
        let (encoded, ask) = crate::net::wire::noting_promise(encode);
        let encoded = match encoded {
            Some(Ok(encoded)) => encoded,
            Some(Err(error)) => return Err(DeadLetterReason::NotEncodable(error)),
            None => {
                let why = format!("`{message_type}` is not registered for the wire");
                return Err(DeadLetterReason::NotEncodable(why));
            }
        };
        let header = crate::net::wire::FrameHeader {
            key: encoded.key,
            recipient: &self.path,
            uid: self.uid,
            reply_to: encoded.reply_to.as_deref(),
        };
        let frame =
            crate::net::wire::encode_frame(&header, &encoded.payload, &system.wire_limits())
                .map_err(|problem| DeadLetterReason::NotEncodable(problem.to_string()))?;
        Ok((association, frame, ask))
    }
}
