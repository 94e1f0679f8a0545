//! A bounded mailbox keeps its bound during a backoff, and an ask whose handler fails
//! under restart is unanswered at once (S11, S13, S23, S29).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::with_other_features::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason, MailboxConfig, OverflowStrategy};

/// A request whose handler fails when asked to.
#[message(reply = Pong)]
#[derive(Debug, Clone)]
pub struct Risky(pub bool);

#[derive(Clone)]
pub struct Fragile;

#[actor]
impl Fragile {
    fn risky(&mut self, Risky(fail): Risky) -> Result<Pong, Boom> {
        if fail { Err(Boom) } else { Ok(Pong(1)) }
    }
}

#[message]
#[derive(Debug, Clone)]
pub enum Job {
    Fail,
    Work(u64),
}

// =================================================================================
// 3. Supervision, timers and mailboxes
// =================================================================================

// S13 + S29: while an actor backs off, its bounded mailbox keeps filling, but only to
// its bound: the first three notes wait for the next incarnation, the seven beyond the
// bound are `MailboxFull` dead letters, in the order sent.
#[tapio::test(start_paused = true)]
async fn s13_s29_a_bounded_mailbox_keeps_its_bound_during_a_backoff(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let generations = Arc::new(AtomicU64::new(0));
    let counted = generations.clone();
    let worker = system
        .spawn_with(
            Behaviors::supervise(Behaviors::setup(move |_ctx| {
                let generation = counted.fetch_add(1, Ordering::SeqCst) + 1;
                let report = report.clone();
                Behaviors::receive_message(move |job: Job| match job {
                    Job::Fail => {
                        report.tell(999);
                        Err(Boom)
                    }
                    Job::Work(n) => {
                        report.tell(generation * 100 + n);
                        Ok(Behaviors::same())
                    }
                })
            }))
            .on_failure::<Boom>(
                SupervisorStrategy::restart()
                    .with_backoff(tapio::Backoff::new(ms(300), ms(300), 0.0).unwrap()),
            ),
            "worker",
            MailboxConfig::bounded(3, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    worker.tell(Job::Fail);
    assert_eq!(probe.expect_message(BOUND).await, 999);
    for n in 1..=10 {
        worker.tell(Job::Work(n));
    }
    let mut refused = Vec::new();
    for _ in 4..=10 {
        let letter = letter_where(&mut letters, BOUND, |l| l.recipient() == worker.path()).await;
        assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull, "{letter}");
        match letter.take_message::<Job>() {
            Some(Job::Work(n)) => refused.push(n),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(refused, [4, 5, 6, 7, 8, 9, 10]);
    assert_eq!(probe.receive_messages(3, BOUND).await, [201, 202, 203]);
    probe.expect_no_message(ms(100)).await;
    assert_eq!(generations.load(Ordering::SeqCst), 2);
}

// S23 + S11 + S9: a request whose handler fails under a restart strategy is dropped
// with its reply slot: the ask fails at once as `Unanswered` (the target did not
// stop, and nobody will answer), the failure never reaches the asker, and the next
// incarnation answers the next ask.
#[tapio::test]
async fn s23_s11_an_ask_whose_handler_fails_under_restart_is_unanswered_at_once(
    system: ActorSystem,
) {
    let fragile = system
        .spawn(
            Behaviors::supervise(Fragile).on_failure::<Boom>(SupervisorStrategy::restart()),
            "fragile",
        )
        .unwrap();
    let started = Instant::now();
    let asked = fragile
        .ask(Risky(true))
        .timeout(Duration::from_secs(10))
        .await;
    assert_unanswered_at_once(&asked, started);
    assert_eq!(
        fragile.ask(Risky(false)).timeout(BOUND).await.unwrap(),
        Pong(1)
    );
}
