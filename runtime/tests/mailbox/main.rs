//! Tests of mailboxes: bounds, overflow strategies, `offer` (S29, S30).
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
pub mod doc_claims;
pub mod edge_cases;
pub mod edge_orders;
pub mod guide_claims;
pub mod later_combinations;
pub mod lifecycle_corners;
pub mod local_corners;
pub mod past_happy_paths;
pub mod races;
