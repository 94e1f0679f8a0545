//! Tests of the stash: capacity, unstash order, restarts and stops (S26, S27).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod basics;
pub mod combinations;
pub mod corners;
pub mod doc_claims;
pub mod edge_cases;
pub mod escalation_timers_adapters;
pub mod kit_and_escalation;
pub mod offers_timers_blocking;
pub mod overflow_and_signals;
pub mod races;
pub mod replay_from_a_signal;
pub mod stops;
pub mod unhandled_shapes;
