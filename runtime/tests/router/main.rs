//! Tests of pool and group routers (S32).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod backing_off_routee;
pub mod basics;
pub mod combinations;
pub mod doc_claims;
pub mod edge_cases;
pub mod races;
pub mod restarts_and_resizes;
pub mod routees_under_stops;
