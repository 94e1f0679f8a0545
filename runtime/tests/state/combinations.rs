//! State machines with other features: a bounded stashing state, ticks and adapted
//! messages meeting the current state, a pool of machines, the behavior kit, and an ask
//! held by a state discarded by a restart (S23, S26, S28, S32, S34, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::combinations::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, TestInbox, TestProbe};
use tapio::{AskError, DeadLetter, DeadLetterReason, OverflowStrategy, StashOverflow, TimerMode};
use tokio::time::{Instant, timeout};

/// The next value on a std channel, waited for without blocking the runtime.
async fn recv_std<V>(rx: &std::sync::mpsc::Receiver<V>) -> V {
    timeout(T, async {
        loop {
            if let Ok(value) = rx.try_recv() {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("a value in time")
}

// ---------------------------------------------------------------------------------
// State machines with bounds, stashes, adapters, timers and restarts (S24, S28, S34)
// ---------------------------------------------------------------------------------

#[message]
pub struct Fill(pub u64);

#[message]
pub struct Go;

#[message]
pub struct Refill;

#[message]
pub struct Kick;

#[message(reply = &'static str)]
pub struct Where;

#[message(reply = u64)]
pub struct Level;

#[message(reply = u64)]
pub struct Poured;

pub struct Vat {
    out: ActorRef<u64>,
    level: u64,
}

#[actor(
    stash_capacity = 3,
    messages(Fill, Go, Refill, Where, Level, Poured),
    states(Filling => Pouring, Pouring => Filling)
)]
impl Vat {}

pub struct Filling;

#[state(Vat, unhandled = stash)]
impl Filling {
    fn go(self, _: Go) -> Next<Self> {
        Next::to(Pouring)
    }

    fn locate(&mut self, _: Where) -> &'static str {
        "filling"
    }

    fn level(&mut self, vat: &mut Vat, _: Level) -> u64 {
        vat.level
    }
}

pub struct Pouring;

#[state(Vat)]
impl Pouring {
    fn fill(&mut self, vat: &mut Vat, Fill(n): Fill) {
        vat.level += n;
        vat.out.tell(n);
    }

    fn refill(self, _: Refill) -> Next<Self> {
        Next::to(Filling)
    }

    fn locate(&mut self, _: Where) -> &'static str {
        "pouring"
    }

    fn poured(&mut self, vat: &mut Vat, _: Poured) -> u64 {
        vat.level
    }
}

/// A vat, counting its setups.
fn vat(out: ActorRef<u64>, setups: Arc<AtomicUsize>) -> Behavior<VatMsg> {
    Behaviors::setup(move |_| {
        setups.fetch_add(1, Ordering::SeqCst);
        Machine::new(
            Vat {
                out: out.clone(),
                level: 0,
            },
            Filling,
        )
    })
}

/// The number in a letter for a `Fill`.
fn fill_number(letter: &DeadLetter) -> u64 {
    letter
        .take_message::<Fill>()
        .map(|Fill(n)| n)
        .unwrap_or_else(|| panic!("not a Fill: {letter} ({})", letter.message_type()))
}

// S34 + S26 + S27 + S29 + S14: a stashing state behind a mailbox bound of two holds
// three and replays them all at the switch; later an overflow of its stash (capacity
// 3) fails it, the restart returns to the initial state, and the letters say exactly
// what happened: the one that did not fit `StashFull`, the held ones `StashDiscarded`.
#[tapio::test(start_paused = true)]
async fn s34_s26_a_bounded_stashing_state_replays_then_overflows_into_a_restart(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let setups = Arc::new(AtomicUsize::new(0));
    let vat = system
        .spawn_with(
            Behaviors::supervise(vat(probe.actor_ref().clone(), setups.clone()))
                .on_failure::<StashOverflow>(SupervisorStrategy::restart()),
            "vat",
            bounded(2, OverflowStrategy::DropNew),
        )
        .unwrap();
    for n in 1..=3 {
        assert!(timeout(T, vat.offer(Fill(n))).await.unwrap());
    }
    assert!(timeout(T, vat.offer(Go)).await.unwrap());
    assert_eq!(probe.receive_messages(3, T).await, [1, 2, 3]);
    assert_eq!(vat.ask(Where).timeout(T).await.unwrap(), "pouring");
    vat.tell(Refill);
    for n in 4..=7 {
        assert!(timeout(T, vat.offer(Fill(n))).await.unwrap());
    }
    let full = letter_within(&mut letters, T).await;
    assert_eq!(full.reason(), &DeadLetterReason::StashFull, "{full}");
    assert_eq!(fill_number(&full), 7);
    eventually(|| setups.load(Ordering::SeqCst) == 2).await;
    assert_eq!(
        vat.ask(Where).timeout(T).await.unwrap(),
        "filling",
        "initial state"
    );
    assert_eq!(vat.ask(Level).timeout(T).await.unwrap(), 0, "fresh data");
    let mut discarded = Vec::new();
    for letter in letters_within(&mut letters, Duration::from_millis(100)).await {
        assert_eq!(letter.recipient(), vat.path(), "{letter}");
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::StashDiscarded,
            "{letter}"
        );
        discarded.push(fill_number(&letter));
    }
    discarded.sort_unstable();
    assert_eq!(discarded, [4, 5, 6]);
    probe.expect_no_message(Duration::from_millis(10)).await;
}

/// A vat with an adapter of `Kick` (translated to `Go`) handed out through
/// `adapters`, and a single timer that sends `Fill(99)` after 10 ms.
fn kicked_vat(
    out: ActorRef<u64>,
    adapters: std::sync::mpsc::Sender<ActorRef<Kick>>,
) -> Behavior<VatMsg> {
    let adapters = Mutex::new(adapters);
    Behaviors::setup(move |ctx| {
        let kick: ActorRef<Kick> = ctx.message_adapter(|_: Kick| Go);
        let _ = adapters.lock().unwrap().send(kick);
        ctx.timers()
            .start_single_timer("refill", Fill(99), Duration::from_millis(10));
        Machine::new(
            Vat {
                out: out.clone(),
                level: 0,
            },
            Filling,
        )
    })
}

// S34 + S28 + S24 + S31: in a state machine, a timer's tick that arrives in a
// stashing state is held and replayed at the switch, the switch can come through a
// message adapter, and an adapted message the current state does not handle is
// refused by that state: exactly one dead letter, naming the state and the owner.
#[tapio::test(start_paused = true)]
async fn s34_s28_ticks_and_adapted_messages_meet_the_current_state(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let (adapters_tx, adapters) = std::sync::mpsc::channel();
    let vat = system
        .spawn(kicked_vat(probe.actor_ref().clone(), adapters_tx), "vat")
        .unwrap();
    let kick = recv_std(&adapters).await;
    vat.tell(Fill(1));
    tokio::time::sleep(Duration::from_millis(50)).await; // the tick: Fill(99), stashed
    vat.tell(Fill(2));
    probe.expect_no_message(Duration::from_millis(10)).await;
    kick.tell(Kick); // -> Go: the switch replays 1, 99, 2
    assert_eq!(probe.receive_messages(3, T).await, [1, 99, 2]);
    kick.tell(Kick); // -> Go, which `Pouring` does not handle
    let refused = letter_within(&mut letters, T).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::NotHandledInState("Pouring")
    );
    assert_eq!(refused.recipient(), vat.path(), "{refused}");
    let more = letters_within(&mut letters, Duration::from_millis(100)).await;
    assert!(more.is_empty(), "one letter for one refusal: {more:?}");
    assert_eq!(
        vat.ask(Level).timeout(T).await.err().map(|e| matches!(
            e,
            AskError::NotHandled {
                state: "Pouring",
                ..
            }
        )),
        Some(true)
    );
}

// S32 + S34 + S21 + S27: asks through a pool of state machines: a request that the
// current state stashes is answered after the routee switches (its reply slot kept
// through the stash); a request that the current state does not handle fails at once
// with `NotHandled`, naming the state.
#[tapio::test(start_paused = true)]
async fn s32_s34_asks_through_a_pool_of_state_machines(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let out = probe.actor_ref().clone();
    let setups = Arc::new(AtomicUsize::new(0));
    let pool = Routers::pool(2, move || vat(out.clone(), setups.clone())).unwrap();
    let router = system.spawn(pool, "vats").unwrap();
    // Strict rotation: odd sends go to routee-1, even ones to routee-2.
    assert_eq!(router.ask(Level).timeout(T).await.unwrap(), 0); // 1: routee-1 (filling)
    router.tell(Go); // 2: routee-2 -> pouring
    router.tell(Fill(5)); // 3: routee-1, stashed
    router.tell(Refill); // 4: routee-2 -> filling
    let poured = router.ask(Poured).timeout(T); // 5: routee-1, stashed with its reply slot
    router.tell(Go); // 6: routee-2 -> pouring
    router.tell(Go); // 7: routee-1 -> pouring: replays Fill(5), then Poured
    assert_eq!(
        poured.await.unwrap(),
        5,
        "the stashed ask answered after the switch"
    );
    assert_eq!(probe.expect_message(T).await, 5);
    // 8: routee-2 pours: `Level` is refused at once, naming the state.
    let started = Instant::now();
    let refused = router.ask(Level).timeout(Duration::from_secs(10)).await;
    assert!(
        matches!(
            refused,
            Err(AskError::NotHandled {
                state: "Pouring",
                ..
            })
        ),
        "{refused:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(router.ask(Where).timeout(T).await.unwrap(), "pouring"); // 9: routee-1
    router.tell(Refill); // 10: routee-2 -> filling
    assert_eq!(router.ask(Where).timeout(T).await.unwrap(), "pouring"); // 11: routee-1
    assert_eq!(router.ask(Level).timeout(T).await.unwrap(), 0); // 12: routee-2 filling
}

// S48 + S34 + S28 + S25 + S27: the behavior test kit runs a state machine built in a
// setup with a message adapter and a timer: the timer is recorded, not run; the
// stashing state holds what it does not handle; the adapted message (queued on the
// kit) switches the state when run, and the replay comes first, in order.
#[test]
fn s48_s34_the_behavior_kit_runs_a_stashing_machine_with_adapter_and_timer() {
    let mut out = TestInbox::<u64>::new();
    let (adapters_tx, adapters) = std::sync::mpsc::channel();
    let mut kit = BehaviorTestKit::new(kicked_vat(out.actor_ref().clone(), adapters_tx));
    kit.expect_effect(Effect::TimerStarted {
        key: "refill".into(),
        mode: TimerMode::Single,
        delay: Duration::from_millis(10),
    });
    let kick = adapters.try_recv().unwrap();
    kit.run(Fill(1)).unwrap();
    kit.run(Fill(99)).unwrap(); // the test plays the timer
    assert!(!out.has_messages(), "stashed while filling");
    kick.tell(Kick);
    kit.run_queued().unwrap();
    assert_eq!(out.messages(), [1, 99], "the replay, in order");
    kit.run(Fill(2)).unwrap();
    assert_eq!(out.messages(), [2]);
    assert!(kit.is_alive());
}

// S34 + S23 + S14: an ask that a stashing state holds, when an overflow of that
// state's stash restarts the machine, gets no answer: it fails at once, not at its
// deadline, and the held `Fill`s are `StashDiscarded` letters.
#[tapio::test(start_paused = true)]
async fn s34_s23_an_ask_held_by_a_state_fails_at_once_when_a_restart_discards_it(
    system: ActorSystem,
) {
    let probe = TestProbe::<u64>::new(&system);
    let setups = Arc::new(AtomicUsize::new(0));
    let vat = system
        .spawn(
            Behaviors::supervise(vat(probe.actor_ref().clone(), setups.clone()))
                .on_failure::<StashOverflow>(SupervisorStrategy::restart()),
            "vat",
        )
        .unwrap();
    let held = vat.ask(Poured).timeout(Duration::from_secs(10)); // stashed by `Filling`
    vat.tell(Fill(1));
    vat.tell(Fill(2)); // the stash (3) is full
    vat.tell(Fill(3)); // overflow: restart
    let started = Instant::now();
    let outcome = held.await;
    assert_fails_at_once(&outcome, started, |e| {
        matches!(e, AskError::Unanswered { .. })
    });
    assert_eq!(setups.load(Ordering::SeqCst), 2);
    assert_eq!(vat.ask(Where).timeout(T).await.unwrap(), "filling");
}
