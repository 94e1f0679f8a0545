//! Mailboxes under producers on a multi-thread runtime, each case run in a bounded
//! loop: a stop, offers in order, `offer_within` timeouts, a stale ref, and the order
//! in which waiting offers are served (S2, S5, S30, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::races::*;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetterReason, MailboxConfig, OverflowStrategy, SpawnError};
use tokio::sync::Notify;
use tokio::task::{JoinSet, yield_now};
use tokio::time::{Instant, timeout};

// S31 + S18: four producers tell an actor while it is stopped, from outside
// (`system.stop`) or by itself (`Behaviors::stopped()` on one message), at a point
// that moves from iteration to iteration. Every message is handled or is a
// `RecipientStopped` dead letter, exactly once; a tell after the stop is a letter too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s31_producers_racing_a_stop_handle_or_letter_each_message_once() {
    let what = "stop under producers";
    in_systems(what, 100, "stop-race", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let self_stop = i % 2 == 1;
        let k = (i as u64 * 37) % 300;
        let trigger = enc(i as u64 % 4, k);
        let actor: ActorRef<u64> = system
            .spawn(
                Behaviors::receive_message(move |v: u64| {
                    h.lock().unwrap().push(v);
                    if self_stop && v == trigger {
                        Behaviors::stopped()
                    } else {
                        Behaviors::same()
                    }
                }),
                "target",
            )
            .unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&actor);
        let stopper =
            (!self_stop).then(|| stop_when_handled(&system, &actor, &handled, k as usize));
        let a = actor.clone();
        produce(4, 300, move |v| a.tell(v)).await;
        if let Some(stopper) = stopper {
            stopper.await.unwrap()?;
        }
        probe.expect_terminated(&actor, T).await;
        actor.tell(enc(9, 0));
        let mut expected = all(4, 300);
        expected.push(enc(9, 0));
        let (got, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/target")).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        fifo(&got)
    })
    .await;
}

// S30 + S5: four producers `offer` into a mailbox of capacity 4: each offer resolves
// (none hangs) to `true`, everything is handled, nothing is a dead letter, and each
// producer's order holds ("Waiting offers are served in the order they began to
// wait").
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s30_s5_offers_from_many_producers_all_arrive_in_order() {
    in_systems("offers", 10, "offers", |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let sink = slow_sink(&system, &handled, 4);
        let (mut tasks, refused, hung) = offerers(&sink, 4, 300, T);
        join_all(&mut tasks).await;
        let not_true = len(&refused) + len(&hung);
        if not_true != 0 {
            return Err(format!("{not_true} offers refused or hung"));
        }
        let expected = all(4, 300);
        let (got, _) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/sink")).await?;
        fifo(&got)
    })
    .await;
}

// S30 + S31: `offer_within` with tiny deadlines against a slow sink of capacity 1:
// "`false` if there was none by then, and the message is a dead letter
// (OfferTimedOut)". A `true` is handled, a `false` is one `OfferTimedOut` letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s30_s31_offer_within_timeouts_are_lettered_exactly_once() {
    in_systems("offer_within", 6, "offer-within", |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let sink = slow_sink(&system, &handled, 1);
        let refused = shared();
        let mut tasks = JoinSet::new();
        for p in 0..4 {
            let (sink, refused) = (sink.clone(), refused.clone());
            tasks.spawn(async move {
                for s in 0..150_u64 {
                    let within = Duration::from_micros((s * 37 + p * 11) % 1500);
                    if !sink.offer_within(enc(p, s), within).await {
                        refused.lock().unwrap().push(enc(p, s));
                    }
                }
            });
        }
        timeout(T, join_all(&mut tasks))
            .await
            .map_err(|_| "the offers did not finish".to_string())?;
        let expected = all(4, 150);
        let (got, found) =
            accounted(&mut letters, &handled, &expected, u64_under("/user/sink")).await?;
        reasons(&found, &DeadLetterReason::OfferTimedOut)?;
        one_letter_each(&found, &refused, "offers said false", "letters")?;
        fifo(&got)
    })
    .await;
}

// S2 + S14 + S31: producers keep telling a ref while its actor is stopped and a new
// actor is spawned under the same name ("A name frees up when the actor has
// stopped"). A ref names one incarnation (its uid): the new actor never handles what
// was told through the old ref, and each such message was handled by the old actor
// or is one `RecipientStopped` letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s2_s31_a_stale_ref_never_reaches_the_new_actor_of_the_same_name() {
    in_systems("name reuse", 30, "reuse", |i, system| async move {
        let mut letters = dead_letters(&system);
        let (old_handled, new_handled) = (shared(), shared());
        let old: ActorRef<u64> = system.spawn(recorder(&old_handled), "reuse").unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&old);
        let k = (i * 19) % 500;
        let replacer = {
            let (system, old, old_handled, new_handled) = (
                system.clone(),
                old.clone(),
                old_handled.clone(),
                new_handled.clone(),
            );
            tokio::spawn(async move {
                wait_for("k handled", || len(&old_handled) >= k).await?;
                system.stop(&old).unwrap();
                let deadline = Instant::now() + T;
                loop {
                    match system.spawn(recorder(&new_handled), "reuse") {
                        Ok(new) => return Ok::<ActorRef<u64>, String>(new),
                        Err(SpawnError::NameTaken { .. }) if Instant::now() < deadline => {
                            yield_now().await
                        }
                        Err(e) => return Err(format!("respawn: {e}")),
                    }
                }
            })
        };
        let o = old.clone();
        produce(4, 250, move |v| o.tell(v)).await;
        let new = replacer.await.unwrap()?;
        probe.expect_terminated(&old, T).await;
        old.tell(enc(9, 0));
        if new.uid() == old.uid() {
            return Err("the new actor has the old uid".into());
        }
        let mut expected = all(4, 250);
        expected.push(enc(9, 0));
        let found = settle(
            &mut letters,
            &old_handled,
            expected.len(),
            u64_under("/user/reuse"),
        )
        .await;
        if len(&new_handled) != 0 {
            return Err(format!(
                "the new actor handled {} messages told to the old ref",
                len(&new_handled)
            ));
        }
        account(&expected, &snapshot(&old_handled), &values(&found))?;
        reasons(&found, &DeadLetterReason::RecipientStopped)
    })
    .await;
}

// S30 + `offer` docs ("Waiting offers are served in the order they began to wait"):
// a sink of capacity 1, stalled in an `async` handler with one message queued behind
// it; eight offers from eight tasks, each begun (polled once, so waiting) before the
// next; then the sink is released. The eight are handled in the order they began to
// wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s30_waiting_offers_are_served_in_the_order_they_began_to_wait() {
    in_systems("offer order", 30, "offer-order", |i, system| async move {
        let handled = shared();
        let gate = Arc::new(Notify::new());
        let (h, g) = (handled.clone(), gate.clone());
        let sink: ActorRef<u64> = system
            .spawn_with(
                Behaviors::receive_message_async(async move |v: u64| {
                    if v == u64::MAX {
                        g.notified().await;
                    } else {
                        h.lock().unwrap().push(v);
                    }
                }),
                "sink",
                MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
            )
            .unwrap();
        sink.tell(u64::MAX); // taken, and the handler waits on the gate
        let filler = enc(9, 0);
        if !timeout(T, sink.offer(filler))
            .await
            .map_err(|_| "the filler offer hung".to_string())?
        {
            return Err("the filler was refused".into());
        }
        let mut tasks = JoinSet::new();
        for k in 0..8_u64 {
            let mut offer = sink.offer(enc(0, k));
            std::future::poll_fn(|cx| {
                if std::pin::Pin::new(&mut offer).poll(cx).is_ready() {
                    return std::task::Poll::Ready(Err(format!("offer {k} did not wait")));
                }
                std::task::Poll::Ready(Ok(()))
            })
            .await?;
            tasks.spawn(async move { timeout(T, offer).await });
            turns((k as usize + i) % 3).await;
        }
        gate.notify_one();
        while let Some(done) = tasks.join_next().await {
            if done.unwrap() != Ok(true) {
                return Err("an offer was refused or hung".into());
            }
        }
        wait_for("nine handled", || len(&handled) >= 9).await?;
        let got: Vec<String> = snapshot(&handled).into_iter().map(show).collect();
        let want: Vec<String> = std::iter::once(filler)
            .chain((0..8).map(|k| enc(0, k)))
            .map(show)
            .collect();
        if got != want {
            return Err(format!("handled in the order {got:?}"));
        }
        Ok(())
    })
    .await;
}
