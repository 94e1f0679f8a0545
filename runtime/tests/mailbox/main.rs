//! Tests of mailboxes: bounds, overflow strategies, `offer` (S29, S30).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod anonymous_and_full_offers;
pub mod basics;
pub mod combinations;
pub mod doc_claims;
pub mod edge_cases;
pub mod fail_overflow;
pub mod letter_storm;
pub mod letters_at_a_stop;
pub mod loss_count;
pub mod mixed_senders;
pub mod offer_races;
pub mod pushed_out_requests;
pub mod races;
pub mod reused_names;
pub mod sibling_names;
pub mod waiting_offers;
