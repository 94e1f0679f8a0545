//! `run_blocking` under stops and failures: two calls joined in one handler, an ask
//! whose call panics, a stop during or racing a call's end, and `run_async` awaiting a
//! call (S15, S23, S33, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use crate::support::stops_and_restarts::*;
use outside::{T, entries, ms, new_log, next, push};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Outcome, TestInbox, TestProbe};
use tapio::{AskError, Failure};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

// =================================================================================
// 5. run_blocking (S33, S11, S15, S23)
// =================================================================================

/// S33: two blocking calls started in one handler run side by side on the pool
/// (each waits for the other's word): the `Blocking` futures can be joined.
#[tapio::test]
async fn s33_two_blocking_calls_joined_in_one_handler_run_side_by_side(system: ActorSystem) {
    let (mut probe, to) = probe_and_ref(&system);
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |ctx, _: u64| -> Result<(), Failure> {
                let (to_b, from_a) = std::sync::mpsc::channel::<()>();
                let (to_a, from_b) = std::sync::mpsc::channel::<()>();
                let a = ctx.run_blocking(move || {
                    let _ = to_b.send(());
                    from_b.recv_timeout(Duration::from_secs(5)).is_ok()
                });
                let b = ctx.run_blocking(move || {
                    let _ = to_a.send(());
                    from_a.recv_timeout(Duration::from_secs(5)).is_ok()
                });
                let (a, b) = tokio::join!(a, b);
                to.tell(format!("{} {}", a?, b?));
                Ok(())
            }),
            "pair",
        )
        .unwrap();
    actor.tell(1_u64);
    assert_eq!(
        probe.expect_message(Duration::from_secs(10)).await,
        "true true"
    );
}

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Crunch(pub u64);

#[derive(Clone, Default)]
pub struct Cruncher;

#[actor]
impl Cruncher {
    async fn crunch(&mut self, ctx: &mut Ctx<Self>, Crunch(n): Crunch) -> Result<u64, Failure> {
        let doubled = ctx
            .run_blocking(move || {
                assert!(n != 0, "zero in the pool");
                n * 2
            })
            .await?;
        Ok(doubled)
    }
}

/// S33, S23, S11: a request whose blocking call panics is settled at once by what
/// supervision does with the `Panicked` failure: under restart the ask is
/// `Unanswered` and the next ask is answered; under stop it is `TargetTerminated`.
#[tapio::test]
async fn s33_s23_s11_an_ask_whose_blocking_call_panics_ends_at_once_by_the_decision(
    system: ActorSystem,
) {
    let restarting = system
        .spawn(
            Behaviors::supervise(Cruncher).on_failure::<Panicked>(SupervisorStrategy::restart()),
            "restarting",
        )
        .unwrap();
    let stopping = system.spawn(Cruncher, "stopping").unwrap();
    assert_eq!(restarting.ask(Crunch(2)).timeout(T).await, Ok(4));
    let started = Instant::now();
    let asked = restarting
        .ask(Crunch(0))
        .timeout(Duration::from_secs(60))
        .await;
    assert!(
        matches!(asked, Err(AskError::Unanswered { .. })),
        "{asked:?}"
    );
    assert_eq!(restarting.ask(Crunch(3)).timeout(T).await, Ok(6));
    let asked = stopping
        .ask(Crunch(0))
        .timeout(Duration::from_secs(60))
        .await;
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { .. })),
        "{asked:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// S33, S15, S19: a stop while the actor awaits a blocking call drops the handler
/// where it awaits: `PostStop` comes while the call still runs, the call runs to
/// its end on the pool, and the rest of the handler never runs.
#[tapio::test]
async fn s33_s15_a_stop_during_a_blocking_call_sees_post_stop_before_the_call_ends(
    system: ActorSystem,
) {
    let (mut probe, to) = probe_and_ref(&system);
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(Some(released)));
    let (ended_tx, mut ended_rx) = mpsc::unbounded_channel::<&'static str>();
    let on_signal = to.clone();
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |ctx, _: u64| -> Result<(), Failure> {
                to.tell("calling".to_owned());
                let waiting = released.lock().unwrap().take();
                let ended = ended_tx.clone();
                ctx.run_blocking(move || {
                    if let Some(w) = waiting {
                        let _ = w.recv_timeout(Duration::from_secs(10));
                    }
                    let _ = ended.send("call ended");
                })
                .await?;
                to.tell("after the call".to_owned());
                Ok(())
            })
            .on_signal(move |_ctx, signal| {
                if matches!(signal, Signal::PostStop) {
                    on_signal.tell("post-stop".to_owned());
                }
            }),
            "blocked",
        )
        .unwrap();
    actor.tell(1_u64);
    assert_eq!(probe.expect_message(T).await, "calling");
    system.stop(&actor).unwrap();
    assert_eq!(probe.expect_message(T).await, "post-stop");
    assert!(ended_rx.try_recv().is_err(), "the call is still running");
    release.send(()).unwrap();
    assert_eq!(next(&mut ended_rx).await, "call ended");
    probe.expect_no_message(ms(100)).await;
}

/// S48, S33: `run_async` inside a runtime awaits a handler through its blocking call,
/// and what the handler sends after it is in the inbox.
#[tokio::test]
async fn s48_s33_run_async_awaits_a_blocking_call_inside_a_runtime() {
    let mut out = TestInbox::<u64>::new();
    let to = out.actor_ref().clone();
    let mut kit = BehaviorTestKit::new(Behaviors::receive_async(
        async move |ctx, n: u64| -> Result<(), Failure> {
            let doubled = ctx.run_blocking(move || n * 2).await?;
            to.tell(doubled);
            Ok(())
        },
    ));
    assert_eq!(
        timeout(T, kit.run_async(21_u64)).await.unwrap(),
        Ok(Outcome::Same)
    );
    assert_eq!(out.messages(), [42]);
}

/// S33, S15, S4: a stop racing the end of a blocking call: `PostStop` comes once and
/// is the last thing the actor does; what the handler does after the call happens
/// before it or never (20 runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s33_s15_a_stop_racing_a_blocking_calls_end_leaves_nothing_after_post_stop() {
    for run in 0..RUNS {
        let system = ActorSystem::new("blocking-race").unwrap();
        let log = new_log();
        let (for_handler, for_signal) = (log.clone(), log.clone());
        let actor = system
            .spawn(
                Behaviors::receive_async(async move |ctx, n: u64| -> Result<(), Failure> {
                    let got = ctx.run_blocking(move || n + 1).await?;
                    push(&for_handler, format!("after {got}"));
                    Ok(())
                })
                .on_signal(move |_ctx, signal| {
                    if matches!(signal, Signal::PostStop) {
                        push(&for_signal, "post-stop");
                    }
                }),
                "racing",
            )
            .unwrap();
        let mut probe = TestProbe::<String>::new(&system);
        probe.watch(&actor);
        for n in 0..3 {
            actor.tell(n);
        }
        if run % 2 == 1 {
            tokio::task::yield_now().await;
        }
        system.stop(&actor).unwrap();
        probe.expect_terminated(&actor, T).await;
        let got = entries(&log);
        assert_eq!(
            got.last().map(String::as_str),
            Some("post-stop"),
            "run {run}: {got:?}"
        );
        assert_eq!(
            got.iter().filter(|e| *e == "post-stop").count(),
            1,
            "run {run}: {got:?}"
        );
        let afters: Vec<&String> = got.iter().filter(|e| e.starts_with("after")).collect();
        let want: Vec<String> = (1..=afters.len()).map(|n| format!("after {n}")).collect();
        assert_eq!(
            afters,
            want.iter().collect::<Vec<_>>(),
            "run {run}: in order, a prefix"
        );
        // Nothing more comes once the call has surely ended.
        tokio::time::sleep(ms(20)).await;
        assert_eq!(entries(&log), got, "run {run}: something after PostStop");
        timeout(T, system.terminate()).await.unwrap();
    }
}
