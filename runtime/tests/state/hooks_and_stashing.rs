//! Corners of state machines: entry and exit hooks around switches and stops, switching
//! requests, a stashing state that stops, and a stashing state toggled under producers
//! (S5, S21, S27, S31, S34).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{Log, T, describe, entries, letters_for, ms, new_log, push};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{AskError, DeadLetter, DeadLetterReason};
use tokio::time::{Instant, timeout};

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
