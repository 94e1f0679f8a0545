//! Tests of links between systems: associations, refs, failure detection, remote ask and spawn, TLS (S35-S47).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod across_links;
pub mod ask_failure;
pub mod asks_refs_and_watches;
pub mod bad_frames;
pub mod combinations;
pub mod doc_claims;
pub mod essentials;
pub mod failure;
pub mod flow;
pub mod leaving;
pub mod link;
pub mod link_corners;
pub mod local_features;
pub mod offers_and_terminate;
pub mod races;
pub mod rebuilt_peers;
pub mod sessions_and_failures;
pub mod settings;
pub mod spawn;
pub mod three_systems;
pub mod tls;
pub mod under_attack;
