//! A token bucket in one actor, with no lock anywhere.
//!
//! Concepts: `Behaviors::with_timers`, a fixed-rate refill, and the idea that the
//! mailbox is the mutex.
//!
//! A rate limiter is shared mutable state under concurrent access, the textbook case
//! for a lock. Written as an actor it needs none: the bucket is a field of one actor,
//! and an actor handles one message at a time, so the runtime provides the mutual
//! exclusion. The concurrency is outside, in the callers, and the mailbox puts it in
//! order.
//!
//! The refill is a timer, and a timer is not a callback running beside the receive
//! loop: it puts a `Refill` on the actor's own user lane, where it queues like
//! everything else and cannot land in the middle of a decision about a request.
//! `start_fixed_rate` is used on purpose rather than `start_fixed_delay`: a limiter
//! that let time slip when it was busy would hand out fewer permits than it promised,
//! and the promise is a rate.
//!
//! What to watch in the output: the first burst of five requests spends a bucket
//! holding two, and the other three are refused. That is the limiter working, not
//! failing. Then one refill puts a permit back and the next request is allowed.
//!
//! Run it with `cargo run --example rate_limiter`.

use std::time::Duration;

use tapio::prelude::*;
use tapio_examples::support::{self, ExampleError, Lines, Tally};

/// How many permits the bucket holds when full.
pub const CAPACITY: u32 = 2;

/// How often one permit is put back.
pub const REFILL: Duration = Duration::from_millis(100);

/// What the limiter decided about one request.
#[message]
pub struct Decision {
    /// The request.
    pub label: String,
    /// Whether it may go ahead.
    pub allowed: bool,
}

/// Ask for a permit.
#[message]
pub struct Request {
    /// Names the request in the output.
    pub label: String,
    /// Where the decision goes.
    pub reply_to: ActorRef<Decision>,
}

/// The timer, asking for one permit to be put back.
#[message]
#[derive(Clone)]
pub struct Refill;

/// A token bucket that refuses what it cannot allow. A limiter should refuse rather
/// than queue: holding a request until a permit exists turns a rate limit into
/// unbounded latency.
#[derive(Debug, Clone)]
pub struct Limiter {
    tokens: u32,
    capacity: u32,
    refilled: Tally,
}

#[actor]
impl Limiter {
    fn refill(&mut self, _: Refill) {
        self.tokens = (self.tokens + 1).min(self.capacity);
        self.refilled.mark();
    }

    fn request(&mut self, request: Request) {
        let allowed = self.tokens > 0;
        if allowed {
            self.tokens -= 1;
        }
        request.reply_to.tell(Decision {
            label: request.label,
            allowed,
        });
    }
}

/// The limiter, with its refill timer started when it starts (and again on a
/// restart, since a restart cancels timers).
pub fn limiter(capacity: u32, refill: Duration, refilled: Tally) -> Behavior<LimiterMsg> {
    Behaviors::with_timers(move |timers| {
        timers.start_fixed_rate("refill", Refill, refill)?;
        Ok::<_, tapio::ZeroInterval>(Limiter {
            tokens: capacity,
            capacity,
            refilled: refilled.clone(),
        })
    })
}

/// Records what the limiter decided.
pub fn caller(lines: Lines, heard: Tally) -> Behavior<Decision> {
    Behaviors::receive_message(move |decision: Decision| {
        let verdict = if decision.allowed {
            "allowed"
        } else {
            "throttled"
        };
        lines.push(format!("{}: {verdict}", decision.label));
        heard.mark();
    })
    .into()
}

/// Run the example and return one line per decision, in the order the limiter made
/// them.
pub async fn run() -> Result<Vec<String>, ExampleError> {
    let lines = Lines::default();
    let (heard, refilled) = (Tally::default(), Tally::default());
    let system = ActorSystem::new("rate-limiter")?;
    let client = system.spawn(caller(lines.clone(), heard.clone()), "client")?;
    let gate = system.spawn(limiter(CAPACITY, REFILL, refilled.clone()), "limiter")?;
    // Five at once against a bucket of two, sent in one go, long before a refill.
    for n in 1..=5 {
        gate.tell(Request {
            label: format!("req-{n}"),
            reply_to: client.clone(),
        });
    }
    heard.reached(5).await;
    // Wait for the bucket to earn a permit back, then spend it.
    refilled.reached(1).await;
    gate.tell(Request {
        label: "req-6".into(),
        reply_to: client,
    });
    heard.reached(1).await;
    system.terminate().await;
    Ok(lines.snapshot())
}

/// Print the lines.
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), ExampleError> {
    support::show(run()).await
}
