//! The target of an ask: a cell with no task, whose lane takes exactly one answer and
//! hands it to whoever awaits the ask.

use std::sync::Arc;

use crate::actor::SystemShared;
use crate::actor::{CellCore, LocalCell};
pub(crate) use crate::mailbox::{Answer, Refusal};
use crate::mailbox::{AnswerSlot, Look, UserLane};
use crate::message::Message;

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

/// The path of the promise `uid` of `system`, `/system/promises/{uid}`: built when
/// it is first asked for.
pub(crate) fn path_of(system: &SystemShared, uid: u64) -> crate::actor::ActorPath {
    let mut digits = [0; 20];
    system.promises_path().child(decimal(uid, &mut digits))
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
