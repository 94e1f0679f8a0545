//! Tests of protocols as state machines (S34).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod combinations;
pub mod edge_cases;
pub mod hooks_and_stashing;
pub mod lost_state;
pub mod machine;
pub mod refusals_and_replays;
pub mod restarts_and_timers;
pub mod switch_order;
