//! Adapters and escalation in unusual orders: an escalation into a parent that is
//! backing off still climbs, and an adapter of a stopped owner never reaches an actor
//! that took the owner's name.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_orders::*;
use crate::support::outside;
use outside::{Boom, Other, T, describe, expect_lines, letters, ms, next};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

// =================================================================================
// 14. Escalations into an absent parent; adapters of a dead owner; unhandled
//     lifecycle signals (S16, S17, S28, S2, S6)
// =================================================================================

/// S16, S17, S13, S14: a parent backing off (restart that keeps its children) when
/// a kept child escalates a failure of another type, whose clause escalates: the
/// failure is not lost while the parent is absent. It climbs to the guardian and
/// ends the system, with the child's error and both paths.
#[tokio::test(start_paused = true)]
async fn s16_s17_s13_an_escalation_into_a_backing_off_parent_still_climbs() {
    let system = ActorSystem::new("absent-parent").unwrap();
    let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let (parent_tx, mut parent_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let kid = ctx
                    .spawn(
                        Behaviors::supervise(Behaviors::receive_message(|_: u64| {
                            Err::<(), _>(Other)
                        }))
                        .on_any_failure(SupervisorStrategy::escalate()),
                        "kept",
                    )
                    .unwrap();
                let _ = kid_tx.send(kid);
                let _ = parent_tx.send(ctx.self_ref().clone());
                Behaviors::supervise(Behaviors::receive_message(|_: u64| Err::<(), _>(Boom)))
                    .on_failure::<Boom>(
                        SupervisorStrategy::restart()
                            .with_stop_children(false)
                            .with_backoff(fixed_backoff(Duration::from_secs(60))),
                    )
                    .on_failure::<Other>(SupervisorStrategy::escalate())
            }),
            "parent",
        )
        .unwrap();
    let kid = next(&mut kid_rx).await;
    let parent = next(&mut parent_rx).await;
    parent.tell(1_u64); // Boom: the parent backs off for a minute, keeping `kept`
    tokio::time::sleep(ms(10)).await;
    kid.tell(1_u64); // Other: escalated into the absent parent
    let started = Instant::now();
    let failure = timeout(Duration::from_secs(600), system.when_terminated())
        .await
        .expect("the escalation ends the system")
        .expect_err("with the failure");
    assert!(failure.is::<Other>(), "{failure}");
    assert_eq!(
        climbed(&failure),
        ["/user/parent/kept", "/user/parent", "/user"]
    );
    // Not lost, but it may wait for the parent's next incarnation: at most the
    // backoff.
    assert!(
        started.elapsed() <= Duration::from_secs(61),
        "{:?}",
        started.elapsed()
    );
    timeout(T, system.terminate()).await.unwrap();
    assert_eq!(system.live_actors(), 0);
}

/// S28, S2, S31: an adapter made by an actor that stopped, whose name a new actor
/// took: what is told through the old adapter is a dead letter, never a message to
/// the new actor of the same name.
#[tapio::test(start_paused = true)]
async fn s28_s2_s31_an_adapter_of_a_stopped_owner_never_reaches_its_namesake(system: ActorSystem) {
    let mut dead = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    fn owner(
        tag: &'static str,
        to: ActorRef<String>,
        adapters: mpsc::UnboundedSender<ActorRef<u64>>,
    ) -> Behavior<String> {
        Behaviors::setup(move |ctx: &mut ActorContext<String>| {
            let adapter = ctx.message_adapter(|n: u64| format!("adapted {n}"));
            let _ = adapters.send(adapter);
            let to = to.clone();
            Behaviors::receive_message(move |s: String| to.tell(format!("{tag}: {s}")))
        })
    }
    let first = system
        .spawn(
            owner("first", probe.actor_ref().clone(), adapter_tx.clone()),
            "owner",
        )
        .unwrap();
    let old_adapter = next(&mut adapter_rx).await;
    old_adapter.tell(1_u64);
    expect_lines(&mut probe, &["first: adapted 1"]).await;
    let mut watcher = TestProbe::<u64>::new(&system);
    watcher.watch(&first);
    system.stop(&first).unwrap();
    watcher.expect_terminated(&first, T).await;
    let _second = system
        .spawn(
            owner("second", probe.actor_ref().clone(), adapter_tx),
            "owner",
        )
        .unwrap();
    let new_adapter = next(&mut adapter_rx).await;
    old_adapter.tell(2_u64);
    new_adapter.tell(3_u64);
    expect_lines(&mut probe, &["second: adapted 3"]).await;
    probe.expect_no_message(ms(50)).await;
    let deadline = Instant::now() + T;
    loop {
        let letter = tokio::time::timeout_at(deadline, dead.recv())
            .await
            .expect("the old adapter's message is lettered")
            .unwrap();
        if let Some(n) = letter.take_message::<u64>() {
            assert_eq!(n, 2, "{}", describe(&letter));
            break;
        }
    }
}
