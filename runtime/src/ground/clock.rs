//! Deadlines on tokio's clock that never overflow it: a duration too large for the
//! clock (`Duration::MAX`) is a deadline that never comes, not a panic.
//!
//! Layer: ground. Imports nothing of the crate.

use std::time::Duration;

/// `start + after`, or `None` when that does not fit the clock: a deadline that
/// never comes, for a duration as large as `Duration::MAX`, without a panic. Not a
/// far-off instant: a paused clock jumps to the next timer as soon as the runtime
/// idles, so any instant at all comes at once in a test.
pub(crate) fn deadline_after(
    start: tokio::time::Instant,
    after: Duration,
) -> Option<tokio::time::Instant> {
    start.checked_add(after)
}

/// Sleep until `deadline`, or forever when there is none (see `deadline_after`).
pub(crate) async fn sleep_until_or_never(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
