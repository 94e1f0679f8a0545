//! Offers racing a stop across a link resolve and account for every message; run in a
//! bounded loop (S30, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]
