//! Mailbox: offers still waiting when their target stops resolve false, each message a dead letter (S30, S31).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_orders::*;
use crate::support::outside;
use outside::{T, describe, expect_lines, letters, letters_for, ms};
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{MailboxConfig, OverflowStrategy};
use tokio::time::{Instant, timeout};

/// S30, S31, S19: offers waiting for room in a full bounded mailbox resolve `false`
/// as soon as their target is stopped (not at their own deadline), and the queued
/// tell and each refused offer are one dead letter each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s30_s31_waiting_offers_resolve_false_when_their_target_is_stopped() {
    for round in 0..5 {
        let system = ActorSystem::new(&format!("offers-{round}")).unwrap();
        let mut dead = letters(&system);
        let mut probe = TestProbe::<String>::new(&system);
        let gate = Arc::new(tokio::sync::Notify::new());
        let actor = system
            .spawn_with(
                gated(probe.actor_ref().clone(), gate.clone()),
                "gated",
                MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
            )
            .unwrap();
        actor.tell(1_u64);
        // The first message in hand: the mailbox then has room for one.
        expect_lines(&mut probe, &["waiting 1"]).await;
        assert!(timeout(T, actor.offer(2_u64)).await.unwrap());
        let a = actor.clone();
        let waiting = tokio::spawn(async move { a.offer(3_u64).await });
        let a = actor.clone();
        let within =
            tokio::spawn(async move { a.offer_within(4_u64, Duration::from_secs(60)).await });
        tokio::time::sleep(ms(20)).await;
        assert!(!waiting.is_finished() && !within.is_finished());
        let started = Instant::now();
        system.stop(&actor).unwrap();
        assert!(!timeout(T, waiting).await.unwrap().unwrap());
        assert!(!timeout(T, within).await.unwrap().unwrap());
        assert!(started.elapsed() < Duration::from_secs(5));
        let got = letters_for(&mut dead, actor.path(), 3).await;
        let mut values: Vec<u64> = got
            .iter()
            .map(|l| l.take_message::<u64>().unwrap())
            .collect();
        values.sort_unstable();
        assert_eq!(
            values,
            [2, 3, 4],
            "{:?}",
            got.iter().map(describe).collect::<Vec<_>>()
        );
        probe.expect_no_message(ms(20)).await;
        gate.notify_one();
        timeout(T, system.terminate()).await.unwrap();
    }
}
