//! A lost state: the next ask is refused at once and a restart brings the state back,
//! or the machine stops; the kit records a timer started by an entry hook (S11, S23,
//! S25, S34, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use crate::support::stops_and_restarts::*;
use outside::{Log, T, entries, new_log, push};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, TestProbe};
use tapio::{StateLost, TimerMode};
use tokio::time::Instant;

// =================================================================================
// 7. State machines (S34, S11, S23)
// =================================================================================

#[message]
#[derive(Debug, Clone)]
pub struct Go(pub bool);

#[message(reply = &'static str)]
#[derive(Debug, Clone)]
pub struct Where;

#[derive(Clone)]
pub struct Lamp {
    entries: Log,
}

#[actor(messages(Go, Where), states(Dark => Lit, Lit => Dark))]
impl Lamp {}

#[derive(Clone)]
pub struct Dark;

#[state(Lamp)]
impl Dark {
    #[on_entry]
    fn entered(&mut self, lamp: &mut Lamp) {
        push(&lamp.entries, "enter Dark");
    }

    fn go(self, Go(panic): Go) -> Next<Self> {
        assert!(
            !panic,
            "a switching handler panics while it holds the state"
        );
        Next::to(Lit)
    }

    fn where_(&mut self, _: Where) -> &'static str {
        "dark"
    }
}

#[derive(Clone)]
pub struct Lit;

#[state(Lamp)]
impl Lit {
    #[on_entry]
    fn entered(&mut self, lamp: &mut Lamp) {
        push(&lamp.entries, "enter Lit");
    }

    fn go(self, _: Go) -> Next<Self> {
        Next::to(Dark)
    }

    fn where_(&mut self, _: Where) -> &'static str {
        "lit"
    }
}

/// S34, S11, S23: a switching handler that panics under resume loses the state:
/// the next message (an ask) is refused at once, not left to its deadline, and the
/// machine fails with `StateLost`; a restart clause for that brings it back in its
/// initial state, whose entry hook runs again.
#[tapio::test(start_paused = true)]
async fn s34_s11_a_lost_state_refuses_the_next_ask_at_once_and_a_restart_brings_it_back(
    system: ActorSystem,
) {
    let log = new_log();
    let lamp = system
        .spawn(
            Behaviors::supervise(Machine::new(
                Lamp {
                    entries: log.clone(),
                },
                Dark,
            ))
            .on_failure::<Panicked>(SupervisorStrategy::resume())
            .on_failure::<StateLost>(SupervisorStrategy::restart()),
            "lamp",
        )
        .unwrap();
    assert_eq!(lamp.ask(Where).timeout(T).await, Ok("dark"));
    lamp.tell(Go(false));
    assert_eq!(lamp.ask(Where).timeout(T).await, Ok("lit"));
    lamp.tell(Go(false));
    lamp.tell(Go(true)); // panics in Dark, holding the state: resumed, vacant
    let started = Instant::now();
    let asked = lamp.ask(Where).timeout(Duration::from_secs(60)).await;
    assert!(matches!(&asked, Err(e) if not_a_timeout(e)), "{asked:?}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(lamp.ask(Where).timeout(T).await, Ok("dark"));
    assert_eq!(
        entries(&log),
        ["enter Dark", "enter Lit", "enter Dark", "enter Dark"]
    );
}

/// S34, S9, S18, S23: with no clause for `StateLost`, the lost state's next message
/// stops the machine (the default decision): the ask that met it fails at once and
/// a watcher hears `Terminated`.
#[tapio::test(start_paused = true)]
async fn s34_s23_a_lost_state_without_a_clause_stops_the_machine_and_its_ask_fails_at_once(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let lamp = system
        .spawn(
            Behaviors::supervise(Machine::new(Lamp { entries: new_log() }, Dark))
                .on_failure::<Panicked>(SupervisorStrategy::resume()),
            "lamp",
        )
        .unwrap();
    probe.watch(&lamp);
    lamp.tell(Go(true));
    let asked = lamp.ask(Where).timeout(Duration::from_secs(60)).await;
    assert!(matches!(&asked, Err(e) if not_a_timeout(e)), "{asked:?}");
    probe.expect_terminated(&lamp, T).await;
}

#[message]
#[derive(Debug, Clone)]
pub struct Arm;

#[message]
#[derive(Debug, Clone)]
pub struct Expire;

#[derive(Clone)]
pub struct Fuse;

#[actor(messages(Arm, Expire), states(Idle => Armed, Armed => Idle))]
impl Fuse {}

#[derive(Clone)]
pub struct Idle;

#[state(Fuse)]
impl Idle {
    fn arm(self, _: Arm) -> Next<Self> {
        Next::to(Armed)
    }
}

#[derive(Clone)]
pub struct Armed;

#[state(Fuse)]
impl Armed {
    #[on_entry]
    fn entered(&mut self, _fuse: &mut Fuse, ctx: &mut Ctx<Fuse>) {
        ctx.timers()
            .start_single_timer("expire", Expire, Duration::from_secs(30));
    }

    fn expire(self, _: Expire) -> Next<Self> {
        Next::to(Idle)
    }
}

/// S48, S34, S25: the kit records the timer a state's entry hook starts, at each
/// switch into the state, and runs no timer: the test delivers the tick itself, and
/// the machine leaves the state without starting another.
#[test]
fn s48_s34_s25_the_kit_records_a_timer_started_by_a_states_entry_hook() {
    let mut kit = BehaviorTestKit::new(Machine::new(Fuse, Idle));
    assert!(kit.effects().is_empty(), "{:?}", kit.effects());
    kit.run(Arm).unwrap();
    kit.expect_effect(Effect::TimerStarted {
        key: "expire".into(),
        mode: TimerMode::Single,
        delay: Duration::from_secs(30),
    });
    kit.run(Expire).unwrap();
    let started = |effects: Vec<Effect>| {
        let n = effects
            .iter()
            .filter(|e| matches!(e, Effect::TimerStarted { .. }))
            .count();
        (n, effects)
    };
    let (n, effects) = started(kit.effects());
    assert_eq!(n, 0, "no timer at the switch out: {effects:?}");
    kit.run(Arm).unwrap();
    let (n, effects) = started(kit.effects());
    assert_eq!(n, 1, "again at the next entry: {effects:?}");
    assert!(kit.is_alive());
}
