//! Two rows whose baseline is not a raw channel:
//!
//! - wire: a 100-byte message encoded, framed and handed to `deliver_frame`, which
//!   decodes it into the recipient's protocol and delivers it, until the actor has
//!   handled every one; against postcard encoding and decoding the same message
//!   alone (issue 12: at least 0.7x postcard's throughput, so at most 1.43x its
//!   time);
//! - state: tells through a state-machine actor (`#[actor(states(..))]`) against the
//!   same tells through a plain `#[actor]` with the same handler (issue 11: within
//!   1.2x).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tapio::prelude::*;
use tapio::wire::{FrameHeader, WireLimits, WireMessage, encode_message_frame};
use tapio::{Address, Machine};
use tokio::sync::Notify;

/// Messages through the wire row.
pub const WIRE_MESSAGES: u64 = 200_000;
/// Tells through the state row.
pub const STATE_TELLS: u64 = 1_000_000;

/// A message of 100 bytes on the wire: a number, a name and a body.
#[message(remote = "bench.note.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub seq: u64,
    pub from: String,
    pub body: String,
}

fn note(seq: u64) -> Note {
    Note {
        seq,
        from: "bench@10.0.0.1".into(),
        body: "x".repeat(76),
    }
}

/// Counts notes, and says when it has seen `until` of them.
pub struct Reader {
    seen: u64,
    until: u64,
    done: Arc<Notify>,
}

#[actor]
impl Reader {
    fn note(&mut self, note: Note) {
        self.seen += 1;
        std::hint::black_box(note.seq);
        if self.seen == self.until {
            self.done.notify_one();
        }
    }
}

/// postcard alone: encode and decode each note.
pub async fn wire_postcard() -> Duration {
    let start = Instant::now();
    for seq in 0..WIRE_MESSAGES {
        let bytes = postcard::to_allocvec(&note(seq)).expect("encoded");
        let back: Note = postcard::from_bytes(&bytes).expect("decoded");
        std::hint::black_box(back);
    }
    start.elapsed()
}

/// tapio: encode, frame, `deliver_frame`, until the reader has handled them all.
pub async fn wire_tapio() -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let done = Arc::new(Notify::new());
    let reader = {
        let done = done.clone();
        system
            .spawn(
                Behaviors::setup(move |_| Reader {
                    seen: 0,
                    until: WIRE_MESSAGES,
                    done: done.clone(),
                }),
                "reader",
            )
            .expect("spawned")
    };
    let path = reader.path().to_string();
    let peer = Address::local("peer");
    let limits = WireLimits::DEFAULT;
    let start = Instant::now();
    for seq in 0..WIRE_MESSAGES {
        let header = FrameHeader {
            key: Note::KEY,
            recipient: &path,
            uid: 0,
            reply_to: None,
        };
        let frame = encode_message_frame(&header, &note(seq), &limits).expect("framed");
        system.deliver_frame(&peer, &frame).expect("delivered");
        if seq % 256 == 255 {
            // Let the reader run on a current-thread runtime. It takes 512 messages
            // a turn (tokio's cooperative budget), so a turn every 256 frames keeps
            // its backlog short: every 1,024, the backlog grew by 512 a turn to
            // about 100,000 messages, and the row measured the cache misses of a
            // queue megabytes long rather than the framing.
            tokio::task::yield_now().await;
        }
    }
    done.notified().await;
    let elapsed = start.elapsed();
    system.terminate().await;
    elapsed
}

/// Messages through the link row.
pub const LINK_MESSAGES: u64 = 200_000;
/// The most notes in flight across the link at once: well under the outbound
/// queue's 1,024, so none is dropped.
const LINK_WINDOW: u64 = 512;

/// Counts the notes that crossed, where the sender can see, and checks that each
/// is the next in sequence: none lost, none reordered.
pub struct Counter {
    seen: Arc<AtomicU64>,
}

#[actor]
impl Counter {
    fn note(&mut self, note: Note) {
        let expected = self.seen.load(Ordering::Relaxed);
        assert_eq!(
            note.seq, expected,
            "a note was lost or reordered on the link"
        );
        self.seen.store(expected + 1, Ordering::Release);
    }
}

/// Two systems on loopback: `LINK_MESSAGES` notes told across the link, at most
/// `LINK_WINDOW` in flight, until the counter on the other system has them all, each
/// in sequence (issue 13: at least 1,000,000 messages/s, so at most 1,000 ns each,
/// with none lost and none reordered).
pub async fn link_tapio() -> Duration {
    let node = |name: &str| {
        ActorSystem::builder(name)
            .remote(tapio::remote::RemoteSettings::loopback())
            .build()
            .expect("a system")
    };
    let (away, home) = (node("away"), node("home"));
    let seen = Arc::new(AtomicU64::new(0));
    let counter = {
        let seen = seen.clone();
        away.spawn(
            Behaviors::setup(move |_| Counter { seen: seen.clone() }),
            "counter",
        )
        .expect("spawned")
    };
    let remote = home
        .resolve::<CounterMsg>(&counter.path().to_uri())
        .expect("resolved");
    let until = |count: u64| {
        let seen = seen.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(60);
            while seen.load(Ordering::Acquire) < count {
                assert!(Instant::now() < deadline, "notes were lost on the link");
                tokio::task::yield_now().await;
            }
        }
    };
    // The first note dials: wait for it before the clock starts.
    remote.tell(note(0));
    until(1).await;
    let start = Instant::now();
    for seq in 1..=LINK_MESSAGES {
        remote.tell(note(seq));
        if seq % LINK_WINDOW == 0 {
            until(seq + 1 - LINK_WINDOW).await;
        }
    }
    until(LINK_MESSAGES + 1).await;
    let elapsed = start.elapsed();
    home.terminate().await;
    away.terminate().await;
    elapsed
}

// ---------------------------------------------------------------- state

#[message]
pub struct Bump;

/// The plain actor: one handler.
pub struct Plain {
    count: Arc<AtomicU64>,
    until: u64,
    done: Arc<Notify>,
}

#[actor]
impl Plain {
    fn bump(&mut self, _: Bump) {
        let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        if n == self.until {
            self.done.notify_one();
        }
    }
}

/// The state machine: the same handler, in its one busy state (and another state it
/// never reaches, so the dispatch is a real `match`).
pub struct Machined {
    count: Arc<AtomicU64>,
    until: u64,
    done: Arc<Notify>,
}

#[actor(messages(Bump), states(Busy => Idle, Idle => Busy))]
impl Machined {}

pub struct Busy;

#[state(Machined)]
impl Busy {
    fn bump(&mut self, data: &mut Machined, _: Bump) {
        let n = data.count.fetch_add(1, Ordering::Relaxed) + 1;
        if n == data.until {
            data.done.notify_one();
        }
    }
}

pub struct Idle;

#[state(Machined)]
impl Idle {}

/// `STATE_TELLS` tells to the plain actor, until it has handled them.
pub async fn state_plain() -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let done = Arc::new(Notify::new());
    let actor = {
        let done = done.clone();
        system
            .spawn(
                Behaviors::setup(move |_| Plain {
                    count: Arc::default(),
                    until: STATE_TELLS,
                    done: done.clone(),
                }),
                "plain",
            )
            .expect("spawned")
    };
    let start = Instant::now();
    for _ in 0..STATE_TELLS {
        actor.tell(Bump);
    }
    done.notified().await;
    let elapsed = start.elapsed();
    system.terminate().await;
    elapsed
}

/// The same through the state machine.
pub async fn state_machine() -> Duration {
    let system = ActorSystem::new("bench").expect("a system");
    let done = Arc::new(Notify::new());
    let actor = {
        let done = done.clone();
        system
            .spawn(
                Behaviors::setup(move |_| {
                    Machine::new(
                        Machined {
                            count: Arc::default(),
                            until: STATE_TELLS,
                            done: done.clone(),
                        },
                        Busy,
                    )
                }),
                "machine",
            )
            .expect("spawned")
    };
    let start = Instant::now();
    for _ in 0..STATE_TELLS {
        actor.tell(Bump);
    }
    done.notified().await;
    let elapsed = start.elapsed();
    system.terminate().await;
    elapsed
}
