//! Adapters past the happy path: a panicking translation is the owner's failure and a
//! dead adapter's messages are dead letters; records logged from everywhere an actor
//! runs code carry its path (S8, S28).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::common::scoped_capture;
use crate::support::outside;
use outside::{Boom, T, describe, expect_lines, letters, ms, next};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use tapio::prelude::*;
use tapio::testkit::{TestConfig, TestProbe};
use tapio::{DeadLetter, DeadLetterReason, Subscription};
use tokio::sync::mpsc;
use tokio::time::timeout;

// =================================================================================
// 5. Logging (S8)
// =================================================================================

#[message]
pub enum Scribe {
    Say(&'static str),
    AfterAwait,
    Arm,
    Tick,
    Block,
    Fail,
    Spawned,
    Noted(String),
}

/// S8, S28, S33: an actor below a parent logs from its setup, a handler, an async
/// handler after an await, a timer's tick, a blocking call, a message adapter's
/// translation, `PreRestart`, `PostStop` and a task it instruments with its span;
/// every one of those records carries its path.
#[test]
fn s8_records_from_everywhere_an_actor_runs_code_carry_its_path() {
    let (captured, _default) = scoped_capture();
    TestConfig::new("s8_everywhere").run(|system: ActorSystem| async move {
        let mut probe = TestProbe::<String>::new(&system);
        let to = probe.actor_ref().clone();
        let (refs_tx, mut refs_rx) =
            mpsc::unbounded_channel::<(ActorRef<Scribe>, ActorRef<String>)>();
        let scribe =
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<Scribe>| {
                tracing::info!("s8-mark setup");
                let adapter = ctx.message_adapter(|text: String| {
                    tracing::info!("s8-mark adapter");
                    Scribe::Noted(text)
                });
                let _ = refs_tx.send((ctx.self_ref().clone(), adapter));
                let to = to.clone();
                let on_signal = to.clone();
                Behaviors::receive_async(async move |ctx: &mut ActorContext<Scribe>, m: Scribe| {
                    match m {
                        Scribe::Say(what) => tracing::info!("s8-mark {what}"),
                        Scribe::AfterAwait => {
                            tokio::task::yield_now().await;
                            tokio::time::sleep(ms(1)).await;
                            tracing::info!("s8-mark after-await");
                        }
                        Scribe::Arm => ctx.timers().start_single_timer("t", Scribe::Tick, ms(5)),
                        Scribe::Tick => tracing::info!("s8-mark tick"),
                        Scribe::Block => {
                            ctx.run_blocking(|| tracing::info!("s8-mark blocking"))
                                .await
                                .unwrap();
                        }
                        Scribe::Fail => return Err(Boom),
                        Scribe::Spawned => {
                            use tracing::Instrument;
                            let span = ctx.log();
                            tokio::spawn(
                                async { tracing::info!("s8-mark instrumented") }.instrument(span),
                            )
                            .await
                            .unwrap();
                        }
                        Scribe::Noted(text) => tracing::info!("s8-mark noted {text}"),
                    }
                    to.tell("done".to_string());
                    Ok(())
                })
                .on_signal(move |_ctx, signal| match signal {
                    Signal::PreRestart => tracing::info!("s8-mark pre-restart"),
                    Signal::PostStop => {
                        tracing::info!("s8-mark post-stop");
                        on_signal.tell("stopped".to_string());
                    }
                    _ => {}
                })
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart());
        let parent = system
            .spawn(
                Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                    ctx.spawn(scribe.clone(), "scribe").unwrap();
                    Behaviors::ignore::<u64>()
                }),
                "desk",
            )
            .unwrap();
        let (scribe_ref, adapter) = next(&mut refs_rx).await;
        assert_eq!(scribe_ref.path().to_string(), "/user/desk/scribe");
        for m in [
            Scribe::Say("handler"),
            Scribe::AfterAwait,
            Scribe::Arm,
            Scribe::Block,
            Scribe::Spawned,
        ] {
            scribe_ref.tell(m);
        }
        adapter.tell("via-adapter".to_string());
        // Say, AfterAwait, Arm, Block, Spawned, the adapted note and the tick.
        let dones = probe.receive_messages(7, T).await;
        assert!(dones.iter().all(|d| d == "done"), "{dones:?}");
        scribe_ref.tell(Scribe::Fail);
        let _ = next(&mut refs_rx).await; // the setup ran again
        system.stop(&parent).unwrap();
        assert_eq!(probe.expect_message(T).await, "stopped");
    });
    let text = captured.text();
    for mark in [
        "setup",
        "handler",
        "after-await",
        "tick",
        "blocking",
        "adapter",
        "noted via-adapter",
        "instrumented",
        "pre-restart",
        "post-stop",
    ] {
        let said = format!("s8-mark {mark}");
        let lines: Vec<&str> = text.lines().filter(|l| l.ends_with(&said)).collect();
        assert!(!lines.is_empty(), "no record {said:?} in:\n{text}");
        for line in lines {
            assert!(
                line.contains("path=/user/desk/scribe"),
                "{said:?} untagged: {line}"
            );
        }
    }
}

/// S28, S9, S11, S3: a translation that panics is its owner's failure (resumed here,
/// the owner's count kept), never the adapter's sender's; once the owner has stopped,
/// a tell through the adapter neither fails nor panics, and is a dead letter.
#[tapio::test]
async fn s28_s9_a_panicking_translation_is_the_owners_failure_and_a_dead_adapter_letters(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (adapter_tx, mut adapter_rx) = mpsc::unbounded_channel::<ActorRef<String>>();
    let owner = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let adapter = ctx.message_adapter(|text: String| {
                    text.parse::<u64>()
                        .unwrap_or_else(|_| panic!("not a number: {text}"))
                });
                let _ = adapter_tx.send(adapter);
                let to = to.clone();
                let sum = AtomicU64::new(0);
                Behaviors::receive_message(move |n: u64| {
                    if n == 0 {
                        return Behaviors::stopped();
                    }
                    let s = sum.fetch_add(n, SeqCst) + n;
                    to.tell(format!("sum {s}"));
                    Behaviors::same()
                })
            }))
            .on_failure::<Panicked>(SupervisorStrategy::resume()),
            "owner",
        )
        .unwrap();
    let adapter = next(&mut adapter_rx).await;
    for text in ["2", "two", "3", "x", "5"] {
        adapter.tell(text.to_string());
    }
    expect_lines(&mut probe, &["sum 2", "sum 5", "sum 10"]).await;
    let mut sub = letters(&system);
    probe.watch(&owner);
    owner.tell(0_u64);
    probe.expect_terminated(&owner, T).await;
    adapter.tell("7".to_string());
    let lost = letter_for_any(&mut sub).await;
    assert!(
        matches!(lost.reason(), DeadLetterReason::RecipientStopped),
        "{}",
        describe(&lost)
    );
    probe.expect_no_message(ms(20)).await;
}

/// The next dead letter, within `T`.
async fn letter_for_any(sub: &mut Subscription<DeadLetter>) -> DeadLetter {
    timeout(T, sub.recv())
        .await
        .expect("a dead letter within the bound")
        .expect("the stream is open")
}
