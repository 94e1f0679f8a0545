//! Adapters across restarts and resumes: the translation made in a handler or
//! registered again in setup, a failing translation under resume, and adapted messages
//! racing restarts (S14, S28); also a death pact under resume.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{Boom, T, describe, expect_lines, ms};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeathPact};
use tokio::sync::mpsc;
use tokio::time::timeout;

// =================================================================================
// 8. Watch (S18), dead letters and events (S31, S49), names (S2), ReplyThen (S21),
//    message adapters (S28)
// =================================================================================

#[tapio::test(start_paused = true)]
async fn s18_s11_a_death_pact_under_resume_keeps_the_watcher_and_its_state(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let watched = target.clone();
    let watcher = Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        ctx.watch(&watched);
        to.tell("start".to_string());
        let to = to.clone();
        let count = Arc::new(AtomicU64::new(0));
        // No signal handler: `Terminated` is unhandled, a death pact.
        Behaviors::receive_message(move |_: u64| {
            to.tell(format!("count {}", count.fetch_add(1, SeqCst) + 1))
        })
    });
    let actor = system
        .spawn(
            Behaviors::supervise(watcher).on_failure::<DeathPact>(SupervisorStrategy::resume()),
            "pact",
        )
        .unwrap();
    probe.watch(&actor);
    actor.tell(0_u64);
    actor.tell(0_u64);
    expect_lines(&mut probe, &["start", "count 1", "count 2"]).await;
    system.stop(&target).unwrap();
    probe.expect_no_termination(ms(200)).await;
    actor.tell(0_u64);
    expect_lines(&mut probe, &["count 3"]).await;
}

#[message]
pub enum Owner {
    Make,
    Fail,
    Said(String),
}

#[tapio::test(start_paused = true)]
async fn s28_s14_an_adapter_made_in_a_handler_keeps_its_translation_across_a_restart(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (adapter_tx, mut adapters) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let generations = Arc::new(AtomicU64::new(0));
    let owner = Behaviors::setup(move |_ctx: &mut ActorContext<Owner>| {
        let generation = generations.fetch_add(1, SeqCst) + 1;
        let to = to.clone();
        let adapter_tx = adapter_tx.clone();
        Behaviors::receive(move |ctx: &mut ActorContext<Owner>, message: Owner| {
            match message {
                Owner::Make => {
                    let adapter = ctx.message_adapter(move |n: u64| {
                        Owner::Said(format!("made by g{generation}: {n}"))
                    });
                    let _ = adapter_tx.send(adapter);
                }
                Owner::Fail => return Err(Boom),
                Owner::Said(text) => to.tell(format!("{text}, seen by g{generation}")),
            }
            Ok(Behaviors::same())
        })
    });
    let actor = system
        .spawn(
            Behaviors::supervise(owner).on_failure::<Boom>(SupervisorStrategy::restart()),
            "owner",
        )
        .unwrap();
    actor.tell(Owner::Make);
    let adapter = timeout(T, adapters.recv()).await.unwrap().unwrap();
    adapter.tell(5_u64);
    expect_lines(&mut probe, &["made by g1: 5, seen by g1"]).await;
    actor.tell(Owner::Fail);
    adapter.tell(6_u64);
    expect_lines(&mut probe, &["made by g1: 6, seen by g2"]).await;
}

#[tapio::test(start_paused = true)]
async fn s28_s14_a_setup_that_registers_again_replaces_the_translation_of_old_adapters(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (adapter_tx, mut adapters) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let generations = Arc::new(AtomicU64::new(0));
    let owner = Behaviors::setup(move |ctx: &mut ActorContext<Owner>| {
        let generation = generations.fetch_add(1, SeqCst) + 1;
        let adapter =
            ctx.message_adapter(move |n: u64| Owner::Said(format!("made by g{generation}: {n}")));
        let _ = adapter_tx.send(adapter);
        let to = to.clone();
        Behaviors::receive_message(move |message: Owner| match message {
            Owner::Fail => Err(Boom),
            Owner::Said(text) => {
                to.tell(text);
                Ok(())
            }
            Owner::Make => Ok(()),
        })
    });
    let actor = system
        .spawn(
            Behaviors::supervise(owner).on_failure::<Boom>(SupervisorStrategy::restart()),
            "owner",
        )
        .unwrap();
    let first = timeout(T, adapters.recv()).await.unwrap().unwrap();
    first.tell(1_u64);
    expect_lines(&mut probe, &["made by g1: 1"]).await;
    actor.tell(Owner::Fail);
    let second = timeout(T, adapters.recv()).await.unwrap().unwrap();
    first.tell(2_u64);
    second.tell(3_u64);
    expect_lines(&mut probe, &["made by g2: 2", "made by g2: 3"]).await;
}

#[tapio::test(start_paused = true)]
async fn s28_s11_a_failing_translation_under_resume_drops_only_that_message(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (adapter_tx, mut adapters) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let owner = Behaviors::setup(move |ctx: &mut ActorContext<Owner>| {
        let adapter = ctx.try_message_adapter(|n: u64| {
            if n == 13 {
                Err(Boom)
            } else {
                Ok(Owner::Said(format!("adapted {n}")))
            }
        });
        let _ = adapter_tx.send(adapter);
        to.tell("start".to_string());
        let to = to.clone();
        let seen = Arc::new(AtomicU64::new(0));
        Behaviors::receive_message(move |message: Owner| {
            if let Owner::Said(text) = message {
                to.tell(format!("{text} #{}", seen.fetch_add(1, SeqCst) + 1));
            }
        })
    });
    let actor = system
        .spawn(
            Behaviors::supervise(owner).on_failure::<Boom>(SupervisorStrategy::resume()),
            "owner",
        )
        .unwrap();
    let adapter = timeout(T, adapters.recv()).await.unwrap().unwrap();
    adapter.tell(1_u64);
    actor.tell(Owner::Said("direct".into()));
    adapter.tell(13_u64);
    adapter.tell(2_u64);
    expect_lines(
        &mut probe,
        &["start", "adapted 1 #1", "direct #2", "adapted 2 #3"],
    )
    .await;
    probe.expect_no_message(ms(100)).await;
}

#[message]
pub enum Sink {
    Num(u64),
    Fail,
    Sync(ActorRef<usize>),
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s28_s14_s5_adapted_messages_racing_restarts_are_all_handled_in_order() {
    const EACH: u64 = 300;
    let system = ActorSystem::new("adapted-restarts").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut failures = Vec::new();
    for round in 0..30 {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let starts = Arc::new(AtomicU64::new(0));
        let (adapter_tx, mut adapters) = mpsc::unbounded_channel::<ActorRef<u64>>();
        let owner = {
            let seen = seen.clone();
            let starts = starts.clone();
            Behaviors::setup(move |ctx: &mut ActorContext<Sink>| {
                starts.fetch_add(1, SeqCst);
                let _ = adapter_tx.send(ctx.message_adapter(Sink::Num));
                let seen = seen.clone();
                Behaviors::receive_message(move |message: Sink| match message {
                    Sink::Num(n) => {
                        seen.lock().unwrap().push(n);
                        Ok(())
                    }
                    Sink::Fail => Err(Boom),
                    Sink::Sync(reply_to) => {
                        reply_to.tell(seen.lock().unwrap().len());
                        Ok(())
                    }
                })
            })
        };
        let actor = system
            .spawn_anonymous(
                Behaviors::supervise(owner).on_failure::<Boom>(SupervisorStrategy::restart()),
            )
            .unwrap();
        let adapter = timeout(T, adapters.recv()).await.unwrap().unwrap();
        let producer = tokio::spawn(async move {
            for n in 0..EACH {
                adapter.tell(n);
                if n % 40 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        });
        for _ in 0..3 {
            actor.tell(Sink::Fail);
            tokio::task::yield_now().await;
        }
        timeout(T, producer).await.unwrap().unwrap();
        let count = actor.ask_with(Sink::Sync).timeout(T).await;
        let seen = seen.lock().unwrap().clone();
        let starts = starts.load(SeqCst);
        if count != Ok(EACH as usize) || seen != (0..EACH).collect::<Vec<_>>() || starts != 4 {
            failures.push(format!(
                "round {round}: count {count:?}, starts {starts}, first gap at {:?}",
                seen.iter().enumerate().find(|(i, n)| *i as u64 != **n)
            ));
            if failures.len() >= 3 {
                break;
            }
        }
        system.stop(&actor).unwrap();
    }
    if let Ok(Some(letter)) = timeout(ms(50), letters.recv()).await {
        failures.push(format!("a dead letter: {}", describe(&letter)));
    }
    system.terminate().await;
    assert!(failures.is_empty(), "{failures:#?}");
}
