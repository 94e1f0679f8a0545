//! An offer on a full drop-oldest mailbox waits and drops nothing, and
//! `spawn_anonymous_with` gets a generated name and its bound (S2, S29, S30).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{T, expect_lines, letters, letters_for, ms, next, no_letter_for};
use std::sync::Arc;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetterReason, MailboxConfig, OverflowStrategy};
use tokio::sync::{Notify, mpsc};
use tokio::time::timeout;

// =================================================================================
// 3. Mailboxes and names
// =================================================================================

/// S30, S29, S31: on a full drop-oldest mailbox an `offer` waits and pushes nothing
/// out ("an offer never drops anything"), while a `tell` there pushes out the
/// oldest; once there is room the offer is accepted and its message handled.
#[tapio::test(start_paused = true)]
async fn s30_s29_an_offer_on_a_full_drop_oldest_mailbox_waits_and_drops_nothing(
    system: ActorSystem,
) {
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let gate = Arc::new(Notify::new());
    let held = gate.clone();
    let actor = system
        .spawn_with(
            Behaviors::receive_message_async(async move |n: u64| {
                if n == 0 {
                    to.tell("in 0".to_string());
                    held.notified().await;
                }
                to.tell(format!("got {n}"));
            }),
            "oldest",
            MailboxConfig::bounded(2, OverflowStrategy::DropOldest).unwrap(),
        )
        .unwrap();
    actor.tell(0_u64);
    expect_lines(&mut probe, &["in 0"]).await;
    actor.tell(1_u64);
    actor.tell(2_u64);
    let offering = actor.clone();
    let offer = tokio::spawn(async move { offering.offer(3_u64).await });
    tokio::time::sleep(ms(100)).await;
    assert!(!offer.is_finished(), "the offer waits for room");
    no_letter_for(&mut sub, actor.path(), ms(50)).await;
    actor.tell(4_u64);
    let pushed = letters_for(&mut sub, actor.path(), 1).await.remove(0);
    assert_eq!(pushed.reason(), &DeadLetterReason::PushedOut);
    assert_eq!(pushed.take_message::<u64>(), Some(1));
    assert!(!offer.is_finished(), "still waiting after the tell");
    gate.notify_one();
    assert!(timeout(T, offer).await.unwrap().unwrap(), "accepted");
    let mut got = probe.receive_messages(4, T).await;
    got.sort();
    assert_eq!(got, ["got 0", "got 2", "got 3", "got 4"]);
    no_letter_for(&mut sub, actor.path(), ms(200)).await;
}

/// S2, S29: `spawn_anonymous_with`, from the system and from a context, gives a
/// generated (`$`) name under the right parent and applies the mailbox bound given.
#[tapio::test(start_paused = true)]
async fn s2_s29_spawn_anonymous_with_gets_a_generated_name_and_its_bound(system: ActorSystem) {
    let mut sub = letters(&system);
    let mut probe = TestProbe::<String>::new(&system);
    let gate = Arc::new(Notify::new());
    let gated = {
        let gate = gate.clone();
        let to = probe.actor_ref().clone();
        move || {
            let gate = gate.clone();
            let to = to.clone();
            Behaviors::receive_message_async(async move |n: u64| {
                to.tell(format!("in {n}"));
                if n == 1 {
                    gate.notified().await;
                }
            })
        }
    };
    let bound = MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap();
    let top: ActorRef<u64> = system.spawn_anonymous_with(gated(), bound).unwrap();
    assert!(top.path().name().starts_with('$'), "{}", top.path());
    assert_eq!(
        top.path().to_string(),
        format!("/user/{}", top.path().name())
    );

    let (child_tx, mut child_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let make = gated.clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let child = ctx.spawn_anonymous_with(make(), bound).unwrap();
                let _ = child_tx.send(child);
                Behaviors::receive_message(|_: u64| ())
            }),
            "parent",
        )
        .unwrap();
    let child = next(&mut child_rx).await;
    assert!(child.path().name().starts_with('$'), "{}", child.path());
    assert_eq!(
        child.path().to_string(),
        format!("{}/{}", parent.path(), child.path().name())
    );
    for actor in [&top, &child] {
        actor.tell(1_u64);
        expect_lines(&mut probe, &["in 1"]).await;
        actor.tell(2_u64);
        actor.tell(3_u64);
        let letter = letters_for(&mut sub, actor.path(), 1).await.remove(0);
        assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull);
        assert_eq!(letter.take_message::<u64>(), Some(3));
    }
    gate.notify_one();
    gate.notify_one();
    let mut got = probe.receive_messages(2, T).await;
    got.sort();
    assert_eq!(got, ["in 2", "in 2"]);
}
