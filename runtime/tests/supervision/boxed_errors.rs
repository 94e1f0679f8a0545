//! `?` on errors of several types in one handler (S10, S11): a handler returns
//! `Result<_, BoxError>`, and supervision still matches each error by its own type,
//! through the box. For functional behaviors and for `#[actor]` handlers.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use tapio::BoxError;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

const SECOND: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
#[error("the ledger is closed")]
pub struct Closed;

/// What a step does: succeed, fail with an `io::Error`, or fail with `Closed`.
#[message]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    Add,
    Io,
    Closed,
}

fn read_disk(step: Step) -> Result<u64, io::Error> {
    match step {
        Step::Io => Err(io::Error::other("disk gone")),
        _ => Ok(1),
    }
}

fn check_open(step: Step) -> Result<(), Closed> {
    match step {
        Step::Closed => Err(Closed),
        _ => Ok(()),
    }
}

#[message]
#[derive(Debug, PartialEq)]
pub enum Report {
    Started(u32),
    Total(u64),
}

#[message]
pub enum Ledger {
    Step(Step),
    Total,
}

/// A functional ledger: `?` on both error types in one closure, no `map_err`.
/// An `io::Error` restarts it (the total starts again from zero), `Closed` is
/// resumed (the total stays).
fn ledger(to: ActorRef<Report>) -> Behavior<Ledger> {
    let starts = Arc::new(AtomicU32::new(0));
    Behaviors::supervise(Behaviors::setup(move |_| {
        to.tell(Report::Started(starts.fetch_add(1, Ordering::SeqCst) + 1));
        let total = Arc::new(AtomicU64::new(0));
        let to = to.clone();
        Behaviors::receive_message(move |message: Ledger| -> Result<_, BoxError> {
            match message {
                Ledger::Step(step) => {
                    check_open(step)?;
                    let n = read_disk(step)?;
                    total.fetch_add(n, Ordering::SeqCst);
                }
                Ledger::Total => to.tell(Report::Total(total.load(Ordering::SeqCst))),
            }
            Ok(Behaviors::same())
        })
    }))
    .on_failure::<io::Error>(SupervisorStrategy::restart())
    .on_failure::<Closed>(SupervisorStrategy::resume())
    .into()
}

async fn expect(probe: &mut TestProbe<Report>, report: Report) {
    assert_eq!(probe.expect_message(SECOND).await, report);
}

// S10: each clause matches its own error type, though both arrived in a `BoxError`.
#[tapio::test]
async fn a_functional_handler_fails_with_either_error_through_the_box(system: ActorSystem) {
    let mut probe = TestProbe::<Report>::new(&system);
    let ledger = system
        .spawn(ledger(probe.actor_ref().clone()), "ledger")
        .unwrap();
    expect(&mut probe, Report::Started(1)).await;
    ledger.tell(Ledger::Step(Step::Add));
    ledger.tell(Ledger::Step(Step::Add));
    // `Closed`: the resume clause; the state stays.
    ledger.tell(Ledger::Step(Step::Closed));
    ledger.tell(Ledger::Total);
    expect(&mut probe, Report::Total(2)).await;
    // `io::Error`: the restart clause; the setup runs again and the state is new.
    ledger.tell(Ledger::Step(Step::Io));
    expect(&mut probe, Report::Started(2)).await;
    ledger.tell(Ledger::Total);
    expect(&mut probe, Report::Total(0)).await;
}

#[message(reply = u64)]
pub struct Total;

/// The same ledger as a struct actor.
#[derive(Clone, Default)]
pub struct Books {
    total: u64,
}

#[actor]
impl Books {
    fn step(&mut self, step: Step) -> Result<(), BoxError> {
        check_open(step)?;
        self.total += read_disk(step)?;
        Ok(())
    }

    // A request handler may fail with a box too; its answer type stays `u64`.
    async fn total(&mut self, _: Total) -> Result<u64, BoxError> {
        tokio::task::yield_now().await;
        Ok(self.total)
    }
}

// S10, S11: the same for `#[actor]` handlers, sync and async: `Closed` resumes,
// `io::Error` restarts from the spawned value.
#[tapio::test]
async fn an_actor_handler_fails_with_either_error_through_the_box(system: ActorSystem) {
    let books = system
        .spawn(
            Books::default()
                .supervise()
                .on_failure::<io::Error>(SupervisorStrategy::restart())
                .on_failure::<Closed>(SupervisorStrategy::resume()),
            "books",
        )
        .unwrap();
    books.tell(Step::Add);
    books.tell(Step::Closed);
    books.tell(Step::Add);
    assert_eq!(books.ask(Total).timeout(SECOND).await.unwrap(), 2);
    books.tell(Step::Io);
    assert_eq!(books.ask(Total).timeout(SECOND).await.unwrap(), 0);
}

// S9, S10: a clause for another type does not match what is in the box; the
// default decision stops the actor.
#[tapio::test]
async fn an_unmatched_error_in_a_box_stops_the_actor(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let books = system
        .spawn(
            Books::default()
                .supervise()
                .on_failure::<Closed>(SupervisorStrategy::resume()),
            "books",
        )
        .unwrap();
    probe.watch(&books);
    books.tell(Step::Closed);
    assert_eq!(books.ask(Total).timeout(SECOND).await.unwrap(), 0);
    books.tell(Step::Io);
    probe.expect_terminated(&books, SECOND).await;
}
