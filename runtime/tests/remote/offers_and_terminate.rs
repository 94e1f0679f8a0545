//! Waiting offers resolve `false` when their target stops, and terminate amid timers,
//! offers, stashes, asks and a backoff accounts for everything (S19, S30, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]
