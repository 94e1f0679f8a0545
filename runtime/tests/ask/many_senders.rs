//! Asks and tells from many tasks: to a stopped actor each becomes a letter, each
//! sender's order holds, an ask keeps its place among its sender's tells and offers,
//! and queued asks fail when their target stops after an await (S3, S5, S6, S23).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use crate::support::past_happy_paths::*;
use outside::{T, describe, letters, letters_for, ms, no_letter_for};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, DeadLetterReason};
use tokio::time::{Instant, timeout};

/// S3, S31: four tasks on a multi-thread runtime tell and offer to an actor that has
/// stopped; no tell fails or blocks, every offer resolves `false`, and each of the
/// 1 200 messages becomes its own dead letter (`RecipientStopped`) with its value.
/// A tell to itself from its own `PostStop` is a letter too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_s31_tells_and_offers_from_many_tasks_to_a_stopped_actor_each_become_a_letter() {
    let system = ActorSystem::new("late-tells").unwrap();
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let target = system
        .spawn(
            Behaviors::receive_message(|_: u64| Behaviors::stopped::<u64>()).on_signal(
                |ctx: &mut ActorContext<u64>, signal| {
                    if *signal == Signal::PostStop {
                        ctx.self_ref().tell(999_999_u64);
                    }
                },
            ),
            "gone",
        )
        .unwrap();
    probe.watch(&target);
    target.tell(0_u64);
    probe.expect_terminated(&target, T).await;
    let first = letters_for(&mut sub, target.path(), 1).await;
    assert_eq!(first[0].take_message::<u64>(), Some(999_999));

    let mut tasks = Vec::new();
    for sender in 0..4_u64 {
        let target = target.clone();
        tasks.push(tokio::spawn(async move {
            for seq in 0..250 {
                target.tell(sender * 1_000 + seq);
            }
            let mut refused = 0;
            for seq in 250..300 {
                if !target.offer(sender * 1_000 + seq).await {
                    refused += 1;
                }
            }
            refused
        }));
    }
    for task in tasks {
        assert_eq!(timeout(T, task).await.unwrap().unwrap(), 50);
    }
    let got = letters_for(&mut sub, target.path(), 1_200).await;
    let mut values = HashSet::new();
    for letter in &got {
        assert!(
            matches!(letter.reason(), DeadLetterReason::RecipientStopped),
            "{}",
            describe(letter)
        );
        values.insert(letter.take_message::<u64>().expect("the value is kept"));
    }
    let sent: HashSet<u64> = (0..4)
        .flat_map(|s| (0..300).map(move |q| s * 1_000 + q))
        .collect();
    assert_eq!(values, sent);
    no_letter_for(&mut sub, target.path(), ms(50)).await;
    system.terminate().await;
}

#[message]
pub struct Go {
    pub to: ActorRef<CollectorMsg>,
    pub sender: u64,
}

/// S5, S4: on an unbounded mailbox, three tasks and three actors (each sending its
/// whole batch from one handler) tell 500 items each, all at once: every item
/// arrives, each sender's in order, one handler at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_s4_tasks_and_actors_telling_one_actor_all_arrive_in_each_senders_order() {
    let system = ActorSystem::new("many-senders").unwrap();
    let (value, overlaps) = collector();
    let actor = system.spawn(value, "collector").unwrap();
    let mut actors = Vec::new();
    for n in 0..3 {
        actors.push(
            system
                .spawn(
                    Behaviors::receive_message(|go: Go| {
                        for seq in 0..500 {
                            go.to.tell(Item {
                                sender: go.sender,
                                seq,
                            });
                        }
                    }),
                    &format!("sender-{n}"),
                )
                .unwrap(),
        );
    }
    for (n, sender) in actors.iter().enumerate() {
        sender.tell(Go {
            to: actor.clone(),
            sender: 10 + n as u64,
        });
    }
    let mut tasks = Vec::new();
    for sender in 1..=3_u64 {
        let actor = actor.clone();
        tasks.push(tokio::spawn(async move {
            for seq in 0..500 {
                actor.tell(Item { sender, seq });
                if seq % 50 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    for task in tasks {
        timeout(T, task).await.unwrap().unwrap();
    }
    let mut probe = TestProbe::<Vec<u64>>::new(&system);
    let deadline = Instant::now() + T;
    let seen = loop {
        actor.tell(ReportTo {
            reply_to: probe.actor_ref().clone(),
        });
        let seen = probe.expect_message(T).await;
        if seen.len() == 3_000 || Instant::now() > deadline {
            break seen;
        }
        // The actor senders may still be sending: ask again once the probe answered.
    };
    let map = per_sender(&seen);
    assert_eq!(map.len(), 6, "{:?}", map.keys().collect::<Vec<_>>());
    for (sender, seqs) in &map {
        assert_eq!(
            seqs,
            &(0..500).collect::<Vec<u64>>(),
            "sender {sender} lost or reordered items"
        );
    }
    assert_eq!(overlaps.load(SeqCst), 0);
    system.terminate().await;
}

// =================================================================================
// 8. Further edges (S5, S6, S9, S15, S17, S28)
// =================================================================================

#[message(reply = u64)]
pub struct SeenFrom(pub u64);

/// Counts the items from each sender.
#[derive(Clone, Default)]
pub struct Tally2 {
    from: BTreeMap<u64, u64>,
}

#[actor]
impl Tally2 {
    async fn item(&mut self, item: Item) {
        if item.seq.is_multiple_of(4) {
            tokio::task::yield_now().await;
        }
        *self.from.entry(item.sender).or_default() += 1;
    }

    fn seen_from(&mut self, SeenFrom(sender): SeenFrom) -> u64 {
        self.from.get(&sender).copied().unwrap_or(0)
    }
}

/// S5, S21: an ask travels in order with its sender's tells and offers: four tasks
/// on a multi-thread runtime each tell, offer and ask in turn, and every answer
/// counts exactly the items that sender sent before asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_an_ask_keeps_its_place_among_its_senders_tells_and_offers() {
    let system = ActorSystem::new("ask-in-line").unwrap();
    let actor = system.spawn(Tally2::default(), "tally").unwrap();
    let mut tasks = Vec::new();
    for sender in 1..=4_u64 {
        let actor = actor.clone();
        tasks.push(tokio::spawn(async move {
            let mut sent = 0;
            for seq in 0..300 {
                if seq % 2 == 0 {
                    actor.tell(Item { sender, seq });
                } else {
                    assert!(actor.offer(Item { sender, seq }).await);
                }
                sent += 1;
                if seq % 25 == 24 {
                    let counted = actor.ask(SeenFrom(sender)).timeout(T).await.unwrap();
                    assert_eq!(counted, sent, "sender {sender} after {sent} items");
                }
            }
        }));
    }
    for task in tasks {
        timeout(T, task).await.unwrap().unwrap();
    }
    system.terminate().await;
}

/// S6, S23, S31: an async handler that answers `stopped` after awaiting: what was
/// queued behind it becomes dead letters (`RecipientStopped`) and a queued ask fails
/// at once with `TargetTerminated`.
#[tapio::test(start_paused = true)]
async fn s6_s23_stopped_after_an_await_letters_the_queue_and_fails_queued_asks(
    system: ActorSystem,
) {
    let mut sub = letters(&system);
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |_ctx: &mut ActorContext<Step>, step: Step| {
                tokio::time::sleep(ms(100)).await;
                if step.n == 0 {
                    Behaviors::stopped()
                } else {
                    step.reply_to.tell(step.n);
                    Behaviors::same()
                }
            }),
            "quitter",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    actor.tell(Step {
        n: 0,
        reply_to: probe.actor_ref().clone(),
    });
    actor.tell(Step {
        n: 1,
        reply_to: probe.actor_ref().clone(),
    });
    let asked = actor
        .ask_with(|reply_to| Step { n: 2, reply_to })
        .timeout(Duration::from_secs(60));
    let started = Instant::now();
    let failed = timeout(T, asked).await.expect("not at the deadline");
    assert!(
        matches!(failed, Err(AskError::TargetTerminated { .. })),
        "{failed:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    let lost = letters_for(&mut sub, actor.path(), 1).await;
    assert!(matches!(
        lost[0].reason(),
        DeadLetterReason::RecipientStopped
    ));
    probe.expect_no_message(ms(20)).await;
}
