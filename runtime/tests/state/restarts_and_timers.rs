//! State machines with restarts and timers: hooks and signals in order across a
//! restart, a timer outliving a switch, and an ask dropped by `otherwise` (S15, S21,
//! S25, S34).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::with_other_features::*;
use std::time::{Duration, Instant};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason};
use tokio::sync::mpsc;

// A lamp whose hooks and signals write to a log.

#[message]
#[derive(Debug, Clone)]
pub struct Flip;

#[message]
#[derive(Debug, Clone)]
pub struct Blow;

pub struct Lamp {
    log: mpsc::UnboundedSender<&'static str>,
}

impl Lamp {
    fn note(&self, line: &'static str) {
        let _ = self.log.send(line);
    }
}

#[actor(messages(Flip, Blow), states(Dark => Lit, Lit => Dark))]
impl Lamp {
    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        match signal {
            Signal::PreRestart => self.note("pre-restart"),
            Signal::PostStop => self.note("post-stop"),
            _ => {}
        }
    }
}

pub struct Dark;

#[state(Lamp)]
impl Dark {
    #[on_entry]
    fn entered(&mut self, lamp: &mut Lamp) {
        lamp.note("enter Dark");
    }

    #[on_exit]
    fn left(lamp: &mut Lamp) {
        lamp.note("exit Dark");
    }

    fn flip(self, _: Flip) -> Next<Self> {
        Next::to(Lit)
    }
}

pub struct Lit;

#[state(Lamp)]
impl Lit {
    #[on_entry]
    fn entered(&mut self, lamp: &mut Lamp) {
        lamp.note("enter Lit");
    }

    #[on_exit]
    fn left(lamp: &mut Lamp) {
        lamp.note("exit Lit");
    }

    fn flip(self, _: Flip) -> Next<Self> {
        Next::to(Dark)
    }

    fn blow(&mut self, _: Blow) -> Result<(), Boom> {
        Err(Boom)
    }
}

// A metronome: a state starts a timer, and the timer outlives the state.

#[message]
#[derive(Debug, Clone)]
pub struct Start;

#[message]
#[derive(Debug, Clone)]
pub struct Beat;

#[message]
#[derive(Debug, Clone)]
pub struct Halt;

#[derive(Clone)]
pub struct Metronome {
    beats: ActorRef<u64>,
    count: u64,
}

#[actor(messages(Start, Beat, Halt), states(Idle => Running, Running => Idle))]
impl Metronome {}

#[derive(Clone)]
pub struct Idle;

#[state(Metronome)]
impl Idle {
    fn start(self, ctx: &mut Ctx<Metronome>, _: Start) -> Next<Self> {
        ctx.timers()
            .start_fixed_rate("beat", Beat, Duration::from_millis(20))
            .expect("a non-zero interval");
        Next::to(Running)
    }
}

#[derive(Clone)]
pub struct Running;

#[state(Metronome)]
impl Running {
    fn beat(&mut self, metronome: &mut Metronome, _: Beat) {
        metronome.count += 1;
        metronome.beats.tell(metronome.count);
    }

    fn halt(self, _: Halt) -> Next<Self> {
        Next::to(Idle)
    }
}

// A sleeper whose first state takes everything it does not handle, and drops it.

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Seven;

#[message]
#[derive(Debug, Clone)]
pub struct Wake;

#[derive(Clone)]
pub struct Sleepy;

#[actor(messages(Seven, Wake), states(Asleep => Awake, Awake))]
impl Sleepy {}

#[derive(Clone)]
pub struct Asleep;

#[state(Sleepy)]
impl Asleep {
    fn wake(self, _: Wake) -> Next<Self> {
        Next::to(Awake)
    }

    #[otherwise]
    fn drop_it(&mut self, message: SleepyMsg) {
        drop(message);
    }
}

#[derive(Clone)]
pub struct Awake;

#[state(Sleepy)]
impl Awake {
    fn seven(&mut self, _: Seven) -> u64 {
        7
    }
}

// S34 + S15 + S7: entry and exit hooks run at start and around each switch (exit of
// the state left, then entry of the state entered); a restart is not a switch:
// `PreRestart` reaches the failing incarnation, and the new one starts in the initial
// state with its entry hook; a stop ends with `PostStop` and no exit hook.
#[tapio::test]
async fn s34_s15_hooks_and_signals_in_order_across_a_restart(system: ActorSystem) {
    let (log_tx, mut log) = mpsc::unbounded_channel();
    let lamp = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |_ctx| {
                Machine::new(
                    Lamp {
                        log: log_tx.clone(),
                    },
                    Dark,
                )
            }))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "lamp",
        )
        .unwrap();
    assert_eq!(recv_within(&mut log, BOUND).await, "enter Dark");
    lamp.tell(Flip);
    assert_eq!(take(&mut log, 2).await, ["exit Dark", "enter Lit"]);
    lamp.tell(Blow);
    assert_eq!(take(&mut log, 2).await, ["pre-restart", "enter Dark"]);
    lamp.tell(Flip);
    assert_eq!(take(&mut log, 2).await, ["exit Dark", "enter Lit"]);
    system.stop(&lamp).unwrap();
    assert_eq!(until_closed(&mut log, BOUND).await, ["post-stop"]);
}

// S25 + S34 + S24: a timer belongs to the cell, not to the state that started it: its
// ticks reach the next state too, which refuses them when it has no handler (a dead
// letter naming the state, one per tick); a stop cancels it, and a tick already queued
// is dropped unseen: nothing of it after the stop, not even a dead letter.
#[tapio::test(start_paused = true)]
async fn s25_s34_a_timer_outlives_a_state_switch_and_ends_with_the_actor(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let metronome = system
        .spawn(
            Machine::new(
                Metronome {
                    beats: probe.actor_ref().clone(),
                    count: 0,
                },
                Idle,
            ),
            "metronome",
        )
        .unwrap();
    metronome.tell(Start);
    assert_eq!(probe.receive_messages(3, BOUND).await, [1, 2, 3]);
    metronome.tell(Halt);
    for _ in 0..3 {
        let refused = letter_where(&mut letters, BOUND, |l| {
            l.is::<Beat>() || l.short_message_type() == "Beat"
        })
        .await;
        assert_eq!(
            refused.reason(),
            &DeadLetterReason::NotHandledInState("Idle"),
            "{refused}"
        );
        assert_eq!(refused.recipient(), metronome.path(), "{refused}");
    }
    probe.watch(&metronome);
    system.stop(&metronome).unwrap();
    probe.expect_terminated(&metronome, BOUND).await;
    let after = letters_until_quiet(&mut letters, ms(300)).await;
    for letter in &after {
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::NotHandledInState("Idle"),
            "a tick after the stop: {letter}"
        );
    }
    assert!(letters_until_quiet(&mut letters, ms(300)).await.is_empty());
    // Between `Start` and `Halt` a few more beats may have come; after, none.
    while probe.receive_message(Duration::ZERO).await.is_some() {}
    probe.expect_no_message(ms(100)).await;
}

// S34 + S21 + S22: an `#[otherwise]` handler takes what its state does not handle
// whole, a request with its reply slot included; one that drops the request leaves
// nobody to answer, and the ask fails at once as `Unanswered` rather than at its
// deadline. The next state answers.
#[tapio::test]
async fn s34_s21_an_ask_dropped_by_otherwise_is_unanswered_at_once(system: ActorSystem) {
    let sleepy = system
        .spawn(Machine::new(Sleepy, Asleep), "sleepy")
        .unwrap();
    let started = Instant::now();
    let asked = sleepy.ask(Seven).timeout(Duration::from_secs(10)).await;
    assert_unanswered_at_once(&asked, started);
    sleepy.tell(Wake);
    assert_eq!(sleepy.ask(Seven).timeout(BOUND).await.unwrap(), 7);
}
