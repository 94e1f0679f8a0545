//! Timers: messages an actor sends itself later, on its own user lane.
//!
//! A timer delivers an ordinary message: it queues behind what is already in the
//! mailbox and can never re-enter a handler that is still running (S24). Timers are
//! keyed: starting a key again replaces the timer, and a key cancels it. They belong
//! to the actor's cell, not to its behavior, so a restart or a stop cancels all of
//! them, and a tick already queued by a cancelled timer is dropped unseen: what the
//! incarnation that failed scheduled never reaches the one replacing it (S25).
//!
//! - [`TimerScheduler::start_single_timer`]: once, after a delay.
//! - [`TimerScheduler::start_fixed_delay`]: repeatedly, each tick `delay` after the
//!   previous one was sent, and never while that one still waits in the mailbox, so an
//!   actor that falls behind gets fewer ticks, not a backlog.
//! - [`TimerScheduler::start_fixed_rate`]: repeatedly, on a fixed schedule; after a
//!   stall the missed ticks come one after another. Think twice: that burst arrives at
//!   an actor that has just shown it is not keeping up.
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//! use tapio::prelude::*;
//!
//! #[message]
//! #[derive(Clone)]
//! pub struct Refill;
//!
//! let limiter: Behavior<Refill> = Behaviors::with_timers(|timers| {
//!     timers
//!         .start_fixed_rate("refill", Refill, Duration::from_millis(30))
//!         .expect("a non-zero interval");
//!     Behaviors::receive_message(|_: Refill| ())
//! });
//! # let _ = limiter;
//! ```
//!
//! # Inside
//!
//! Each armed timer is one tokio task that delivers `Envelope::Tick` to the actor's user
//! lane (never refused by a bound). A duration too large for the clock gives a timer
//! that never fires, not a panic: the runtime adds a user's `Duration` to the clock only
//! through `deadline_after` (asks leave their sleep unarmed, a backoff waits forever,
//! termination waits without a timeout).

// Layer: actor (rank 2): the context owns its timers. Imports ground, the mailbox
// and the actor.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::AbortHandle;

use crate::actor::SystemShared;
use crate::actor::behavior::{Behavior, Behaviors, SetupOutput};
use crate::actor::effects::Effects;
use crate::actor::lanes::Envelope;
use crate::actor::{ActorRef, LocalCell};
use crate::ground::clock::{deadline_after, sleep_until_or_never};
use crate::ground::message::{Accepts, Message};

/// The key a timer is started, replaced and cancelled by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimerKey(Cow<'static, str>);

impl TimerKey {
    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&'static str> for TimerKey {
    fn from(key: &'static str) -> Self {
        Self(Cow::Borrowed(key))
    }
}

impl From<String> for TimerKey {
    fn from(key: String) -> Self {
        Self(Cow::Owned(key))
    }
}

impl fmt::Display for TimerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How a timer repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimerMode {
    /// Once, after the delay.
    Single,
    /// Repeatedly, each tick the delay after the previous one was sent, and never
    /// while that one still waits in the mailbox.
    FixedDelay,
    /// Repeatedly, on a fixed schedule, catching up after a stall.
    FixedRate,
}

/// A timer that cannot work, refused when it is started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a repeating timer needs a non-zero interval (timer \"{key}\"): a zero interval would flood the mailbox; use a single timer to act once"
)]
pub struct ZeroInterval {
    /// The timer's key.
    pub key: TimerKey,
}

/// Starts and cancels the timers of one actor. Cheap to clone; every clone reaches
/// the same timers. Get one with [`ActorContext::timers`](crate::ActorContext::timers)
/// or [`Behaviors::with_timers`](crate::Behaviors::with_timers).
pub struct TimerScheduler<P: Message> {
    table: Arc<Mutex<TimerTable<P>>>,
}

impl<P: Message> Clone for TimerScheduler<P> {
    fn clone(&self) -> Self {
        Self {
            table: self.table.clone(),
        }
    }
}

impl<P: Message> fmt::Debug for TimerScheduler<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let table = self.lock();
        let active: Vec<(&str, TimerMode)> = table
            .timers
            .iter()
            .map(|t| (t.key.as_str(), t.mode))
            .collect();
        f.debug_struct("TimerScheduler")
            .field("active", &active)
            .finish()
    }
}

/// The timers of one cell.
pub(crate) struct TimerTable<P: Message> {
    /// Where ticks go.
    cell: Weak<LocalCell<P>>,
    system: Arc<SystemShared>,
    /// The effects of the cell's context: a live timer is armed, a recorded one is
    /// written down.
    effects: Effects,
    timers: Vec<Timer<P>>,
    next_id: u64,
}

struct Timer<P: Message> {
    key: TimerKey,
    id: u64,
    mode: TimerMode,
    message: TimerMessage<P>,
    task: Option<AbortHandle>,
    /// For a fixed-delay timer: told when its tick has left the mailbox, so that the
    /// next may be sent.
    taken: Option<Arc<Notify>>,
    /// The system whose count of live timers this one is in, when it counts them
    /// (only with the `testkit` feature, whose leak report reads the count).
    #[cfg(feature = "testkit")]
    counted: Option<Arc<SystemShared>>,
}

enum TimerMessage<P> {
    Once(Option<P>),
    Repeat(Arc<dyn Fn() -> P + Send + Sync>),
}

impl<P: Message> Drop for Timer<P> {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
        #[cfg(feature = "testkit")]
        if let Some(system) = &self.counted {
            system.timer_stopped();
        }
    }
}

impl<P: Message> TimerScheduler<P> {
    /// The timers of the actor `me`, whose context has `effects`.
    pub(crate) fn new(me: &ActorRef<P>, effects: Effects) -> Self {
        Self {
            table: Arc::new(Mutex::new(TimerTable {
                cell: me.local_cell().map(Arc::downgrade).unwrap_or_default(),
                system: me.core().system().clone(),
                effects,
                timers: Vec::new(),
                next_id: 0,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, TimerTable<P>> {
        // No user code runs under this lock.
        self.table
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Send `message` once, after `delay`. Replaces a timer with the same key. A
    /// delay too large to add to the clock (`Duration::MAX`; for the repeating
    /// timers, such an interval) starts a timer that stays active and never fires,
    /// even on a paused clock.
    pub fn start_single_timer<M>(&self, key: impl Into<TimerKey>, message: M, delay: Duration)
    where
        M: Message,
        P: Accepts<M>,
    {
        let message = TimerMessage::Once(Some(P::wrap(message)));
        let replaced = self
            .lock()
            .start(key.into(), TimerMode::Single, message, delay);
        drop(replaced);
    }

    /// Send `message` repeatedly, each tick `delay` after the previous one was sent,
    /// and never while that one still waits in the mailbox, so an actor that falls
    /// behind gets fewer ticks, not a backlog: a tick that comes due while the previous
    /// one waits is sent the moment that one is taken. Replaces a timer with the same
    /// key.
    ///
    /// # Errors
    ///
    /// [`ZeroInterval`] when `delay` is zero; nothing is started.
    pub fn start_fixed_delay<M>(
        &self,
        key: impl Into<TimerKey>,
        message: M,
        delay: Duration,
    ) -> Result<(), ZeroInterval>
    where
        M: Message + Clone + Sync,
        P: Accepts<M>,
    {
        self.start_repeating(key.into(), TimerMode::FixedDelay, message, delay)
    }

    /// Send `message` every `interval` on a fixed schedule; after a stall the missed
    /// ticks are sent one after another. Replaces a timer with the same key.
    ///
    /// # Errors
    ///
    /// [`ZeroInterval`] when `interval` is zero; nothing is started.
    pub fn start_fixed_rate<M>(
        &self,
        key: impl Into<TimerKey>,
        message: M,
        interval: Duration,
    ) -> Result<(), ZeroInterval>
    where
        M: Message + Clone + Sync,
        P: Accepts<M>,
    {
        self.start_repeating(key.into(), TimerMode::FixedRate, message, interval)
    }

    /// [`start_fixed_delay`](Self::start_fixed_delay) for a message that is not
    /// `Clone` (one holding a `oneshot::Sender`, say, or a fresh id each tick):
    /// `make` builds each tick's message when it is sent.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::time::Duration;
    /// use tapio::prelude::*;
    ///
    /// // Not `Clone`: each tick carries a number of its own.
    /// #[message]
    /// pub struct Poll(pub u64);
    ///
    /// let poller: Behavior<Poll> = Behaviors::with_timers(|timers| {
    ///     let polls = Arc::new(AtomicU64::new(0));
    ///     let next = move || Poll(polls.fetch_add(1, Ordering::Relaxed));
    ///     timers.start_fixed_delay_with("poll", next, Duration::from_secs(1))?;
    ///     Ok::<_, tapio::ZeroInterval>(Behaviors::receive_message(|Poll(n): Poll| {
    ///         tracing::info!(n, "poll");
    ///     }))
    /// });
    /// # let _ = poller;
    /// ```
    ///
    /// # Errors
    ///
    /// [`ZeroInterval`] when `delay` is zero; nothing is started.
    pub fn start_fixed_delay_with<M, F>(
        &self,
        key: impl Into<TimerKey>,
        make: F,
        delay: Duration,
    ) -> Result<(), ZeroInterval>
    where
        M: Message,
        F: Fn() -> M + Send + Sync + 'static,
        P: Accepts<M>,
    {
        self.start_made(key.into(), TimerMode::FixedDelay, make, delay)
    }

    /// [`start_fixed_rate`](Self::start_fixed_rate) for a message that is not
    /// `Clone`: `make` builds each tick's message when it is sent.
    ///
    /// # Errors
    ///
    /// [`ZeroInterval`] when `interval` is zero; nothing is started.
    pub fn start_fixed_rate_with<M, F>(
        &self,
        key: impl Into<TimerKey>,
        make: F,
        interval: Duration,
    ) -> Result<(), ZeroInterval>
    where
        M: Message,
        F: Fn() -> M + Send + Sync + 'static,
        P: Accepts<M>,
    {
        self.start_made(key.into(), TimerMode::FixedRate, make, interval)
    }

    fn start_repeating<M>(
        &self,
        key: TimerKey,
        mode: TimerMode,
        message: M,
        interval: Duration,
    ) -> Result<(), ZeroInterval>
    where
        M: Message + Clone + Sync,
        P: Accepts<M>,
    {
        self.start_made(key, mode, move || message.clone(), interval)
    }

    /// Start a repeating timer whose ticks `make` builds.
    fn start_made<M, F>(
        &self,
        key: TimerKey,
        mode: TimerMode,
        make: F,
        interval: Duration,
    ) -> Result<(), ZeroInterval>
    where
        M: Message,
        F: Fn() -> M + Send + Sync + 'static,
        P: Accepts<M>,
    {
        if interval.is_zero() {
            return Err(ZeroInterval { key });
        }
        let message = TimerMessage::Repeat(Arc::new(move || P::wrap(make())));
        let replaced = self.lock().start(key, mode, message, interval);
        drop(replaced);
        Ok(())
    }

    /// Cancel the timer with this key, if there is one. A tick it already queued is
    /// dropped unseen.
    pub fn cancel(&self, key: impl Into<TimerKey>) {
        let cancelled = self.lock().cancel(&key.into());
        drop(cancelled);
    }

    /// Cancel every timer.
    pub fn cancel_all(&self) {
        let cancelled = self.lock().cancel_all();
        drop(cancelled);
    }

    /// Whether a timer with this key is running.
    pub fn is_active(&self, key: impl Into<TimerKey>) -> bool {
        let key = key.into();
        self.lock().timers.iter().any(|timer| timer.key == key)
    }

    /// The message for the tick of timer `id`, if that timer still runs; `None` for a
    /// tick of a timer since cancelled or replaced. A single timer ends here; a
    /// fixed-delay timer is told that its tick has left the mailbox.
    pub(crate) fn fire(&self, id: u64) -> Option<P> {
        let make = {
            let mut table = self.lock();
            let at = table.timers.iter().position(|timer| timer.id == id)?;
            let timer = &mut table.timers[at];
            match &mut timer.message {
                TimerMessage::Once(message) => {
                    let message = message.take();
                    let done = table.timers.remove(at);
                    drop(table);
                    drop(done);
                    return message;
                }
                TimerMessage::Repeat(make) => {
                    if let Some(taken) = &timer.taken {
                        taken.notify_one();
                    }
                    make.clone()
                }
            }
        };
        Some(make())
    }
}

impl<P: Message> TimerTable<P> {
    /// Start a timer; returns the timers it replaced, to be dropped without the lock.
    #[must_use]
    fn start(
        &mut self,
        key: TimerKey,
        mode: TimerMode,
        message: TimerMessage<P>,
        every: Duration,
    ) -> Vec<Timer<P>> {
        let replaced = self.cancel(&key);
        let id = self.next_id;
        self.next_id += 1;
        let mut timer = Timer {
            key: key.clone(),
            id,
            mode,
            message,
            task: None,
            taken: None,
            #[cfg(feature = "testkit")]
            counted: None,
        };
        let (cell, system) = (&self.cell, &self.system);
        let runs = self
            .effects
            .timer_started(&key, mode, every, || timer.arm(cell, system, every));
        if runs {
            self.timers.push(timer);
        }
        replaced
    }

    /// Take out the timer with this key; the caller drops it without the lock.
    #[must_use]
    fn cancel(&mut self, key: &TimerKey) -> Vec<Timer<P>> {
        let (cancelled, kept) = std::mem::take(&mut self.timers)
            .into_iter()
            .partition(|timer| timer.key == *key);
        self.timers = kept;
        for timer in &cancelled {
            self.effects.timer_cancelled(&timer.key);
        }
        cancelled
    }

    /// Take out every timer; the caller drops them without the lock.
    #[must_use]
    fn cancel_all(&mut self) -> Vec<Timer<P>> {
        let keys: Vec<TimerKey> = self.timers.iter().map(|t| t.key.clone()).collect();
        keys.iter().flat_map(|key| self.cancel(key)).collect()
    }
}

impl<P: Message> Timer<P> {
    /// Give the timer a task that puts its ticks on `cell`'s user lane, every `every`;
    /// `false` when the cell has begun to stop (or its runtime is gone).
    #[must_use]
    fn arm(
        &mut self,
        cell: &Weak<LocalCell<P>>,
        system: &Arc<SystemShared>,
        every: Duration,
    ) -> bool {
        // A handle kept past the moment its actor began to stop starts nothing: the
        // stop sets the flag before it takes this table's lock to cancel, so no timer
        // slips in after the cancel. (A restart is not a stop: timers belong to the
        // cell, and a handle kept outside the actor goes on working for the next
        // incarnation.)
        let alive = cell.upgrade().is_some_and(|cell| !cell.core.is_stopping());
        let Some(runtime) = system.runtime().filter(|_| alive) else {
            return false;
        };
        let (cell, id) = (cell.clone(), self.id);
        self.task = Some(match self.mode {
            TimerMode::Single => runtime
                .spawn(async move {
                    sleep_until_or_never(deadline_after(tokio::time::Instant::now(), every)).await;
                    tick(&cell, id);
                })
                .abort_handle(),
            TimerMode::FixedRate => runtime
                .spawn(async move {
                    let Some(start) = deadline_after(tokio::time::Instant::now(), every) else {
                        return std::future::pending().await;
                    };
                    let mut schedule = tokio::time::interval_at(start, every);
                    schedule.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
                    loop {
                        schedule.tick().await;
                        if !tick(&cell, id) {
                            break;
                        }
                    }
                })
                .abort_handle(),
            TimerMode::FixedDelay => {
                let taken = Arc::new(Notify::new());
                self.taken = Some(taken.clone());
                runtime
                    .spawn(async move {
                        // Each tick `every` after the previous one was sent, and never
                        // while that one still waits in the mailbox, so an actor that
                        // falls behind gets fewer ticks, not a backlog.
                        let mut due = deadline_after(tokio::time::Instant::now(), every);
                        loop {
                            sleep_until_or_never(due).await;
                            if !tick(&cell, id) {
                                break;
                            }
                            due = deadline_after(tokio::time::Instant::now(), every);
                            taken.notified().await;
                        }
                    })
                    .abort_handle()
            }
        });
        #[cfg(feature = "testkit")]
        if system.tracks_leaks() {
            system.timer_started();
            self.counted = Some(system.clone());
        }
        true
    }
}

/// Put a tick of timer `id` on the cell's user lane; `false` once the cell is gone.
fn tick<P: Message>(cell: &Weak<LocalCell<P>>, id: u64) -> bool {
    let Some(cell) = cell.upgrade() else {
        return false;
    };
    cell.deliver(Envelope::Tick(id))
}

impl Behaviors {
    /// A behavior built with the actor's timers at hand: `factory` runs like a setup
    /// and gets the [`TimerScheduler`]: on start, and on every
    /// restart when it is inside the `supervise(..)` that restarts (a setup outside
    /// does not run again). Timers belong to the cell, so a restart cancels every one
    /// of them (S25): put `with_timers` inside `supervise(..)` for the factory to start
    /// them again. Wrapped around it, its timers end at the first restart, and the
    /// actor runs on without them.
    pub fn with_timers<P, F, S>(factory: F) -> Behavior<P>
    where
        P: Message,
        F: Fn(TimerScheduler<P>) -> S + Send + Sync + 'static,
        S: SetupOutput<P>,
    {
        Self::setup(move |ctx| factory(ctx.timers()))
    }
}
