//! Corners of supervision: terminate during a backoff, per-clause restart counts, the
//! backoff count and its jitter, children kept across a restart, paths climbed in
//! `ChildFailed`, `on_any_failure`, `setup_once`, and failing request handlers (S7,
//! S9-S12, S14-S17, S19, S21).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::local_corners::*;
use crate::support::outside;
use outside::{Boom, Other, T, entries, expect_lines, letters_for, ms, new_log};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{LeakReport, TestProbe};
use tapio::{AskError, Backoff, BoxError, DeadLetter};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

#[tapio::test(start_paused = true)]
async fn s19_s14_terminate_while_a_parent_backs_off_stops_the_children_it_kept(
    system: ActorSystem,
) {
    let log = new_log();
    let (kid_tx, mut kids) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let for_parent = log.clone();
    let behavior = Behaviors::receive(move |ctx: &mut ActorContext<u64>, n: u64| {
        if n == 1 {
            let kid = ctx
                .spawn(post_stop_logger(for_parent.clone(), "kid"), "kid")
                .unwrap();
            let _ = kid_tx.send(kid);
            return Ok(Behaviors::same());
        }
        Err(Boom)
    });
    let restart = SupervisorStrategy::restart()
        .with_stop_children(false)
        .with_backoff(Backoff::new(Duration::from_secs(60), Duration::from_secs(60), 0.0).unwrap());
    let parent = system
        .spawn(
            Behaviors::supervise(behavior).on_failure::<Boom>(restart),
            "parent",
        )
        .unwrap();
    parent.tell(1_u64);
    let kid = timeout(T, kids.recv()).await.unwrap().unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&kid);
    parent.tell(2_u64); // fails: a minute of backoff, the kid kept
    probe.expect_no_termination(ms(100)).await;
    let started = Instant::now();
    let report = LeakReport::after_terminating(&system).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(entries(&log), ["kid"]);
    assert!(report.is_clean(), "{report}");
}

// =================================================================================
// 7. Supervision (S10-S17, S7)
// =================================================================================

fn failing_by_number(to: ActorRef<String>) -> Behavior<u64> {
    Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
        to.tell("start".to_string());
        let to = to.clone();
        let count = Arc::new(AtomicU64::new(0));
        Behaviors::receive_message(move |n: u64| -> Result<(), BoxError> {
            match n {
                1 => Err(Boom.into()),
                2 => Err(Other.into()),
                3 => panic!("a panic on purpose"),
                _ => {
                    let seen = count.fetch_add(1, SeqCst) + 1;
                    to.tell(format!("count {seen}"));
                    Ok(())
                }
            }
        })
    })
}

#[tapio::test(start_paused = true)]
async fn s12_each_clause_counts_its_own_restarts(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let twice = || {
        SupervisorStrategy::restart()
            .with_limit(2, Duration::from_secs(60))
            .unwrap()
    };
    let actor = system
        .spawn(
            Behaviors::supervise(failing_by_number(probe.actor_ref().clone()))
                .on_failure::<Boom>(twice())
                .on_failure::<Other>(twice()),
            "two-clauses",
        )
        .unwrap();
    probe.watch(&actor);
    expect_lines(&mut probe, &["start"]).await;
    for n in [1_u64, 2, 1, 2] {
        actor.tell(n);
        expect_lines(&mut probe, &["start"]).await;
    }
    // Four restarts, two per clause: each within its own limit.
    actor.tell(9_u64);
    expect_lines(&mut probe, &["count 1"]).await;
    probe.expect_no_termination(ms(100)).await;
    // A third `Boom` is restart number 3 of the first clause: the actor stops.
    actor.tell(1_u64);
    probe.expect_terminated(&actor, T).await;
    probe.expect_no_message(ms(100)).await;
}

#[tapio::test(start_paused = true)]
async fn s12_the_backoff_count_starts_again_after_an_incarnation_runs_for_max(system: ActorSystem) {
    let (started_tx, mut started) = mpsc::unbounded_channel::<Instant>();
    let behavior = Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
        let _ = started_tx.send(Instant::now());
        Behaviors::receive_message(|_: u64| Err::<(), Boom>(Boom))
    });
    let backoff = Backoff::new(ms(100), ms(400), 0.0).unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(behavior)
                .on_failure::<Boom>(SupervisorStrategy::restart().with_backoff(backoff)),
            "backing-off",
        )
        .unwrap();
    let mut last = timeout(T, started.recv()).await.unwrap().unwrap();
    let mut gaps = Vec::new();
    for rest in [0, 0, 0, 500] {
        // Run `rest` without failing, then fail.
        tokio::time::sleep(ms(rest)).await;
        let failed_at = Instant::now();
        actor.tell(0_u64);
        let next = timeout(T, started.recv()).await.unwrap().unwrap();
        gaps.push((next - failed_at).as_millis());
        last = next;
    }
    let _ = last;
    // 100, 200, 400 (the cap), then 100 again: the last incarnation ran 500 ms > max.
    let near = |got: u128, want: u128| got >= want && got <= want + 5;
    let expected = [100, 200, 400, 100];
    assert!(
        gaps.iter().zip(expected).all(|(g, w)| near(*g, w)),
        "gaps {gaps:?}, expected {expected:?}"
    );
}

#[tapio::test(start_paused = true)]
async fn s12_backoff_delays_stretch_after_the_cap_and_jitter_stays_in_range(system: ActorSystem) {
    let backoff = Backoff::new(ms(100), ms(400), 0.5).unwrap();
    assert_eq!(backoff.delay(0, 0.0), ms(100));
    assert_eq!(backoff.delay(1, 0.0), ms(200));
    assert_eq!(backoff.delay(3, 0.0), ms(400), "800 capped at 400");
    assert_eq!(backoff.delay(3, 0.5), ms(500), "stretched after the cap");
    assert_eq!(backoff.delay(0, f64::NAN), ms(100), "NaN counts as 0");
    assert_eq!(backoff.delay(u32::MAX, 0.0), ms(400));
    assert!(backoff.delay(u32::MAX, 0.999_999) <= ms(600));
    // Live: every delay of a min = max = 100 ms backoff with a factor of 0.5 lies in
    // 100..=150 ms, and they are not all the same.
    let (started_tx, mut started) = mpsc::unbounded_channel::<Instant>();
    let behavior = Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
        let _ = started_tx.send(Instant::now());
        Behaviors::receive_message(|_: u64| Err::<(), Boom>(Boom))
    });
    let jittery = Backoff::new(ms(100), ms(100), 0.5).unwrap();
    let restart = SupervisorStrategy::restart()
        .with_limit(100, Duration::from_secs(3600))
        .unwrap()
        .with_backoff(jittery);
    let actor = system
        .spawn(
            Behaviors::supervise(behavior).on_failure::<Boom>(restart),
            "jittery",
        )
        .unwrap();
    timeout(T, started.recv()).await.unwrap().unwrap();
    let mut gaps = Vec::new();
    for _ in 0..12 {
        let failed_at = Instant::now();
        actor.tell(0_u64);
        let next = timeout(T, started.recv()).await.unwrap().unwrap();
        gaps.push((next - failed_at).as_millis());
    }
    assert!(gaps.iter().all(|g| (100..=151).contains(g)), "{gaps:?}");
    assert!(
        gaps.iter().any(|g| *g != gaps[0]),
        "no jitter at all: {gaps:?}"
    );
}

#[tapio::test(start_paused = true)]
async fn s14_a_restart_that_keeps_children_keeps_those_spawned_in_a_handler(system: ActorSystem) {
    for keep in [false, true] {
        let mut probe = TestProbe::<String>::new(&system);
        let to = probe.actor_ref().clone();
        let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
        let behavior = Behaviors::receive(move |ctx: &mut ActorContext<u64>, n: u64| {
            match n {
                1 => {
                    let kid = ctx.spawn(Behaviors::ignore::<u64>(), "kid").unwrap();
                    let _ = kid_tx.send(kid);
                }
                2 => return Err(Boom),
                _ => to.tell(format!("kid there: {}", ctx.child("kid").is_some())),
            }
            Ok(Behaviors::same())
        });
        let restart = SupervisorStrategy::restart().with_stop_children(!keep);
        let actor = system
            .spawn_anonymous(Behaviors::supervise(behavior).on_failure::<Boom>(restart))
            .unwrap();
        actor.tell(1_u64);
        let kid = timeout(T, kid_rx.recv()).await.unwrap().unwrap();
        probe.watch(&kid);
        actor.tell(2_u64);
        actor.tell(3_u64);
        expect_lines(&mut probe, &[&format!("kid there: {keep}")]).await;
        if keep {
            probe.expect_no_termination(ms(100)).await;
        } else {
            probe.expect_terminated(&kid, T).await;
        }
        system.stop(&actor).unwrap();
    }
}

#[tapio::test(start_paused = true)]
async fn s16_child_failed_carries_the_paths_climbed_so_far_at_each_level(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (g_tx, mut g_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let reporter = |who: &'static str, to: ActorRef<String>| {
        move |_ctx: &mut ActorContext<u64>, signal: &Signal| {
            if let Signal::ChildFailed(failed) = signal {
                let climbed: Vec<String> = failed
                    .failure()
                    .climbed()
                    .iter()
                    .map(|p| p.to_string())
                    .collect();
                to.tell(format!(
                    "{who}: child {} climbed {}",
                    failed.child().path(),
                    climbed.join(" ")
                ));
            }
            Behaviors::same()
        }
    };
    let to_p = to.clone();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let to_c = to_p.clone();
                let g_tx = g_tx.clone();
                let child = Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                    let grandchild = Behaviors::supervise(Behaviors::receive_message(|_: u64| {
                        Err::<(), Boom>(Boom)
                    }))
                    .on_failure::<Boom>(SupervisorStrategy::escalate());
                    let g = ctx.spawn(grandchild, "g").unwrap();
                    let _ = g_tx.send(g);
                    Behaviors::receive_message(|_: u64| ()).on_signal(reporter("c", to_c.clone()))
                });
                ctx.spawn(
                    Behaviors::supervise(child).on_failure::<Boom>(SupervisorStrategy::escalate()),
                    "c",
                )
                .unwrap();
                let to_p = to_p.clone();
                Behaviors::receive_message({
                    let to_p = to_p.clone();
                    move |n: u64| to_p.tell(format!("p alive {n}"))
                })
                .on_signal(reporter("p", to_p))
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume()),
            "p",
        )
        .unwrap();
    let g = timeout(T, g_rx.recv()).await.unwrap().unwrap();
    g.tell(0_u64);
    expect_lines(
        &mut probe,
        &[
            "c: child /user/p/c/g climbed /user/p/c/g /user/p/c",
            "p: child /user/p/c climbed /user/p/c/g /user/p/c /user/p",
        ],
    )
    .await;
    parent.tell(5_u64);
    expect_lines(&mut probe, &["p alive 5"]).await;
}

#[tapio::test(start_paused = true)]
async fn s10_on_any_failure_decides_what_the_earlier_clauses_do_not(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(failing_by_number(probe.actor_ref().clone()))
                .on_failure::<Boom>(SupervisorStrategy::resume())
                .on_any_failure(SupervisorStrategy::restart()),
            "catch-all",
        )
        .unwrap();
    for n in [5_u64, 1, 5, 2, 5, 5, 3, 5] {
        actor.tell(n);
    }
    expect_lines(
        &mut probe,
        &[
            "start", "count 1", // 1: Boom, resumed: the count goes on
            "count 2", // 2: Other, restarted by the catch-all
            "start", "count 1", "count 2", // 3: a panic, restarted by the catch-all
            "start", "count 1",
        ],
    )
    .await;
}

#[tapio::test(start_paused = true)]
async fn s7_s11_setup_once_restarts_what_it_supervises_and_cannot_be_restarted_itself(
    system: ActorSystem,
) {
    // `supervise` inside: the one-shot setup runs once, what it supervises restarts.
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (once_tx, once_rx) = tokio::sync::oneshot::channel::<&'static str>();
    let inside = system
        .spawn(
            Behaviors::setup_once(move |_ctx: &mut ActorContext<u64>| {
                let _ = once_tx.send("once");
                Behaviors::supervise(failing_by_number(to))
                    .on_failure::<Boom>(SupervisorStrategy::restart())
            }),
            "inside",
        )
        .unwrap();
    assert_eq!(timeout(T, once_rx).await.unwrap(), Ok("once"));
    for n in [5_u64, 1, 5] {
        inside.tell(n);
    }
    expect_lines(&mut probe, &["start", "count 1", "start", "count 1"]).await;

    // `supervise` outside: the restart cannot run the factory again; the actor stops.
    let mut letters = system.events().subscribe::<DeadLetter>();
    let to = probe.actor_ref().clone();
    let (once_tx, once_rx) = tokio::sync::oneshot::channel::<&'static str>();
    let outside = system
        .spawn(
            Behaviors::supervise(Behaviors::setup_once(
                move |_ctx: &mut ActorContext<u64>| {
                    let _ = once_tx.send("once");
                    failing_by_number(to)
                },
            ))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "outside",
        )
        .unwrap();
    assert_eq!(timeout(T, once_rx).await.unwrap(), Ok("once"));
    expect_lines(&mut probe, &["start"]).await;
    probe.watch(&outside);
    outside.tell(1_u64);
    outside.tell(5_u64);
    probe.expect_terminated(&outside, T).await;
    probe.expect_no_message(ms(100)).await;
    let letter = letters_for(&mut letters, outside.path(), 1).await.remove(0);
    assert_eq!(letter.take_message::<u64>(), Some(5));
}

#[tapio::test]
async fn s9_s11_s21_a_failing_request_handler_under_resume_leaves_its_ask_unanswered_at_once(
    system: ActorSystem,
) {
    let account = system
        .spawn(
            Account {
                balance: 7,
                log: new_log(),
            }
            .supervise()
            .on_failure::<Boom>(SupervisorStrategy::resume()),
            "resumed",
        )
        .unwrap();
    let started = Instant::now();
    let refused = account
        .ask(Withdraw(100))
        .timeout(Duration::from_secs(20))
        .await;
    assert_eq!(
        refused,
        Err(AskError::Unanswered {
            target: account.path().clone()
        })
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        account.ask(Balance).timeout(T).await,
        Ok(7),
        "resumed with its state"
    );
    assert_eq!(account.ask(Withdraw(2)).timeout(T).await, Ok(5));
}

#[tapio::test]
async fn s21_s15_an_async_handler_answers_then_stops_with_reply_then(system: ActorSystem) {
    let log = new_log();
    let mut probe = TestProbe::<u64>::new(&system);
    let account = system
        .spawn(
            Account {
                balance: 7,
                log: log.clone(),
            },
            "closing",
        )
        .unwrap();
    probe.watch(&account);
    assert_eq!(account.ask(Close).timeout(T).await, Ok(7));
    probe.expect_terminated(&account, T).await;
    assert_eq!(entries(&log), ["post-stop at 7"]);
    let started = Instant::now();
    let after = account.ask(Balance).timeout(Duration::from_secs(20)).await;
    assert!(
        matches!(after, Err(AskError::TargetTerminated { .. })),
        "{after:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}
