//! A duration too large for the clock is a deadline that never comes (the rustdoc of
//! timers, asks, backoff, `offer_within` and `shutdown_timeout` says so): not a deadline a century
//! (or tokio's thirty years) away, which a paused clock reaches as soon as the
//! runtime idles. Each test lets two hundred years of paused time pass and checks
//! that nothing happened, then that the thing still works.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::pass_two_centuries;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tapio::prelude::*;
use tapio::{MailboxConfig, OverflowStrategy};
use tokio::sync::{Notify, mpsc};
use tokio::time::timeout;

/// The bound on every wait (paused time: it passes only when all else idles).
const T: Duration = Duration::from_secs(5);

// Timers and a backoff of `Duration::MAX` over two centuries are checked in
// `api_edges.rs`: `s25_timers_of_duration_max_never_fire_and_break_nothing` and
// `s13_a_backoff_of_duration_max_stays_absent_and_a_stop_is_prompt`.

#[message]
enum Cmd {
    /// Keep the reply ref, answer nothing yet.
    Hold(ActorRef<u64>),
    /// Answer every held reply ref with this number.
    Release(u64),
}

/// Holds reply refs until told to answer them.
fn holder() -> Behavior<Cmd> {
    let held: Mutex<Vec<ActorRef<u64>>> = Mutex::new(Vec::new());
    Behaviors::receive_message(move |cmd: Cmd| match cmd {
        Cmd::Hold(to) => held.lock().unwrap().push(to),
        Cmd::Release(n) => {
            for to in held.lock().unwrap().drain(..) {
                to.tell(n);
            }
        }
    })
    .into()
}

// S22: an ask with a deadline of `Duration::MAX` is still waiting two centuries on,
// and gets the answer when it comes.
#[tapio::test(start_paused = true)]
async fn s22_an_ask_of_duration_max_waits_two_centuries_for_its_answer(system: ActorSystem) {
    let holder = system.spawn(holder(), "holder").unwrap();
    let asked = holder.ask_with(Cmd::Hold).timeout(Duration::MAX);
    let waiting = tokio::spawn(async move { asked.await });
    pass_two_centuries().await;
    assert!(!waiting.is_finished(), "{:?}", waiting.await);
    holder.tell(Cmd::Release(7));
    assert_eq!(timeout(T, waiting).await.unwrap().unwrap(), Ok(7));
}

/// An actor whose `PostStop` waits until it is released (a stop cuts an `async`
/// message handler short, but `PostStop` runs to its end: only the shutdown deadline
/// gives up on it).
#[derive(Clone)]
struct Lingering {
    release: Arc<Notify>,
    closing: mpsc::UnboundedSender<()>,
}

#[actor]
impl Lingering {
    fn ping(&mut self, _: u64) {}

    #[signal]
    async fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            let _ = self.closing.send(());
            self.release.notified().await;
        }
    }
}

// S31: under a `shutdown_timeout` of `Duration::MAX`, `terminate` waits for a
// `PostStop` however long it takes (two centuries on, it still waits), and returns
// once it ends.
#[tokio::test(start_paused = true)]
async fn s31_a_shutdown_timeout_of_duration_max_waits_two_centuries_for_a_post_stop() {
    let system = ActorSystem::builder("patient")
        .shutdown_timeout(Duration::MAX)
        .build()
        .unwrap();
    let release = Arc::new(Notify::new());
    let (closing, mut closed) = mpsc::unbounded_channel();
    system
        .spawn(
            Lingering {
                release: release.clone(),
                closing,
            },
            "lingering",
        )
        .unwrap();
    let terminating = tokio::spawn(system.terminate());
    assert_eq!(timeout(T, closed.recv()).await, Ok(Some(())));
    pass_two_centuries().await;
    assert!(!terminating.is_finished());
    release.notify_one();
    timeout(T, terminating).await.unwrap().unwrap();
    assert_eq!(system.live_actors(), 0);
}

// S30: `offer_within` a wait of `Duration::MAX` into a full mailbox is still waiting
// two centuries on (no `OfferTimedOut`), and is accepted once there is room.
#[tapio::test(start_paused = true)]
async fn s30_an_offer_within_duration_max_waits_two_centuries_for_room(system: ActorSystem) {
    let gate = Arc::new(Notify::new());
    let (taken, mut seen) = mpsc::unbounded_channel();
    let held = gate.clone();
    let sink = system
        .spawn_with(
            Behaviors::receive_message_async(async move |n: u64| {
                let _ = taken.send(n);
                held.notified().await;
            }),
            "sink",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    sink.tell(1_u64);
    // Taken into the handler, which waits at the gate; then 2 fills the one place.
    assert_eq!(timeout(T, seen.recv()).await, Ok(Some(1)));
    sink.tell(2_u64);
    let waiting = {
        let sink = sink.clone();
        tokio::spawn(async move { sink.offer_within(3_u64, Duration::MAX).await })
    };
    pass_two_centuries().await;
    assert!(!waiting.is_finished());
    for next in [2, 3] {
        gate.notify_one();
        assert_eq!(timeout(T, seen.recv()).await, Ok(Some(next)));
    }
    assert!(timeout(T, waiting).await.unwrap().unwrap());
}
