//! Tests of failures and what supervision decides: resume, restart with backoff, stop, escalate (S9-S17).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod bounds_and_asks_in_backoff;
pub mod boxed_errors;
pub mod combinations;
pub mod corners;
pub mod deep_trees;
pub mod default_stop;
pub mod doc_claims;
pub mod edge_cases;
pub mod escalation;
pub mod limits_and_lifecycles;
pub mod offers_through_restarts;
pub mod races;
pub mod restart;
pub mod restart_is_not_termination;
pub mod restarted_values_and_watchers;
pub mod signal_handler_failures;
pub mod strategies;
pub mod unusual_orders;
