//! Helpers for the modules that combine the later features: parsing a `name n` line,
//! the `Pulse` and `Cmd` protocols, a `Crash`, and a watcher that reports on a channel.

#![allow(dead_code)]
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub use super::outside::letter_where;
use crate::support::outside;
use outside::{Boom, T, describe, expect_lines, letters, letters_for, ms, next, no_letter_for};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;
use tapio::prelude::*;
use tapio::remote::{PeerUnreachable, RemoteSettings};
use tapio::router::{Pool, PoolHandle, RouterError};
use tapio::testkit::{TestProbe, TwoNodes, two_nodes};
use tapio::{
    AskError, BoxError, DeadLetter, DeadLetterReason, MailboxConfig, OverflowStrategy, StashBuffer,
    StashOverflow, Subscription,
};
use tokio::sync::{Notify, mpsc};
use tokio::time::{Instant, timeout};

// =================================================================================
// helpers
// =================================================================================

pub fn parse(line: &str) -> (String, u64) {
    let (name, n) = line.split_once(' ').unwrap();
    (name.to_string(), n.parse().unwrap())
}

#[message]
#[derive(Clone)]
pub enum Pulse {
    Tick,
    Item(u64),
    Fail,
}

#[message]
pub struct Crash;

#[message(remote = "sw11.cmd.v1")]
#[derive(Debug, Clone)]
pub enum Cmd {
    Crash,
    Say(u64),
}

#[message]
pub enum Watcher {
    Watch(ActorRef<Cmd>),
    Unwatch(ActorRef<Cmd>),
    WatchStopUnwatch(ActorRef<Cmd>),
}

/// A local actor that watches, unwatches, and reports each `Terminated` it hears
/// (name of the watcher, name of the actor).
pub fn watcher(name: &'static str, heard: mpsc::UnboundedSender<String>) -> Behavior<Watcher> {
    Behaviors::receive(move |ctx, m: Watcher| match m {
        Watcher::Watch(r) => ctx.watch(&r),
        Watcher::Unwatch(r) => ctx.unwatch(&r),
        Watcher::WatchStopUnwatch(r) => {
            ctx.watch(&r);
            r.tell(Cmd::Crash);
            ctx.unwatch(&r);
        }
    })
    .on_signal(move |_ctx, signal| {
        if let Signal::Terminated(t) = signal {
            let _ = heard.send(format!("{name} heard {}", t.actor().path().name()));
        }
    })
    .into()
}
