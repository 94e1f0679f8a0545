//! Claims of the README and the guides about the workspace and the system: the pinned
//! toolchain and edition, the separate bench workspace, dropped system handles, scoped
//! systems, and TLS settings from bad PEM.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;
use tapio::prelude::*;
use tapio::remote::{RemoteError, TlsSettings};
use tokio::sync::oneshot;

// README.md, "Toolchain: Rust 1.95 (pinned in `rust-toolchain.toml`), edition 2024."
#[test]
fn the_toolchain_is_pinned_to_1_95_and_the_edition_is_2024() {
    let toolchain = workspace_file("rust-toolchain.toml");
    assert!(toolchain.contains("\"1.95"), "{toolchain}");
    assert!(workspace_file("Cargo.toml").contains("edition = \"2024\""));
}

// README.md, Layout: "`bench/` | a separate workspace".
#[test]
fn bench_is_a_separate_workspace() {
    assert!(workspace_file("bench/Cargo.toml").contains("[workspace]"));
    assert!(workspace_file("Cargo.toml").contains("exclude = [\"bench\"]"));
}

// README.md, Systems: "Dropping the handles stops nothing: Rust has no async drop."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_every_system_handle_stops_nothing() {
    let system = ActorSystem::new("dropped").unwrap();
    let seven = system.spawn(Seven, "seven").unwrap();
    drop(system);
    tokio::task::yield_now().await;
    assert_eq!(
        within("ask", seven.ask(Get).timeout(SECOND)).await.unwrap(),
        7
    );
}

// README.md, Systems: "`ActorSystem::scope(name, |system| async move { .. })` for a
// system that ends with its block (also when the block panics)."
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_system_ends_when_its_block_panics() {
    let (tx, rx) = oneshot::channel();
    let scoped = tokio::spawn(ActorSystem::scope("scoped", move |system| async move {
        let _ = system.spawn(Seven, "seven").unwrap();
        tx.send(system).unwrap();
        panic!("the block panics");
    }));
    let joined = within("the scope", scoped).await;
    assert!(joined.unwrap_err().is_panic());
    let kept = within("the system", rx).await.unwrap();
    within("when_terminated", kept.when_terminated())
        .await
        .unwrap();
    assert_eq!(kept.live_actors(), 0);
    assert!(kept.spawn(Seven, "late").is_err());
}

// remoting.md, TLS: "`TlsSettings::from_pem(..)` ... each part must parse ...
// Otherwise they return `RemoteError::Tls`, whose message says what to fix."
#[test]
fn tls_settings_from_garbage_pem_is_a_tls_error() {
    let error = TlsSettings::from_pem(b"not pem", b"not pem", b"not pem").unwrap_err();
    assert!(matches!(error, RemoteError::Tls { .. }), "{error:?}");
    assert!(error.to_string().contains("PEM"), "{error}");
}
