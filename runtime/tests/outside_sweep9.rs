//! A ninth outside-in sweep, written from the promises (S1..S49 in SEMANTICS.md), the
//! README, docs/testing.md and the public API docs only, on the LOCAL runtime, in the
//! corners the earlier sweeps touched least:
//!
//! 1. Stash (S26, S27, S14, S11, S22, S23): what `len`/`is_full`/`capacity` say while
//!    stashing and what an overflow letters; a message stashed after `unstash_all`
//!    in the same handler; a failure in the middle of a replay under restart (the
//!    rest stays in the mailbox for the next incarnation) and under resume; a switch
//!    that keeps no handle on the stash (`StashDiscarded`); stashed asks that fail at
//!    once when the replay goes into `stopped`, or answer into `AskEnded` after their
//!    deadline.
//! 2. State machines and behavior switching (S34, S6): entry/exit hooks and a stop
//!    from a state; switching requests `(reply, Next)` that switch or stop; a
//!    stashing state that stops; a signal handler that switches behavior; `empty` /
//!    `unhandled` / `ignore` as dead letters see them.
//! 3. Timers (S24, S25): `is_active` through start, fire and cancel; `cancel_all` and
//!    a key started again, each dropping ticks already queued; timers started in
//!    `PostStop` or through a scheduler kept past the stop; the kit's timer effects.
//! 4. Testkit (S48): probe expectations on a terminated system or when another
//!    watched actor ends first; `TestConfig` failing a body that leaks an ask;
//!    `run_blocking` in the behavior kit without a runtime.
//! 5. `run_blocking` (S33, S8): a call that waits on another actor on a
//!    current-thread runtime, a call that starts before it is polled, and the path on
//!    its records (global and thread-scoped subscriber).
//! 6. Shutdown (S19, S48, S14, S33): a synchronous handler past the one deadline, an
//!    awaiting handler dropped at terminate, a parent backing off with kept children,
//!    a blocking call running at terminate (not waited for, and run to its end).
//! 7. Supervision (S7, S10-S16): restart limits per clause, the backoff count starting
//!    again, backoff jitter and the stretch after the cap, `with_stop_children(false)`,
//!    the paths a `ChildFailed` carries at each level, `on_any_failure`, `setup_once`
//!    with `supervise` inside and outside.
//! 8. Watch (S18: a death pact under resume), the event stream (S49: where a loss is
//!    reported, an event held back behind one), dead letters (S31: a request told,
//!    not asked), names (S2: unique per parent), `ReplyThen` (S21: switch, async stop,
//!    a failing request handler under resume, asks stashed with their reply slot),
//!    message adapters across restarts and failing translations (S28).
//! 9. Races in bounded loops on two workers (S5, S27, S34, S28, S14) and terminate
//!    with a full stash (S19, S31).
//!
//! Every wait is bounded; timing is asserted only under tokio's paused clock (or, for
//! the one deadline of S19, with a wide margin).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/outside.rs"]
mod outside;

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tapio::events::Received;
use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, Effect, LeakReport, TestConfig, TestProbe};
use tapio::{
    AskError, Backoff, BlockingError, BoxError, DeadLetter, DeadLetterReason, DeathPact, ReplyThen,
    SpawnError, StashBuffer, StashOverflow, TimerMode,
};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};

use outside::{
    Boom, Log, Other, T, describe, entries, expect_lines, letters_for, ms, new_log, no_letter_for,
    push,
};

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        String::from("<no text>")
    }
}

// =================================================================================
// 1. Stash (S26, S27, S14)
// =================================================================================

#[tapio::test(start_paused = true)]
async fn s26_stash_accessors_follow_what_is_held_and_an_overflow_letters_the_message(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(3, move |stash: StashBuffer<u64>| {
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| {
            if n == 0 {
                to.tell(format!(
                    "release len={} empty={}",
                    stash.len(),
                    stash.is_empty()
                ));
                let to = to.clone();
                return stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                    to.tell(format!("got {n}"))
                }));
            }
            let outcome = match stash.stash(n) {
                Ok(()) => "ok",
                Err(StashOverflow { .. }) => "overflow",
            };
            to.tell(format!(
                "{n}: {outcome} len={} full={} cap={}",
                stash.len(),
                stash.is_full(),
                stash.capacity()
            ));
            Behaviors::same()
        })
    })
    .expect("a capacity above 0");
    let actor = system.spawn(behavior, "holder").unwrap();
    for n in [1_u64, 2, 3, 4, 0] {
        actor.tell(n);
    }
    expect_lines(
        &mut probe,
        &[
            "1: ok len=1 full=false cap=3",
            "2: ok len=2 full=false cap=3",
            "3: ok len=3 full=true cap=3",
            "4: overflow len=3 full=true cap=3",
            "release len=3 empty=false",
            "got 1",
            "got 2",
            "got 3",
        ],
    )
    .await;
    let letter = letters_for(&mut letters, actor.path(), 1).await.remove(0);
    assert_eq!(letter.reason(), &DeadLetterReason::StashFull);
    assert_eq!(letter.take_message::<u64>(), Some(4));
    no_letter_for(&mut letters, actor.path(), ms(200)).await;
}

#[tapio::test(start_paused = true)]
async fn s27_a_message_stashed_after_unstash_all_in_the_same_handler_is_replayed_too(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(8, move |stash: StashBuffer<u64>| {
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, StashOverflow> {
            if n == 100 {
                let to = to.clone();
                // The answer is built first; the trigger is stashed after it.
                let next = stash.unstash_all(Behaviors::receive_message(move |n: u64| {
                    to.tell(format!("got {n}"))
                }));
                stash.stash(n)?;
                return Ok(next);
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap();
    let actor = system.spawn(behavior, "late-stasher").unwrap();
    for n in [1_u64, 2, 100, 3] {
        actor.tell(n);
    }
    // Taken when the answer is applied: 100 is held by then, and the replay goes
    // ahead of 3, which was queued while the handler ran.
    expect_lines(&mut probe, &["got 1", "got 2", "got 100", "got 3"]).await;
}

fn gated(stash: StashBuffer<u64>, generation: u64, to: ActorRef<String>) -> Behavior<u64> {
    Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, BoxError> {
        if n == 0 {
            let to = to.clone();
            return Ok(stash.unstash_all(Behaviors::receive_message(
                move |n: u64| -> Result<(), Boom> {
                    if n == 13 {
                        return Err(Boom);
                    }
                    to.tell(format!("g{generation}: {n}"));
                    Ok(())
                },
            )));
        }
        stash.stash(n)?;
        Ok(Behaviors::same())
    })
    .into()
}

#[tapio::test(start_paused = true)]
async fn s14_s27_a_failure_mid_replay_leaves_the_rest_in_the_mailbox_for_the_next_incarnation(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let generations = Arc::new(AtomicU64::new(0));
    let stashing = Behaviors::with_stash(10, move |stash| {
        let generation = generations.fetch_add(1, SeqCst) + 1;
        to.tell(format!("start g{generation}"));
        gated(stash, generation, to.clone())
    })
    .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(stashing).on_failure::<Boom>(SupervisorStrategy::restart()),
            "replayer",
        )
        .unwrap();
    for n in [1_u64, 13, 2, 3, 0] {
        actor.tell(n);
    }
    // 1 is replayed, 13 fails the replaying incarnation; 2 and 3 had left the stash
    // for the front of the mailbox, which a restart keeps: the next incarnation (in
    // its stashing behavior) takes them and holds them.
    expect_lines(&mut probe, &["start g1", "g1: 1", "start g2"]).await;
    probe.expect_no_message(ms(100)).await;
    actor.tell(0_u64);
    expect_lines(&mut probe, &["g2: 2", "g2: 3"]).await;
    no_letter_for(&mut letters, actor.path(), ms(100)).await;
}

#[tapio::test(start_paused = true)]
async fn s27_s31_a_switch_that_keeps_no_handle_on_the_stash_discards_it_in_order(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let behavior = Behaviors::with_stash(8, move |stash: StashBuffer<u64>| {
        let to = to.clone();
        Behaviors::receive_message(move |n: u64| -> Result<Behavior<u64>, StashOverflow> {
            if n == 0 {
                let to = to.clone();
                // A plain switch: the next behavior keeps no clone of the buffer.
                return Ok(
                    Behaviors::receive_message(move |n: u64| to.tell(format!("after {n}"))).into(),
                );
            }
            stash.stash(n)?;
            Ok(Behaviors::same())
        })
    })
    .unwrap();
    let actor = system.spawn(behavior, "forgetful").unwrap();
    for n in [1_u64, 2, 3, 0, 4] {
        actor.tell(n);
    }
    expect_lines(&mut probe, &["after 4"]).await;
    let got = letters_for(&mut letters, actor.path(), 3).await;
    let values: Vec<Option<u64>> = got.iter().map(|l| l.take_message::<u64>()).collect();
    assert_eq!(values, [Some(1), Some(2), Some(3)]);
    for letter in &got {
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::StashDiscarded,
            "{}",
            describe(letter)
        );
    }
    no_letter_for(&mut letters, actor.path(), ms(100)).await;
}

#[message]
pub enum Desk {
    Query { q: u64, reply_to: ActorRef<u64> },
    Open,
    Shut,
}

fn desk() -> Behavior<Desk> {
    Behaviors::with_stash(8, |stash: StashBuffer<Desk>| {
        Behaviors::receive_message(move |message: Desk| match message {
            Desk::Open => Ok(stash.unstash_all(Behaviors::receive_message(|m: Desk| {
                if let Desk::Query { q, reply_to } = m {
                    reply_to.tell(q * 2);
                }
            }))),
            Desk::Shut => Ok(stash.unstash_all(Behaviors::stopped())),
            held => stash.stash(held).map(|()| Behaviors::same()),
        })
    })
    .unwrap()
}

#[tapio::test]
async fn s27_s23_a_stashed_ask_unstashed_into_stopped_fails_at_once(system: ActorSystem) {
    let actor = system.spawn(desk(), "desk").unwrap();
    let ask = actor
        .ask_with(|reply_to| Desk::Query { q: 21, reply_to })
        .timeout(Duration::from_secs(20));
    let started = Instant::now();
    let waiting = tokio::spawn(async move { ask.await });
    actor.tell(Desk::Shut);
    let answer = timeout(T, waiting)
        .await
        .expect("long before the deadline")
        .unwrap();
    assert!(
        matches!(answer, Err(AskError::TargetTerminated { .. })),
        "{answer:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tapio::test(start_paused = true)]
async fn s11_s27_a_failure_mid_replay_under_resume_drops_only_that_message(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let generations = Arc::new(AtomicU64::new(0));
    let stashing = Behaviors::with_stash(10, move |stash| {
        let generation = generations.fetch_add(1, SeqCst) + 1;
        to.tell(format!("start g{generation}"));
        gated(stash, generation, to.clone())
    })
    .unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(stashing).on_failure::<Boom>(SupervisorStrategy::resume()),
            "resumer",
        )
        .unwrap();
    for n in [1_u64, 13, 2, 3, 0, 4] {
        actor.tell(n);
    }
    expect_lines(
        &mut probe,
        &["start g1", "g1: 1", "g1: 2", "g1: 3", "g1: 4"],
    )
    .await;
    probe.expect_no_message(ms(100)).await;
}

#[tapio::test(start_paused = true)]
async fn s22_s27_a_stashed_ask_replayed_after_its_deadline_answers_into_ask_ended(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let actor = system.spawn(desk(), "desk").unwrap();
    let asked = actor
        .ask_with(|reply_to| Desk::Query { q: 21, reply_to })
        .timeout(ms(100))
        .await;
    assert!(matches!(asked, Err(AskError::Timeout { .. })), "{asked:?}");
    actor.tell(Desk::Open);
    let letter = timeout(T, letters.recv())
        .await
        .expect("a letter")
        .expect("open");
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::AskEnded,
        "{}",
        describe(&letter)
    );
    assert_eq!(letter.take_message::<u64>(), Some(42));
}

// =================================================================================
// 2. State machines and behavior switching (S34, S6)
// =================================================================================

#[message]
#[derive(Debug, Clone)]
pub struct Flip;

#[message]
#[derive(Debug, Clone)]
pub struct Halt;

pub struct Switchboard {
    log: Log,
}

#[actor(messages(Flip, Halt), states(Off => On, On => Off))]
impl Switchboard {
    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        match signal {
            Signal::PostStop => push(&self.log, "post-stop"),
            Signal::PreRestart => push(&self.log, "pre-restart"),
            _ => {}
        }
    }
}

pub struct Off;

#[state(Switchboard)]
impl Off {
    #[on_entry]
    fn entered(&mut self, board: &mut Switchboard) {
        push(&board.log, "enter Off");
    }

    #[on_exit]
    fn left(board: &mut Switchboard) {
        push(&board.log, "exit Off");
    }

    fn flip(self, _: Flip) -> Next<Self> {
        Next::to(On)
    }
}

pub struct On;

#[state(Switchboard)]
impl On {
    #[on_entry]
    fn entered(&mut self, board: &mut Switchboard) {
        push(&board.log, "enter On");
    }

    #[on_exit]
    fn left(board: &mut Switchboard) {
        push(&board.log, "exit On");
    }

    fn flip(self, _: Flip) -> Next<Self> {
        Next::to(Off)
    }

    fn halt(self, _: Halt) -> Next<Self> {
        Next::stop()
    }
}

#[tapio::test(start_paused = true)]
async fn s34_hooks_run_around_switches_and_a_stop_from_a_state_runs_no_exit_hook(
    system: ActorSystem,
) {
    let log = new_log();
    let mut probe = TestProbe::<u64>::new(&system);
    let for_setup = log.clone();
    let board = system
        .spawn(
            Behaviors::setup(move |_ctx: &mut Ctx<Switchboard>| {
                Machine::new(
                    Switchboard {
                        log: for_setup.clone(),
                    },
                    Off,
                )
            }),
            "board",
        )
        .unwrap();
    probe.watch(&board);
    board.tell(Flip);
    board.tell(Flip);
    board.tell(Flip);
    board.tell(Halt);
    probe.expect_terminated(&board, T).await;
    assert_eq!(
        entries(&log),
        [
            "enter Off",
            "exit Off",
            "enter On",
            "exit On",
            "enter Off",
            "exit Off",
            "enter On",
            "post-stop"
        ]
    );
}

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Take;

#[message(reply = &'static str)]
#[derive(Debug, Clone)]
pub struct Which;

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Last;

#[derive(Clone)]
pub struct Ticket;

#[actor(messages(Take, Which, Last), states(Waiting => Serving, Serving))]
impl Ticket {}

#[derive(Clone)]
pub struct Waiting;

#[state(Ticket)]
impl Waiting {
    fn take(self, _: Take) -> (u64, Next<Self>) {
        (7, Next::to(Serving { served: 1 }))
    }

    fn which(&mut self, _: Which) -> &'static str {
        "waiting"
    }
}

#[derive(Clone)]
pub struct Serving {
    served: u64,
}

#[state(Ticket)]
impl Serving {
    fn which(&mut self, _: Which) -> &'static str {
        "serving"
    }

    fn last(self, _: Last) -> (u64, Next<Self>) {
        (self.served + 98, Next::stop())
    }
}

#[tapio::test]
async fn s34_s21_switching_requests_answer_then_switch_or_stop(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let ticket = system
        .spawn(Machine::new(Ticket, Waiting), "ticket")
        .unwrap();
    probe.watch(&ticket);
    assert_eq!(ticket.ask(Which).timeout(T).await, Ok("waiting"));
    assert_eq!(ticket.ask(Take).timeout(T).await, Ok(7));
    assert_eq!(ticket.ask(Which).timeout(T).await, Ok("serving"));
    // `Take` is not handled in `Serving`: refused at once.
    let started = Instant::now();
    let refused = ticket.ask(Take).timeout(Duration::from_secs(20)).await;
    assert!(
        matches!(refused, Err(AskError::NotHandled { .. })),
        "{refused:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    // Answer, then stop.
    assert_eq!(ticket.ask(Last).timeout(T).await, Ok(99));
    probe.expect_terminated(&ticket, T).await;
    let started = Instant::now();
    let after = ticket.ask(Which).timeout(Duration::from_secs(20)).await;
    assert!(
        matches!(after, Err(AskError::TargetTerminated { .. })),
        "{after:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[message]
#[derive(Debug, Clone, PartialEq)]
pub struct Job(pub u64);

#[message]
#[derive(Debug, Clone)]
pub struct Boot;

#[message]
pub struct Probe {
    pub reply_to: ActorRef<u64>,
}

#[derive(Clone)]
pub struct Server;

#[actor(messages(Job, Boot, Halt, Probe), states(Booting => Up, Up))]
impl Server {}

#[derive(Clone)]
pub struct Booting;

#[state(Server, unhandled = stash)]
impl Booting {
    fn boot(self, _: Boot) -> Next<Self> {
        Next::to(Up)
    }

    fn halt(self, _: Halt) -> Next<Self> {
        Next::stop()
    }
}

#[derive(Clone)]
pub struct Up;

#[state(Server)]
impl Up {
    fn job(&mut self, _: Job) {}

    fn probe(&mut self, probe: Probe) {
        probe.reply_to.tell(1);
    }
}

#[tapio::test]
async fn s34_s31_a_stashing_state_that_stops_letters_what_it_held_and_fails_its_asks(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let server = system
        .spawn(Machine::new(Server, Booting), "server")
        .unwrap();
    server.tell(Job(1));
    server.tell(Job(2));
    let ask = server
        .ask_with(|reply_to| Probe { reply_to })
        .timeout(Duration::from_secs(20));
    let waiting = tokio::spawn(async move { ask.await });
    server.tell(Job(3));
    server.tell(Halt);
    let started = Instant::now();
    let answer = timeout(T, waiting).await.expect("in time").unwrap();
    assert!(
        matches!(answer, Err(AskError::TargetTerminated { .. })),
        "{answer:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    let got = letters_for(&mut letters, server.path(), 4).await;
    let reasons: Vec<_> = got.iter().map(|l| l.reason().clone()).collect();
    assert_eq!(
        reasons,
        vec![DeadLetterReason::RecipientStopped; 4],
        "{:?}",
        got.iter().map(describe).collect::<Vec<_>>()
    );
    // Each letter names the message's own type: the three jobs, and the request.
    let jobs: Vec<_> = got
        .iter()
        .filter_map(|l| l.take_message::<Job>())
        .map(|Job(n)| n)
        .collect();
    assert!(got.iter().any(|l| l.is::<Probe>()));
    assert_eq!(jobs, [1, 2, 3]);
}

fn watching_a(to: ActorRef<String>, child: ActorRef<u64>) -> Behavior<u64> {
    let to2 = to.clone();
    Behaviors::receive_message(move |n: u64| {
        if n == 0 {
            child.tell(0);
        } else {
            to.tell(format!("a {n}"));
        }
    })
    .on_signal(move |_ctx, signal| match signal {
        Signal::Terminated(_) => {
            to2.tell("switched".to_string());
            let to = to2.clone();
            Behaviors::receive_message(move |n: u64| to.tell(format!("b {n}"))).into()
        }
        _ => Behaviors::same(),
    })
    .into()
}

#[tapio::test(start_paused = true)]
async fn s6_s18_a_signal_handler_switches_the_behavior_for_the_next_message(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let child = ctx
                    .spawn(
                        Behaviors::receive_message(|_: u64| Behaviors::stopped()),
                        "child",
                    )
                    .unwrap();
                ctx.watch(&child);
                watching_a(to.clone(), child)
            }),
            "parent",
        )
        .unwrap();
    parent.tell(1_u64);
    parent.tell(0_u64);
    expect_lines(&mut probe, &["a 1", "switched"]).await;
    parent.tell(2_u64);
    expect_lines(&mut probe, &["b 2"]).await;
}

#[tapio::test(start_paused = true)]
async fn s6_s31_empty_letters_the_value_unhandled_letters_the_type_ignore_letters_nothing(
    system: ActorSystem,
) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let empty = system.spawn(Behaviors::empty::<u64>(), "empty").unwrap();
    let refusing = system
        .spawn(
            Behaviors::receive_message(|_: u64| Behaviors::unhandled()),
            "refusing",
        )
        .unwrap();
    let ignoring = system
        .spawn(Behaviors::ignore::<u64>(), "ignoring")
        .unwrap();
    empty.tell(7_u64);
    refusing.tell(8_u64);
    ignoring.tell(9_u64);
    let from_empty = letters_for(&mut letters, empty.path(), 1).await.remove(0);
    assert_eq!(from_empty.reason(), &DeadLetterReason::Unhandled);
    assert_eq!(from_empty.take_message::<u64>(), Some(7));
    let from_refusing = letters_for(&mut letters, refusing.path(), 1)
        .await
        .remove(0);
    assert_eq!(from_refusing.reason(), &DeadLetterReason::Unhandled);
    assert!(
        from_refusing.message_type().contains("u64"),
        "{}",
        from_refusing.message_type()
    );
    assert_eq!(from_refusing.take_message::<u64>(), None);
    no_letter_for(&mut letters, ignoring.path(), ms(200)).await;
    // The actors are all still there.
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&empty);
    probe.watch(&refusing);
    probe.watch(&ignoring);
    probe.expect_no_termination(ms(100)).await;
}

// =================================================================================
// 3. Timers (S24, S25)
// =================================================================================

#[tapio::test(start_paused = true)]
async fn s25_is_active_follows_start_fire_and_cancel(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::with_timers(move |timers| {
                timers.start_single_timer("once", 0_u64, ms(100));
                to.tell(format!(
                    "armed once={} never={}",
                    timers.is_active("once"),
                    timers.is_active("never")
                ));
                let to = to.clone();
                Behaviors::receive_message(move |n: u64| match n {
                    0 => to.tell(format!("fired once={}", timers.is_active("once"))),
                    1 => {
                        timers.start_fixed_delay("rep", 9_u64, ms(50)).unwrap();
                        to.tell(format!("started rep={}", timers.is_active("rep")));
                    }
                    2 => {
                        timers.cancel("rep");
                        to.tell(format!("cancelled rep={}", timers.is_active("rep")));
                    }
                    3 => to.tell(format!(
                        "later once={} rep={}",
                        timers.is_active("once"),
                        timers.is_active("rep")
                    )),
                    _ => {}
                })
            }),
            "timed",
        )
        .unwrap();
    expect_lines(&mut probe, &["armed once=true never=false"]).await;
    // A single timer that has fired is not running any more.
    expect_lines(&mut probe, &["fired once=false"]).await;
    actor.tell(1_u64);
    actor.tell(2_u64);
    actor.tell(3_u64);
    expect_lines(
        &mut probe,
        &[
            "started rep=true",
            "cancelled rep=false",
            "later once=false rep=false",
        ],
    )
    .await;
}

#[tapio::test(start_paused = true)]
async fn s25_cancel_all_silences_every_key_and_drops_ticks_already_queued(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, n: u64| {
                match n {
                    1 => {
                        let timers = ctx.timers();
                        timers.start_single_timer("a", 10_u64, ms(10));
                        timers.start_single_timer("b", 20_u64, ms(20));
                        timers.start_fixed_rate("c", 30_u64, ms(5)).unwrap();
                        // Busy while every one of them comes due and queues.
                        tokio::time::sleep(ms(100)).await;
                        let timers = ctx.timers();
                        timers.cancel_all();
                        to.tell(format!(
                            "cancelled a={} b={} c={}",
                            timers.is_active("a"),
                            timers.is_active("b"),
                            timers.is_active("c")
                        ));
                    }
                    2 => to.tell("done".to_string()),
                    tick => to.tell(format!("tick {tick}")),
                }
            }),
            "canceller",
        )
        .unwrap();
    actor.tell(1_u64);
    actor.tell(2_u64);
    expect_lines(&mut probe, &["cancelled a=false b=false c=false", "done"]).await;
    probe.expect_no_message(ms(500)).await;
}

#[tokio::test(start_paused = true)]
async fn s25_s48_timers_started_in_post_stop_or_after_the_stop_never_fire_and_leak_nothing() {
    let system = ActorSystem::builder("late-timers")
        .track_leaks(true)
        .build()
        .unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (scheduler_tx, mut schedulers) = mpsc::unbounded_channel::<tapio::TimerScheduler<u64>>();
    let late = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let _ = scheduler_tx.send(ctx.timers());
                let to = to.clone();
                Behaviors::receive_message(|_: u64| Behaviors::stopped()).on_signal(
                    move |ctx, signal| {
                        if *signal == Signal::PostStop {
                            let timers = ctx.timers();
                            timers.start_single_timer("late", 1_u64, ms(10));
                            let refused = timers.start_fixed_rate("later", 2_u64, ms(10)).is_err();
                            to.tell(format!("post-stop refused={refused}"));
                        }
                        Behaviors::same()
                    },
                )
            }),
            "late",
        )
        .unwrap();
    let kept = timeout(T, schedulers.recv()).await.unwrap().unwrap();
    // And one actor whose fixed-rate timer is still running at termination.
    let _ticking = system
        .spawn(
            Behaviors::with_timers(|timers| {
                timers.start_fixed_rate("tick", 0_u64, ms(10)).unwrap();
                Behaviors::ignore::<u64>()
            }),
            "ticking",
        )
        .unwrap();
    probe.watch(&late);
    late.tell(0_u64);
    expect_lines(&mut probe, &["post-stop refused=false"]).await;
    probe.expect_terminated(&late, T).await;
    // A scheduler kept past the stop starts nothing either.
    kept.start_fixed_rate("after", 3_u64, ms(10)).unwrap();
    kept.start_single_timer("after-once", 4_u64, ms(10));
    // A tick sent to the stopped actor would be a dead letter: none comes.
    no_letter_for(&mut letters, late.path(), ms(300)).await;
    let report = LeakReport::after_terminating(&system).await;
    assert_eq!(report.pending_timers, Some(0), "{report}");
    assert!(report.is_clean(), "{report}");
}

#[tapio::test(start_paused = true)]
async fn s25_a_key_started_again_drops_the_tick_its_old_timer_had_queued(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, n: u64| match n {
                0 => {
                    ctx.timers().start_single_timer("k", 1_u64, ms(10));
                    ctx.timers().start_fixed_rate("r", 3_u64, ms(10)).unwrap();
                    // Busy while both come due and queue their ticks.
                    tokio::time::sleep(ms(100)).await;
                    ctx.timers().start_single_timer("k", 2_u64, ms(50));
                    ctx.timers().start_fixed_rate("r", 4_u64, ms(1000)).unwrap();
                    to.tell("replaced".to_string());
                }
                tick => to.tell(format!("tick {tick}")),
            }),
            "replacer",
        )
        .unwrap();
    actor.tell(0_u64);
    expect_lines(&mut probe, &["replaced", "tick 2", "tick 4"]).await;
    probe.expect_no_message(ms(500)).await;
}

#[test]
fn s48_s25_kit_records_each_mode_and_cancel_all_cancels_every_running_key() {
    let mut kit = BehaviorTestKit::new(Behaviors::with_timers(|timers| {
        Behaviors::receive_message(move |n: u64| match n {
            1 => {
                timers.start_single_timer("s", 0_u64, ms(5));
                timers.start_fixed_delay("d", 0_u64, ms(10)).unwrap();
                timers.start_fixed_rate("r", 0_u64, ms(20)).unwrap();
            }
            2 => timers.cancel_all(),
            _ => {}
        })
    }));
    kit.run(1_u64).unwrap();
    assert_eq!(
        kit.effects(),
        [
            Effect::TimerStarted {
                key: "s".into(),
                mode: TimerMode::Single,
                delay: ms(5)
            },
            Effect::TimerStarted {
                key: "d".into(),
                mode: TimerMode::FixedDelay,
                delay: ms(10)
            },
            Effect::TimerStarted {
                key: "r".into(),
                mode: TimerMode::FixedRate,
                delay: ms(20)
            },
        ]
    );
    kit.run(2_u64).unwrap();
    let mut cancelled: Vec<String> = kit
        .effects()
        .into_iter()
        .map(|effect| match effect {
            Effect::TimerCancelled { key } => key.as_str().to_string(),
            other => panic!("not a cancellation: {other:?}"),
        })
        .collect();
    cancelled.sort();
    assert_eq!(cancelled, ["d", "r", "s"]);
    kit.run(2_u64).unwrap();
    assert_eq!(kit.effects(), [], "nothing was running any more");
}

// =================================================================================
// 4. Testkit (S48)
// =================================================================================

#[tokio::test]
async fn s48_probe_expectations_fail_at_once_on_a_terminated_system_or_another_end() {
    let system = ActorSystem::new("ending-probe").unwrap();
    let mut waiting = TestProbe::<u64>::new(&system);
    let mut silent = TestProbe::<u64>::new(&system);
    let pending =
        tokio::spawn(async move { waiting.expect_message(Duration::from_secs(20)).await });
    tokio::task::yield_now().await;
    let started = Instant::now();
    system.terminate().await;
    let outcome = timeout(T, pending)
        .await
        .expect("the expectation ended long before its bound");
    assert!(
        outcome.is_err_and(|e| e.is_panic()),
        "the expectation must fail"
    );
    // Silence on a probe that can receive nothing proves nothing: it fails too.
    let silence =
        tokio::spawn(async move { silent.expect_no_message(Duration::from_secs(20)).await });
    let outcome = timeout(T, silence).await.expect("at once");
    assert!(
        outcome.is_err_and(|e| e.is_panic()),
        "expect_no_message must fail"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    // On a live system: `expect_terminated` fails when another watched actor's end
    // comes first.
    let system = ActorSystem::new("other-end-first").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    let first = system.spawn(Behaviors::ignore::<u64>(), "first").unwrap();
    let second = system.spawn(Behaviors::ignore::<u64>(), "second").unwrap();
    probe.watch(&first);
    probe.watch(&second);
    system.stop(&second).unwrap();
    let expecting = tokio::spawn(async move {
        probe.expect_terminated(&first, T).await;
    });
    let outcome = timeout(T, expecting).await.expect("decided in time");
    assert!(
        outcome.is_err_and(|e| e.is_panic()),
        "the end of `second` came first"
    );
    system.terminate().await;
}

#[message]
pub struct Question {
    pub reply_to: ActorRef<u64>,
}

#[test]
fn s48_test_config_fails_a_body_that_leaks_an_ask_and_names_it() {
    let (keep, kept) = std::sync::mpsc::channel::<ActorRef<u64>>();
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(move || {
        TestConfig::new("leaky")
            .start_paused(true)
            .run(move |system: ActorSystem| async move {
                let hoarder = system
                    .spawn(
                        Behaviors::receive_message(move |q: Question| {
                            let _ = keep.send(q.reply_to);
                        }),
                        "hoarder",
                    )
                    .unwrap();
                let asked = hoarder
                    .ask_with(|reply_to| Question { reply_to })
                    .timeout(ms(100))
                    .await;
                assert!(asked.is_err());
            });
    }));
    let payload = outcome.expect_err("a leaked ask fails the test");
    let text = panic_text(payload.as_ref());
    assert!(text.contains("1 ask promise(s) still waiting"), "{text}");
    drop(kept);
}

#[test]
fn s33_s48_kit_run_blocking_without_a_runtime_is_a_no_runtime_failure() {
    let mut kit = BehaviorTestKit::new(Behaviors::receive_async(
        async move |ctx: &mut ActorContext<u64>, n: u64| -> Result<(), BoxError> {
            let _ = ctx.run_blocking(move || n + 1).await?;
            Ok(())
        },
    ));
    let failure = kit.run(1_u64).expect_err("no runtime to run the call on");
    assert!(
        matches!(
            failure.downcast_ref::<BlockingError>(),
            Some(BlockingError::NoRuntime)
        ),
        "{} / {}",
        failure.error_type(),
        failure.error()
    );
}

// =================================================================================
// 5. run_blocking (S33)
// =================================================================================

#[tokio::test(flavor = "current_thread")]
async fn s33_a_blocking_call_can_wait_for_another_actor_on_a_current_thread_runtime() {
    let system = ActorSystem::new("one-thread").unwrap();
    let (std_tx, std_rx) = std::sync::mpsc::channel::<u64>();
    let std_rx = Arc::new(Mutex::new(std_rx));
    let (started_tx, mut started) = mpsc::unbounded_channel::<()>();
    let (out_tx, mut out) = mpsc::unbounded_channel::<Option<u64>>();
    let helper = system
        .spawn(
            Behaviors::receive_message(move |n: u64| {
                let _ = std_tx.send(n * 10);
            }),
            "helper",
        )
        .unwrap();
    let blocker = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, _: u64| {
                let std_rx = std_rx.clone();
                let started_tx = started_tx.clone();
                let got = ctx
                    .run_blocking(move || {
                        let _ = started_tx.send(());
                        std_rx
                            .lock()
                            .unwrap()
                            .recv_timeout(Duration::from_secs(5))
                            .ok()
                    })
                    .await
                    .ok()
                    .flatten();
                let _ = out_tx.send(got);
            }),
            "blocker",
        )
        .unwrap();
    blocker.tell(1_u64);
    timeout(T, started.recv())
        .await
        .expect("the call started")
        .unwrap();
    // The call now holds a pool thread; this runtime's only thread is free.
    helper.tell(4_u64);
    let got = timeout(Duration::from_secs(10), out.recv())
        .await
        .expect("an answer")
        .unwrap();
    assert_eq!(got, Some(40));
    system.terminate().await;
}

#[tapio::test]
async fn s33_the_call_starts_before_its_future_is_polled(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let actor = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, n: u64| {
                let (tx, rx) = tokio::sync::oneshot::channel::<()>();
                let call = ctx.run_blocking(move || {
                    let _ = tx.send(());
                    n * 2
                });
                // Not polled yet: the call must already be running to send this.
                let started = timeout(Duration::from_secs(2), rx).await.is_ok();
                let value = call.await.ok();
                to.tell(format!("started={started} value={value:?}"));
            }),
            "eager",
        )
        .unwrap();
    actor.tell(3_u64);
    expect_lines(&mut probe, &["started=true value=Some(6)"]).await;
}

/// An actor that logs once in its handler and once in a blocking call, each record
/// ending with `name` (two tests of this binary log at once, into one global
/// subscriber or another).
fn logging_blocker(
    system: &ActorSystem,
    name: &'static str,
    done: ActorRef<String>,
) -> ActorRef<u64> {
    system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, _: u64| {
                tracing::info!("said in the handler of {name}");
                let logged = ctx
                    .run_blocking(move || tracing::info!("said inside the blocking call of {name}"))
                    .await
                    .is_ok();
                done.tell(format!("logged={logged}"));
            }),
            name,
        )
        .unwrap()
}

fn record(text: &str, said: &str) -> Option<String> {
    text.lines()
        .find(|line| line.ends_with(said))
        .map(str::to_string)
}

static GLOBAL_LOG: std::sync::OnceLock<common::Captured> = std::sync::OnceLock::new();

#[tokio::test]
async fn s8_s33_a_blocking_calls_records_carry_the_actor_path_global_subscriber() {
    let captured = GLOBAL_LOG.get_or_init(|| {
        let (captured, subscriber) = common::capturing(tracing::Level::INFO);
        tracing::subscriber::set_global_default(subscriber).unwrap();
        captured
    });
    let system = ActorSystem::new("blocking-log-global").unwrap();
    let mut probe = TestProbe::<String>::new(&system);
    let actor = logging_blocker(&system, "global-blocker", probe.actor_ref().clone());
    actor.tell(1_u64);
    expect_lines(&mut probe, &["logged=true"]).await;
    system.terminate().await;
    let text = captured.text();
    let said = "said inside the blocking call of global-blocker";
    let line = record(&text, said).unwrap_or_else(|| panic!("no record in:\n{text}"));
    assert!(line.contains("path=/user/global-blocker"), "{line}");
}

#[test]
fn s8_s33_a_blocking_calls_records_carry_the_actor_path_scoped_subscriber() {
    let (captured, subscriber) = common::capturing(tracing::Level::INFO);
    // As the crate's own logging test does: a current-thread runtime, and the
    // subscriber the default of the thread that runs every actor.
    let _default = tracing::subscriber::set_default(subscriber);
    TestConfig::new("blocking_log_scoped").run(|system: ActorSystem| async move {
        let mut probe = TestProbe::<String>::new(&system);
        let actor = logging_blocker(&system, "scoped-blocker", probe.actor_ref().clone());
        actor.tell(1_u64);
        expect_lines(&mut probe, &["logged=true"]).await;
    });
    let text = captured.text();
    // The subscriber sees the actor: the handler's own record is there, tagged.
    let handler = record(&text, "said in the handler of scoped-blocker");
    let handler = handler.unwrap_or_else(|| panic!("no handler record in:\n{text}"));
    assert!(handler.contains("path=/user/scoped-blocker"), "{handler}");
    let line = record(&text, "said inside the blocking call of scoped-blocker")
        .unwrap_or_else(|| panic!("no record from the blocking call in:\n{text}"));
    assert!(line.contains("path=/user/scoped-blocker"), "{line}");
}

// =================================================================================
// 6. Shutdown (S19, S48)
// =================================================================================

fn post_stop_logger(log: Log, name: &'static str) -> Behavior<u64> {
    Behaviors::receive_message(|_: u64| ())
        .on_signal(move |_ctx, signal| {
            if *signal == Signal::PostStop {
                push(&log, name);
            }
            Behaviors::same()
        })
        .into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_s48_a_synchronous_handler_past_the_deadline_is_cut_off_and_reported() {
    let system = ActorSystem::builder("deadline")
        .shutdown_timeout(ms(100))
        .track_leaks(true)
        .build()
        .unwrap();
    let log = new_log();
    let (in_tx, mut in_handler) = mpsc::unbounded_channel::<()>();
    let (stuck_tx, mut stuck_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let for_tree = log.clone();
    let _tree = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.spawn(post_stop_logger(for_tree.clone(), "leaf"), "leaf")
                    .unwrap();
                let in_tx = in_tx.clone();
                let for_stuck = for_tree.clone();
                let stuck = ctx
                    .spawn(
                        Behaviors::receive_message(move |_: u64| {
                            let _ = in_tx.send(());
                            // Blocks its worker: a misbehaving synchronous handler.
                            std::thread::sleep(ms(700));
                        })
                        .on_signal(move |_ctx, signal| {
                            if *signal == Signal::PostStop {
                                push(&for_stuck, "stuck");
                            }
                            Behaviors::same()
                        }),
                        "stuck",
                    )
                    .unwrap();
                let _ = stuck_tx.send(stuck);
                post_stop_logger(for_tree.clone(), "tree")
            }),
            "tree",
        )
        .unwrap();
    let stuck = timeout(T, stuck_rx.recv()).await.unwrap().unwrap();
    stuck.tell(1_u64);
    timeout(T, in_handler.recv())
        .await
        .expect("in its handler")
        .unwrap();
    let started = std::time::Instant::now();
    timeout(T, system.terminate())
        .await
        .expect("terminate ends");
    let took = started.elapsed();
    assert!(took < ms(500), "one deadline of 100 ms, took {took:?}");
    let seen = entries(&log);
    // The parent stops waiting for its stuck child and still sees its own PostStop.
    assert_eq!(
        seen,
        ["leaf", "tree"],
        "children first, and no PostStop for the stuck actor"
    );
    let report = LeakReport::after_terminating(&system).await;
    let stuck_paths: Vec<String> = report
        .stuck_in_handler
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(stuck_paths, ["/user/tree/stuck"], "{report}");
    assert!(
        report.not_stopped.is_empty(),
        "the parent stopped, it was not cancelled: {report}"
    );
    assert!(!report.is_clean());
}

struct Guard(Log);

impl Drop for Guard {
    fn drop(&mut self) {
        push(&self.0, "guard dropped");
    }
}

#[tokio::test(start_paused = true)]
async fn s19_s48_an_awaiting_handler_is_dropped_at_terminate_sees_post_stop_and_leaks_nothing() {
    let system = ActorSystem::builder("awaiting")
        .shutdown_timeout(ms(100))
        .track_leaks(true)
        .build()
        .unwrap();
    let log = new_log();
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let for_handler = log.clone();
    let for_signal = log.clone();
    let waiter = system
        .spawn(
            Behaviors::receive_async(async move |_ctx: &mut ActorContext<u64>, _: u64| {
                let _guard = Guard(for_handler.clone());
                to.tell("waiting".to_string());
                std::future::pending::<()>().await;
            })
            .on_signal(move |_ctx, signal| {
                if *signal == Signal::PostStop {
                    push(&for_signal, "post-stop");
                }
                Behaviors::same()
            }),
            "waiter",
        )
        .unwrap();
    waiter.tell(1_u64);
    expect_lines(&mut probe, &["waiting"]).await;
    let report = LeakReport::after_terminating(&system).await;
    assert_eq!(entries(&log), ["guard dropped", "post-stop"]);
    assert!(report.is_clean(), "{report}");
    assert!(
        report.stuck_in_handler.is_empty() && report.not_stopped.is_empty(),
        "{report}"
    );
}

#[tapio::test(start_paused = true)]
async fn s19_s14_terminate_while_a_parent_backs_off_stops_the_children_it_kept(
    system: ActorSystem,
) {
    let log = new_log();
    let (kid_tx, mut kids) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let for_parent = log.clone();
    let behavior = Behaviors::receive(move |ctx: &mut ActorContext<u64>, n: u64| {
        if n == 1 {
            let kid = ctx
                .spawn(post_stop_logger(for_parent.clone(), "kid"), "kid")
                .unwrap();
            let _ = kid_tx.send(kid);
            return Ok(Behaviors::same());
        }
        Err(Boom)
    });
    let restart = SupervisorStrategy::restart()
        .with_stop_children(false)
        .with_backoff(Backoff::new(Duration::from_secs(60), Duration::from_secs(60), 0.0).unwrap());
    let parent = system
        .spawn(
            Behaviors::supervise(behavior).on_failure::<Boom>(restart),
            "parent",
        )
        .unwrap();
    parent.tell(1_u64);
    let kid = timeout(T, kids.recv()).await.unwrap().unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&kid);
    parent.tell(2_u64); // fails: a minute of backoff, the kid kept
    probe.expect_no_termination(ms(100)).await;
    let started = Instant::now();
    let report = LeakReport::after_terminating(&system).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(entries(&log), ["kid"]);
    assert!(report.is_clean(), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s19_s33_terminate_does_not_wait_for_a_running_blocking_call() {
    let system = ActorSystem::builder("blocking-at-the-end")
        .shutdown_timeout(ms(300))
        .track_leaks(true)
        .build()
        .unwrap();
    let log = new_log();
    let (in_tx, mut in_call) = mpsc::unbounded_channel::<()>();
    let (done_tx, mut done) = mpsc::unbounded_channel::<()>();
    let for_signal = log.clone();
    let reader = system
        .spawn(
            Behaviors::receive_async(async move |ctx: &mut ActorContext<u64>, _: u64| {
                let in_tx = in_tx.clone();
                let done_tx = done_tx.clone();
                let _ = ctx
                    .run_blocking(move || {
                        let _ = in_tx.send(());
                        std::thread::sleep(ms(900));
                        let _ = done_tx.send(());
                    })
                    .await;
            })
            .on_signal(move |_ctx, signal| {
                if *signal == Signal::PostStop {
                    push(&for_signal, "post-stop");
                }
                Behaviors::same()
            }),
            "reader",
        )
        .unwrap();
    reader.tell(1_u64);
    timeout(T, in_call.recv()).await.unwrap().unwrap();
    let started = std::time::Instant::now();
    let report = LeakReport::after_terminating(&system).await;
    let took = started.elapsed();
    assert!(took < ms(1000), "terminate waited for the call: {took:?}");
    assert_eq!(
        entries(&log),
        ["post-stop"],
        "the awaiting handler was dropped"
    );
    assert!(report.is_clean(), "{report}");
    // The call itself ran to its end on the pool.
    timeout(T, done.recv())
        .await
        .expect("the call finished")
        .unwrap();
}

// =================================================================================
// 7. Supervision (S10-S17, S7)
// =================================================================================

fn failing_by_number(to: ActorRef<String>) -> Behavior<u64> {
    Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
        to.tell("start".to_string());
        let to = to.clone();
        let count = Arc::new(AtomicU64::new(0));
        Behaviors::receive_message(move |n: u64| -> Result<(), BoxError> {
            match n {
                1 => Err(Boom.into()),
                2 => Err(Other.into()),
                3 => panic!("a panic on purpose"),
                _ => {
                    let seen = count.fetch_add(1, SeqCst) + 1;
                    to.tell(format!("count {seen}"));
                    Ok(())
                }
            }
        })
    })
}

#[tapio::test(start_paused = true)]
async fn s12_each_clause_counts_its_own_restarts(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let twice = || {
        SupervisorStrategy::restart()
            .with_limit(2, Duration::from_secs(60))
            .unwrap()
    };
    let actor = system
        .spawn(
            Behaviors::supervise(failing_by_number(probe.actor_ref().clone()))
                .on_failure::<Boom>(twice())
                .on_failure::<Other>(twice()),
            "two-clauses",
        )
        .unwrap();
    probe.watch(&actor);
    expect_lines(&mut probe, &["start"]).await;
    for n in [1_u64, 2, 1, 2] {
        actor.tell(n);
        expect_lines(&mut probe, &["start"]).await;
    }
    // Four restarts, two per clause: each within its own limit.
    actor.tell(9_u64);
    expect_lines(&mut probe, &["count 1"]).await;
    probe.expect_no_termination(ms(100)).await;
    // A third `Boom` is restart number 3 of the first clause: the actor stops.
    actor.tell(1_u64);
    probe.expect_terminated(&actor, T).await;
    probe.expect_no_message(ms(100)).await;
}

#[tapio::test(start_paused = true)]
async fn s12_the_backoff_count_starts_again_after_an_incarnation_runs_for_max(system: ActorSystem) {
    let (started_tx, mut started) = mpsc::unbounded_channel::<Instant>();
    let behavior = Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
        let _ = started_tx.send(Instant::now());
        Behaviors::receive_message(|_: u64| Err::<(), Boom>(Boom))
    });
    let backoff = Backoff::new(ms(100), ms(400), 0.0).unwrap();
    let actor = system
        .spawn(
            Behaviors::supervise(behavior)
                .on_failure::<Boom>(SupervisorStrategy::restart().with_backoff(backoff)),
            "backing-off",
        )
        .unwrap();
    let mut last = timeout(T, started.recv()).await.unwrap().unwrap();
    let mut gaps = Vec::new();
    for rest in [0, 0, 0, 500] {
        // Run `rest` without failing, then fail.
        tokio::time::sleep(ms(rest)).await;
        let failed_at = Instant::now();
        actor.tell(0_u64);
        let next = timeout(T, started.recv()).await.unwrap().unwrap();
        gaps.push((next - failed_at).as_millis());
        last = next;
    }
    let _ = last;
    // 100, 200, 400 (the cap), then 100 again: the last incarnation ran 500 ms > max.
    let near = |got: u128, want: u128| got >= want && got <= want + 5;
    let expected = [100, 200, 400, 100];
    assert!(
        gaps.iter().zip(expected).all(|(g, w)| near(*g, w)),
        "gaps {gaps:?}, expected {expected:?}"
    );
}

#[tapio::test(start_paused = true)]
async fn s12_backoff_delays_stretch_after_the_cap_and_jitter_stays_in_range(system: ActorSystem) {
    let backoff = Backoff::new(ms(100), ms(400), 0.5).unwrap();
    assert_eq!(backoff.delay(0, 0.0), ms(100));
    assert_eq!(backoff.delay(1, 0.0), ms(200));
    assert_eq!(backoff.delay(3, 0.0), ms(400), "800 capped at 400");
    assert_eq!(backoff.delay(3, 0.5), ms(500), "stretched after the cap");
    assert_eq!(backoff.delay(0, f64::NAN), ms(100), "NaN counts as 0");
    assert_eq!(backoff.delay(u32::MAX, 0.0), ms(400));
    assert!(backoff.delay(u32::MAX, 0.999_999) <= ms(600));
    // Live: every delay of a min = max = 100 ms backoff with a factor of 0.5 lies in
    // 100..=150 ms, and they are not all the same.
    let (started_tx, mut started) = mpsc::unbounded_channel::<Instant>();
    let behavior = Behaviors::setup(move |_ctx: &mut ActorContext<u64>| {
        let _ = started_tx.send(Instant::now());
        Behaviors::receive_message(|_: u64| Err::<(), Boom>(Boom))
    });
    let jittery = Backoff::new(ms(100), ms(100), 0.5).unwrap();
    let restart = SupervisorStrategy::restart()
        .with_limit(100, Duration::from_secs(3600))
        .unwrap()
        .with_backoff(jittery);
    let actor = system
        .spawn(
            Behaviors::supervise(behavior).on_failure::<Boom>(restart),
            "jittery",
        )
        .unwrap();
    timeout(T, started.recv()).await.unwrap().unwrap();
    let mut gaps = Vec::new();
    for _ in 0..12 {
        let failed_at = Instant::now();
        actor.tell(0_u64);
        let next = timeout(T, started.recv()).await.unwrap().unwrap();
        gaps.push((next - failed_at).as_millis());
    }
    assert!(gaps.iter().all(|g| (100..=151).contains(g)), "{gaps:?}");
    assert!(
        gaps.iter().any(|g| *g != gaps[0]),
        "no jitter at all: {gaps:?}"
    );
}

#[tapio::test(start_paused = true)]
async fn s14_a_restart_that_keeps_children_keeps_those_spawned_in_a_handler(system: ActorSystem) {
    for keep in [false, true] {
        let mut probe = TestProbe::<String>::new(&system);
        let to = probe.actor_ref().clone();
        let (kid_tx, mut kid_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
        let behavior = Behaviors::receive(move |ctx: &mut ActorContext<u64>, n: u64| {
            match n {
                1 => {
                    let kid = ctx.spawn(Behaviors::ignore::<u64>(), "kid").unwrap();
                    let _ = kid_tx.send(kid);
                }
                2 => return Err(Boom),
                _ => to.tell(format!("kid there: {}", ctx.child("kid").is_some())),
            }
            Ok(Behaviors::same())
        });
        let restart = SupervisorStrategy::restart().with_stop_children(!keep);
        let actor = system
            .spawn_anonymous(Behaviors::supervise(behavior).on_failure::<Boom>(restart))
            .unwrap();
        actor.tell(1_u64);
        let kid = timeout(T, kid_rx.recv()).await.unwrap().unwrap();
        probe.watch(&kid);
        actor.tell(2_u64);
        actor.tell(3_u64);
        expect_lines(&mut probe, &[&format!("kid there: {keep}")]).await;
        if keep {
            probe.expect_no_termination(ms(100)).await;
        } else {
            probe.expect_terminated(&kid, T).await;
        }
        system.stop(&actor).unwrap();
    }
}

#[tapio::test(start_paused = true)]
async fn s16_child_failed_carries_the_paths_climbed_so_far_at_each_level(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (g_tx, mut g_rx) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let reporter = |who: &'static str, to: ActorRef<String>| {
        move |_ctx: &mut ActorContext<u64>, signal: &Signal| {
            if let Signal::ChildFailed(failed) = signal {
                let climbed: Vec<String> = failed
                    .failure()
                    .climbed()
                    .iter()
                    .map(|p| p.to_string())
                    .collect();
                to.tell(format!(
                    "{who}: child {} climbed {}",
                    failed.child().path(),
                    climbed.join(" ")
                ));
            }
            Behaviors::same()
        }
    };
    let to_p = to.clone();
    let parent = system
        .spawn(
            Behaviors::supervise(Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                let to_c = to_p.clone();
                let g_tx = g_tx.clone();
                let child = Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                    let grandchild = Behaviors::supervise(Behaviors::receive_message(|_: u64| {
                        Err::<(), Boom>(Boom)
                    }))
                    .on_failure::<Boom>(SupervisorStrategy::escalate());
                    let g = ctx.spawn(grandchild, "g").unwrap();
                    let _ = g_tx.send(g);
                    Behaviors::receive_message(|_: u64| ()).on_signal(reporter("c", to_c.clone()))
                });
                ctx.spawn(
                    Behaviors::supervise(child).on_failure::<Boom>(SupervisorStrategy::escalate()),
                    "c",
                )
                .unwrap();
                let to_p = to_p.clone();
                Behaviors::receive_message({
                    let to_p = to_p.clone();
                    move |n: u64| to_p.tell(format!("p alive {n}"))
                })
                .on_signal(reporter("p", to_p))
            }))
            .on_failure::<Boom>(SupervisorStrategy::resume()),
            "p",
        )
        .unwrap();
    let g = timeout(T, g_rx.recv()).await.unwrap().unwrap();
    g.tell(0_u64);
    expect_lines(
        &mut probe,
        &[
            "c: child /user/p/c/g climbed /user/p/c/g /user/p/c",
            "p: child /user/p/c climbed /user/p/c/g /user/p/c /user/p",
        ],
    )
    .await;
    parent.tell(5_u64);
    expect_lines(&mut probe, &["p alive 5"]).await;
}

#[tapio::test(start_paused = true)]
async fn s10_on_any_failure_decides_what_the_earlier_clauses_do_not(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let actor = system
        .spawn(
            Behaviors::supervise(failing_by_number(probe.actor_ref().clone()))
                .on_failure::<Boom>(SupervisorStrategy::resume())
                .on_any_failure(SupervisorStrategy::restart()),
            "catch-all",
        )
        .unwrap();
    for n in [5_u64, 1, 5, 2, 5, 5, 3, 5] {
        actor.tell(n);
    }
    expect_lines(
        &mut probe,
        &[
            "start", "count 1", // 1: Boom, resumed: the count goes on
            "count 2", // 2: Other, restarted by the catch-all
            "start", "count 1", "count 2", // 3: a panic, restarted by the catch-all
            "start", "count 1",
        ],
    )
    .await;
}

#[tapio::test(start_paused = true)]
async fn s7_s11_setup_once_restarts_what_it_supervises_and_cannot_be_restarted_itself(
    system: ActorSystem,
) {
    // `supervise` inside: the one-shot setup runs once, what it supervises restarts.
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (once_tx, once_rx) = tokio::sync::oneshot::channel::<&'static str>();
    let inside = system
        .spawn(
            Behaviors::setup_once(move |_ctx: &mut ActorContext<u64>| {
                let _ = once_tx.send("once");
                Behaviors::supervise(failing_by_number(to))
                    .on_failure::<Boom>(SupervisorStrategy::restart())
            }),
            "inside",
        )
        .unwrap();
    assert_eq!(timeout(T, once_rx).await.unwrap(), Ok("once"));
    for n in [5_u64, 1, 5] {
        inside.tell(n);
    }
    expect_lines(&mut probe, &["start", "count 1", "start", "count 1"]).await;

    // `supervise` outside: the restart cannot run the factory again; the actor stops.
    let mut letters = system.events().subscribe::<DeadLetter>();
    let to = probe.actor_ref().clone();
    let (once_tx, once_rx) = tokio::sync::oneshot::channel::<&'static str>();
    let outside = system
        .spawn(
            Behaviors::supervise(Behaviors::setup_once(
                move |_ctx: &mut ActorContext<u64>| {
                    let _ = once_tx.send("once");
                    failing_by_number(to)
                },
            ))
            .on_failure::<Boom>(SupervisorStrategy::restart()),
            "outside",
        )
        .unwrap();
    assert_eq!(timeout(T, once_rx).await.unwrap(), Ok("once"));
    expect_lines(&mut probe, &["start"]).await;
    probe.watch(&outside);
    outside.tell(1_u64);
    outside.tell(5_u64);
    probe.expect_terminated(&outside, T).await;
    probe.expect_no_message(ms(100)).await;
    let letter = letters_for(&mut letters, outside.path(), 1).await.remove(0);
    assert_eq!(letter.take_message::<u64>(), Some(5));
}

// =================================================================================
// 8. Watch (S18), dead letters and events (S31, S49), names (S2), ReplyThen (S21),
//    message adapters (S28)
// =================================================================================

#[tapio::test(start_paused = true)]
async fn s18_s11_a_death_pact_under_resume_keeps_the_watcher_and_its_state(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let watched = target.clone();
    let watcher = Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        ctx.watch(&watched);
        to.tell("start".to_string());
        let to = to.clone();
        let count = Arc::new(AtomicU64::new(0));
        // No signal handler: `Terminated` is unhandled, a death pact.
        Behaviors::receive_message(move |_: u64| {
            to.tell(format!("count {}", count.fetch_add(1, SeqCst) + 1))
        })
    });
    let actor = system
        .spawn(
            Behaviors::supervise(watcher).on_failure::<DeathPact>(SupervisorStrategy::resume()),
            "pact",
        )
        .unwrap();
    probe.watch(&actor);
    actor.tell(0_u64);
    actor.tell(0_u64);
    expect_lines(&mut probe, &["start", "count 1", "count 2"]).await;
    system.stop(&target).unwrap();
    probe.expect_no_termination(ms(200)).await;
    actor.tell(0_u64);
    expect_lines(&mut probe, &["count 3"]).await;
}

#[tapio::test]
async fn s49_a_loss_is_reported_where_it_happened_in_the_stream(system: ActorSystem) {
    #[derive(Debug, Clone, PartialEq)]
    struct Note(u32);
    let events = system.events();
    let mut sub = events.subscribe_with_capacity::<Note>(2).unwrap();
    assert_eq!(events.subscriber_count::<Note>(), 1);
    let taken: Vec<usize> = [1, 2, 3, 4]
        .into_iter()
        .map(|n| events.publish(Note(n)))
        .collect();
    assert_eq!(taken, [1, 1, 0, 0]);
    assert_eq!(sub.lost(), 2);
    assert_eq!(timeout(T, sub.recv()).await.unwrap(), Some(Note(1)));
    assert_eq!(events.publish(Note(5)), 1);
    assert_eq!(events.publish(Note(6)), 0);
    assert_eq!(sub.lost(), 3);
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(timeout(T, sub.recv_with_loss()).await.unwrap().unwrap());
    }
    assert_eq!(
        seen,
        [
            Received::Event(Note(2)),
            Received::Lost(2),
            Received::Event(Note(5)),
            Received::Lost(1)
        ]
    );
    assert_eq!(sub.try_recv(), None);
    sub.unsubscribe();
    assert_eq!(events.subscriber_count::<Note>(), 0);
    assert_eq!(events.publish(Note(7)), 0);
}

#[tapio::test]
async fn s49_an_event_held_back_behind_a_reported_loss_is_beyond_the_capacity(system: ActorSystem) {
    let events = system.events();
    let mut sub = events.subscribe_with_capacity::<(u8, u8)>(1).unwrap();
    assert_eq!(events.publish((1_u8, 0_u8)), 1);
    assert_eq!(events.publish((2_u8, 0_u8)), 0, "full: lost");
    let first = timeout(T, sub.recv_with_loss()).await.unwrap();
    assert_eq!(first, Some(Received::Event((1, 0))));
    assert_eq!(events.publish((3_u8, 0_u8)), 1, "room again");
    let loss = timeout(T, sub.recv_with_loss()).await.unwrap();
    assert_eq!(loss, Some(Received::Lost(1)));
    // (3, 0) is now held back behind the loss just reported: one over the capacity
    // is allowed for it, so the buffer still has room for one more.
    assert_eq!(sub.buffered(), 1);
    assert_eq!(
        events.publish((4_u8, 0_u8)),
        1,
        "the held-back event takes no room"
    );
    assert_eq!(sub.buffered(), 2);
    assert_eq!(sub.try_recv(), Some((3, 0)));
    assert_eq!(sub.try_recv(), Some((4, 0)));
    assert_eq!(sub.lost(), 1);
}

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Balance;

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Reset;

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Close;

#[message(reply = u64)]
#[derive(Debug, Clone)]
pub struct Withdraw(pub u64);

#[derive(Clone)]
pub struct Account {
    balance: u64,
    log: Log,
}

#[actor]
impl Account {
    fn balance(&mut self, _: Balance) -> u64 {
        self.balance
    }

    fn reset(&mut self, _: Reset) -> ReplyThen<u64, AccountMsg> {
        let fresh = Account {
            balance: 0,
            log: self.log.clone(),
        };
        ReplyThen::new(
            self.balance,
            Behaviors::setup(move |_ctx: &mut Ctx<Account>| fresh.clone()),
        )
    }

    fn withdraw(&mut self, Withdraw(amount): Withdraw) -> Result<ReplyThen<u64, AccountMsg>, Boom> {
        if amount > self.balance {
            return Err(Boom);
        }
        self.balance -= amount;
        Ok(ReplyThen::new(self.balance, Behaviors::same()))
    }

    async fn close(&mut self, _: Close) -> ReplyThen<u64, AccountMsg> {
        tokio::task::yield_now().await;
        ReplyThen::stop(self.balance)
    }

    #[signal]
    fn on_signal(&mut self, signal: &Signal) {
        if *signal == Signal::PostStop {
            push(&self.log, format!("post-stop at {}", self.balance));
        }
    }
}

#[tapio::test]
async fn s31_a_request_told_rather_than_asked_letters_its_answer(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let account = system
        .spawn(
            Account {
                balance: 12,
                log: new_log(),
            },
            "told",
        )
        .unwrap();
    account.tell(Balance);
    let letter = timeout(T, async {
        loop {
            let letter = letters.recv().await.expect("open");
            if letter.reason() == &DeadLetterReason::NoReplyExpected {
                return letter;
            }
        }
    })
    .await
    .expect("a NoReplyExpected letter");
    assert_eq!(
        letter.take_message::<u64>(),
        Some(12),
        "{}",
        describe(&letter)
    );
    assert_eq!(account.ask(Balance).timeout(T).await, Ok(12));
}

#[tapio::test]
async fn s21_s6_reply_then_answers_and_switches_to_a_fresh_actor_value(system: ActorSystem) {
    let account = system
        .spawn(
            Account {
                balance: 40,
                log: new_log(),
            },
            "resettable",
        )
        .unwrap();
    assert_eq!(account.ask(Reset).timeout(T).await, Ok(40));
    assert_eq!(account.ask(Balance).timeout(T).await, Ok(0));
}

#[tapio::test]
async fn s27_s21_asks_stashed_with_their_reply_slot_are_answered_by_the_actor_switched_to(
    system: ActorSystem,
) {
    let log = new_log();
    let loader = Behaviors::with_stash(8, move |stash: StashBuffer<AccountMsg>| {
        let log = log.clone();
        Behaviors::receive_message(
            move |message: AccountMsg| -> Result<Behavior<AccountMsg>, StashOverflow> {
                if let AccountMsg::Reset(..) = message {
                    // Loaded: become the struct actor and replay what was asked.
                    let account = Account {
                        balance: 5,
                        log: log.clone(),
                    };
                    return Ok(stash.unstash_all(Behaviors::setup(
                        move |_ctx: &mut Ctx<Account>| account.clone(),
                    )));
                }
                stash.stash(message)?;
                Ok(Behaviors::same())
            },
        )
    })
    .unwrap();
    let account = system.spawn(loader, "loading").unwrap();
    let balance = account.ask(Balance).timeout(T);
    let withdrawn = account.ask(Withdraw(2)).timeout(T);
    let balance = tokio::spawn(async move { balance.await });
    let withdrawn = tokio::spawn(async move { withdrawn.await });
    account.tell(Reset);
    assert_eq!(timeout(T, balance).await.unwrap().unwrap(), Ok(5));
    assert_eq!(timeout(T, withdrawn).await.unwrap().unwrap(), Ok(3));
}

#[tapio::test]
async fn s9_s11_s21_a_failing_request_handler_under_resume_leaves_its_ask_unanswered_at_once(
    system: ActorSystem,
) {
    let account = system
        .spawn(
            Account {
                balance: 7,
                log: new_log(),
            }
            .supervise()
            .on_failure::<Boom>(SupervisorStrategy::resume()),
            "resumed",
        )
        .unwrap();
    let started = Instant::now();
    let refused = account
        .ask(Withdraw(100))
        .timeout(Duration::from_secs(20))
        .await;
    assert_eq!(
        refused,
        Err(AskError::Unanswered {
            target: account.path().clone()
        })
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        account.ask(Balance).timeout(T).await,
        Ok(7),
        "resumed with its state"
    );
    assert_eq!(account.ask(Withdraw(2)).timeout(T).await, Ok(5));
}

#[tapio::test]
async fn s21_s15_an_async_handler_answers_then_stops_with_reply_then(system: ActorSystem) {
    let log = new_log();
    let mut probe = TestProbe::<u64>::new(&system);
    let account = system
        .spawn(
            Account {
                balance: 7,
                log: log.clone(),
            },
            "closing",
        )
        .unwrap();
    probe.watch(&account);
    assert_eq!(account.ask(Close).timeout(T).await, Ok(7));
    probe.expect_terminated(&account, T).await;
    assert_eq!(entries(&log), ["post-stop at 7"]);
    let started = Instant::now();
    let after = account.ask(Balance).timeout(Duration::from_secs(20)).await;
    assert!(
        matches!(after, Err(AskError::TargetTerminated { .. })),
        "{after:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tapio::test]
async fn s2_names_are_unique_among_siblings_not_across_the_tree(system: ActorSystem) {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let spawner = |tx: mpsc::UnboundedSender<String>| {
        Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
            let first = ctx
                .spawn(Behaviors::ignore::<u64>(), "w")
                .map(|r| r.path().to_string());
            let second = ctx.spawn(Behaviors::ignore::<u64>(), "w");
            let _ = tx.send(format!(
                "{} second={}",
                first.unwrap_or_else(|e| e.to_string()),
                matches!(second, Err(SpawnError::NameTaken { .. }))
            ));
            let _ = tx.send(format!("found={}", ctx.child("w").is_some()));
            Behaviors::ignore::<u64>()
        })
    };
    let _a = system.spawn(spawner(tx.clone()), "a").unwrap();
    let _b = system.spawn(spawner(tx.clone()), "b").unwrap();
    let w = system.spawn(Behaviors::ignore::<u64>(), "w").unwrap();
    assert_eq!(w.path().to_string(), "/user/w");
    let mut got = Vec::new();
    for _ in 0..4 {
        got.push(timeout(T, rx.recv()).await.unwrap().unwrap());
    }
    got.sort();
    assert_eq!(
        got,
        [
            "/user/a/w second=true",
            "/user/b/w second=true",
            "found=true",
            "found=true"
        ]
    );
    assert!(matches!(
        system.spawn(Behaviors::ignore::<u64>(), "a"),
        Err(SpawnError::NameTaken { .. })
    ));
}

#[message]
pub enum Owner {
    Make,
    Fail,
    Said(String),
}

#[tapio::test(start_paused = true)]
async fn s28_s14_an_adapter_made_in_a_handler_keeps_its_translation_across_a_restart(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (adapter_tx, mut adapters) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let generations = Arc::new(AtomicU64::new(0));
    let owner = Behaviors::setup(move |_ctx: &mut ActorContext<Owner>| {
        let generation = generations.fetch_add(1, SeqCst) + 1;
        let to = to.clone();
        let adapter_tx = adapter_tx.clone();
        Behaviors::receive(move |ctx: &mut ActorContext<Owner>, message: Owner| {
            match message {
                Owner::Make => {
                    let adapter = ctx.message_adapter(move |n: u64| {
                        Owner::Said(format!("made by g{generation}: {n}"))
                    });
                    let _ = adapter_tx.send(adapter);
                }
                Owner::Fail => return Err(Boom),
                Owner::Said(text) => to.tell(format!("{text}, seen by g{generation}")),
            }
            Ok(Behaviors::same())
        })
    });
    let actor = system
        .spawn(
            Behaviors::supervise(owner).on_failure::<Boom>(SupervisorStrategy::restart()),
            "owner",
        )
        .unwrap();
    actor.tell(Owner::Make);
    let adapter = timeout(T, adapters.recv()).await.unwrap().unwrap();
    adapter.tell(5_u64);
    expect_lines(&mut probe, &["made by g1: 5, seen by g1"]).await;
    actor.tell(Owner::Fail);
    adapter.tell(6_u64);
    expect_lines(&mut probe, &["made by g1: 6, seen by g2"]).await;
}

#[tapio::test(start_paused = true)]
async fn s28_s14_a_setup_that_registers_again_replaces_the_translation_of_old_adapters(
    system: ActorSystem,
) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (adapter_tx, mut adapters) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let generations = Arc::new(AtomicU64::new(0));
    let owner = Behaviors::setup(move |ctx: &mut ActorContext<Owner>| {
        let generation = generations.fetch_add(1, SeqCst) + 1;
        let adapter =
            ctx.message_adapter(move |n: u64| Owner::Said(format!("made by g{generation}: {n}")));
        let _ = adapter_tx.send(adapter);
        let to = to.clone();
        Behaviors::receive_message(move |message: Owner| match message {
            Owner::Fail => Err(Boom),
            Owner::Said(text) => {
                to.tell(text);
                Ok(())
            }
            Owner::Make => Ok(()),
        })
    });
    let actor = system
        .spawn(
            Behaviors::supervise(owner).on_failure::<Boom>(SupervisorStrategy::restart()),
            "owner",
        )
        .unwrap();
    let first = timeout(T, adapters.recv()).await.unwrap().unwrap();
    first.tell(1_u64);
    expect_lines(&mut probe, &["made by g1: 1"]).await;
    actor.tell(Owner::Fail);
    let second = timeout(T, adapters.recv()).await.unwrap().unwrap();
    first.tell(2_u64);
    second.tell(3_u64);
    expect_lines(&mut probe, &["made by g2: 2", "made by g2: 3"]).await;
}

#[tapio::test(start_paused = true)]
async fn s28_s11_a_failing_translation_under_resume_drops_only_that_message(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let (adapter_tx, mut adapters) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let owner = Behaviors::setup(move |ctx: &mut ActorContext<Owner>| {
        let adapter = ctx.try_message_adapter(|n: u64| {
            if n == 13 {
                Err(Boom)
            } else {
                Ok(Owner::Said(format!("adapted {n}")))
            }
        });
        let _ = adapter_tx.send(adapter);
        to.tell("start".to_string());
        let to = to.clone();
        let seen = Arc::new(AtomicU64::new(0));
        Behaviors::receive_message(move |message: Owner| {
            if let Owner::Said(text) = message {
                to.tell(format!("{text} #{}", seen.fetch_add(1, SeqCst) + 1));
            }
        })
    });
    let actor = system
        .spawn(
            Behaviors::supervise(owner).on_failure::<Boom>(SupervisorStrategy::resume()),
            "owner",
        )
        .unwrap();
    let adapter = timeout(T, adapters.recv()).await.unwrap().unwrap();
    adapter.tell(1_u64);
    actor.tell(Owner::Said("direct".into()));
    adapter.tell(13_u64);
    adapter.tell(2_u64);
    expect_lines(
        &mut probe,
        &["start", "adapted 1 #1", "direct #2", "adapted 2 #3"],
    )
    .await;
    probe.expect_no_message(ms(100)).await;
}

// =================================================================================
// 9. Races, in bounded loops (S5, S27, S34, S28, S14, S19, S31)
// =================================================================================

#[message]
#[derive(Debug, Clone)]
pub struct Item {
    pub from: u64,
    pub seq: u64,
}

#[message]
#[derive(Debug, Clone)]
pub struct Hold;

#[message]
#[derive(Debug, Clone)]
pub struct Release;

#[message]
pub struct Drain {
    pub reply_to: ActorRef<usize>,
}

#[derive(Clone)]
pub struct Gate {
    seen: Arc<Mutex<Vec<(u64, u64)>>>,
}

#[actor(
    stash_capacity = 10000,
    messages(Item, Hold, Release, Drain),
    states(Flowing => Holding, Holding => Flowing)
)]
impl Gate {}

#[derive(Clone)]
pub struct Flowing;

#[state(Gate)]
impl Flowing {
    fn item(&mut self, gate: &mut Gate, item: Item) {
        gate.seen.lock().unwrap().push((item.from, item.seq));
    }

    fn hold(self, _: Hold) -> Next<Self> {
        Next::to(Holding)
    }

    fn release(&mut self, _: Release) {}

    fn drain(&mut self, gate: &mut Gate, drain: Drain) {
        drain.reply_to.tell(gate.seen.lock().unwrap().len());
    }
}

#[derive(Clone)]
pub struct Holding;

#[state(Gate, unhandled = stash)]
impl Holding {
    fn release(self, _: Release) -> Next<Self> {
        Next::to(Flowing)
    }

    fn hold(&mut self, _: Hold) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s34_s27_s5_a_stashing_state_toggled_under_producers_keeps_each_senders_order() {
    const PRODUCERS: u64 = 3;
    const EACH: u64 = 300;
    let system = ActorSystem::new("gates").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut failures = Vec::new();
    for round in 0..20 {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let gate = system
            .spawn_anonymous(Machine::new(Gate { seen: seen.clone() }, Flowing))
            .unwrap();
        let mut producers = Vec::new();
        for from in 0..PRODUCERS {
            let gate = gate.clone();
            producers.push(tokio::spawn(async move {
                for seq in 0..EACH {
                    gate.tell(Item { from, seq });
                    if seq % 50 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            }));
        }
        let toggler = {
            let gate = gate.clone();
            tokio::spawn(async move {
                for _ in 0..40 {
                    gate.tell(Hold);
                    tokio::task::yield_now().await;
                    gate.tell(Release);
                    tokio::task::yield_now().await;
                }
            })
        };
        for producer in producers {
            timeout(T, producer).await.unwrap().unwrap();
        }
        timeout(T, toggler).await.unwrap().unwrap();
        gate.tell(Release);
        let count = gate
            .ask_with(|reply_to| Drain { reply_to })
            .timeout(T)
            .await;
        let seen = seen.lock().unwrap().clone();
        let mut in_order = true;
        for from in 0..PRODUCERS {
            let mine: Vec<u64> = seen
                .iter()
                .filter(|(f, _)| *f == from)
                .map(|(_, s)| *s)
                .collect();
            in_order &= mine == (0..EACH).collect::<Vec<_>>();
        }
        if count != Ok((PRODUCERS * EACH) as usize) || !in_order {
            failures.push(format!(
                "round {round}: count {count:?}, in order {in_order}"
            ));
            if failures.len() >= 3 {
                break;
            }
        }
        system.stop(&gate).unwrap();
    }
    if let Ok(Some(letter)) = timeout(ms(50), letters.recv()).await {
        failures.push(format!("a dead letter: {}", describe(&letter)));
    }
    system.terminate().await;
    assert!(failures.is_empty(), "{failures:#?}");
}

#[message]
pub enum Sink {
    Num(u64),
    Fail,
    Sync(ActorRef<usize>),
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s28_s14_s5_adapted_messages_racing_restarts_are_all_handled_in_order() {
    const EACH: u64 = 300;
    let system = ActorSystem::new("adapted-restarts").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut failures = Vec::new();
    for round in 0..30 {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let starts = Arc::new(AtomicU64::new(0));
        let (adapter_tx, mut adapters) = mpsc::unbounded_channel::<ActorRef<u64>>();
        let owner = {
            let seen = seen.clone();
            let starts = starts.clone();
            Behaviors::setup(move |ctx: &mut ActorContext<Sink>| {
                starts.fetch_add(1, SeqCst);
                let _ = adapter_tx.send(ctx.message_adapter(Sink::Num));
                let seen = seen.clone();
                Behaviors::receive_message(move |message: Sink| match message {
                    Sink::Num(n) => {
                        seen.lock().unwrap().push(n);
                        Ok(())
                    }
                    Sink::Fail => Err(Boom),
                    Sink::Sync(reply_to) => {
                        reply_to.tell(seen.lock().unwrap().len());
                        Ok(())
                    }
                })
            })
        };
        let actor = system
            .spawn_anonymous(
                Behaviors::supervise(owner).on_failure::<Boom>(SupervisorStrategy::restart()),
            )
            .unwrap();
        let adapter = timeout(T, adapters.recv()).await.unwrap().unwrap();
        let producer = tokio::spawn(async move {
            for n in 0..EACH {
                adapter.tell(n);
                if n % 40 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        });
        for _ in 0..3 {
            actor.tell(Sink::Fail);
            tokio::task::yield_now().await;
        }
        timeout(T, producer).await.unwrap().unwrap();
        let count = actor.ask_with(Sink::Sync).timeout(T).await;
        let seen = seen.lock().unwrap().clone();
        let starts = starts.load(SeqCst);
        if count != Ok(EACH as usize) || seen != (0..EACH).collect::<Vec<_>>() || starts != 4 {
            failures.push(format!(
                "round {round}: count {count:?}, starts {starts}, first gap at {:?}",
                seen.iter().enumerate().find(|(i, n)| *i as u64 != **n)
            ));
            if failures.len() >= 3 {
                break;
            }
        }
        system.stop(&actor).unwrap();
    }
    if let Ok(Some(letter)) = timeout(ms(50), letters.recv()).await {
        failures.push(format!("a dead letter: {}", describe(&letter)));
    }
    system.terminate().await;
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(start_paused = true)]
async fn s19_s31_terminate_letters_what_a_stash_still_held() {
    let system = ActorSystem::new("held-at-the-end").unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let (stashed_tx, mut stashed) = mpsc::unbounded_channel::<usize>();
    let behavior = Behaviors::with_stash(8, move |stash: StashBuffer<u64>| {
        let stashed_tx = stashed_tx.clone();
        Behaviors::receive_message(move |n: u64| -> Result<(), StashOverflow> {
            stash.stash(n)?;
            let _ = stashed_tx.send(stash.len());
            Ok(())
        })
    })
    .unwrap();
    let holder = system.spawn(behavior, "holder").unwrap();
    for n in [1_u64, 2, 3] {
        holder.tell(n);
    }
    for want in 1..=3 {
        assert_eq!(timeout(T, stashed.recv()).await.unwrap(), Some(want));
    }
    system.terminate().await;
    let got = letters_for(&mut letters, holder.path(), 3).await;
    for letter in &got {
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::RecipientStopped,
            "{}",
            describe(letter)
        );
    }
    let values: Vec<_> = got.iter().map(|l| l.take_message::<u64>()).collect();
    assert_eq!(values, [Some(1), Some(2), Some(3)]);
}
