//! What a test may find left over when a system ends: asks still waiting for their
//! answer and timers still running. Counted only with the `testkit` feature, and
//! only in a system built to track leaks; a release build carries neither the
//! counts nor the handle's field (`Pending` is zero bytes there).

#[cfg(feature = "testkit")]
use std::sync::Arc;
#[cfg(feature = "testkit")]
use std::sync::atomic::{AtomicUsize, Ordering};

/// A system's counts of pending asks and running timers, which the testkit's leak
/// report reads.
#[cfg(feature = "testkit")]
#[derive(Debug, Default)]
pub(crate) struct LeakCounts {
    timers: AtomicUsize,
    promises: AtomicUsize,
}

#[cfg(feature = "testkit")]
impl LeakCounts {
    /// A timer has started.
    pub(crate) fn timer_started(&self) {
        self.timers.fetch_add(1, Ordering::AcqRel);
    }

    /// A timer has stopped (cancelled, fired once, or its actor ended).
    pub(crate) fn timer_stopped(&self) {
        self.timers.fetch_sub(1, Ordering::AcqRel);
    }

    /// The timers running now.
    pub(crate) fn timers(&self) -> usize {
        self.timers.load(Ordering::Acquire)
    }

    /// The asks waiting for their answer now.
    pub(crate) fn promises(&self) -> usize {
        self.promises.load(Ordering::Acquire)
    }
}

/// One ask's place in its system's count of pending asks, held by the slot its
/// answer goes to: counted from creation until the slot is settled (answered,
/// refused, given up on, or dropped). Empty in a system that does not count.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    #[cfg(feature = "testkit")]
    counts: Option<Arc<LeakCounts>>,
}

impl Pending {
    /// An ask counted in `counts` from now on.
    #[cfg(feature = "testkit")]
    pub(crate) fn promise(counts: &Arc<LeakCounts>) -> Self {
        counts.promises.fetch_add(1, Ordering::AcqRel);
        Self {
            counts: Some(counts.clone()),
        }
    }

    /// The ask is no longer pending; a second call does nothing.
    pub(crate) fn settle(&mut self) {
        #[cfg(feature = "testkit")]
        if let Some(counts) = self.counts.take() {
            counts.promises.fetch_sub(1, Ordering::AcqRel);
        }
    }
}
