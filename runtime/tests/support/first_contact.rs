//! Messages and helpers for the modules that try what a new user tries first across a
//! link: notes, pings, holds and echoes, stopping an actor and waiting for its end, and
//! the outcome of an ask run in a task.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub use super::outside::{T as BOUND, letter_where};
use std::time::{Duration, Instant};
use tapio::prelude::*;
use tapio::remote::spawn::{RemoteSpawnError, Spawn, SpawnFailure, SpawnReply, Spawner};
use tapio::remote::{LinkError, PeerUnreachable, RemoteError, RemoteSettings};
use tapio::testkit::{TestProbe, TwoNodes, two_nodes};
use tapio::wire::{Registry, WireProblem};
use tapio::{AnyActorRef, AskError, DeadLetter, DeadLetterReason, SystemError, remote_behavior};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

// ---------------------------------------------------------------------------------
// Messages and actors
// ---------------------------------------------------------------------------------

#[message(remote = "outside.note.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note(pub u64);

#[message(remote = "outside.pong.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pong(pub u64);

#[message(remote = "outside.ping.v1", reply = Pong)]
#[derive(Debug, Clone)]
pub struct Ping(pub u64);

#[message(remote = "outside.slow-ping.v1", reply = Pong)]
#[derive(Debug, Clone)]
pub struct SlowPing {
    pub n: u64,
    pub after_ms: u64,
}

/// A request that carries its reply ref in a field; the echo keeps it and never
/// answers.
#[message(remote = "outside.hold.v1")]
pub struct Hold {
    pub reply_to: ActorRef<Pong>,
}

#[message(remote = "outside.quit.v1")]
#[derive(Debug, Clone)]
pub struct Quit;

#[derive(Default, Clone)]
pub struct Echo {
    pub held: Vec<ActorRef<Pong>>,
}

#[actor]
impl Echo {
    fn ping(&mut self, Ping(n): Ping) -> Pong {
        Pong(n)
    }

    async fn slow_ping(&mut self, ping: SlowPing) -> Pong {
        tokio::time::sleep(Duration::from_millis(ping.after_ms)).await;
        Pong(ping.n)
    }

    fn hold(&mut self, hold: Hold) {
        self.held.push(hold.reply_to);
    }

    fn quit(&mut self, _: Quit) -> Behavior<EchoMsg> {
        Behaviors::stopped()
    }
}

// ---------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------

/// Stops `actor` by `stop` and waits (bounded) until a probe on `system` sees it end.
pub async fn stop_and_wait<Q: Message>(
    system: &ActorSystem,
    actor: &ActorRef<Q>,
    stop: impl FnOnce(),
) {
    let mut probe = TestProbe::<Note>::new(system);
    probe.watch(actor);
    stop();
    probe.expect_terminated(actor, BOUND).await;
}

/// The outcome of an ask running in `task`, which must end within `BOUND`.
pub async fn ask_outcome<T>(task: tokio::task::JoinHandle<T>) -> T {
    tokio::time::timeout(BOUND, task)
        .await
        .expect("the ask waited for its deadline")
        .unwrap()
}
