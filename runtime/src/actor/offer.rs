//! `offer`: a send that waits for room in a bounded mailbox.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::actor::ActorRef;
use crate::ground::events::DeadLetterReason;
use crate::ground::message::{Accepts, Message};
use crate::mailbox::Offered;

/// The future of [`ActorRef::offer`]: resolves to `true` once the message is in the
/// mailbox, `false` if the actor could not take it (it has stopped; the message is
/// then a dead letter).
///
/// Cancel-safe: dropped before it resolves, it has queued nothing, and gives up its
/// place in line (the message is dropped with it; use
/// [`offer_within`](ActorRef::offer_within) to have it dead-lettered instead).
#[must_use = "an offer does nothing unless it is awaited"]
pub struct Offer<P: Message> {
    target: ActorRef<P>,
    message: Option<P>,
    /// Its place in line while it waits for room.
    ticket: Option<u64>,
    /// For an actor of another system: the wait for room in the outbound queue to
    /// its system (the message stays here, for its dead letter).
    remote: Option<RemoteOffer>,
}

/// The wait of an offer to another system's actor for room on the link.
type RemoteOffer = crate::mailbox::OutboxWait;

impl<P: Message> std::fmt::Debug for Offer<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Offer")
            .field("target", &self.target)
            .field("waiting", &self.ticket.is_some())
            .finish_non_exhaustive()
    }
}

// Nothing in an offer is pinned: the message is moved in and out by value.
impl<P: Message> Unpin for Offer<P> {}

impl<P: Message> ActorRef<P> {
    /// Send a message, waiting while the actor's bounded mailbox is full: the way a
    /// producer is slowed to the pace of its consumer (S30). Resolves to whether the
    /// message was accepted: `false` once the actor has stopped (the message is then
    /// a dead letter), at once if it had stopped already.
    ///
    /// An unbounded mailbox always has room. Waiting offers are served in the order
    /// they began to wait. For an actor of another system, the offer waits for room
    /// in this system's outbound buffer to that system (S47): backpressure from the
    /// link, not from the remote mailbox; build end-to-end flow control from
    /// messages (credit). A full mailbox's [`OverflowStrategy`] applies to
    /// [`tell`](Self::tell) only: an offer never drops anything.
    ///
    /// [`OverflowStrategy`]: crate::OverflowStrategy
    ///
    /// # Examples
    ///
    /// ```
    /// use tapio::prelude::*;
    /// use tapio::{MailboxConfig, OverflowStrategy};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let system = ActorSystem::new("offers")?;
    /// let (seen, mut rx) = tokio::sync::mpsc::unbounded_channel();
    /// let mailbox = MailboxConfig::bounded(2, OverflowStrategy::DropNew)?;
    /// let sink = system.spawn_with(
    ///     Behaviors::receive_message(move |n: u64| {
    ///         let _ = seen.send(n);
    ///     }),
    ///     "sink",
    ///     mailbox,
    /// )?;
    /// for n in 0..10_u64 {
    ///     assert!(sink.offer(n).await); // waits whenever two are queued
    /// }
    /// for n in 0..10_u64 {
    ///     assert_eq!(rx.recv().await, Some(n));
    /// }
    /// system.terminate().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn offer<M>(&self, message: M) -> Offer<P>
    where
        M: Message,
        P: Accepts<M>,
    {
        Offer {
            target: self.clone(),
            message: Some(P::wrap(message)),
            ticket: None,
            remote: None,
        }
    }

    /// [`offer`](Self::offer), waiting at most `within` for room: `false` if there was
    /// none by then, and the message is a dead letter
    /// ([`DeadLetterReason::OfferTimedOut`]). A wait too long to add to the clock
    /// (`Duration::MAX`) is no deadline: the same as `offer`.
    pub async fn offer_within<M>(&self, message: M, within: Duration) -> bool
    where
        M: Message,
        P: Accepts<M>,
    {
        let mut offer = self.offer(message);
        // tokio's `timeout` arms nothing for a duration that does not fit the clock.
        if let Ok(accepted) = tokio::time::timeout(within, &mut offer).await {
            return accepted;
        }
        if let Some(message) = offer.take_back() {
            offer.dead_letter(message, DeadLetterReason::OfferTimedOut);
        }
        false
    }
}

impl<P: Message> Offer<P> {
    /// The message, if it has not been queued, out of line.
    fn take_back(&mut self) -> Option<P> {
        self.leave_line();
        self.remote = None;
        self.message.take()
    }

    fn leave_line(&mut self) {
        if let Some(ticket) = self.ticket.take()
            && let Some(cell) = self.target.local_cell()
        {
            cell.user.cancel_offer(ticket);
        }
    }

    fn dead_letter(&self, message: P, reason: DeadLetterReason) {
        let core = self.target.core();
        core.system().dead_letter(message, core.path(), reason);
    }
}

impl<P: Message> Offer<P> {
    /// An offer to another system's actor (S47): it waits for room in this system's
    /// outbound queue to that system, not for the actor's mailbox.
    fn poll_remote(&mut self, message: P, cx: &mut Context<'_>) -> Poll<bool> {
        if self.remote.is_none() {
            let framed = self
                .target
                .local_cell()
                .and_then(|cell| cell.user.outbox())
                .ok_or(DeadLetterReason::NoLink {
                    peer: self.target.path().address().clone(),
                })
                .and_then(|outbox| {
                    let mut encode = || message.encode_wire();
                    outbox.offer(std::any::type_name::<P>(), &mut encode)
                });
            match framed {
                Ok(waiting) => self.remote = Some(Box::pin(waiting)),
                Err(reason) => {
                    self.dead_letter(message, reason);
                    return Poll::Ready(false);
                }
            }
        }
        let Some(waiting) = self.remote.as_mut() else {
            return Poll::Ready(false);
        };
        match waiting.as_mut().poll(cx) {
            Poll::Pending => {
                self.message = Some(message);
                Poll::Pending
            }
            Poll::Ready(queued) => {
                self.remote = None;
                match queued {
                    Ok(()) => Poll::Ready(true),
                    Err(reason) => {
                        self.dead_letter(message, reason);
                        Poll::Ready(false)
                    }
                }
            }
        }
    }
}

impl<P: Message> Future for Offer<P> {
    type Output = bool;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let this = self.get_mut();
        // Resolved already: nothing left to offer.
        let Some(message) = this.message.take() else {
            return Poll::Ready(false);
        };
        let Some(cell) = this.target.local_cell() else {
            return Poll::Ready(false);
        };
        if cell.core.lane().is_remote() {
            return this.poll_remote(message, cx);
        }
        let waiting = cell.core.lane().reader_waiting();
        match cell.user.offer(message, this.ticket, cx.waker(), waiting) {
            Offered::Accepted => {
                this.ticket = None;
                Poll::Ready(true)
            }
            Offered::Waiting(message, ticket) => {
                this.message = Some(message);
                this.ticket = Some(ticket);
                Poll::Pending
            }
            Offered::Gone => {
                this.ticket = None;
                Poll::Ready(false)
            }
            Offered::Refused(message, reason) => {
                this.ticket = None;
                this.dead_letter(message, reason);
                Poll::Ready(false)
            }
        }
    }
}

impl<P: Message> Drop for Offer<P> {
    fn drop(&mut self) {
        self.leave_line();
    }
}
