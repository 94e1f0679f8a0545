//! Tests of timers: single, fixed-delay and fixed-rate, keys, restarts (S24, S25).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod backoff_and_kit_beats;
pub mod basics;
pub mod combinations;
pub mod corners;
pub mod edge_cases;
pub mod failed_incarnations;
pub mod keys_and_lifecycles;
pub mod kit_records;
pub mod made_messages;
pub mod races;
pub mod replaced_from_tick;
pub mod resume;
pub mod scheduler_clones;
pub mod ticks_in_turn;
