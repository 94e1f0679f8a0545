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
    use super::decimal;

    #[test]
    fn decimal_writes_what_display_does() {
        for n in [0, 7, 10, 99, 1_000, 4_294_967_296, u64::MAX] {
            assert_eq!(decimal(n, &mut [0; 20]), n.to_string());
        }
    }
}
