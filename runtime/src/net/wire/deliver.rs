//! `deliver_frame`: a frame from a peer, to its recipient or to a dead letter that
//! names the peer.
//!
//! 1. `deliver_to_known`: a tell (no reply-to) whose key is in the registry and whose
//!    recipient is in the route cache goes without reading the header's text: both are
//!    keyed by bytes this system wrote, so no UTF-8 check. The transport's reader takes
//!    the same path.
//! 2. Otherwise the header is read whole, and `deliver_parts` checks the key, then a
//!    request's reply-to (`refs::check_reply_to`; a reply-to that could go nowhere is
//!    refused as `UnreadableHeader`, S37), then finds the recipient
//!    (`SystemShared::find_path`: the route cache, else a walk from the guardian;
//!    `/system/promises/{uid}` goes to the exported promises, `$adapter-{uid}` under
//!    its owner to the exported adapters, another `$` name to the anonymous child that
//!    holds it), and calls `deliver_wire` inside the system's decode context.
//! 3. Each failure is a `DeadLetterReason::FromPeer { peer, problem }`, the message
//!    decoded into the letter when its key is registered, unless the mailbox lettered it
//!    already (`Undelivered::lettered`: a full mailbox, an actor that stopped as it
//!    came). A frame for a promise that is gone is `AskEnded`, or `AlreadyAnswered` when
//!    a frame answered that uid lately; a uid this system never issued
//!    (`SystemShared::issued_uid`) is the peer's mistake.
//! 4. A request refused where a local ask would fail at once goes back to the asker as a
//!    `!refused` frame (`refuse_ask`, `Refusal::of_problem`,
//!    `SystemShared::refuse_remote_ask`): a state that does not handle it, a full
//!    mailbox, an adapter asked, a recipient that is not there, or a request that could
//!    not be delivered at all (`Refusal::Undeliverable`, the `WireProblem` after the
//!    tag). The asking side hands it to the exported promise
//!    (`AnyCell::request_refused`), and the ask fails with the matching `AskError`.

use std::sync::Arc;

use crate::actor::SystemShared;
use crate::actor::promise::Refusal;
use crate::actor::{ActorPath, Address, AnyActorRef, validate_name};
use crate::ground::events::DeadLetterReason;
use crate::net::wire::frame::peek_tell;
use crate::net::wire::refs::{check_reply_to, decoding_into};
use crate::net::wire::{
    FrameHeader, Undelivered, WireContext, WireLimits, WireProblem, decode_frame,
};

/// Deliver one frame from `peer` (see [`ActorSystem::deliver_frame`]).
///
/// [`ActorSystem::deliver_frame`]: crate::ActorSystem::deliver_frame
pub(crate) fn deliver_frame(
    system: &Arc<SystemShared>,
    peer: &Address,
    frame: &[u8],
) -> Result<(), WireProblem> {
    let limits = system.wire_limits();
    if let Some(delivered) = deliver_to_known(system, peer, frame, &limits) {
        return delivered;
    }
    let (header, payload) = match decode_frame(frame, &limits) {
        Ok(parts) => parts,
        Err(problem) => {
            refuse_undecodable(system, peer, &problem);
            return Err(problem);
        }
    };
    deliver_parts(system, peer, &header, payload)
}

/// The frame most often seen, delivered without reading its header's text: a tell
/// whose key is registered here and whose recipient's path is in the route cache.
/// Both are found by their bytes among text this system wrote, so neither needs a
/// UTF-8 check. `None` for any other frame, which `deliver_frame` reads whole; a
/// frame refused here is refused as `deliver_parts` refuses it.
pub(crate) fn deliver_to_known(
    system: &Arc<SystemShared>,
    peer: &Address,
    frame: &[u8],
    limits: &WireLimits,
) -> Option<Result<(), WireProblem>> {
    let tell = peek_tell(frame, limits)?;
    let key = system.wire_registry().get_bytes(tell.key)?.key();
    let recipient = system
        .cached_route(tell.recipient)
        .filter(|found| tell.uid == 0 || found.uid() == tell.uid)?;
    let ctx = WireContext {
        limits,
        reply_to: None,
    };
    let Err(Undelivered { problem, lettered }) = decoding_into(system, Some(&recipient), || {
        recipient.deliver_wire(key, tell.payload, &ctx)
    }) else {
        return Some(Ok(()));
    };
    if lettered {
        return Some(Err(problem));
    }
    let header = FrameHeader {
        key,
        // A cached path's text: UTF-8. The letter names the recipient's own path.
        recipient: std::str::from_utf8(tell.recipient).unwrap_or_default(),
        uid: tell.uid,
        reply_to: None,
    };
    refused(
        system,
        peer,
        &problem,
        Some(&recipient),
        &header,
        tell.payload,
    );
    Some(Err(problem))
}

/// The dead letter of a frame from `peer` that could not be read: nothing readable
/// names a message or a recipient, so the letter goes to the root.
pub(crate) fn refuse_undecodable(
    system: &Arc<SystemShared>,
    peer: &Address,
    problem: &WireProblem,
) {
    system.dead_letter_of_type("frame", &system.root_path(), from_peer(peer, problem));
}

/// Deliver a frame from `peer` whose header has been read.
pub(crate) fn deliver_parts(
    system: &Arc<SystemShared>,
    peer: &Address,
    header: &FrameHeader<'_>,
    payload: &[u8],
) -> Result<(), WireProblem> {
    let limits = system.wire_limits();
    let delivered = if system.wire_registry().get(header.key).is_none() {
        Err((WireProblem::UnknownKey(header.key.to_owned()).into(), None))
    } else if let Some(Err(problem)) = header.reply_to.map(check_reply_to) {
        // A request whose answer could go nowhere is not delivered as a tell.
        Err((problem.into(), None))
    } else {
        match system.find_path(header.recipient, header.uid) {
            // An adapter is never asked (S28): the request goes nowhere.
            Ok(recipient) if header.reply_to.is_some() && recipient.owner().is_some() => {
                Err((WireProblem::AdapterAsked.into(), Some(recipient)))
            }
            Ok(recipient) => {
                let ctx = WireContext {
                    limits: &limits,
                    reply_to: header.reply_to,
                };
                // Refs inside the payload decode into this system.
                decoding_into(system, Some(&recipient), || {
                    recipient.deliver_wire(header.key, payload, &ctx)
                })
                .map_err(|undelivered| (undelivered, Some(recipient)))
            }
            Err(problem) => Err((problem.into(), None)),
        }
    };
    let Err((Undelivered { problem, lettered }, recipient)) = delivered else {
        return Ok(());
    };
    if !lettered {
        refused(system, peer, &problem, recipient.as_ref(), header, payload);
    }
    if let Some(reply_to) = header.reply_to {
        refuse_ask(system, reply_to, &problem);
    }
    Err(problem)
}

/// A request refused for `problem` whose answer goes to `reply_to`, a promise on
/// the asking system: that system is told why, and its ask fails at once, as a
/// local one would (a full mailbox, an adapter asked, a stopped target), or with
/// the problem that kept the request from its recipient (a key not registered
/// here, a message the recipient does not accept, a payload that did not decode),
/// rather than at its deadline.
fn refuse_ask(system: &Arc<SystemShared>, reply_to: &str, problem: &WireProblem) {
    if let Some(refusal) = Refusal::of_problem(problem) {
        system.refuse_remote_ask(reply_to, refusal);
    }
}

/// Publish the dead letter for a frame refused for `problem`, with the message
/// decoded when its key is registered here and it decodes.
fn refused(
    system: &Arc<SystemShared>,
    peer: &Address,
    problem: &WireProblem,
    recipient: Option<&AnyActorRef>,
    header: &FrameHeader<'_>,
    payload: &[u8],
) {
    // An answer for a promise that is gone came after its ask ended (it timed out,
    // or was dropped): a late answer, as it is locally (S22), not a peer's mistake.
    // One for a promise a frame answered already is a second answer, as it is
    // locally. A uid this system never handed out names no promise that ever was:
    // that frame is the peer's (S37).
    let promise = header
        .recipient
        .strip_prefix("/system/promises/")
        .filter(|_| *problem == WireProblem::NoRecipient)
        .and_then(|uid| uid.parse::<u64>().ok())
        .filter(|uid| system.issued_uid(*uid));
    let reason = match promise {
        Some(uid) if system.promise_was_answered(uid) => DeadLetterReason::AlreadyAnswered,
        Some(_) => DeadLetterReason::AskEnded,
        None => from_peer(peer, problem),
    };
    // Where nobody was found, the letter names the path the frame addressed.
    let path = recipient.map_or_else(
        || addressed(system.root_path(), header.recipient),
        |recipient| recipient.path().clone(),
    );
    letter_of_frame(system, header, payload, &path, reason);
}

/// The dead letter of a frame with `header` and `payload` for `path`: with its
/// message when its key is registered here and it decodes, else by type alone.
fn letter_of_frame(
    system: &Arc<SystemShared>,
    header: &FrameHeader<'_>,
    payload: &[u8],
    path: &ActorPath,
    reason: DeadLetterReason,
) {
    let limits = system.wire_limits();
    let decoded = system
        .wire_registry()
        .get(header.key)
        .map(|registration| decoding_into(system, None, || registration.decode(payload, &limits)));
    match decoded {
        Some(Ok(message)) => system.dead_letter_of_payload(message, path, reason),
        _ => system.dead_letter_of_type("frame", path, reason),
    }
}

/// A frame this system encoded for `peer` went nowhere, for `reason`: its dead
/// letter names the actor it was for, on `peer`, and carries its message again.
pub(crate) fn frame_lost(
    system: &Arc<SystemShared>,
    peer: &Address,
    frame: &[u8],
    reason: DeadLetterReason,
) {
    let root = ActorPath::root(peer.clone());
    match decode_frame(frame, &system.wire_limits()) {
        Ok((header, payload)) => {
            let path = addressed(root, header.recipient);
            letter_of_frame(system, &header, payload, &path, reason);
        }
        Err(_) => system.dead_letter_of_type("frame", &root, reason),
    }
}

/// The path `recipient` (as a frame writes it, `/user/orders`) below `root`, or
/// `root` itself when it is not a path of valid names (it came from a peer): a
/// dead letter names what was addressed, never text it cannot stand behind.
fn addressed(root: ActorPath, recipient: &str) -> ActorPath {
    let Some(names) = recipient.strip_prefix('/') else {
        return root;
    };
    // Generated names (`$a1`, `$adapter-2`) and promise uids are valid names but
    // for their `$`, which only the runtime gives.
    let valid = |name: &str| validate_name(name.strip_prefix('$').unwrap_or(name)).is_ok();
    if names.is_empty() || !names.split('/').all(valid) {
        return root;
    }
    names.split('/').fold(root, |path, name| path.child(name))
}

/// The reason of a dead letter refused from `peer` for `problem`.
fn from_peer(peer: &Address, problem: &WireProblem) -> DeadLetterReason {
    DeadLetterReason::FromPeer {
        peer: peer.clone(),
        problem: problem.clone(),
    }
}

impl crate::ActorSystem {
    /// Deliver a frame that came from `peer`: the receiving half of a link (S37).
    /// The frame's length prefix is checked against [`WireLimits::max_frame`](crate::net::wire::WireLimits::max_frame)
    /// before anything else is read; its key is looked up in the system's registry;
    /// the recipient is found by path and incarnation, and the payload decoded into
    /// its protocol.
    ///
    /// # Errors
    ///
    /// The [`WireProblem`](crate::net::wire::WireProblem) that kept it from its recipient.
    /// The frame is then also a dead letter whose reason,
    /// [`DeadLetterReason::FromPeer`](crate::DeadLetterReason::FromPeer), names
    /// `peer`; nothing else happens: no panic, no failure, nothing stops.
    pub fn deliver_frame(
        &self,
        peer: &Address,
        frame: &[u8],
    ) -> Result<(), crate::net::wire::WireProblem> {
        deliver_frame(self.shared(), peer, frame)
    }
}
