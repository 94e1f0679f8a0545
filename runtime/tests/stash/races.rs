//! Stashes under producers on a multi-thread runtime, each case run in a bounded loop:
//! per-sender order, a restart discarding the stash, and a stop during a replay (S5,
//! S14, S27, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::races::*;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{BoxError, DeadLetterReason, StashBuffer, StashOverflow};
use tokio::time::sleep;

/// Stashes every item; `Toggle` replays them and switches to `ready`; `Fail` fails.
fn loading(stash: StashBuffer<Work>, handled: Shared) -> Behavior<Work> {
    Behaviors::receive_message(move |w: Work| -> Result<Behavior<Work>, BoxError> {
        match w {
            Work::Toggle => Ok(stash.unstash_all(ready(stash.clone(), handled.clone()))),
            Work::Fail => Err(Boom.into()),
            item => {
                stash.stash(item)?;
                Ok(Behaviors::same())
            }
        }
    })
    .into()
}

/// [`loading`] with a stash of 4096, recording in `handled`.
fn stashing(handled: &Shared) -> Behavior<Work> {
    let h = handled.clone();
    Behaviors::with_stash(4096, move |stash| loading(stash, h.clone())).unwrap()
}

/// Handles items; `Toggle` goes back to `loading`.
fn ready(stash: StashBuffer<Work>, handled: Shared) -> Behavior<Work> {
    Behaviors::receive_message(move |w: Work| match w {
        Work::Toggle => loading(stash.clone(), handled.clone()),
        Work::Item(v) => {
            handled.lock().unwrap().push(v);
            Behaviors::same()
        }
        Work::Fail => Behaviors::same(),
    })
    .into()
}

// S27 + S5: four producers tell an actor that a fifth sender switches 21 times
// between stashing everything and handling it (`unstash_all` replays "at the front of
// the mailbox, in arrival order, ahead of anything that arrived meanwhile"). The last
// switch leaves it handling, so everything is handled, exactly once, and each
// producer's messages in the order sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s27_s5_stash_cycles_under_producers_keep_per_sender_order() {
    in_systems("stash cycles", 30, "stash-cycles", |_, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let actor: ActorRef<Work> = system.spawn(stashing(&handled), "cycler").unwrap();
        let toggler = {
            let actor = actor.clone();
            tokio::spawn(async move {
                for t in 0..21 {
                    actor.tell(Work::Toggle);
                    turns((t % 7) * 5).await;
                }
            })
        };
        let a = actor.clone();
        produce(4, 400, move |v| a.tell(Work::Item(v))).await;
        toggler.await.unwrap();
        let expected = all(4, 400);
        let (got, found) = accounted(&mut letters, &handled, &expected, work_item).await?;
        none(&found, "dead letters", 5)?;
        fifo(&got)
    })
    .await;
}

// S14 + S27 + S31 + S5: an actor stashing under four producers restarts (a `Fail`
// from a fifth sender): "the stash is emptied (its messages become dead letters)"
// with `StashDiscarded`, while what was still in the mailbox is kept by the restart
// and stashed again by the new incarnation, then replayed on `Toggle`. Every item is
// handled or a `StashDiscarded` letter, exactly once; the handled ones in each
// producer's order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s14_s27_s31_a_restart_discards_the_stash_under_producers_and_loses_nothing_else() {
    let what = "restart discards stash";
    in_systems(what, 40, "stash-restart", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let actor: ActorRef<Work> = system
            .spawn(
                Behaviors::supervise(stashing(&handled))
                    .on_failure::<Boom>(SupervisorStrategy::restart()),
                "stasher",
            )
            .unwrap();
        let controller = {
            let actor = actor.clone();
            tokio::spawn(async move {
                turns((i % 5) * 20).await;
                actor.tell(Work::Fail);
                turns((i % 3) * 20).await;
                actor.tell(Work::Toggle);
            })
        };
        let a = actor.clone();
        produce(4, 300, move |v| a.tell(Work::Item(v))).await;
        controller.await.unwrap();
        let expected = all(4, 300);
        let (got, found) = accounted(&mut letters, &handled, &expected, work_item).await?;
        reasons(&found, &DeadLetterReason::StashDiscarded)?;
        fifo(&got)
    })
    .await;
}

/// Stashes items until `Toggle`, then handles each slowly (1 ms), recording it first.
fn slow_after_unstash(stash: StashBuffer<Work>, handled: Shared) -> Behavior<Work> {
    Behaviors::receive_message(move |w: Work| -> Result<Behavior<Work>, StashOverflow> {
        match w {
            Work::Toggle => {
                let h = handled.clone();
                Ok(
                    stash.unstash_all(Behaviors::receive_message_async(async move |w: Work| {
                        if let Work::Item(v) = w {
                            h.lock().unwrap().push(v);
                            sleep(ms(1)).await;
                        }
                    })),
                )
            }
            item => {
                stash.stash(item)?;
                Ok(Behaviors::same())
            }
        }
    })
    .into()
}

// S27 + S31 + stash docs ("a system message (a stop, a watched actor's end) still
// outranks the replayed messages, so a stop during a replay is honoured, and what was
// not replayed yet becomes dead letters (RecipientStopped)"): 500 stashed items, then
// `Toggle` (replay at 1 ms each) and at once a stop. Far fewer than 500 are handled,
// and every item is handled or one `RecipientStopped` letter.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s27_s31_a_stop_during_a_replay_is_honoured_and_letters_the_rest() {
    let what = "stop during replay";
    in_systems(what, 10, "replay-stop", |i, system| async move {
        let (mut letters, handled) = (dead_letters(&system), shared());
        let h = handled.clone();
        let actor: ActorRef<Work> = system
            .spawn(
                Behaviors::with_stash(1000, move |stash| slow_after_unstash(stash, h.clone()))
                    .unwrap(),
                "replayer",
            )
            .unwrap();
        let mut probe = TestProbe::<u64>::new(&system);
        probe.watch(&actor);
        for s in 0..500 {
            actor.tell(Work::Item(enc(0, s)));
        }
        actor.tell(Work::Toggle);
        turns(i % 4).await;
        system.stop(&actor).unwrap();
        probe.expect_terminated(&actor, T).await;
        let expected = all(1, 500);
        let (got, found) = accounted(&mut letters, &handled, &expected, work_item).await?;
        reasons(&found, &DeadLetterReason::RecipientStopped)?;
        fifo(&got)?;
        if len(&handled) >= 250 {
            return Err(format!(
                "{} of 500 replayed messages handled after the stop",
                len(&handled)
            ));
        }
        Ok(())
    })
    .await;
}
