//! The core promises past the happy path: many systems in a row, what a handler did
//! before replying, many behavior switches, tells from plain threads and after the
//! runtime is gone, and a log guard dropped with a stopped handler (S1, S3, S4, S5, S6,
//! S8).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::common::scoped_capture;
use crate::support::outside;
use crate::support::past_happy_paths::*;
use outside::{T, expect_lines};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{TestConfig, TestProbe};
use tapio::{AskError, IntoBehavior};
use tokio::time::{Instant, timeout};

// =================================================================================
// 1. Systems (S1, S3, S20)
// =================================================================================

#[message]
pub struct Ping {
    pub reply_to: ActorRef<u64>,
}

/// S1, S3: forty systems, made and terminated one after the other under one name,
/// each start clean (`/user` for what is spawned, `/system` for a probe, the same
/// top-level name free again); once one has terminated, a tell to its actor neither
/// fails nor blocks, an ask fails at once rather than at its deadline, and spawning
/// is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s1_s3_forty_systems_in_a_row_start_clean_and_take_late_tells() {
    for round in 0..40_u64 {
        let system = ActorSystem::new("cycle").unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        let probe_path = probe.actor_ref().path().to_string();
        assert!(probe_path.starts_with("/system/"), "{probe_path}");
        let echo = system
            .spawn(
                Behaviors::receive_message(move |ping: Ping| ping.reply_to.tell(round)),
                "echo",
            )
            .unwrap();
        assert_eq!(echo.path().to_string(), "/user/echo");
        echo.tell(Ping {
            reply_to: probe.actor_ref().clone(),
        });
        assert_eq!(probe.expect_message(T).await, round);
        let answer = echo.ask_with(|reply_to| Ping { reply_to }).timeout(T).await;
        assert_eq!(answer.unwrap(), round);

        timeout(T, system.terminate()).await.expect("terminates");
        assert!(system.is_terminating());
        assert_eq!(system.live_actors(), 0, "round {round}");
        assert!(timeout(T, system.when_terminated()).await.unwrap().is_ok());

        echo.tell(Ping {
            reply_to: probe.actor_ref().clone(),
        });
        let started = Instant::now();
        let late = timeout(
            T,
            echo.ask_with(|reply_to| Ping { reply_to })
                .timeout(Duration::from_secs(60)),
        )
        .await
        .expect("an ask to a terminated system ends at once");
        assert!(late.is_err(), "round {round}: {late:?}");
        assert!(
            !matches!(late, Err(AskError::Timeout { .. })),
            "round {round}: {late:?}"
        );
        assert!(started.elapsed() < T);
        assert!(system.spawn(Behaviors::ignore::<u64>(), "late").is_err());
    }
}

/// S4: a reply cannot overtake its handler. 200 rounds on a multi-thread runtime: the
/// handler tells a recorder "h<n>", then replies; the asker, on the reply, tells the
/// recorder "a<n>". The recorder sees every "h" before its "a". The same with a
/// request handler of an `#[actor]` that awaits between its effect and its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s4_what_a_handler_did_before_replying_is_seen_before_what_the_reply_caused() {
    let system = ActorSystem::new("no-overtaking").unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    let out = probe.actor_ref().clone();
    let recorder = system
        .spawn(
            Behaviors::receive_message(move |line: String| out.tell(line)),
            "recorder",
        )
        .unwrap();
    let to = recorder.clone();
    let worker = system
        .spawn(
            Behaviors::receive_message(move |step: Step| {
                to.tell(format!("h{}", step.n));
                step.reply_to.tell(step.n);
            }),
            "worker",
        )
        .unwrap();
    let mut expected = Vec::new();
    for n in 0..200_u64 {
        let got = worker
            .ask_with(|reply_to| Step { n, reply_to })
            .timeout(T)
            .await
            .unwrap();
        recorder.tell(format!("a{got}"));
        expected.push(format!("h{n}"));
        expected.push(format!("a{n}"));
    }
    let got = probe.receive_messages(400, T).await;
    assert_eq!(got, expected);

    let answering = system
        .spawn(
            Answering {
                recorder: recorder.clone(),
            },
            "answering",
        )
        .unwrap();
    let mut expected = Vec::new();
    for n in 0..100_u64 {
        let got = answering.ask(Question(n)).timeout(T).await.unwrap();
        recorder.tell(format!("a{got}"));
        expected.extend([format!("h{n}"), format!("h{n}'"), format!("a{n}")]);
    }
    let got = probe.receive_messages(300, T).await;
    assert_eq!(got, expected);
    system.terminate().await;
}

#[message(reply = u64)]
pub struct Question(pub u64);

#[derive(Clone)]
pub struct Answering {
    recorder: ActorRef<String>,
}

#[actor]
impl Answering {
    async fn question(&mut self, Question(n): Question) -> u64 {
        self.recorder.tell(format!("h{n}"));
        tokio::task::yield_now().await;
        self.recorder.tell(format!("h{n}'"));
        n
    }
}

/// S4: an async handler that replies first and goes on awaiting: the asker acts on
/// the reply at once, sending the next request, which is not taken before the first
/// handler has ended ("end n" always comes before "start n+1").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s4_a_reply_sent_mid_handler_does_not_let_the_next_message_in_early() {
    let system = ActorSystem::new("early-reply").unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    let out = probe.actor_ref().clone();
    let worker = system
        .spawn(
            Behaviors::receive_async(async move |_ctx: &mut ActorContext<Step>, step: Step| {
                out.tell(format!("start {}", step.n));
                step.reply_to.tell(step.n);
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                out.tell(format!("end {}", step.n));
            }),
            "worker",
        )
        .unwrap();
    for n in 0..100_u64 {
        let got = worker
            .ask_with(|reply_to| Step { n, reply_to })
            .timeout(T)
            .await
            .unwrap();
        assert_eq!(got, n);
    }
    let lines = probe.receive_messages(200, T).await;
    let expected: Vec<String> = (0..100)
        .flat_map(|n| [format!("start {n}"), format!("end {n}")])
        .collect();
    assert_eq!(lines, expected);
    system.terminate().await;
}

#[message]
pub struct Bump;

#[message]
pub struct Peek;

/// An `#[actor]` value that switches to a functional behavior on each `Bump`, which
/// switches back to a fresh value on the next.
#[derive(Clone)]
pub struct Flip {
    count: u64,
    to: ActorRef<String>,
}

fn flop(count: u64, to: ActorRef<String>) -> Behavior<FlipMsg> {
    Behaviors::receive_message(move |message: FlipMsg| match message {
        FlipMsg::Bump(..) => Flip {
            count: count + 1,
            to: to.clone(),
        }
        .into_behavior(),
        FlipMsg::Peek(..) => {
            to.tell(format!("flop {count}"));
            Behaviors::same()
        }
    })
    .into()
}

#[actor]
impl Flip {
    fn bump(&mut self, _: Bump) -> Behavior<FlipMsg> {
        flop(self.count + 1, self.to.clone())
    }

    fn peek(&mut self, _: Peek) {
        self.to.tell(format!("flip {}", self.count));
    }
}

/// S6: a thousand and one switches between an `#[actor]` value and a functional
/// behavior, with a look between each hundred: each switch takes effect for the very
/// next message, and the count carried across the shapes is exact.
#[tapio::test]
async fn s6_a_thousand_switches_between_a_struct_and_a_function_keep_count(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let actor = system
        .spawn(
            Flip {
                count: 0,
                to: probe.actor_ref().clone(),
            },
            "flip",
        )
        .unwrap();
    let mut expected = Vec::new();
    for n in 1..=1_001_u64 {
        actor.tell(Bump);
        if n % 100 == 0 || n == 1_001 {
            actor.tell(Peek);
            let shape = if n % 2 == 1 { "flop" } else { "flip" };
            expected.push(format!("{shape} {n}"));
        }
    }
    let got = probe.receive_messages(expected.len(), T).await;
    assert_eq!(got, expected);
}

/// S3, S5: tells from plain OS threads (no tokio context) reach the actor, each
/// thread's in order; once the tokio runtime the system ran on has been shut down
/// without `terminate`, a tell from a plain thread still neither panics nor blocks.
#[test]
fn s3_s5_tells_from_plain_threads_and_after_the_runtime_is_gone_never_fail() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (actor, seen) = runtime.block_on(async {
        let system = ActorSystem::new("plain-threads").unwrap();
        let (value, _overlaps) = collector();
        let actor = system.spawn(value, "collector").unwrap();
        let threads: Vec<_> = (1..=3_u64)
            .map(|sender| {
                let actor = actor.clone();
                std::thread::spawn(move || {
                    for seq in 0..300 {
                        actor.tell(Item { sender, seq });
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let mut probe = TestProbe::<Vec<u64>>::new(&system);
        actor.tell(ReportTo {
            reply_to: probe.actor_ref().clone(),
        });
        (actor, probe.expect_message(T).await)
    });
    for (sender, seqs) in per_sender(&seen) {
        assert_eq!(seqs, (0..300).collect::<Vec<u64>>(), "sender {sender}");
    }
    drop(runtime);
    let late = std::thread::spawn(move || {
        for seq in 0..100 {
            actor.tell(Item { sender: 9, seq });
        }
    });
    late.join()
        .expect("a tell after the runtime is gone does not panic");
}

/// S8 (and the crate docs, "Cancel safety of handlers": a drop guard runs): an async
/// handler stopped where it awaits runs its guard, and what the guard logs is a
/// record of the actor's, tagged with its path, as is its `PostStop`'s.
#[test]
fn s8_a_guard_dropped_with_a_stopped_handler_logs_with_the_actor_path() {
    let (captured, _default) = scoped_capture();
    TestConfig::new("s8_guard").run(|system: ActorSystem| async move {
        let mut probe = TestProbe::<String>::new(&system);
        let to = probe.actor_ref().clone();
        let on_signal = to.clone();
        let actor = system
            .spawn(
                Behaviors::receive_async(async move |_ctx: &mut ActorContext<u64>, _: u64| {
                    let _guard = LoggingGuard("handler guard");
                    to.tell("waiting".to_string());
                    std::future::pending::<()>().await;
                })
                .on_signal(move |_ctx, signal| {
                    if *signal == Signal::PostStop {
                        tracing::info!("s8d-mark post-stop");
                        on_signal.tell("stopped".to_string());
                    }
                }),
                "guarded",
            )
            .unwrap();
        actor.tell(0_u64);
        expect_lines(&mut probe, &["waiting"]).await;
        system.stop(&actor).unwrap();
        expect_lines(&mut probe, &["stopped"]).await;
    });
    let text = captured.text();
    let untagged: Vec<String> = ["handler guard", "post-stop"]
        .iter()
        .map(|mark| {
            let said = format!("s8d-mark {mark}");
            text.lines()
                .find(|l| l.ends_with(&said))
                .unwrap_or_else(|| panic!("no record {said:?} in:\n{text}"))
                .to_string()
        })
        .filter(|line| !line.contains("path=/user/guarded"))
        .collect();
    assert!(untagged.is_empty(), "untagged: {untagged:#?}\nall:\n{text}");
}
