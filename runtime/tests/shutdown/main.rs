//! Tests of terminating a system: bottom-up stops, one deadline, OS signals (S19, S20).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod doc_claims;
pub mod edge_cases;
pub mod events_in_post_stop;
pub mod handlers_at_the_deadline;
pub mod races;
pub mod sigint;
pub mod signals;
pub mod terminate_amid_everything;
pub mod terminate_twice;
pub mod waiting_offers;
