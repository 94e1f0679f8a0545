//! Tests of message adapters: foreign types into an actor, in order, as its own failures (S28).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod across_restarts;
pub mod basics;
pub mod combinations;
pub mod doc_claims;
pub mod edge_cases;
pub mod escalation_and_namesakes;
pub mod full_and_stopping_owners;
pub mod panics_and_paths;
pub mod races;
pub mod translation;
