//! `deliver_frame`: a frame from a peer, to its recipient or to a dead letter that
//! names the peer.

use crate::actor::{Address, AnyActorRef};
use crate::events::DeadLetterReason;
use crate::system::SystemShared;
use crate::wire::{FrameHeader, WireContext, WireProblem, decode_frame};

/// The names a path's first segment may be: the guardians.
const GUARDIANS: [&str; 2] = ["user", "system"];

impl SystemShared {
    /// Deliver one frame from `peer` (see [`ActorSystem::deliver_frame`]).
    ///
    /// [`ActorSystem::deliver_frame`]: crate::ActorSystem::deliver_frame
    pub(crate) fn deliver_frame(&self, peer: &Address, frame: &[u8]) -> Result<(), WireProblem> {
        let limits = self.wire_limits();
        let (header, payload) = match decode_frame(frame, &limits) {
            Ok(parts) => parts,
            Err(problem) => {
                // Nothing readable names a message or a recipient: the letter goes
                // to the root.
                self.dead_letter_of_type("frame", &self.root_path(), from_peer(peer, &problem));
                return Err(problem);
            }
        };
        let delivered = if self.wire_registry().get(header.key).is_none() {
            Err((WireProblem::UnknownKey(header.key.to_owned()), None))
        } else {
            match self.find(&header) {
                Ok(recipient) => {
                    let ctx = WireContext { limits: &limits };
                    recipient
                        .deliver_wire(header.key, payload, &ctx)
                        .map_err(|problem| (problem, Some(recipient)))
                }
                Err(problem) => Err((problem, None)),
            }
        };
        if let Err((problem, recipient)) = delivered {
            self.refused(peer, &problem, recipient.as_ref(), &header, payload);
            return Err(problem);
        }
        Ok(())
    }

    /// The live actor a header addresses.
    fn find(&self, header: &FrameHeader<'_>) -> Result<AnyActorRef, WireProblem> {
        let invalid = || WireProblem::InvalidPath(header.recipient.to_owned());
        let path = header.recipient.strip_prefix('/').ok_or_else(invalid)?;
        let mut names = path.split('/');
        let guardian = names.next().ok_or_else(invalid)?;
        if !GUARDIANS.contains(&guardian) {
            return Err(invalid());
        }
        let mut current = self
            .guardian_named(guardian)
            .ok_or(WireProblem::NoRecipient)?;
        for name in names {
            crate::actor::validate_name(name).map_err(|_| invalid())?;
            let core = current.local().ok_or(WireProblem::NoRecipient)?;
            current = core.child(name).ok_or(WireProblem::NoRecipient)?;
        }
        if header.uid != 0 && current.uid() != header.uid {
            return Err(WireProblem::StaleIncarnation {
                addressed: header.uid,
                current: current.uid(),
            });
        }
        if current.is_stopping() {
            return Err(WireProblem::RecipientStopped);
        }
        Ok(current)
    }

    /// Publish the dead letter for a frame refused for `problem`, with the message
    /// decoded when its key is registered here.
    fn refused(
        &self,
        peer: &Address,
        problem: &WireProblem,
        recipient: Option<&AnyActorRef>,
        header: &FrameHeader<'_>,
        payload: &[u8],
    ) {
        let reason = from_peer(peer, problem);
        let path = recipient
            .map(|recipient| recipient.path().clone())
            .unwrap_or_else(|| self.root_path());
        let limits = self.wire_limits();
        let decoded = self
            .wire_registry()
            .get(header.key)
            .map(|registration| registration.decode(payload, &limits));
        match decoded {
            Some(Ok(message)) => self.dead_letter_of_payload(message, &path, reason),
            _ => self.dead_letter_of_type("frame", &path, reason),
        }
    }
}

/// The reason of a dead letter refused from `peer` for `problem`.
fn from_peer(peer: &Address, problem: &WireProblem) -> DeadLetterReason {
    DeadLetterReason::FromPeer {
        peer: peer.clone(),
        problem: problem.clone(),
    }
}
