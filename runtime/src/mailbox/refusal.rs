//! What an ask's promise receives: the answer, or a [`Refusal`] of the request, and
//! how a refusal crosses the wire back to the asking system.
//!
//! Layer: mailbox. Imports only ground (`codec`).

use serde::{Deserialize, Serialize};

use crate::ground::codec::WireProblem;

/// What comes out of a promise: the answer, or the refusal of the request by the
/// state the asked actor was in.
pub(crate) type Answer<R> = Result<R, Refusal>;

/// Why a request was refused without an answer: the ask fails at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The current state of a state machine (see `tapio::state`) does not handle
    /// the request.
    NotHandled {
        /// The state.
        state: &'static str,
    },
    /// The request, bound for another system, was given up on the link (the peer
    /// could not be reached, or the connection broke before it was sent).
    Unreachable,
    /// The target, on another system, stopped before it answered: the promise
    /// watched it over the link and heard `Terminated`.
    TargetTerminated,
    /// The target's bounded mailbox, on another system, was full and refused the
    /// request.
    MailboxFull,
    /// The target, on another system, is a message adapter, which is never asked.
    Adapter,
    /// The target's full drop-oldest mailbox pushed the request out to make room
    /// for a newer message (S54).
    PushedOut,
    /// The request reached its target on another system, and every ref to this
    /// promise there was dropped without an answer, as a local request is that its
    /// handler drops, or a restart discards from a stash.
    Unanswered,
    /// The other system could not deliver the request at all: its key is not
    /// registered there, the recipient does not accept it, or it did not decode.
    /// Boxed: every promise's slot has room for a refusal, and most are never one.
    Undeliverable(Box<WireProblem>),
}

/// The problems a `!refused` frame can carry back for an undeliverable request,
/// as they cross the wire (postcard, after the tag). Only what the receiving side
/// finds in a frame it read is here; a refusal of any other kind does not read.
#[derive(Serialize, Deserialize)]
enum Undeliverable {
    UnknownKey(String),
    NotAccepted(String),
    Undecodable { key: String, error: String },
    TrailingBytes { key: String, left: u64 },
    TooDeep { key: String, max: u64 },
    InvalidPath(String),
}

/// The longest text a refusal from a peer keeps, in bytes: a key, a path or a
/// decoder's message is shorter; a peer's longer text is cut (at a character).
const PEER_TEXT_LEN: usize = 256;

/// `text` from a peer, at most `PEER_TEXT_LEN` bytes of it.
fn bounded(mut text: String) -> String {
    if text.len() > PEER_TEXT_LEN {
        let mut end = PEER_TEXT_LEN;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

impl Undeliverable {
    fn of(problem: &WireProblem) -> Option<Self> {
        Some(match problem.clone() {
            WireProblem::UnknownKey(key) => Self::UnknownKey(key),
            WireProblem::NotAccepted(key) => Self::NotAccepted(key),
            WireProblem::Undecodable { key, error } => Self::Undecodable { key, error },
            WireProblem::TrailingBytes { key, left } => Self::TrailingBytes {
                key,
                left: left as u64,
            },
            WireProblem::TooDeep { key, max } => Self::TooDeep {
                key,
                max: max as u64,
            },
            WireProblem::InvalidPath(path) => Self::InvalidPath(path),
            _ => return None,
        })
    }

    fn into_problem(self) -> WireProblem {
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        match self {
            Self::UnknownKey(key) => WireProblem::UnknownKey(bounded(key)),
            Self::NotAccepted(key) => WireProblem::NotAccepted(bounded(key)),
            Self::Undecodable { key, error } => WireProblem::Undecodable {
                key: bounded(key),
                error: bounded(error),
            },
            Self::TrailingBytes { key, left } => WireProblem::TrailingBytes {
                key: bounded(key),
                left: count(left),
            },
            Self::TooDeep { key, max } => WireProblem::TooDeep {
                key: bounded(key),
                max: count(max),
            },
            Self::InvalidPath(path) => WireProblem::InvalidPath(bounded(path)),
        }
    }
}

impl Refusal {
    /// The refusal of a request that `problem` kept from its recipient on this
    /// system, for the asking system: `None` when the ask has nothing to learn from
    /// it (it watches its target, or waits for its deadline).
    pub(crate) fn of_problem(problem: &WireProblem) -> Option<Self> {
        match problem {
            WireProblem::MailboxFull => Some(Self::MailboxFull),
            WireProblem::AdapterAsked => Some(Self::Adapter),
            // As a local ask to a stopped ref fails (S23), without waiting for its
            // watch of the target to hear the same.
            WireProblem::NoRecipient
            | WireProblem::RecipientStopped
            | WireProblem::StaleIncarnation { .. } => Some(Self::TargetTerminated),
            other => Undeliverable::of(other).map(|_| Self::Undeliverable(Box::new(other.clone()))),
        }
    }

    /// The payload of the `!refused` frame that carries this refusal back to the
    /// asking system: a tag, then a state's name, or the problem. `None` for the
    /// refusals only the asking side makes.
    pub(crate) fn to_wire(&self) -> Option<Vec<u8>> {
        match self {
            Self::NotHandled { state } => {
                let mut bytes = vec![1];
                bytes.extend_from_slice(state.as_bytes());
                Some(bytes)
            }
            Self::MailboxFull => Some(vec![2]),
            Self::Adapter => Some(vec![3]),
            Self::TargetTerminated => Some(vec![4]),
            Self::Unanswered => Some(vec![6]),
            Self::PushedOut => Some(vec![7]),
            Self::Undeliverable(problem) => {
                postcard::to_extend(&Undeliverable::of(problem)?, vec![5]).ok()
            }
            Self::Unreachable => None,
        }
    }

    /// The refusal a `!refused` frame from a peer carries; `None` for bytes that
    /// are not one.
    pub(crate) fn from_wire(bytes: &[u8]) -> Option<Self> {
        let (&tag, rest) = bytes.split_first()?;
        match (tag, rest) {
            (1, name) => Some(Self::NotHandled {
                state: peer_state_name(name),
            }),
            (2, []) => Some(Self::MailboxFull),
            (3, []) => Some(Self::Adapter),
            (4, []) => Some(Self::TargetTerminated),
            (6, []) => Some(Self::Unanswered),
            (7, []) => Some(Self::PushedOut),
            (5, rest) => postcard::from_bytes::<Undeliverable>(rest)
                .ok()
                .map(|problem| Self::Undeliverable(Box::new(problem.into_problem()))),
            _ => None,
        }
    }
}

/// The most state names a process keeps from peers' refusals.
const PEER_STATE_NAMES: usize = 1024;
/// The longest state name kept from a peer.
const PEER_STATE_NAME_LEN: usize = 128;

/// A state's name from a peer's refusal, kept for the life of the process (an
/// `AskError::NotHandled` names its state as `&'static str`): each distinct name
/// once, at most `PEER_STATE_NAMES` of them and each at most `PEER_STATE_NAME_LEN`
/// bytes of a Rust path, so a peer cannot make the process keep more. Any other
/// name reads as `"(a state on the peer)"`.
fn peer_state_name(bytes: &[u8]) -> &'static str {
    const UNNAMED: &str = "(a state on the peer)";
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let Ok(name) = std::str::from_utf8(bytes) else {
        return UNNAMED;
    };
    let is_path = |name: &str| {
        !name.is_empty()
            && name.len() <= PEER_STATE_NAME_LEN
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '<' | '>' | ','))
    };
    if !is_path(name) {
        return UNNAMED;
    }
    let mut names = NAMES.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some(kept) = names.iter().find(|kept| **kept == name) {
        return kept;
    }
    if names.len() >= PEER_STATE_NAMES {
        return UNNAMED;
    }
    let kept: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.push(kept);
    kept
}

#[cfg(test)]
mod tests {
    use super::{PEER_TEXT_LEN, Refusal};
    use crate::ground::codec::WireProblem;

    #[test]
    fn a_peers_refusal_keeps_only_so_much_text() {
        let long = "é".repeat(PEER_TEXT_LEN);
        let bytes = Refusal::Undeliverable(Box::new(WireProblem::UnknownKey(long)))
            .to_wire()
            .unwrap();
        let Some(Refusal::Undeliverable(problem)) = Refusal::from_wire(&bytes) else {
            panic!("the refusal did not read back");
        };
        let WireProblem::UnknownKey(kept) = *problem else {
            panic!("another problem read back: {problem:?}");
        };
        assert_eq!(kept.len(), PEER_TEXT_LEN);
        assert!(kept.chars().all(|c| c == 'é'));
        assert_eq!(Refusal::from_wire(&[5, 200, 1]), None);
    }

    #[test]
    fn a_refusal_crosses_the_wire_as_it_was() {
        for refusal in [
            Refusal::NotHandled {
                state: "GateClosed",
            },
            Refusal::MailboxFull,
            Refusal::Adapter,
            Refusal::TargetTerminated,
            Refusal::Unanswered,
            Refusal::PushedOut,
            Refusal::Undeliverable(Box::new(WireProblem::NotAccepted("shop.order.v1".into()))),
            Refusal::Undeliverable(Box::new(WireProblem::Undecodable {
                key: "shop.order.v1".into(),
                error: "unexpected end".into(),
            })),
            Refusal::Undeliverable(Box::new(WireProblem::TooDeep {
                key: "tree.v1".into(),
                max: 32,
            })),
        ] {
            let bytes = refusal.to_wire().unwrap();
            assert_eq!(Refusal::from_wire(&bytes), Some(refusal));
        }
        // Only what a frame's reader finds is carried back.
        assert_eq!(
            Refusal::Undeliverable(Box::new(WireProblem::BadLength {
                announced: 9,
                received: 1
            }))
            .to_wire(),
            None
        );
        assert_eq!(Refusal::Unreachable.to_wire(), None);
        assert_eq!(Refusal::from_wire(&[]), None);
        assert_eq!(Refusal::from_wire(&[2, 0]), None);
        assert_eq!(Refusal::from_wire(&[9]), None);
    }

    #[test]
    fn a_peers_state_name_is_kept_only_when_it_reads_as_one() {
        let unnamed = Refusal::NotHandled {
            state: "(a state on the peer)",
        };
        for bad in [
            &b""[..],
            &b"\xff\xfe"[..],
            &b"drop table; --"[..],
            &[b'a'; 129][..],
        ] {
            let mut bytes = vec![1];
            bytes.extend_from_slice(bad);
            assert_eq!(Refusal::from_wire(&bytes), Some(unnamed.clone()), "{bad:?}");
        }
    }
}
