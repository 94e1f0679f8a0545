//! The wire: what a byte from another system may become (S35–S37).
//!
//! A message crosses a link only if its type is registered under a stable **wire
//! key**: `#[message(remote = "shop.order.v1")]` derives its serde impls (through
//! tapio's re-exports: a program adds no serde or postcard dependency of its own) and
//! registers it at link time. A key that arrives on a frame is looked up in the
//! registry; nothing is ever looked up by a type path that came off a socket. A
//! program that lists its types by hand builds a [`Registry`] with
//! [`Registry::builder`].
//!
//! A **frame** is a big-endian `u32` length, checked against
//! [`WireLimits::max_frame`] before anything is allocated, then a postcard
//! [`FrameHeader`] (the wire key, the recipient's path and incarnation uid, and where
//! a request's answer goes) and the postcard payload, which must be consumed exactly.
//! Payloads nested deeper than [`WireLimits::max_depth`] are refused before they can
//! exhaust the stack.
//!
//! [`ActorSystem::deliver_frame`](crate::ActorSystem::deliver_frame) is the receiving
//! half. Everything a peer can get wrong (an unreadable frame, an unknown key, a
//! payload that does not decode, a recipient that is not there or has stopped, a
//! stale incarnation, a message the recipient's protocol does not accept) becomes a
//! dead letter whose reason, [`DeadLetterReason::FromPeer`], names the peer and the
//! [`WireProblem`]. Nothing a peer sends panics or takes anything down.
//!
//! [`DeadLetterReason::FromPeer`]: crate::DeadLetterReason::FromPeer

// Layer: network (rank 4, `net/`, with remote/): frames, the registry, refs on the wire,
// delivery. Imports every layer below; the codec's vocabulary is in `codec.rs`.

mod deliver;
mod depth;
mod frame;
mod refs;
pub(crate) use self::refs::is_decoding;
mod registry;

pub(crate) use self::deliver::{
    deliver_frame, deliver_parts, deliver_to_known, frame_lost, refuse_undecodable,
};
pub(crate) use self::frame::decode_frame;
pub use self::frame::{FrameHeader, encode_frame, encode_message_frame};
pub use self::refs::ResolveError;
pub(crate) use self::refs::{Exported, Routes, noting_promise};
pub use self::registry::{Registration, Registry, RegistryBuilder, RegistryError};
pub(crate) use crate::ground::codec::Undelivered;
#[doc(hidden)]
pub use crate::ground::codec::{Encoded, WireContext};
pub use crate::ground::codec::{WireLimits, WireProblem};

use crate::ground::message::Message;

/// A message type registered for the wire under a stable key. `#[message(remote =
/// "key")]` implements it; the key is what frames carry, so keep it stable across
/// versions of a program (`"shop.order.v1"`) and change it when the type changes
/// incompatibly.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not registered for the wire",
    label = "a message that crosses a link needs a wire key",
    note = "declare it with `#[message(remote = \"a.stable.key\")]`: both ends of a link must register what they exchange"
)]
pub trait WireMessage:
    Message + serde::Serialize + for<'de> serde::Deserialize<'de> + Sized
{
    /// The key frames carry for this type.
    const KEY: &'static str;
}

/// A protocol every message of which is registered for the wire: the only kind a
/// remote ref can be resolved for (S35). `#[actor]` implements it for a protocol
/// enum when all its handled types are [`WireMessage`]s; `#[message(remote)]` for
/// the message itself. (Each impl is the only one for its type, so an error names
/// the message that is not registered rather than the protocol.)
#[diagnostic::on_unimplemented(
    message = "the protocol `{Self}` cannot cross a link: not all of its messages are registered for the wire",
    label = "used where a remote ref is needed",
    note = "register every message the actor handles with `#[message(remote = \"a.stable.key\")]`"
)]
pub trait RemoteProtocol<Check = ()>: Message {}

/// `Self` is registered for the wire: the bound `#[actor]` puts on its protocol's
/// [`RemoteProtocol`] impl, one per handled message, so that the error names the
/// message that is not registered. (`Check` keeps the bound from being checked
/// where the impl is written, for a protocol that never crosses a link.)
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not registered for the wire, so a protocol that handles it cannot cross a link",
    label = "needs a wire key",
    note = "declare it with `#[message(remote = \"a.stable.key\")]`: a remote ref needs every message of its protocol registered"
)]
pub trait Registered<Check> {}

impl<Check, M: WireMessage> Registered<Check> for M {}

/// `message` encoded under its key: what `#[message(remote)]` generates for
/// `Message::encode_wire`.
#[doc(hidden)]
pub fn encode_as<M: WireMessage>(message: &M) -> Result<Encoded, String> {
    Ok(Encoded {
        key: M::KEY,
        payload: postcard::to_allocvec(message).map_err(|error| error.to_string())?,
        reply_to: None,
    })
}

/// `encoded` with the URI of where its answer goes: what a protocol enum's
/// `encode_wire` generates.
#[doc(hidden)]
pub fn with_reply(
    encoded: Option<Result<Encoded, String>>,
    reply_to: Option<String>,
) -> Option<Result<Encoded, String>> {
    encoded.map(|encoded| {
        encoded.map(|mut encoded| {
            encoded.reply_to = reply_to;
            encoded
        })
    })
}

/// Decode `bytes` as an `M` when `key` is `M`'s key: what `#[message(remote)]`
/// generates for `Message::decode_wire`. Another key is not accepted.
#[doc(hidden)]
pub fn decode_if<M: WireMessage>(
    key: &str,
    bytes: &[u8],
    ctx: &WireContext<'_>,
) -> Result<M, WireProblem> {
    if key != M::KEY {
        return Err(WireProblem::NotAccepted(key.to_owned()));
    }
    decode::<M>(key, bytes, ctx.limits)
}

/// Decode exactly `bytes` as a `T`, within the depth limit.
pub(crate) fn decode<T: for<'de> serde::Deserialize<'de>>(
    key: &str,
    bytes: &[u8],
    limits: &WireLimits,
) -> Result<T, WireProblem> {
    let mut deserializer = postcard::Deserializer::from_bytes(bytes);
    depth::take_tripped();
    let _ = depth::take_custom();
    let value = depth::deserialize_bounded(&mut deserializer, limits.max_depth).map_err(
        |error: postcard::Error| {
            // The type's own words, where postcard has only "custom error".
            let custom = depth::take_custom();
            if depth::take_tripped() {
                WireProblem::TooDeep {
                    key: key.to_owned(),
                    max: limits.max_depth,
                }
            } else {
                WireProblem::Undecodable {
                    key: key.to_owned(),
                    error: custom.unwrap_or_else(|| error.to_string()),
                }
            }
        },
    )?;
    let left = deserializer
        .finalize()
        .map_err(|error| WireProblem::Undecodable {
            key: key.to_owned(),
            error: error.to_string(),
        })?
        .len();
    if left > 0 {
        return Err(WireProblem::TrailingBytes {
            key: key.to_owned(),
            left,
        });
    }
    Ok(value)
}

/// Encode `message` as a postcard payload.
///
/// # Errors
///
/// What serde reports for a value it cannot encode (a map whose length is unknown,
/// for one).
pub fn encode_payload<M: WireMessage>(message: &M) -> Result<Vec<u8>, postcard::Error> {
    postcard::to_allocvec(message)
}
