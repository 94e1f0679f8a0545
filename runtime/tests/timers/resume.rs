//! Resume keeps a running timer at its rate (S11, S25).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::later_combinations::*;
use crate::support::outside;
use outside::{Boom, expect_lines, ms};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::time::Instant;

/// S11, S25: under `resume` the timers are not touched: the fixed-rate timer started
/// in setup keeps its rate across a failure, setup does not run again, and nothing
/// doubles.
#[tapio::test(start_paused = true)]
async fn s11_s25_resume_keeps_the_running_timer_at_its_rate(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx| {
                to.tell("start".to_string());
                ctx.timers()
                    .start_fixed_rate("pulse", Pulse::Tick, ms(100))
                    .unwrap();
                let to = to.clone();
                Behaviors::receive_message(move |p: Pulse| -> Result<(), Boom> {
                    match p {
                        Pulse::Tick => to.tell("tick".to_string()),
                        Pulse::Fail => return Err(Boom),
                        Pulse::Item(_) => {}
                    }
                    Ok(())
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume()),
            "steady",
        )
        .unwrap();
    expect_lines(&mut probe, &["start", "tick"]).await;
    actor.tell(Pulse::Fail);
    let started = Instant::now();
    let mut lines = Vec::new();
    loop {
        let left = ms(1_050).saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        match probe.receive_message(left).await {
            Some(line) => lines.push(line),
            None => break,
        }
    }
    assert!(lines.iter().all(|l| l == "tick"), "{lines:?}");
    assert!((9..=11).contains(&lines.len()), "{} ticks", lines.len());
}
