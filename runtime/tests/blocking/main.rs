//! Tests of blocking calls off the async workers (S33).
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
pub mod stops;
pub mod supervised;
