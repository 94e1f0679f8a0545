//! Tests of asks and replies: typed answers, deadlines, targets that stop (S21-S23).
//!
//! One module a topic; `support` is shared by every test binary.

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

pub mod basics;
pub mod deadline;
pub mod doc_claims;
pub mod forward;
pub mod late_and_stopped;
pub mod late_reply;
pub mod lifetime;
pub mod many_senders;
pub mod races;
pub mod reply_refs_elsewhere;
pub mod reply_then;
pub mod unusual_ends;
