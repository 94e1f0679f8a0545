//! Tests of death watch: `Terminated` exactly once, watching and unwatching (S18),
//! `watch_with` (S50), watching an adapter (S51).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod awaiting_handler;
pub mod deep_subtree;
pub mod doc_claims;
pub mod edge_cases;
pub mod free_name;
pub mod kit_and_probe;
pub mod races;
pub mod rewatch;
pub mod sequences;
pub mod signal_switch_and_probes;
pub mod terminated;
pub mod watch_with;
