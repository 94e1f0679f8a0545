//! Tests of the testkit: probes, the behavior test kit, leak reports (S48).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod behavior_kit;
pub mod kit_examples;
pub mod leaks;
pub mod probe;
pub mod stopped_kits;
