//! Corners of `run_blocking`: the test kit without a runtime, waiting for another actor
//! on a current-thread runtime, the call starting before its future is polled, records
//! carrying the actor's path, and terminate not waiting for a running call (S8, S19,
//! S33, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::common;
use crate::support::outside;
use outside::{T, entries, expect_lines, ms, new_log, push};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, LeakReport, TestConfig, TestProbe};
use tapio::{BlockingError, BoxError};
use tokio::sync::mpsc;
use tokio::time::timeout;

#[test]
fn s33_s48_kit_run_blocking_without_a_runtime_is_a_no_runtime_failure() {
    let mut kit = BehaviorTestKit::new(Behaviors::receive_async(
        async move |ctx: &mut ActorContext<u64>, n: u64| -> Result<(), BoxError> {
            let _ = ctx.run_blocking(move || n + 1).await?;
            Ok(())
        },
    ));
    let failure = kit.run(1_u64).expect_err("no runtime to run the call on");
    assert!(
        matches!(
            failure.downcast_ref::<BlockingError>(),
            Some(BlockingError::NoRuntime)
        ),
        "{} / {}",
        failure.error_type(),
        failure.error()
    );
}

// =================================================================================
// 5. run_blocking (S33)
// =================================================================================

#[tokio::test(flavor = "current_thread")]
async fn s33_a_blocking_call_can_wait_for_another_actor_on_a_current_thread_runtime() {
    let system = ActorSystem::new("one-thread").unwrap();
    let (std_tx, std_rx) = std::sync::mpsc::channel::<u64>();
    let std_rx = Arc::new(Mutex::new(std_rx));
    let (started_tx, mut started) = mpsc::unbounded_channel::<()>();
    let (out_tx, mut out) = mpsc::unbounded_channel::<Option<u64>>();
    let helper = system
        .spawn(
            Behaviors::receive_message(move |n: u64| {
                let _ = std_tx.send(n * 10);
            }),
            "helper",
        )
        .unwrap();
    let blocker = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, _: u64| {
                let std_rx = std_rx.clone();
                let started_tx = started_tx.clone();
                let got = ctx
                    .run_blocking(move || {
                        let _ = started_tx.send(());
                        std_rx
                            .lock()
                            .unwrap()
                            .recv_timeout(Duration::from_secs(5))
                            .ok()
                    })
                    .await
                    .ok()
                    .flatten();
                let _ = out_tx.send(got);
            }),
            "blocker",
        )
        .unwrap();
    blocker.tell(1_u64);
    timeout(T, started.recv())
        .await
        .expect("the call started")
        .unwrap();
    // The call now holds a pool thread; this runtime's only thread is free.
    helper.tell(4_u64);
    let got = timeout(Duration::from_secs(10), out.recv())
        .await
        .expect("an answer")
        .unwrap();
    assert_eq!(got, Some(40));
    system.terminate().await;
}

#[tapio::test]
async fn s33_the_call_starts_before_its_future_is_polled(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, n: u64| {
                let (tx, rx) = tokio::sync::oneshot::channel::<()>();
                let call = ctx.run_blocking(move || {
                    let _ = tx.send(());
                    n * 2
                });
                // Not polled yet: the call must already be running to send this.
                let started = timeout(Duration::from_secs(2), rx).await.is_ok();
                let value = call.await.ok();
                to.tell(format!("started={started} value={value:?}"));
            }),
            "eager",
        )
        .unwrap();
    actor.tell(3_u64);
    expect_lines(&mut probe, &["started=true value=Some(6)"]).await;
}

/// An actor that logs once in its handler and once in a blocking call, each record
/// ending with `name` (two tests of this binary log at once, into one global
/// subscriber or another).
fn logging_blocker(
    system: &ActorSystem,
    name: &'static str,
    done: ActorRef<String>,
) -> ActorRef<u64> {
    system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, _: u64| {
                tracing::info!("said in the handler of {name}");
                let logged = ctx
                    .run_blocking(move || tracing::info!("said inside the blocking call of {name}"))
                    .await
                    .is_ok();
                done.tell(format!("logged={logged}"));
            }),
            name,
        )
        .unwrap()
}

fn record(text: &str, said: &str) -> Option<String> {
    text.lines()
        .find(|line| line.ends_with(said))
        .map(str::to_string)
}

#[tokio::test]
async fn s8_s33_a_blocking_calls_records_carry_the_actor_path_global_subscriber() {
    let captured = common::global_capture();
    let system = ActorSystem::new("blocking-log-global").unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    let actor = logging_blocker(&system, "global-blocker", probe.actor_ref().clone());
    actor.tell(1_u64);
    expect_lines(&mut probe, &["logged=true"]).await;
    system.terminate().await;
    let text = captured.text();
    let said = "said inside the blocking call of global-blocker";
    let line = record(&text, said).unwrap_or_else(|| panic!("no record in:\n{text}"));
    assert!(line.contains("path=/user/global-blocker"), "{line}");
}

#[test]
fn s8_s33_a_blocking_calls_records_carry_the_actor_path_scoped_subscriber() {
    let (captured, subscriber) = common::capturing(tracing::Level::INFO);
    // As the crate's own logging test does: a current-thread runtime, and the
    // subscriber the default of the thread that runs every actor.
    let _default = tracing::subscriber::set_default(subscriber);
    TestConfig::new("blocking_log_scoped").run(|system: ActorSystem| async move {
        let mut probe = TestProbe::<String>::new(&system);
        let actor = logging_blocker(&system, "scoped-blocker", probe.actor_ref().clone());
        actor.tell(1_u64);
        expect_lines(&mut probe, &["logged=true"]).await;
    });
    let text = captured.text();
    // The subscriber sees the actor: the handler's own record is there, tagged.
    let handler = record(&text, "said in the handler of scoped-blocker");
    let handler = handler.unwrap_or_else(|| panic!("no handler record in:\n{text}"));
    assert!(handler.contains("path=/user/scoped-blocker"), "{handler}");
    let line = record(&text, "said inside the blocking call of scoped-blocker")
        .unwrap_or_else(|| panic!("no record from the blocking call in:\n{text}"));
    assert!(line.contains("path=/user/scoped-blocker"), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_s33_terminate_does_not_wait_for_a_running_blocking_call() {
    let system = ActorSystem::builder("blocking-at-the-end")
        .shutdown_timeout(ms(300))
        .track_leaks(true)
        .build()
        .unwrap();
    let log = new_log();
    let (in_tx, mut in_call) = mpsc::unbounded_channel::<()>();
    let (done_tx, mut done) = mpsc::unbounded_channel::<()>();
    let for_signal = log.clone();
    let reader = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, _: u64| {
                let in_tx = in_tx.clone();
                let done_tx = done_tx.clone();
                let _ = ctx
                    .run_blocking(move || {
                        let _ = in_tx.send(());
                        std::thread::sleep(ms(900));
                        let _ = done_tx.send(());
                    })
                    .await;
            })
            .on_signal(move |_ctx, signal| {
                if *signal == Signal::PostStop {
                    push(&for_signal, "post-stop");
                }
                Behaviors::same()
            }),
            "reader",
        )
        .unwrap();
    reader.tell(1_u64);
    timeout(T, in_call.recv()).await.unwrap().unwrap();
    let started = std::time::Instant::now();
    let report = LeakReport::after_terminating(&system).await;
    let took = started.elapsed();
    assert!(took < ms(1000), "terminate waited for the call: {took:?}");
    assert_eq!(
        entries(&log),
        ["post-stop"],
        "the awaiting handler was dropped"
    );
    assert!(report.is_clean(), "{report}");
    // The call itself ran to its end on the pool.
    timeout(T, done.recv())
        .await
        .expect("the call finished")
        .unwrap();
}
