//! A struct actor restarted comes back as the value spawned, and a child stopped by its
//! parent's restart is heard by its watcher (S7, S11, S14, S18).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::later_combinations::*;
use crate::support::outside;
use outside::{Boom, T, expect_lines, ms};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use tapio::prelude::*;
use tapio::testkit::TestProbe;

#[message]
pub struct Add(pub u64);

#[message(reply = u64)]
pub struct Total;

#[derive(Clone)]
pub struct Tally {
    total: u64,
}

#[actor(helpers)]
impl Tally {
    fn add(&mut self, message: Add) {
        self.total += message.0;
    }

    fn crash(&mut self, _: Crash) -> Result<(), Boom> {
        Err(Boom)
    }

    fn total(&mut self, _: Total) -> u64 {
        self.total
    }
}

/// S7, S11, S14: an `#[actor]` struct spawned as a value, under `restart`, comes back
/// as that value (not as the state it had reached), keeps its ref and answers its
/// helpers; two refs spawned from clones of one value do not share state.
#[tapio::test]
async fn s7_s11_a_struct_actor_restarted_comes_back_as_the_value_spawned(system: ActorSystem) {
    let value = Tally { total: 10 };
    let a = system
        .spawn(
            Behaviors::supervise(value.clone()).on_failure::<Boom>(SupervisorStrategy::restart()),
            "tally-a",
        )
        .unwrap();
    let b = system.spawn(value, "tally-b").unwrap();
    a.add(5);
    a.add(7);
    assert_eq!(a.total().timeout(T).await.unwrap(), 22);
    assert_eq!(b.total().timeout(T).await.unwrap(), 10);
    a.crash();
    a.add(1);
    assert_eq!(a.total().timeout(T).await.unwrap(), 11);
    assert_eq!(b.total().timeout(T).await.unwrap(), 10);
}

#[message]
pub enum Nest {
    SpawnKid(ActorRef<ActorRef<u64>>),
    Fail,
}

/// S14, S18: a child spawned in a handler does not come back after its parent's
/// restart: it is stopped, so an actor that watched it (not its parent) hears
/// `Terminated` exactly once, and the parent's setup child is still there.
#[tapio::test]
async fn s14_s18_a_handler_child_stopped_by_its_parents_restart_is_heard_by_its_watcher(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let mut refs = TestProbe::<ActorRef<u64>>::new(&system);
    let generations = Arc::new(AtomicU64::new(0));
    let to = probe.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                let g = generations.fetch_add(1, SeqCst) + 1;
                ctx.spawn(Behaviors::receive_message(|_: u64| ()), "from-setup")
                    .unwrap();
                to.tell(format!("g{g} children {}", ctx.children().len()));
                Behaviors::receive(|ctx, m: Nest| -> Result<(), Boom> {
                    match m {
                        Nest::SpawnKid(reply) => {
                            let kid = ctx
                                .spawn(Behaviors::receive_message(|_: u64| ()), "from-handler")
                                .unwrap();
                            reply.tell(kid);
                            Ok(())
                        }
                        Nest::Fail => Err(Boom),
                    }
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "nest",
        )
        .unwrap();
    expect_lines(&mut probe, &["g1 children 1"]).await;
    parent.tell(Nest::SpawnKid(refs.actor_ref().clone()));
    let kid = refs.expect_message(T).await;
    probe.watch(&kid);
    probe.watch(&parent);
    parent.tell(Nest::Fail);
    probe.expect_terminated(&kid, T).await;
    expect_lines(&mut probe, &["g2 children 1"]).await;
    probe.expect_no_termination(ms(200)).await;
    kid.tell(5_u64);
}
