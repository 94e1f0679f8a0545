//! The slot an ask's one answer goes to: the user lane of an ask's promise (see
//! `actor::promise`), kept by the asker until it takes the answer, or forwarding it
//! down a channel once the asker waits with a deadline.
//!
//! The slot keeps the answer (`Answering::Kept`) for the asker to take under the lane's
//! lock; once the asker waits with a deadline it forwards it (`Answering::Forward`, a
//! `oneshot` sender). A second answer, or one after the asker gave up (`Ended`), is a
//! dead letter (`AlreadyAnswered`, `AskEnded`). A state that does not handle a request
//! refuses it here (`refuse`), and the ask fails at once with the refusal.

use std::mem;

use tokio::sync::oneshot;

use crate::ground::events::DeadLetterReason;
use crate::ground::message::Message;
use crate::mailbox::{Answer, Pending, Refusal};
use crate::mailbox::{Envelope, Sent};

/// Where the answer to an ask goes. In a system that tracks leaks, counted until it
/// is answered (or every ref to it is gone), so a test can see an ask left waiting;
/// elsewhere an ask touches no shared counter.
///
/// The asker holds the promise while it waits on the request alone, and takes the
/// answer from here: no channel, and the answer wakes nobody (the asker's own yield
/// brings it back). Once it waits with a deadline, it hands the slot a channel, and
/// lets the promise go: the slot then forwards the answer, and dropping it (every ref
/// gone) closes the channel.
pub(crate) struct AnswerSlot<P: Message> {
    state: Answering<P>,
    /// This ask in its system's count of pending asks, when the system counts
    /// them (only with the `testkit` feature, whose leak report reads the count).
    pending: Pending,
}

enum Answering<P: Message> {
    /// No answer yet; the asker holds the promise and looks here itself.
    Open,
    /// The answer (or the refusal), kept for the asker to take.
    Kept(Answer<P>),
    /// The asker waits on a channel: the answer goes there.
    Forward(oneshot::Sender<Answer<P>>),
    /// The asker gave up before an answer came.
    Ended,
    /// Answered (or refused) already.
    Done,
}

/// What the asker found in its promise's slot.
pub(crate) enum Look<P: Message> {
    /// The answer, or the refusal; taken.
    Answered(Answer<P>),
    /// Nothing yet, and someone may still answer.
    Waiting,
    /// Nothing, and nobody can answer any more: every other ref to the promise is gone.
    Dropped,
}

impl<P: Message> AnswerSlot<P> {
    pub(crate) fn new(pending: Pending) -> Self {
        Self {
            state: Answering::Open,
            pending,
        }
    }

    /// Whether the asker still waits for the answer.
    pub(super) fn awaited(&self) -> bool {
        match &self.state {
            Answering::Open => true,
            Answering::Forward(sender) => !sender.is_closed(),
            Answering::Kept(_) | Answering::Ended | Answering::Done => false,
        }
    }

    /// Answered, or gone unanswered: no longer pending.
    pub(super) fn settle(&mut self) {
        self.pending.settle();
    }

    pub(super) fn answer(&mut self, answer: P) -> Result<(), (P, DeadLetterReason)> {
        match mem::replace(&mut self.state, Answering::Done) {
            Answering::Open => {
                self.settle();
                self.state = Answering::Kept(Ok(answer));
                Ok(())
            }
            Answering::Forward(sender) => {
                self.settle();
                match sender.send(Ok(answer)) {
                    Ok(()) | Err(Err(_)) => Ok(()),
                    Err(Ok(answer)) => Err((answer, DeadLetterReason::AskEnded)),
                }
            }
            Answering::Ended => {
                self.settle();
                Err((answer, DeadLetterReason::AskEnded))
            }
            kept @ (Answering::Kept(_) | Answering::Done) => {
                self.state = kept;
                Err((answer, DeadLetterReason::AlreadyAnswered))
            }
        }
    }

    /// The request was refused: the ask fails at once with `refusal`. Nothing
    /// happens when it was answered already.
    pub(super) fn refuse(&mut self, refusal: Refusal) {
        match mem::replace(&mut self.state, Answering::Done) {
            Answering::Open => {
                self.settle();
                self.state = Answering::Kept(Err(refusal));
            }
            Answering::Forward(sender) => {
                self.settle();
                // The asker may have gone; then nobody needs to hear of the refusal.
                let _ = sender.send(Err(refusal));
            }
            Answering::Ended => self.settle(),
            kept @ (Answering::Kept(_) | Answering::Done) => self.state = kept,
        }
    }

    pub(super) fn look(&mut self, alone: impl FnOnce() -> bool) -> Look<P> {
        match mem::replace(&mut self.state, Answering::Done) {
            Answering::Kept(answer) => Look::Answered(answer),
            Answering::Open => {
                self.state = Answering::Open;
                if alone() {
                    Look::Dropped
                } else {
                    Look::Waiting
                }
            }
            other => {
                self.state = other;
                Look::Dropped
            }
        }
    }

    pub(super) fn forward(&mut self, sender: oneshot::Sender<Answer<P>>) {
        match mem::replace(&mut self.state, Answering::Done) {
            Answering::Open => self.state = Answering::Forward(sender),
            Answering::Kept(answer) => {
                let _ = sender.send(answer);
            }
            // Nothing to wait for: the channel closes.
            other => self.state = other,
        }
    }

    /// The asker gave up: a later answer is refused (`AskEnded`), and one that came
    /// and was not taken is handed back, for a dead letter.
    pub(super) fn asker_gone(&mut self) -> Option<P> {
        match mem::replace(&mut self.state, Answering::Done) {
            Answering::Open => self.state = Answering::Ended,
            Answering::Kept(answer) => return answer.ok(),
            other => self.state = other,
        }
        None
    }

    pub(super) fn send<C>(&mut self, envelope: Envelope<P, C>) -> Sent<P, C> {
        match envelope {
            Envelope::Message(answer) => match self.answer(answer) {
                Ok(()) => Sent::Queued,
                Err((answer, reason)) => Sent::Unwanted(answer, reason),
            },
            other => Sent::Refused(other),
        }
    }
}

impl<P: Message> Drop for AnswerSlot<P> {
    fn drop(&mut self) {
        if matches!(
            self.state,
            Answering::Open | Answering::Forward(_) | Answering::Ended
        ) {
            self.settle();
        }
    }
}
