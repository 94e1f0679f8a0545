//! The target of an ask: a cell with no task, whose lane takes exactly one answer and
//! hands it to whoever awaits the ask.
//!
//! A promise is a `LocalCell<R>` with no task: `Parent::System`, a system lane made
//! closed with `STOPPING` set (`CellCore::promise`, no lock taken) and a user lane
//! holding an `AnswerSlot`. `prepare_ask` (`ask.rs`) makes one and the request carries
//! `ActorRef::local(promise)`, while the `Ask` holds the promise too: one allocation per
//! ask, and no channel while the answer comes quickly. Because the promise is a cell,
//! its ref is a plain `ActorRef<R>`: stored, forwarded, compared, watched (it reports
//! `Terminated` at once), put in a `reply_to` field, with no second ref type and no
//! registry. Its path, `/system/promises/{uid}`, is built on first use from the uid
//! (`decimal`, no formatting machinery) under `SystemShared::promises_path`.
//!
//! # How an ask waits (`ask.rs`)
//!
//! `Ask` becomes an `AskFuture` in `Waiting::Quick`. A request refused when it was sent
//! fails at the first poll with why (`ask::Refused`: an adapter, a full mailbox, a
//! stopped target, `Unreachable` for another system's). The first time the slot is
//! empty the ask wakes itself and yields once, leaving no waker, so the target gets one
//! turn; before that yield it does not even take the lock while someone else still holds
//! the promise. An answer within that turn costs no clock read, no timer and no
//! allocation. Otherwise it boxes `Ask::wait_slow`: the deadline counts from there;
//! `Ask::channel` hands the slot a `oneshot` sender and lets the promise go. The
//! receiver, `AnswerChannel`, closes the channel before its last look (`last_look`), so
//! an answer sent before is the ask's and one sent after is lettered by the slot. An
//! `Ask` dropped while it holds the promise marks the slot ended (`asker_gone`).
//! An ask through a remote ref whose last name is `$adapter-…` fails at once on the
//! asking side (`names_adapter`), as a local one does.
//!
//! A target that stops with the request queued or in hand drops it: the ask finds the
//! slot empty and itself the only holder (`Arc::strong_count`, read under the lane's
//! lock), or its channel closed, and `Ask::dropped` answers `TargetTerminated` if the
//! target is stopping, `Unanswered` otherwise (for a request dropped in the middle of a
//! turn, after the turn's outcome: `dropped_after_turn`). As the request may live on (a
//! dead-letter subscriber keeps it), after `WATCH_AFTER` `wait_slow` also waits on the
//! target's `end_notice`, which is not a watch. For another system's actor it has the
//! promise watch the target over the link; the promise turns the `Terminated` it hears
//! into a refusal: `TargetTerminated`, or `Unreachable` when the whole session ended
//! (S44). A peer's state names in refusals are kept as `&'static str`, each once, a
//! bounded number of bounded length (`peer_state_name`).

use std::sync::Arc;

use crate::actor::SystemShared;
use crate::actor::lanes::UserLane;
use crate::actor::{CellCore, LocalCell};
use crate::ground::message::Message;
pub(crate) use crate::mailbox::{Answer, Refusal};
use crate::mailbox::{AnswerSlot, Look};

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
        user: UserLane::answer(AnswerSlot::new(system.pending_promise())),
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
