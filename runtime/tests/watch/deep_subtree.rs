//! Watch: an outside watcher hears a deep subtree end only after every actor in it saw PostStop (S18, S19).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::with_other_features::*;
use std::sync::{Arc, Mutex};
use tapio::prelude::*;
use tokio::sync::mpsc;

/// A chain of `depth + 1` actors `n{depth}` .. `n0`, each spawned in its parent's
/// setup, each logging its `PostStop`; the leaf's ref goes to `leaf`.
fn chain(
    depth: u64,
    log: Arc<Mutex<Vec<String>>>,
    leaf: mpsc::UnboundedSender<ActorRef<Note>>,
) -> Behavior<Note> {
    Behaviors::setup(move |ctx: &mut ActorContext<Note>| {
        if depth > 0 {
            ctx.spawn(
                chain(depth - 1, log.clone(), leaf.clone()),
                &format!("n{}", depth - 1),
            )
            .expect("spawn the next level");
        } else {
            let _ = leaf.send(ctx.self_ref().clone());
        }
        let (log, name) = (log.clone(), ctx.path().name().to_string());
        Behaviors::receive_message(|_: Note| {}).on_signal(move |_, signal: &Signal| {
            if matches!(signal, Signal::PostStop) {
                log.lock().unwrap().push(format!("post-stop {name}"));
            }
        })
    })
}

// S19 + S18 + S15: stopping a deep subtree stops it bottom-up, and an outside actor
// that watches both its leaf and its root hears the leaf's end after the leaf's
// `PostStop`, and the root's end after every `PostStop` of the subtree, last.
#[tapio::test]
async fn s19_s18_an_outside_watcher_hears_a_deep_subtree_end_after_every_post_stop(
    system: ActorSystem,
) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let (leaf_tx, mut leaf_rx) = mpsc::unbounded_channel();
    let root = system.spawn(chain(3, log.clone(), leaf_tx), "n3").unwrap();
    let leaf = recv_within(&mut leaf_rx, BOUND).await;
    let (heard_tx, mut heard) = mpsc::unbounded_channel();
    let (watched_root, watched_leaf, watcher_log) = (root.clone(), leaf.clone(), log.clone());
    system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<Note>| {
                ctx.watch(&watched_root);
                ctx.watch(&watched_leaf);
                let _ = heard_tx.send(String::from("ready"));
                let (log, heard) = (watcher_log.clone(), heard_tx.clone());
                Behaviors::receive_message(|_: Note| {}).on_signal(move |_, signal: &Signal| {
                    if let Signal::Terminated(terminated) = signal {
                        let line = format!("terminated {}", terminated.actor().path().name());
                        log.lock().unwrap().push(line.clone());
                        let _ = heard.send(line);
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    assert_eq!(recv_within(&mut heard, BOUND).await, "ready");
    system.stop(&root).unwrap();
    let mut ends = take(&mut heard, 2).await;
    ends.sort();
    assert_eq!(ends, ["terminated n0", "terminated n3"]);
    let log = log.lock().unwrap().clone();
    let at = |line: &str| {
        log.iter()
            .position(|l| l == line)
            .unwrap_or_else(|| panic!("{line} missing from {log:?}"))
    };
    assert!(at("post-stop n0") < at("post-stop n1"), "{log:?}");
    assert!(at("post-stop n1") < at("post-stop n2"), "{log:?}");
    assert!(at("post-stop n2") < at("post-stop n3"), "{log:?}");
    assert!(at("post-stop n0") < at("terminated n0"), "{log:?}");
    assert!(at("terminated n0") < at("terminated n3"), "{log:?}");
    assert_eq!(
        log.last().map(String::as_str),
        Some("terminated n3"),
        "{log:?}"
    );
    assert_eq!(log.len(), 6, "{log:?}");
}
