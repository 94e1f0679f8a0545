//! A routee backing off keeps its turns (S13, S32).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::under_supervision::*;
use std::time::Duration;
use tapio::DeadLetter;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::time::timeout;

// ---------------------------------------------------------------------------------
// Routers
// ---------------------------------------------------------------------------------

// S32 + S13: a pool routee that restarts with a backoff stays in the pool while it is
// absent: the rotation does not skip it, what is routed to it waits and is handled by
// its next incarnation, nothing is dead-lettered, and the pool keeps its size.
#[tapio::test(start_paused = true)]
async fn s32_a_routee_backing_off_keeps_its_turns(system: ActorSystem) {
    let mut probe = TestProbe::<(String, u64)>::new(&system);
    let report = probe.actor_ref().clone();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let pool = Routers::pool(2, move || {
        let report = report.clone();
        Behaviors::supervise(Behaviors::receive(move |ctx, n: u64| {
            if n == 0 {
                return Err(Boom);
            }
            report.tell((ctx.self_ref().path().name().to_string(), n));
            Ok(Behaviors::same())
        }))
        .on_failure::<Boom>(SupervisorStrategy::restart().with_backoff(
            Backoff::new(Duration::from_secs(1), Duration::from_secs(1), 0.0).unwrap(),
        ))
    })
    .unwrap();
    let handle = pool.handle();
    let router = system.spawn(pool, "pool").unwrap();
    router.tell(1); // routee 1
    router.tell(0); // routee 2 fails and backs off
    let (first, _) = probe.expect_message(T).await;
    for n in 2..=5 {
        router.tell(n);
    }
    // Strict rotation: routee 1 gets 2 and 4 at once; 3 and 5 wait for routee 2's
    // next incarnation.
    let early = probe.receive_messages(2, Duration::from_millis(500)).await;
    assert!(early.iter().all(|(who, _)| *who == first), "{early:?}");
    assert_eq!(early.iter().map(|(_, n)| *n).collect::<Vec<_>>(), [2, 4]);
    let late = probe.receive_messages(2, Duration::from_secs(2)).await;
    assert!(late.iter().all(|(who, _)| *who != first), "{late:?}");
    assert_eq!(late.iter().map(|(_, n)| *n).collect::<Vec<_>>(), [3, 5]);
    assert_eq!(handle.routees().len(), 2);
    assert!(
        timeout(Duration::from_millis(100), letters.recv())
            .await
            .is_err(),
        "no dead letter"
    );
}
