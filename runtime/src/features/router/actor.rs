//! The router itself: an actor that hands each message on, and lets routees that
//! stop leave.
//!
//! `RouterActor` is an ordinary `Actor`: it hands each message on whole and drops a
//! routee when it hears its `Terminated`. `Held` is where its routees are: its own
//! `Rotation` for a group, the pool's shared `PoolState` for a pool.

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::actor::ActorRef;
use crate::actor::behavior::{Actor, Behaviors, Handled};
use crate::actor::context::ActorContext;
use crate::actor::signal::Signal;
use crate::features::router::logic::Logic;
use crate::features::router::pool::PoolState;
use crate::features::router::rotation::Rotation;
use crate::ground::events::DeadLetterReason;
use crate::ground::message::{Message, Protocol};

/// Where a router keeps its routees: in itself (a group), or shared with the
/// pool's handle, which resizes the pool from inside the router.
pub(crate) enum Held<P: Message> {
    Own(Rotation<ActorRef<P>>),
    Pool(Arc<Mutex<PoolState<P>>>),
}

impl<P: Message> Held<P> {
    fn with<R>(&mut self, f: impl FnOnce(&mut Rotation<ActorRef<P>>) -> R) -> R {
        match self {
            Self::Own(routees) => f(routees),
            // Only the router's own task locks it (a resize runs in the router), so
            // the lock is never contended.
            Self::Pool(state) => f(&mut PoolState::lock(state).routees),
        }
    }
}

/// A running router: its routees and how it picks among them.
pub(crate) struct RouterActor<P: Message> {
    routees: Held<P>,
    logic: Logic<P>,
}

impl<P: Message> RouterActor<P> {
    pub(crate) fn new(routees: Held<P>, logic: Logic<P>) -> Self {
        Self { routees, logic }
    }
}

impl<P: Message> Protocol for RouterActor<P> {
    type Msg = P;
}

impl<P: Message> Actor for RouterActor<P> {
    fn handle<'a>(&'a mut self, ctx: &'a mut ActorContext<P>, message: P) -> Handled<'a, P> {
        let logic = &self.logic;
        match self.routees.with(|routees| logic.route(routees, message)) {
            Ok(()) => Handled::ready(()),
            // The last routee left and the router has not stopped yet: there is
            // nobody to take the message. It cannot happen while the router stops
            // when its last routee does; if it ever did, lose nothing and stop.
            Err(message) => {
                ctx.self_ref().core().system().dead_letter(
                    message,
                    ctx.path(),
                    DeadLetterReason::RecipientStopped,
                );
                Handled::ready(Behaviors::stopped())
            }
        }
    }

    fn signal<'a>(
        &'a mut self,
        ctx: &'a mut ActorContext<P>,
        signal: &'a Signal,
    ) -> Handled<'a, P> {
        match signal {
            Signal::Terminated(end) => {
                let stopped = end.actor();
                // The routee that stopped, or the owner of routees that are message
                // adapters (watched for them: an adapter stops with its owner).
                let is_gone = |routee: &ActorRef<P>| {
                    routee == stopped || routee.erase().owner().is_some_and(|o| o == *stopped)
                };
                let (left, removed) = self.routees.with(|routees| {
                    let mut removed = 0_usize;
                    while routees.remove_where(is_gone).is_some() {
                        removed += 1;
                    }
                    (routees.len(), removed)
                });
                if removed > 0 {
                    tracing::debug!(routee = %stopped, removed, left, "a routee stopped and left the router");
                }
                if left == 0 {
                    tracing::debug!(router = %ctx.path(), "the last routee stopped: the router stops");
                    Handled::ready(Behaviors::stopped())
                } else {
                    Handled::ready(())
                }
            }
            Signal::PostStop => {
                if let Held::Pool(state) = &self.routees {
                    PoolState::lock(state).running = false;
                }
                Handled::ready(())
            }
            _ => Handled::ready(Behaviors::unhandled()),
        }
    }
}

impl<P: Message> fmt::Debug for RouterActor<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouterActor")
            .field("logic", &self.logic)
            .finish_non_exhaustive()
    }
}
