//! The codec's vocabulary: what a message needs to say about the wire without
//! depending on it. [`Message`](crate::Message) encodes into an [`Encoded`] and decodes
//! with a [`WireContext`], failing with a [`WireProblem`]; the event stream's dead
//! letters from a peer carry a [`WireProblem`]. The codec itself (frames, the
//! registry, refs on the wire) lives in `wire/`, which re-exports these as
//! `tapio::wire::{WireProblem, WireLimits}`.
//!
//! Layer: ground. Imports nothing of the crate.

use std::fmt;

/// The nesting limit to use for payloads from the network when nothing more
/// specific is known: deep enough for any sensible message, shallow enough
/// that decoding at this depth uses a small fraction of a default 2 MiB thread
/// stack (it is also the limit `serde_json` applies by default).
pub(crate) const DEFAULT_MAX_DEPTH: usize = 128;

/// The limits a system holds what arrives to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireLimits {
    /// The most bytes a frame may announce after its prefix; a larger announcement is
    /// refused before anything is read or allocated.
    pub max_frame: usize,
    /// The deepest a payload may nest (a recursive message type, a list of lists);
    /// deeper is refused before it can exhaust the stack.
    pub max_depth: usize,
}

impl WireLimits {
    /// 1 MiB frames, payloads nested at most 128 levels.
    pub const DEFAULT: Self = Self {
        max_frame: 1 << 20,
        max_depth: DEFAULT_MAX_DEPTH,
    };
}

impl Default for WireLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

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

/// Why a frame's message was not queued: the problem, and whether the message is a
/// dead letter already (a full mailbox, or an actor that stopped as it came, makes
/// it one with its own reason), so that the frame's refusal adds none.
pub(crate) struct Undelivered {
    pub(crate) problem: WireProblem,
    pub(crate) lettered: bool,
}

impl From<WireProblem> for Undelivered {
    fn from(problem: WireProblem) -> Self {
        Self {
            problem,
            lettered: false,
        }
    }
}
