//! The target of an ask: a cell with no task, whose lane takes exactly one answer and
//! hands it to whoever awaits the ask.

use std::sync::Arc;

use crate::actor::{CellCore, LocalCell};
use crate::mailbox::{AnswerSlot, Look, UserLane};
use crate::message::Message;
use crate::system::SystemShared;

/// What comes out of a promise: the answer, or the refusal of the request by the
/// state the asked actor was in.
pub(crate) type Answer<R> = Result<R, Refusal>;

/// Why a request was refused without an answer: the ask fails at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

impl Refusal {
    /// The payload of the `!refused` frame that carries this refusal back to the
    /// asking system: a tag, then a state's name. `None` for the refusals only the
    /// asking side makes.
    pub(crate) fn to_wire(self) -> Option<Vec<u8>> {
        match self {
            Self::NotHandled { state } => {
                let mut bytes = vec![1];
                bytes.extend_from_slice(state.as_bytes());
                Some(bytes)
            }
            Self::MailboxFull => Some(vec![2]),
            Self::Adapter => Some(vec![3]),
            Self::Unreachable | Self::TargetTerminated => None,
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

/// A promise at `/system/promises/{uid}`, held by whoever awaits its answer.
///
/// No registry knows of it: it lives as long as a ref to it does (in the request, in
/// the answering actor, in a dead letter, in the ask). Its system lane is closed from
/// the start, so it counts as stopped: watching it reports `Terminated` at once. An
/// answer nobody waits for any more, or a second answer, becomes a dead letter.
pub(crate) fn promise<R: Message>(system: &Arc<SystemShared>) -> Arc<LocalCell<R>> {
    let uid = system.next_uid();
    // Its path, `/system/promises/{uid}`, is built if anyone asks for it.
    let core = CellCore::promise(uid, system.clone());
    Arc::new(LocalCell {
        core,
        user: UserLane::answer(AnswerSlot::new(system)),
    })
}

/// The asker's look at its promise: the answer if it came, or whether anyone can
/// still give it (someone other than the asker holds a ref to the promise).
pub(crate) fn look<R: Message>(promise: &Arc<LocalCell<R>>) -> Look<R> {
    promise
        .user
        .look_for_answer(|| Arc::strong_count(promise) == 1)
}

/// `n` in decimal, written into `digits` without the formatting machinery: the name
/// of a promise, built when its path is first asked for.
pub(crate) fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &str {
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&digits[at..]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{Refusal, decimal};

    #[test]
    fn a_refusal_crosses_the_wire_as_it_was() {
        for refusal in [
            Refusal::NotHandled {
                state: "GateClosed",
            },
            Refusal::MailboxFull,
            Refusal::Adapter,
        ] {
            let bytes = refusal.to_wire().unwrap();
            assert_eq!(Refusal::from_wire(&bytes), Some(refusal));
        }
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
            assert_eq!(Refusal::from_wire(&bytes), Some(unnamed), "{bad:?}");
        }
    }

    #[test]
    fn decimal_writes_what_display_does() {
        for n in [0, 7, 10, 99, 1_000, 4_294_967_296, u64::MAX] {
            assert_eq!(decimal(n, &mut [0; 20]), n.to_string());
        }
    }
}
