//! Repeating timers whose ticks a factory builds (`start_fixed_delay_with`,
//! `start_fixed_rate_with`): for a message that is not `Clone`, each tick is made
//! when it is sent (S25).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::sync::oneshot;

const T: Duration = Duration::from_secs(5);

/// Not `Clone`: it holds a one-shot sender nobody could share.
#[message]
pub struct Stamp {
    pub n: u64,
    pub done: oneshot::Sender<u64>,
}

fn stamper(probe: ActorRef<u64>, fixed_rate: bool) -> Behavior<Stamp> {
    Behaviors::with_timers(move |timers| {
        let made = Arc::new(AtomicU64::new(0));
        let make = move || {
            let (done, _) = oneshot::channel();
            Stamp {
                n: made.fetch_add(1, Ordering::SeqCst),
                done,
            }
        };
        let every = Duration::from_millis(10);
        if fixed_rate {
            timers.start_fixed_rate_with("stamp", make, every)?;
        } else {
            timers.start_fixed_delay_with("stamp", make, every)?;
        }
        let probe = probe.clone();
        Ok::<_, tapio::ZeroInterval>(Behaviors::receive_message(move |stamp: Stamp| {
            let _ = stamp.done.send(stamp.n);
            probe.tell(stamp.n);
        }))
    })
}

// S25: each tick of a fixed-delay and of a fixed-rate timer is a new message from the
// factory, numbered 0, 1, 2 in order.
#[tapio::test(start_paused = true)]
async fn s25_repeating_timers_build_each_tick_with_their_factory(system: ActorSystem) {
    for (name, fixed_rate) in [("delay", false), ("rate", true)] {
        let mut probe = TestProbe::<u64>::new(&system);
        let _stamper = system
            .spawn(stamper(probe.actor_ref().clone(), fixed_rate), name)
            .unwrap();
        assert_eq!(probe.receive_messages(3, T).await, [0, 1, 2], "{name}");
    }
}

// S25: a zero interval is refused before anything starts, as for `Clone` messages.
#[tapio::test]
async fn s25_a_made_timer_with_a_zero_interval_is_refused(system: ActorSystem) {
    let (verdict_tx, verdict) = oneshot::channel();
    let verdict_tx = std::sync::Mutex::new(Some(verdict_tx));
    let _timed = system
        .spawn(
            Behaviors::with_timers(move |timers: tapio::TimerScheduler<u64>| {
                let refused = timers.start_fixed_rate_with("zero", || 1_u64, Duration::ZERO);
                if let Some(tx) = verdict_tx.lock().unwrap().take() {
                    let _ = tx.send(refused.map_err(|e| e.key.to_string()));
                }
                Behaviors::ignore::<u64>()
            }),
            "zero",
        )
        .unwrap();
    assert_eq!(
        tokio::time::timeout(T, verdict).await.unwrap().unwrap(),
        Err("zero".to_string())
    );
}
