//! Waiting offers cross a restart with backoff in order (S13, S30).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::combinations::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason, OverflowStrategy};
use tokio::sync::Semaphore;
use tokio::time::{Instant, timeout};

#[message]
enum Work {
    Block,
    Crash,
    N(u64),
}

// S13 + S29 + S30: offers waiting on a bounded mailbox while its actor fails and
// backs off are all accepted, in the order they began to wait, and handled by the
// next incarnation; a tell beyond the bound during the backoff is a dead letter.
#[tapio::test(start_paused = true)]
async fn s13_s30_waiting_offers_cross_a_restart_with_backoff_in_order(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let gate = Arc::new(Semaphore::new(0));
    let setups = Arc::new(AtomicUsize::new(0));
    let (report, in_gate, counted) = (probe.actor_ref().clone(), gate.clone(), setups.clone());
    let actor = system
        .spawn_with(
            Behaviors::supervise(Behaviors::setup(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                let (report, gate) = (report.clone(), in_gate.clone());
                Behaviors::receive_message_async(async move |work: Work| -> Result<(), Boom> {
                    match work {
                        Work::Block => {
                            report.tell(0);
                            gate.acquire().await.unwrap().forget();
                        }
                        Work::Crash => return Err(Boom),
                        Work::N(n) => report.tell(n),
                    }
                    Ok(())
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart().with_backoff(
                Backoff::new(Duration::from_secs(1), Duration::from_secs(1), 0.0).unwrap(),
            )),
            "restarting",
            bounded(1, OverflowStrategy::DropNew),
        )
        .unwrap();
    actor.tell(Work::Block);
    assert_eq!(probe.expect_message(T).await, 0);
    actor.tell(Work::Crash); // the mailbox is full
    let mut o2 = actor.offer(Work::N(2));
    let mut o3 = actor.offer(Work::N(3));
    let mut o4 = actor.offer(Work::N(4));
    for offer in [&mut o2, &mut o3, &mut o4] {
        assert!(poll_once(offer).is_pending());
    }
    let started = Instant::now();
    gate.add_permits(1);
    // The crash frees the room, and o2 takes it while the actor backs off.
    assert!(timeout(T, &mut o2).await.unwrap());
    actor.tell(Work::N(99)); // no room during the backoff: a dead letter
    let refused = letter_within(&mut letters, T).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::MailboxFull,
        "{refused}"
    );
    assert!(matches!(refused.take_message::<Work>(), Some(Work::N(99))));
    assert!(timeout(T, o3).await.unwrap());
    assert!(timeout(T, o4).await.unwrap());
    assert_eq!(probe.receive_messages(3, T).await, [2, 3, 4]);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "the backoff was waited out"
    );
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    probe.expect_no_message(Duration::from_millis(50)).await;
}
