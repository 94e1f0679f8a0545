//! A signal handler switching the behavior for the next message, and probe expectations
//! failing at once on a terminated system or another end (S6, S18, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{T, expect_lines};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::time::{Instant, timeout};

fn watching_a(to: ActorRef<String>, child: ActorRef<u64>) -> Behavior<u64> {
    let to2 = to.clone();
    Behaviors::receive_message(move |n: u64| {
        if n == 0 {
            child.tell(0);
        } else {
            to.tell(format!("a {n}"));
        }
    })
    .on_signal(move |_ctx, signal| match signal {
        Signal::Terminated(_) => {
            to2.tell("switched".to_string());
            let to = to2.clone();
            Behaviors::receive_message(move |n: u64| to.tell(format!("b {n}"))).into()
        }
        _ => Behaviors::same(),
    })
    .into()
}

#[tapio::test(start_paused = true)]
async fn s6_s18_a_signal_handler_switches_the_behavior_for_the_next_message(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let child = ctx
                    .spawn(
                        Behaviors::receive_message(|_: u64| Behaviors::stopped()),
                        "child",
                    )
                    .unwrap();
                ctx.watch(&child);
                watching_a(to.clone(), child)
            }),
            "parent",
        )
        .unwrap();
    parent.tell(1_u64);
    parent.tell(0_u64);
    expect_lines(&mut probe, &["a 1", "switched"]).await;
    parent.tell(2_u64);
    expect_lines(&mut probe, &["b 2"]).await;
}

// =================================================================================
// 4. Testkit (S48)
// =================================================================================

#[tokio::test]
async fn s48_probe_expectations_fail_at_once_on_a_terminated_system_or_another_end() {
    let system = ActorSystem::new("ending-probe").unwrap();
    let mut waiting = TestProbe::<u64>::new(&system);
    let mut silent = TestProbe::<u64>::new(&system);
    let pending =
        tokio::spawn(async move { waiting.expect_message(Duration::from_secs(20)).await });
    tokio::task::yield_now().await;
    let started = Instant::now();
    system.terminate().await;
    let outcome = timeout(T, pending)
        .await
        .expect("the expectation ended long before its bound");
    assert!(
        outcome.is_err_and(|e| e.is_panic()),
        "the expectation must fail"
    );
    // Silence on a probe that can receive nothing proves nothing: it fails too.
    let silence =
        tokio::spawn(async move { silent.expect_no_message(Duration::from_secs(20)).await });
    let outcome = timeout(T, silence).await.expect("at once");
    assert!(
        outcome.is_err_and(|e| e.is_panic()),
        "expect_no_message must fail"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    // On a live system: `expect_terminated` fails when another watched actor's end
    // comes first.
    let system = ActorSystem::new("other-end-first").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    let first = system.spawn(Behaviors::ignore::<u64>(), "first").unwrap();
    let second = system.spawn(Behaviors::ignore::<u64>(), "second").unwrap();
    probe.watch(&first);
    probe.watch(&second);
    system.stop(&second).unwrap();
    let expecting = tokio::spawn(async move {
        probe.expect_terminated(&first, T).await;
    });
    let outcome = timeout(T, expecting).await.expect("decided in time");
    assert!(
        outcome.is_err_and(|e| e.is_panic()),
        "the end of `second` came first"
    );
    system.terminate().await;
}
