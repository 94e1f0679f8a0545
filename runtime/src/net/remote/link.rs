//! Faults injected into one direction of a link, for tests (S45): a partition that
//! holds every frame until it heals, frames dropped (the next `n`, or a share of
//! them), and a delay added to every frame. The testkit's `two_nodes` sets them; a
//! link without faults pays one relaxed load per frame queued.
//!
//! A partition holds frames rather than dropping them, as a network that stops
//! carrying packets does under TCP: what was sent arrives, in order, when the
//! partition heals before the failure detector gives up on the peer. Dropping
//! applies to messages, not to the link's own frames (heartbeats, watches): a test
//! that drops "the next three" drops three of its messages. A delay applies to
//! every frame, as latency would.
//!
//! The link reaches its faults through one seam, [`LinkShaper`]: with the `testkit`
//! feature it is [`LinkFaults`]; without it, `NoShaping`, which has no state and
//! whose every answer is a constant ("no fault"), so a production build carries no
//! fault injection at all and the checks compile away.
//!
//! Layer: network.

#[cfg(feature = "testkit")]
use std::sync::Mutex;
#[cfg(feature = "testkit")]
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(feature = "testkit")]
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// What shapes one direction of a link: its injected faults under the testkit.
#[cfg(feature = "testkit")]
pub(crate) type LinkShaper = LinkFaults;

/// What shapes one direction of a link: nothing, in a build without the testkit.
#[cfg(not(feature = "testkit"))]
pub(crate) type LinkShaper = NoShaping;

/// The shaper of a build without the testkit: no faults, no state.
#[cfg(not(feature = "testkit"))]
#[derive(Debug, Default)]
pub(crate) struct NoShaping;

#[cfg(not(feature = "testkit"))]
impl NoShaping {
    /// Never: no fault can be set.
    #[inline(always)]
    pub(crate) fn active(&self) -> bool {
        false
    }

    /// Never lost.
    #[inline(always)]
    pub(crate) fn loses(&self) -> bool {
        false
    }

    /// Never partitioned.
    pub(crate) async fn unpartitioned(&self) {}

    /// Always written now.
    #[inline(always)]
    pub(crate) fn verdict(&self, queued: Option<Instant>) -> Verdict {
        let _ = queued;
        Verdict::Pass
    }

    /// Something that never changes (its sender is gone).
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        watch::channel(0).1
    }
}

/// The faults of one direction of a link.
#[cfg(feature = "testkit")]
#[derive(Debug)]
pub(crate) struct LinkFaults {
    /// Whether any fault is set: the one load a link without faults pays.
    active: AtomicBool,
    faults: Mutex<Faults>,
    /// Bumped on every change, so a writer held by a partition looks again.
    changed: watch::Sender<u64>,
}

#[cfg(feature = "testkit")]
#[derive(Debug, Clone, Default)]
struct Faults {
    partitioned: bool,
    drop_next: u64,
    /// The share of messages dropped, out of `u32::MAX`.
    drop_share: u32,
    /// The state of the generator that picks which messages the share drops.
    seed: u64,
    delay: Duration,
}

#[cfg(feature = "testkit")]
impl Faults {
    fn any(&self) -> bool {
        self.partitioned || self.drop_next > 0 || self.drop_share > 0 || !self.delay.is_zero()
    }
}

/// What happens to one frame. Without the testkit only `Pass` is ever given; the
/// writer still matches the others.
#[cfg_attr(not(feature = "testkit"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Written now.
    Pass,
    /// Held until the partition heals.
    Hold,
    /// Written once this instant has passed.
    DelayUntil(Instant),
}

#[cfg(feature = "testkit")]
impl Default for LinkFaults {
    fn default() -> Self {
        Self {
            active: AtomicBool::new(false),
            faults: Mutex::new(Faults::default()),
            changed: watch::Sender::new(0),
        }
    }
}

#[cfg(feature = "testkit")]
impl LinkFaults {
    /// Whether any fault is set.
    #[inline]
    pub(crate) fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    fn change(&self, change: impl FnOnce(&mut Faults)) {
        let mut faults = self.faults.lock().unwrap_or_else(|p| p.into_inner());
        change(&mut faults);
        self.active.store(faults.any(), Ordering::Release);
        drop(faults);
        self.changed.send_modify(|version| *version += 1);
    }

    /// Hold every frame until [`heal`](Self::heal).
    pub(crate) fn partition(&self) {
        self.change(|faults| faults.partitioned = true);
    }

    /// Let held frames go, in order.
    pub(crate) fn heal(&self) {
        self.change(|faults| faults.partitioned = false);
    }

    /// Drop the next `n` messages.
    pub(crate) fn drop_next(&self, n: u64) {
        self.change(|faults| faults.drop_next = faults.drop_next.saturating_add(n));
    }

    /// Drop each message with probability `ratio` (0.0 to 1.0), picked by a
    /// generator seeded with `seed`: the same seed drops the same messages.
    pub(crate) fn drop_ratio(&self, ratio: f64, seed: u64) {
        let share = (ratio.clamp(0.0, 1.0) * f64::from(u32::MAX)) as u32;
        self.change(|faults| {
            faults.drop_share = share;
            faults.seed = seed | 1;
        });
    }

    /// Write each frame no sooner than `delay` after it was queued.
    pub(crate) fn delay(&self, delay: Duration) {
        self.change(|faults| faults.delay = delay);
    }

    /// No faults any more (held frames go).
    pub(crate) fn clear(&self) {
        self.change(|faults| *faults = Faults::default());
    }

    /// Whether a message queued now is lost (dropping is decided when a message is
    /// queued: "the next `n`" are the next `n` sent).
    pub(crate) fn loses(&self) -> bool {
        let mut faults = self.faults.lock().unwrap_or_else(|p| p.into_inner());
        if faults.drop_next > 0 {
            faults.drop_next -= 1;
            self.active.store(faults.any(), Ordering::Release);
            return true;
        }
        if faults.drop_share > 0 {
            // xorshift64: small, and the same for the same seed.
            let mut x = faults.seed;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            faults.seed = x;
            return (x >> 32) as u32 <= faults.drop_share;
        }
        false
    }

    /// Wait until no partition holds this direction: a partition holds a dial as it
    /// holds frames, so that not even a handshake reaches the peer, and the peer's
    /// failure detector sees the silence a real partition makes (S42, S45).
    pub(crate) async fn unpartitioned(&self) {
        let mut changes = self.subscribe();
        loop {
            changes.borrow_and_update();
            if !self.active() || !self.partitioned() {
                return;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    fn partitioned(&self) -> bool {
        self.faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .partitioned
    }

    /// What happens, when it is its turn to be written, to a frame queued at
    /// `queued` (`None` when no fault was set then).
    pub(crate) fn verdict(&self, queued: Option<Instant>) -> Verdict {
        let faults = self.faults.lock().unwrap_or_else(|p| p.into_inner());
        if faults.partitioned {
            return Verdict::Hold;
        }
        match queued {
            // A delay too long for the clock holds the frame until the faults change.
            Some(queued) if !faults.delay.is_zero() => queued
                .checked_add(faults.delay)
                .map_or(Verdict::Hold, Verdict::DelayUntil),
            _ => Verdict::Pass,
        }
    }

    /// Something that changes when the faults do.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}

#[cfg(all(test, feature = "testkit"))]
mod tests {
    use super::*;

    #[test]
    fn a_link_without_faults_passes_everything() {
        let faults = LinkFaults::default();
        assert!(!faults.active());
        assert_eq!(faults.verdict(None), Verdict::Pass);
        assert!(!faults.loses());
    }

    #[test]
    fn drop_next_loses_that_many_messages() {
        let faults = LinkFaults::default();
        faults.drop_next(2);
        assert!(faults.active());
        assert_eq!(faults.verdict(None), Verdict::Pass);
        assert!(faults.loses());
        assert!(faults.loses());
        assert!(!faults.loses());
        assert!(!faults.active());
    }

    #[test]
    fn a_partition_holds_until_healed() {
        let faults = LinkFaults::default();
        let mut changed = faults.subscribe();
        faults.partition();
        assert_eq!(faults.verdict(None), Verdict::Hold);
        faults.heal();
        assert!(changed.has_changed().unwrap_or(false));
        changed.mark_unchanged();
        assert_eq!(faults.verdict(None), Verdict::Pass);
    }

    #[test]
    fn a_ratio_drops_about_that_share_and_the_seed_repeats_it() {
        let pick = |seed| {
            let faults = LinkFaults::default();
            faults.drop_ratio(0.25, seed);
            (0..4000).map(|_| faults.loses()).collect::<Vec<_>>()
        };
        let first = pick(7);
        let dropped = first.iter().filter(|d| **d).count();
        assert!((800..1200).contains(&dropped), "{dropped} of 4000 dropped");
        assert_eq!(first, pick(7));
    }

    #[tokio::test]
    async fn a_delay_is_counted_from_when_the_frame_was_queued() {
        let faults = LinkFaults::default();
        faults.delay(Duration::from_millis(30));
        let queued = Instant::now();
        assert_eq!(
            faults.verdict(Some(queued)),
            Verdict::DelayUntil(queued + Duration::from_millis(30))
        );
        faults.clear();
        assert!(!faults.active());
    }
}
