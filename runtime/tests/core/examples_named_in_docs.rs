//! Core: every example the docs name is declared and has its file.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;

// ---------------------------------------------------------------- the repository

// README.md, "The two commands" / "Two processes" / remoting.md: "`cargo run
// --example NAME` runs one example"; named examples: `tour`, `stash_on_startup`,
// `state_machine`, `state_machine_without_macros`, `remote_spawn`,
// `worker_pool_remote`, `blocking_calls`, `adapters`, `worker_pool`, `two_nodes`,
// `node_failure`, `partition`, `remote_ask`, `node`.
#[test]
fn every_example_the_docs_name_is_declared_and_has_its_file() {
    let manifest = workspace_file("examples/Cargo.toml");
    for name in [
        "tour",
        "stash_on_startup",
        "state_machine",
        "state_machine_without_macros",
        "remote_spawn",
        "worker_pool_remote",
        "blocking_calls",
        "adapters",
        "worker_pool",
        "two_nodes",
        "node_failure",
        "partition",
        "remote_ask",
        "node",
    ] {
        assert!(
            manifest.contains(&format!("name = \"{name}\"\npath = \"{name}.rs\"")),
            "examples/Cargo.toml declares no example `{name}`"
        );
        let _ = workspace_file(&format!("examples/{name}.rs"));
    }
}
