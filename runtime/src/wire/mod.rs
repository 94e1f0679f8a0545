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

mod deliver;
mod depth;
mod frame;
mod refs;
pub(crate) use self::refs::is_decoding;
mod registry;

use std::fmt;

pub(crate) use self::deliver::{
    Undelivered, deliver_frame, deliver_parts, deliver_to_known, frame_lost, refuse_undecodable,
};
pub(crate) use self::frame::decode_frame;
pub use self::frame::{FrameHeader, WireLimits, encode_frame, encode_message_frame};
pub use self::refs::ResolveError;
pub(crate) use self::refs::{Exported, Routes, noting_promise, resolve_in_context};
pub use self::registry::{Registration, Registry, RegistryBuilder, RegistryError};

use crate::message::Message;

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

/// What the receiving side found wrong with a frame or its message: the reason of a
/// dead letter from a peer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WireProblem {
    /// The length prefix announces more than [`WireLimits::max_frame`].
    FrameTooLarge {
        /// What the prefix announced.
        announced: u64,
        /// The limit.
        max: usize,
    },
    /// The frame is shorter than its prefix says, or longer.
    BadLength {
        /// What the prefix announced.
        announced: u64,
        /// The bytes that followed it.
        received: usize,
    },
    /// The header could not be read.
    UnreadableHeader(String),
    /// The recipient's path is not a valid actor path.
    InvalidPath(String),
    /// The wire key is not registered here.
    UnknownKey(String),
    /// The payload did not decode as the key's type.
    Undecodable {
        /// The key.
        key: String,
        /// What the decoder said: the type's own words when its `Deserialize`
        /// refused a value (a `custom` error, `invalid_value`, an unknown variant).
        error: String,
    },
    /// A message (or a header) this side could not encode: serde refused it.
    Unencodable {
        /// The key.
        key: String,
        /// What the encoder said.
        error: String,
    },
    /// The payload decoded, and bytes were left after it.
    TrailingBytes {
        /// The key.
        key: String,
        /// How many.
        left: usize,
    },
    /// The payload is nested deeper than [`WireLimits::max_depth`].
    TooDeep {
        /// The key.
        key: String,
        /// The limit.
        max: usize,
    },
    /// No actor lives at the recipient's path.
    NoRecipient,
    /// The recipient has stopped.
    RecipientStopped,
    /// The recipient at that path is a later incarnation than the one addressed.
    StaleIncarnation {
        /// The uid the frame addressed.
        addressed: u64,
        /// The uid of the actor there now.
        current: u64,
    },
    /// The recipient's protocol does not accept the key's type.
    NotAccepted(String),
    /// The recipient's bounded mailbox was full and its overflow strategy refused
    /// the message: its dead letter is the mailbox's own (`MailboxFull`), and a
    /// request's ask fails at once on the asking system.
    MailboxFull,
    /// The recipient is a message adapter, and the frame was a request: an adapter
    /// is never asked, and the ask fails at once on the asking system.
    AdapterAsked,
}

impl fmt::Display for WireProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FrameTooLarge { announced, max } => {
                write!(f, "a frame of {announced} bytes is over the limit of {max}")
            }
            Self::BadLength {
                announced,
                received,
            } => write!(
                f,
                "the frame announced {announced} bytes and {received} followed"
            ),
            Self::UnreadableHeader(error) => write!(f, "the frame's header is unreadable: {error}"),
            Self::InvalidPath(path) => write!(f, "{path:?} is not an actor path"),
            Self::UnknownKey(key) => write!(f, "the wire key {key:?} is not registered here"),
            Self::Undecodable { key, error } => {
                write!(f, "the payload does not decode as {key:?}: {error}")
            }
            Self::Unencodable { key, error } => {
                write!(f, "a {key:?} message could not be encoded: {error}")
            }
            Self::TrailingBytes { key, left } => {
                write!(f, "{left} bytes were left after the {key:?} payload")
            }
            Self::TooDeep { key, max } => {
                write!(f, "the {key:?} payload is nested deeper than {max} levels")
            }
            Self::NoRecipient => f.write_str("no actor lives at that path"),
            Self::RecipientStopped => f.write_str("the recipient has stopped"),
            Self::StaleIncarnation { addressed, current } => write!(
                f,
                "it addressed incarnation {addressed}, and the actor there now is {current}"
            ),
            Self::NotAccepted(key) => {
                write!(f, "the recipient's protocol does not accept {key:?}")
            }
            Self::MailboxFull => f.write_str("the recipient's bounded mailbox was full"),
            Self::AdapterAsked => f.write_str(
                "the recipient is a message adapter, which is never asked: ask its owner",
            ),
        }
    }
}

impl std::error::Error for WireProblem {}

/// What decoding a payload may use: the limits, and where a request's answer goes.
/// Generated code only.
#[doc(hidden)]
#[derive(Debug)]
pub struct WireContext<'a> {
    /// The limits in force.
    pub limits: &'a WireLimits,
    /// The URI of where a request's answer goes, from the frame's header.
    pub reply_to: Option<&'a str>,
}

/// A message encoded for a link: what `Message::encode_wire` gives. Generated code
/// only.
#[doc(hidden)]
#[derive(Debug)]
pub struct Encoded {
    /// The wire key.
    pub key: &'static str,
    /// The postcard payload.
    pub payload: Vec<u8>,
    /// Where a request's answer goes.
    pub reply_to: Option<String>,
}

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
