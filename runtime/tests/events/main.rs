//! Tests of the event stream and dead letters (S31, S49).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod churning_subscriptions;
pub mod dead_letters;
pub mod edge_cases;
pub mod losses;
pub mod stream;
pub mod subscribe;
pub mod user_events;
