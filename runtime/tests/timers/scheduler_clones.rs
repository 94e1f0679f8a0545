//! One timer seen through two scheduler clones, and a key replaced by another mode
//! keeping its exact timeline (S25).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use crate::support::stops_and_restarts::*;
use outside::{T, expect_lines, ms};
use tapio::prelude::*;
use tokio::time::Instant;

// =================================================================================
// 6. Timers (S25, S32)
// =================================================================================

#[message]
#[derive(Debug, Clone, PartialEq)]
pub enum Beat {
    Beat(&'static str),
    StopBeat,
    StartOther,
    CancelOther,
}

/// S25: every clone of an actor's scheduler reaches the same timers: a key started
/// through `with_timers`' scheduler is seen and cancelled through `ctx.timers()`, and
/// one started through `ctx.timers()` is cancelled through the other; a cancelled
/// key's queued ticks never arrive.
#[tapio::test(start_paused = true)]
async fn s25_one_timer_seen_through_two_scheduler_clones(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers
                    .start_fixed_rate("a", Beat::Beat("a"), ms(10))
                    .unwrap();
                let to = to.clone();
                Behaviors::receive(move |ctx, beat: Beat| match beat {
                    Beat::Beat(which) => to.tell(which.to_owned()),
                    Beat::StopBeat => {
                        let seen = ctx.timers().is_active("a");
                        ctx.timers().cancel("a");
                        to.tell(format!("a {seen} {}", timers.is_active("a")));
                    }
                    Beat::StartOther => {
                        ctx.timers()
                            .start_fixed_rate("b", Beat::Beat("b"), ms(10))
                            .unwrap();
                        to.tell(format!("b {}", timers.is_active("b")));
                    }
                    Beat::CancelOther => {
                        timers.cancel("b");
                        to.tell(format!("b {}", ctx.timers().is_active("b")));
                    }
                })
            }),
            "clones",
        )
        .unwrap();
    assert_eq!(probe.expect_message(T).await, "a");
    actor.tell(Beat::StopBeat);
    probe
        .expect_message_where(T, |m: &String| m.starts_with("a "))
        .await;
    actor.tell(Beat::StartOther);
    assert_eq!(
        probe
            .expect_message_where(T, |m: &String| m.starts_with("b "))
            .await,
        "b true"
    );
    assert_eq!(probe.expect_message(T).await, "b");
    actor.tell(Beat::CancelOther);
    assert_eq!(
        probe
            .expect_message_where(T, |m: &String| m.starts_with("b "))
            .await,
        "b false"
    );
    probe.expect_no_message(ms(200)).await;
}

/// S25, S24: a key replaced by another mode keeps to its exact timeline under the
/// paused clock: fixed-delay ticks at 100 and 200 ms, replaced at 250 ms by a
/// fixed-rate timer of 40 ms, which ticks at 290, 330 and 370 ms; the old timer
/// never ticks again.
#[tapio::test(start_paused = true)]
async fn s25_a_key_replaced_by_another_mode_keeps_its_exact_timeline(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let _actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                let start = Instant::now();
                timers
                    .start_fixed_delay("k", Beat::Beat("delay"), ms(100))
                    .unwrap();
                timers.start_single_timer("switch", Beat::StartOther, ms(250));
                let to = to.clone();
                Behaviors::receive_message(move |beat: Beat| {
                    let at = start.elapsed().as_millis();
                    match beat {
                        Beat::Beat(what) => to.tell(format!("{what} {at}")),
                        Beat::StartOther => {
                            timers
                                .start_fixed_rate("k", Beat::Beat("rate"), ms(40))
                                .unwrap();
                            to.tell(format!("switch {at}"));
                        }
                        _ => {}
                    }
                })
            }),
            "timeline",
        )
        .unwrap();
    expect_lines(
        &mut probe,
        &[
            "delay 100",
            "delay 200",
            "switch 250",
            "rate 290",
            "rate 330",
            "rate 370",
        ],
    )
    .await;
}
