//! Names are unique among siblings, not across the tree (S2).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::T;
use tapio::SpawnError;
use tapio::prelude::*;
use tokio::sync::mpsc;
use tokio::time::timeout;

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
