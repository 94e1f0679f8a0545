//! The lane of a ref to an actor of another system: its messages are encoded and
//! queued on the association with that system.

use std::sync::Arc;

use crate::events::DeadLetterReason;
use crate::mailbox::{Envelope, Sent};
use crate::message::Message;
use crate::system::SystemShared;

/// The lane of a ref to an actor of another system: what is told to it is encoded
/// and queued on the association with that system, in the session the ref was
/// resolved in. With no transport (a system without remote settings), every
/// message is a dead letter that names the peer.
pub(crate) struct RemoteSlot {
    /// The system the actor lives in.
    pub(crate) peer: crate::actor::Address,
    /// The actor's path there.
    pub(crate) path: String,
    /// Its incarnation.
    pub(crate) uid: u64,
    /// This system, whose links carry the frames.
    pub(crate) system: std::sync::Weak<SystemShared>,
    /// The association (and so the session) the ref is bound to; `None` without a
    /// transport.
    pub(crate) association: Option<Arc<crate::remote::association::Association>>,
}

/// The type a dead letter of `message` would name.
fn message_type<P: Message>(message: &P) -> &'static str {
    let _ = message;
    std::any::type_name::<P>()
}

impl RemoteSlot {
    /// `watcher` watches this ref's actor, over the link (S41); without a link, it
    /// hears `Terminated` at once, as for an actor that has stopped.
    pub(crate) fn watch(
        &self,
        watcher: &crate::actor::AnyActorRef,
        me: &crate::actor::AnyActorRef,
    ) {
        match &self.association {
            Some(association) => association.watch(watcher, me, &self.path, self.uid),
            None => {
                let _ = watcher.send_system(crate::mailbox::SystemMessage::Terminated(me.clone()));
            }
        }
    }

    /// `watcher` no longer watches this ref's actor.
    pub(crate) fn unwatch(
        &self,
        watcher: &crate::actor::AnyActorRef,
        me: &crate::actor::AnyActorRef,
    ) {
        if let Some(association) = &self.association {
            association.unwatch(watcher, me, &self.path, self.uid);
        }
    }

    /// The request this ref (a promise on the peer) is the answer to was refused
    /// here: say so to the peer, whose ask then fails at once. Without a link, or
    /// for a refusal only the asking side makes, nothing is sent, and the ask ends
    /// as it would have.
    pub(crate) fn refuse(&self, refusal: crate::actor::promise::Refusal) {
        if let (Some(association), Some(payload)) = (&self.association, refusal.to_wire()) {
            association.send_refusal(&self.path, self.uid, &payload);
        }
    }

    /// Why a message to this peer goes nowhere.
    pub(crate) fn no_link(&self) -> DeadLetterReason {
        DeadLetterReason::NoLink {
            peer: self.peer.clone(),
        }
    }

    pub(crate) fn send<P: Message>(&self, envelope: Envelope<P>) -> Sent<P> {
        let message = match envelope {
            Envelope::Message(message) => message,
            other => return Sent::Refused(other),
        };
        let sent = self.frame(&message).and_then(|(association, frame, ask)| {
            association
                .send(frame, true, ask)
                .map_err(|not_sent| not_sent.reason(&self.peer))
        });
        match sent {
            Ok(()) => Sent::Queued,
            Err(reason) => Sent::Unwanted(message, reason),
        }
    }

    /// The association to send `message` through, its frame, and the uid of the
    /// ask's promise the frame carries (0: none); or why it cannot be sent.
    pub(crate) fn frame<P: Message>(
        &self,
        message: &P,
    ) -> Result<(&Arc<crate::remote::association::Association>, Vec<u8>, u64), DeadLetterReason>
    {
        let system = self.system.upgrade().ok_or_else(|| self.no_link())?;
        let association = self.association.as_ref().ok_or_else(|| self.no_link())?;
        if let Some(end) = association.session().ended() {
            return Err(crate::remote::association::NotSent::Ended(end).reason(&self.peer));
        }
        let (encoded, ask) = crate::wire::noting_promise(|| message.encode_wire());
        let encoded = match encoded {
            Some(Ok(encoded)) => encoded,
            Some(Err(error)) => return Err(DeadLetterReason::NotEncodable(error)),
            None => {
                let why = format!("`{}` is not registered for the wire", message_type(message));
                return Err(DeadLetterReason::NotEncodable(why));
            }
        };
        let header = crate::wire::FrameHeader {
            key: encoded.key,
            recipient: &self.path,
            uid: self.uid,
            reply_to: encoded.reply_to.as_deref(),
        };
        let frame = crate::wire::encode_frame(&header, &encoded.payload, &system.wire_limits())
            .map_err(|problem| DeadLetterReason::NotEncodable(problem.to_string()))?;
        Ok((association, frame, ask))
    }
}
