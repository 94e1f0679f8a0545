//! A key replaced from its own tick (S25).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

// ---------------------------------------------------------------------------------
// Timers
// ---------------------------------------------------------------------------------

#[message]
#[derive(Clone)]
enum Clock {
    Tick(&'static str),
}

// S25 + S24: a fixed-rate keyed timer replaced, from inside the handler of its own
// tick, by a single timer under the same key: no tick of the old schedule arrives
// after that (not even one that came due during the handler), the new single timer
// fires once, and then the key is no longer active.
#[tapio::test(start_paused = true)]
async fn s25_a_key_replaced_from_its_own_tick(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let report = probe.actor_ref().clone();
    let _clock: ActorRef<Clock> = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers
                    .start_fixed_rate("k", Clock::Tick("old"), Duration::from_millis(10))
                    .unwrap();
                let report = report.clone();
                Behaviors::receive_message_async(async move |message: Clock| {
                    let Clock::Tick(name) = message;
                    report.tell(format!("tick {name}"));
                    if name == "old" {
                        // Let more old ticks come due while this handler runs.
                        tokio::time::sleep(Duration::from_millis(35)).await;
                        timers.start_single_timer(
                            "k",
                            Clock::Tick("new"),
                            Duration::from_millis(100),
                        );
                    } else {
                        report.tell(format!("active after single: {}", timers.is_active("k")));
                    }
                })
            }),
            "clock",
        )
        .unwrap();
    let mut lines = Vec::new();
    while let Some(line) = probe.receive_message(Duration::from_millis(500)).await {
        lines.push(line);
    }
    assert_eq!(
        lines,
        ["tick old", "tick new", "active after single: false"]
    );
}
