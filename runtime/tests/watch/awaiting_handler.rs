//! `Terminated` waits for the awaiting handler to end (S4, S18).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{T, expect_lines, ms};
use std::sync::Arc;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

/// S4, S18 (`Behaviors::receive_async` docs: other signals wait until the handler is
/// done): a watched actor stops while the watcher's async handler awaits; its
/// `Terminated` is handled only after that handler has ended, never inside it.
#[tapio::test]
async fn s4_s18_terminated_waits_for_the_awaiting_handler_to_end(system: ActorSystem) {
    let mut probe = TestProbe::<String>::new(&system);
    let to = probe.actor_ref().clone();
    let gate = Arc::new(tokio::sync::Notify::new());
    let opened = gate.clone();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let watched = target.clone();
    let watcher = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
                ctx.watch(&watched);
                let to = to.clone();
                let on_signal = to.clone();
                let gate = opened.clone();
                Behaviors::receive_async(async move |_ctx: &mut ActorContext<u64>, _: u64| {
                    to.tell("handler waits".to_string());
                    gate.notified().await;
                    to.tell("handler ends".to_string());
                })
                .on_signal(move |_ctx, signal| {
                    if let Signal::Terminated(_) = signal {
                        on_signal.tell("terminated".to_string());
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    watcher.tell(0_u64);
    expect_lines(&mut probe, &["handler waits"]).await;
    let mut outside = TestProbe::<String>::new(&system);
    outside.watch(&target);
    system.stop(&target).unwrap();
    outside.expect_terminated(&target, T).await;
    probe.expect_no_message(ms(50)).await;
    gate.notify_one();
    expect_lines(&mut probe, &["handler ends", "terminated"]).await;
}
