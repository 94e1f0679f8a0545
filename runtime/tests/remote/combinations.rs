//! A stop letters the stash, the queue and waiting offers once each, and terminate
//! settles waiting offers (S19, S30, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]
