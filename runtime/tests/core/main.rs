//! Tests of the local core: spawning, telling, behaviors, lifecycles, logging and cancellation (S1-S8).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod async_handlers;
pub mod behavior;
pub mod cancel;
pub mod doc_claims;
pub mod edge_cases;
pub mod examples_named_in_docs;
pub mod lifecycle;
pub mod logging;
pub mod many_systems_and_threads;
pub mod narrow;
pub mod races;
pub mod setup_once;
pub mod setup_once_log;
pub mod spawn;
pub mod system;
pub mod tell;
