//! Supervision: what happens when an actor fails.
//!
//! A failure is a handler's returned error or a handler's panic. It never reaches the
//! sender of the message; it is decided on, in the failing actor, by the strategies
//! its behavior declares. Without any, the decision is to stop.
//!
//! ```
//! use std::time::Duration;
//! use tapio::prelude::*;
//!
//! # fn build() -> Result<(), tapio::InvalidStrategy> {
//! let strategy = SupervisorStrategy::restart()
//!     .with_limit(5, Duration::from_secs(1))?
//!     .with_backoff(Backoff::new(
//!         Duration::from_millis(20),
//!         Duration::from_millis(80),
//!         0.2,
//!     )?);
//! let flaky: Behavior<u64> = Behaviors::supervise(Behaviors::receive_message(|n: u64| {
//!         if n == 0 {
//!             Err(std::io::Error::other("zero"))
//!         } else {
//!             Ok(Behaviors::same())
//!         }
//!     }))
//!     .on_failure::<std::io::Error>(strategy)
//!     .on_failure::<Panicked>(SupervisorStrategy::resume())
//!     .into();
//! # let _ = flaky;
//! # Ok(())
//! # }
//! # build().unwrap();
//! ```
//!
//! The four decisions:
//!
//! - [`SupervisorStrategy::resume`]: keep the state, drop the message that failed.
//! - [`SupervisorStrategy::restart`]: build the actor again from the supervised
//!   behavior. The mailbox (both lanes), the ref, the path and the uid stay; watchers
//!   hear nothing. `PreRestart` reaches the failing incarnation first; its children
//!   are stopped, its timers cancelled, and the supervised behavior starts again: a
//!   `setup` inside `supervise(..)` runs again, so children spawned there come back,
//!   and children spawned in a handler do not. A `setup` *outside* `supervise(..)`
//!   does not run again; to keep the children it spawned, use
//!   [`Restart::with_stop_children`]. Watches the old incarnation held are dropped;
//!   setup watches again what it needs. With a [`Backoff`] the actor is absent, not
//!   dead, between incarnations: tells succeed and queue. An actor stopped while it
//!   backs off sees no `PostStop`: no incarnation is running to see it (the one
//!   that failed saw `PreRestart`); its watchers hear `Terminated` as usual. A
//!   restart cancels every timer of the actor, and only a factory that runs again
//!   starts its own again:
//!   put [`Behaviors::with_timers`](crate::Behaviors::with_timers) inside
//!   `supervise(..)`. A setup that fails on the actor's first start is supervised as
//!   a failure in a handler is. A restart limit used up stops the actor: the failure
//!   does not go on to a `supervise` around this one (a clause that matches has
//!   decided).
//! - [`SupervisorStrategy::stop`]: stop the actor, as if no strategy matched.
//! - [`SupervisorStrategy::escalate`]: stop the actor and hand the failure to its
//!   parent, which takes its own decision as if it had failed with the same error.
//!   The parent's signal handler sees [`Signal::ChildFailed`](crate::Signal::ChildFailed)
//!   first, on its system lane, ahead of the messages it has queued.
//!   A failure escalated to a guardian terminates the system, and
//!   [`ActorSystem::when_terminated`](crate::ActorSystem::when_terminated) returns it
//!   with every path it climbed. A parent that has begun to stop takes no decision:
//!   a failure escalated to it then goes no further (it is logged at `warn`), as the
//!   parent's own stop ends the child anyway; during a restart it waits for the next
//!   incarnation (see [`Restart::with_stop_children`]).

use std::collections::VecDeque;
use std::error::Error;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::actor::behavior::{
    Behavior, IntoBehavior, IntoNext, Kind, SetupOutput, Started, StartedKind,
};
use crate::ground::failure::Failure;
use crate::ground::message::Message;

/// A supervised behavior, built by [`Behaviors::supervise`](crate::Behaviors::supervise).
///
/// Each [`on_failure`](Supervise::on_failure) adds a clause for one error type. The
/// first clause whose type matches the failure decides. A failure no clause matches
/// goes to the `supervise` around this one, if the behavior is nested in another, and
/// otherwise stops the actor.
pub struct Supervise<P: Message> {
    pub(crate) inner: Behavior<P>,
    clauses: Vec<Clause>,
}

#[derive(Clone)]
struct Clause {
    matches: fn(&Failure) -> bool,
    error_type: &'static str,
    strategy: SupervisorStrategy,
}

impl<P: Message> Supervise<P> {
    pub(crate) fn new(inner: Behavior<P>) -> Self {
        Self {
            inner,
            clauses: Vec::new(),
        }
    }

    /// Decide failures whose error is an `E` with `strategy`.
    ///
    /// A panic is a failure whose error is [`Panicked`](crate::Panicked).
    pub fn on_failure<E: Error + 'static>(
        mut self,
        strategy: impl Into<SupervisorStrategy>,
    ) -> Self {
        self.clauses.push(Clause {
            matches: |failure| failure.is::<E>(),
            error_type: std::any::type_name::<E>(),
            strategy: strategy.into(),
        });
        self
    }

    /// Decide every failure that no earlier clause matched with `strategy`.
    pub fn on_any_failure(mut self, strategy: impl Into<SupervisorStrategy>) -> Self {
        self.clauses.push(Clause {
            matches: |_| true,
            error_type: "any error",
            strategy: strategy.into(),
        });
        self
    }

    /// The first clause that matches `failure`: its index and its strategy.
    fn clause_for(&self, failure: &Failure) -> Option<(usize, &SupervisorStrategy)> {
        self.clauses
            .iter()
            .enumerate()
            .find(|(_, clause)| (clause.matches)(failure))
            .map(|(index, clause)| (index, &clause.strategy))
    }
}

impl<P: Message> Clone for Supervise<P> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            clauses: self.clauses.clone(),
        }
    }
}

impl<P: Message> fmt::Debug for Supervise<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_map();
        for clause in &self.clauses {
            list.entry(&clause.error_type, &clause.strategy);
        }
        list.finish()
    }
}

impl<P: Message> From<Supervise<P>> for Behavior<P> {
    fn from(supervise: Supervise<P>) -> Self {
        Behavior::from_kind(Kind::Supervise(Arc::new(supervise)))
    }
}

impl<P: Message> IntoBehavior<P> for Supervise<P> {
    fn into_behavior(self) -> Behavior<P> {
        self.into()
    }
}

impl<P: Message> SetupOutput<P> for Supervise<P> {
    fn into_started(self) -> Result<Started<P>, Failure> {
        Ok(Started(StartedKind::Behavior(self.into())))
    }
}

impl<P: Message> IntoNext<P> for Supervise<P> {
    fn into_next(self) -> Result<Behavior<P>, Failure> {
        Ok(self.into())
    }
}

/// What to do about a failure. See the [module docs](self).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SupervisorStrategy {
    /// Keep the state, drop the failing message, go on.
    Resume,
    /// Build the actor again, within a limit and optionally after a backoff.
    Restart(Restart),
    /// Stop the actor.
    Stop,
    /// Stop the actor and make the failure its parent's.
    Escalate,
}

impl SupervisorStrategy {
    /// Keep the state and drop the failing message.
    pub fn resume() -> Self {
        Self::Resume
    }

    /// Restart, by default at most [`Restart::DEFAULT_MAX_RESTARTS`] times within
    /// [`Restart::DEFAULT_WINDOW`] and without backoff. Refine it with
    /// [`Restart::with_limit`] and [`Restart::with_backoff`].
    pub fn restart() -> Restart {
        Restart::default()
    }

    /// Stop the actor.
    pub fn stop() -> Self {
        Self::Stop
    }

    /// Stop the actor and hand the failure to its parent.
    pub fn escalate() -> Self {
        Self::Escalate
    }
}

impl From<Restart> for SupervisorStrategy {
    fn from(restart: Restart) -> Self {
        Self::Restart(restart)
    }
}

/// A restart strategy: how many restarts within what window, and how long to wait
/// before each.
///
/// When a failure would be restart number `max_restarts + 1` within `window`, the
/// actor is stopped instead: a fault that keeps coming back is not transient. Each
/// `on_failure` clause counts the restarts it decided, in its own window. If the
/// restarted incarnation cannot start (its setup fails or panics), the clause that
/// ordered the restart decides that failure too, whatever its type: it counts against
/// the same limit and waits out the same backoff, so a broken setup never spins.
/// The exception is a restart that would run a
/// [`Behaviors::setup_once`](crate::Behaviors::setup_once) factory again: it fails
/// with [`RestartWithoutFactory`](crate::RestartWithoutFactory), which no further
/// restart could cure, so the actor stops.
#[derive(Debug, Clone, PartialEq)]
pub struct Restart {
    max_restarts: u32,
    window: Duration,
    backoff: Option<Backoff>,
    stop_children: bool,
}

impl Restart {
    /// Restarts allowed within the window when no limit is given.
    pub const DEFAULT_MAX_RESTARTS: u32 = 10;
    /// The window restarts are counted in when no limit is given.
    pub const DEFAULT_WINDOW: Duration = Duration::from_secs(60);

    /// Allow at most `max_restarts` restarts within any `window`.
    ///
    /// # Errors
    ///
    /// [`InvalidStrategy`] when `max_restarts` is zero (that strategy is
    /// [`SupervisorStrategy::stop`]) or `window` is zero.
    pub fn with_limit(
        mut self,
        max_restarts: u32,
        window: Duration,
    ) -> Result<Self, InvalidStrategy> {
        if max_restarts == 0 {
            return Err(InvalidStrategy::NoRestarts);
        }
        if window.is_zero() {
            return Err(InvalidStrategy::ZeroWindow);
        }
        self.max_restarts = max_restarts;
        self.window = window;
        Ok(self)
    }

    /// Wait before each restart, longer each time.
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = Some(backoff);
        self
    }

    /// Whether a restart stops the actor's children first (the default) or keeps
    /// them. Keep them when they are spawned by a setup *outside* the supervised
    /// behavior, which a restart does not run again: stopped, they would not come
    /// back. A kept child that escalates while the actor is between incarnations
    /// (during a backoff) reaches the next incarnation, which decides on it.
    pub fn with_stop_children(mut self, stop: bool) -> Self {
        self.stop_children = stop;
        self
    }

    /// Restarts allowed within the window.
    pub fn max_restarts(&self) -> u32 {
        self.max_restarts
    }

    /// The window restarts are counted in.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// The backoff, if any.
    pub fn backoff(&self) -> Option<&Backoff> {
        self.backoff.as_ref()
    }

    /// Whether a restart stops the children first.
    pub fn stops_children(&self) -> bool {
        self.stop_children
    }
}

impl Default for Restart {
    fn default() -> Self {
        Self {
            max_restarts: Self::DEFAULT_MAX_RESTARTS,
            window: Self::DEFAULT_WINDOW,
            backoff: None,
            stop_children: true,
        }
    }
}

/// Exponential backoff between restarts: the `n`th restart in a row (counting from
/// 0) waits `min(max, min * 2^n) * (1 + random * random_factor)`, with `random` drawn
/// afresh from `0.0..1.0` each time. The random stretch comes after the cap, so a
/// delay lies between `max` and `max * (1 + random_factor)` once it has reached the
/// cap. The count starts again from zero once an incarnation has run for `max`
/// without failing.
///
/// Keep some jitter in production: without it, every actor that saw the same
/// dependency fail retries at the same moment, at every attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Backoff {
    min: Duration,
    max: Duration,
    random_factor: f64,
}

impl Backoff {
    /// The shortest delay of [`Backoff::default`].
    pub const DEFAULT_MIN: Duration = Duration::from_millis(100);
    /// The longest delay of [`Backoff::default`].
    pub const DEFAULT_MAX: Duration = Duration::from_secs(10);
    /// The random factor of [`Backoff::default`].
    pub const DEFAULT_RANDOM_FACTOR: f64 = 0.2;

    /// A backoff from `min` up to `max`, with up to `random_factor` (0.0 to 1.0) of
    /// extra random delay. A delay too large to add to the clock (`Duration::MAX`)
    /// is a restart that never comes: the actor stays absent, its messages wait.
    ///
    /// # Errors
    ///
    /// [`InvalidStrategy`] when `min` is zero, `min > max`, or `random_factor` is not
    /// a number from 0.0 to 1.0.
    pub fn new(min: Duration, max: Duration, random_factor: f64) -> Result<Self, InvalidStrategy> {
        if min.is_zero() {
            return Err(InvalidStrategy::ZeroMinBackoff);
        }
        if min > max {
            return Err(InvalidStrategy::MinAboveMax { min, max });
        }
        if !(0.0..=1.0).contains(&random_factor) {
            return Err(InvalidStrategy::RandomFactorOutOfRange { random_factor });
        }
        Ok(Self {
            min,
            max,
            random_factor,
        })
    }

    /// The delay before restart number `attempt` (0 for the first in a row), with
    /// `random` drawn from `0.0..1.0`: `min * 2^attempt`, capped at `max`, then
    /// stretched by `1 + random_factor * random`. The stretch comes after the cap, so
    /// it can take a delay past `max` (up to `max * (1 + random_factor)`) and actors
    /// that keep failing together still retry apart. A `random` that is not a number
    /// counts as 0.
    pub fn delay(&self, attempt: u32, random: f64) -> Duration {
        let random = if random.is_finite() {
            random.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let capped = self.capped(attempt);
        let extra = self.random_factor * random;
        if extra == 0.0 {
            return capped;
        }
        Duration::try_from_secs_f64(capped.as_secs_f64() * (1.0 + extra)).unwrap_or(Duration::MAX)
    }

    /// `min * 2^attempt`, at most `max`. It reaches `max` within 95 doublings (a
    /// `Duration` holds less than 2^95 ns), so the loop is short whatever `attempt` is.
    fn capped(&self, attempt: u32) -> Duration {
        let mut delay = self.min;
        for _ in 0..attempt {
            match delay.checked_mul(2) {
                Some(doubled) if doubled < self.max => delay = doubled,
                _ => return self.max,
            }
        }
        delay.min(self.max)
    }

    /// The shortest delay.
    pub fn min(&self) -> Duration {
        self.min
    }

    /// The longest delay.
    pub fn max(&self) -> Duration {
        self.max
    }

    /// The share of extra random delay.
    pub fn random_factor(&self) -> f64 {
        self.random_factor
    }
}

/// 100 ms, doubling up to 10 s, each delay stretched by up to a fifth at random: a
/// fault that clears in a moment costs a moment, and one that lasts is retried every
/// 10 to 12 seconds, not all at once.
impl Default for Backoff {
    fn default() -> Self {
        Self {
            min: Self::DEFAULT_MIN,
            max: Self::DEFAULT_MAX,
            random_factor: Self::DEFAULT_RANDOM_FACTOR,
        }
    }
}

/// A supervision setting that cannot work, refused when it is built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidStrategy {
    /// `max_restarts` of zero: a restart strategy that never restarts.
    #[error(
        "invalid supervisor strategy: max_restarts is 0, which never restarts: use \
         SupervisorStrategy::stop() for that, or allow at least one restart"
    )]
    NoRestarts,
    /// A restart window of zero: no limit could ever apply.
    #[error(
        "invalid supervisor strategy: the restart window is zero, so no limit could ever \
         apply: give a window such as Duration::from_secs(1)"
    )]
    ZeroWindow,
    /// A backoff whose shortest delay is zero.
    #[error(
        "invalid supervisor strategy: min_backoff is zero, which is no backoff at all: give \
         it a duration, or leave the backoff out"
    )]
    ZeroMinBackoff,
    /// A backoff whose shortest delay is longer than its longest.
    #[error(
        "invalid supervisor strategy: min_backoff ({min:?}) is greater than max_backoff \
         ({max:?}): swap them"
    )]
    MinAboveMax {
        /// The shortest delay given.
        min: Duration,
        /// The longest delay given.
        max: Duration,
    },
    /// A random factor that is not a number from 0.0 to 1.0.
    #[error(
        "invalid supervisor strategy: random_factor is {random_factor}: it must be a number \
         from 0.0 (no jitter) to 1.0 (up to double the delay)"
    )]
    RandomFactorOutOfRange {
        /// The factor given.
        random_factor: f64,
    },
}

/// One `supervise` wrapper met while starting the actor, with the restart history of
/// each of its clauses: a clause's limit counts only the restarts it decided, in its
/// own window.
pub(crate) struct Level<P: Message> {
    pub(crate) spec: Arc<Supervise<P>>,
    histories: Vec<History>,
}

/// The restarts one clause decided.
#[derive(Default)]
struct History {
    /// When each restart within the window was decided.
    restarts: VecDeque<Instant>,
    /// Restarts in a row, the exponent of the backoff.
    in_a_row: u32,
    /// From when a failure no longer counts as "in a row": the last restart's start
    /// plus the backoff's `max`.
    healthy_from: Option<Instant>,
}

/// What the cell does about a failure.
#[derive(Debug)]
pub(crate) enum Decision {
    Resume,
    /// Restart from the behavior supervised at this level, after this delay,
    /// stopping the children first unless the strategy keeps them. `clause` is the
    /// clause that decided, which also decides a failure of the restart itself.
    Restart {
        level: usize,
        clause: usize,
        delay: Option<Duration>,
        stop_children: bool,
    },
    Stop {
        exhausted: bool,
    },
    Escalate,
}

impl<P: Message> Level<P> {
    pub(crate) fn new(spec: Arc<Supervise<P>>) -> Self {
        let histories = spec.clauses.iter().map(|_| History::default()).collect();
        Self { spec, histories }
    }

    /// Take over `old`'s restart histories if it has the same clauses: the same
    /// error types with the same strategies, in the same order.
    pub(crate) fn inherit(&mut self, old: Level<P>) {
        let same = self.spec.clauses.len() == old.spec.clauses.len()
            && self
                .spec
                .clauses
                .iter()
                .zip(&old.spec.clauses)
                .all(|(new, old)| new.error_type == old.error_type && new.strategy == old.strategy);
        if same {
            self.histories = old.histories;
        }
    }

    /// Carry out `strategy`, the strategy of clause `clause` of this level.
    fn apply(&mut self, index: usize, clause: usize, strategy: &SupervisorStrategy) -> Decision {
        match strategy {
            SupervisorStrategy::Resume => Decision::Resume,
            SupervisorStrategy::Stop => Decision::Stop { exhausted: false },
            SupervisorStrategy::Escalate => Decision::Escalate,
            SupervisorStrategy::Restart(restart) => {
                let Some(history) = self.histories.get_mut(clause) else {
                    return Decision::Stop { exhausted: false };
                };
                history.restart(restart, index, clause)
            }
        }
    }
}

impl History {
    /// Count a restart against `restart`'s limit, or stop if it is used up.
    fn restart(&mut self, restart: &Restart, level: usize, clause: usize) -> Decision {
        let now = Instant::now();
        while self
            .restarts
            .front()
            .is_some_and(|at| now.duration_since(*at) >= restart.window)
        {
            self.restarts.pop_front();
        }
        let used = u32::try_from(self.restarts.len()).unwrap_or(u32::MAX);
        if used >= restart.max_restarts {
            return Decision::Stop { exhausted: true };
        }
        self.restarts.push_back(now);
        if self.healthy_from.is_some_and(|healthy| now >= healthy) {
            self.in_a_row = 0;
        }
        let delay = restart
            .backoff
            .as_ref()
            .map(|backoff| backoff.delay(self.in_a_row, jitter()));
        self.in_a_row = self.in_a_row.saturating_add(1);
        // A backoff too long for the clock never ends: the restart never comes, and
        // there is no moment from which the actor counts as healthy.
        self.healthy_from = restart.backoff.as_ref().and_then(|backoff| {
            let started = now.checked_add(delay.unwrap_or_default())?;
            Some(started.checked_add(backoff.max).unwrap_or(started))
        });
        Decision::Restart {
            level,
            clause,
            delay,
            stop_children: restart.stop_children,
        }
    }
}

/// Decide on `failure` with the supervision levels of an actor, innermost first.
pub(crate) fn decide<P: Message>(levels: &mut [Level<P>], failure: &Failure) -> Decision {
    for (index, level) in levels.iter_mut().enumerate().rev() {
        let spec = level.spec.clone();
        if let Some((clause, strategy)) = spec.clause_for(failure) {
            return level.apply(index, clause, strategy);
        }
    }
    Decision::Stop { exhausted: false }
}

/// Decide on a failure of the restart that clause `clause` of level `level` ordered
/// (the restarted setup failed, or panicked): the same clause decides, whatever the
/// error, so the failure counts against its limit and waits out its backoff.
pub(crate) fn decide_failed_restart<P: Message>(
    levels: &mut [Level<P>],
    level: usize,
    clause: usize,
) -> Decision {
    let Some(at) = levels.get_mut(level) else {
        return Decision::Stop { exhausted: false };
    };
    // A one-shot setup cannot run again: another restart would fail the same way.
    if !at.spec.inner.can_start_again() {
        return Decision::Stop { exhausted: false };
    }
    let spec = at.spec.clone();
    match spec.clauses.get(clause) {
        Some(decider) => at.apply(level, clause, &decider.strategy),
        None => Decision::Stop { exhausted: false },
    }
}

/// A uniformly random number in `0.0..1.0` from the thread's generator, which the
/// operating system seeds: independent of the clock, so paused or not, actors failing
/// at the same instant draw different numbers.
fn jitter() -> f64 {
    rand::random()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn backoff_doubles_from_min_and_stops_at_max() {
        let backoff = Backoff::new(ms(20), ms(80), 0.0).unwrap();
        let delays: Vec<_> = (0..5).map(|n| backoff.delay(n, 0.5)).collect();
        assert_eq!(delays, [ms(20), ms(40), ms(80), ms(80), ms(80)]);
        assert_eq!(backoff.delay(u32::MAX, 0.0), ms(80));
    }

    #[test]
    fn jitter_stretches_the_capped_delay() {
        let backoff = Backoff::new(ms(100), ms(150), 1.0).unwrap();
        assert_eq!(backoff.delay(0, 0.25), ms(125));
        assert_eq!(backoff.delay(0, 0.5), ms(150));
        assert_eq!(backoff.delay(3, 0.0), ms(150));
        assert_eq!(backoff.delay(3, 0.5), ms(225));
    }

    // S12: at the plateau the delay still varies with the random input, within
    // [max, max * (1 + random_factor)], so actors failing together do not retry together.
    #[test]
    fn jitter_still_spreads_delays_at_the_plateau() {
        let backoff = Backoff::new(ms(100), ms(800), 0.5).unwrap();
        let delays: Vec<_> = [0.0, 0.25, 0.5, 0.999]
            .into_iter()
            .map(|random| backoff.delay(50, random))
            .collect();
        for delay in &delays {
            assert!((ms(800)..=ms(1200)).contains(delay), "{delay:?}");
        }
        assert_eq!(delays[..3], [ms(800), ms(900), ms(1000)]);
        assert!(
            delays.windows(2).all(|pair| pair[0] < pair[1]),
            "{delays:?}"
        );
    }

    #[test]
    fn the_longest_backoff_does_not_overflow_when_stretched() {
        let backoff = Backoff::new(ms(1), Duration::MAX, 1.0).unwrap();
        assert_eq!(backoff.delay(u32::MAX, 0.99), Duration::MAX);
        assert_eq!(backoff.delay(0, 1.0), ms(2));
    }

    #[test]
    fn settings_that_cannot_work_are_refused_when_built() {
        assert!(Backoff::new(ms(0), ms(10), 0.1).is_err());
        assert!(Backoff::new(ms(20), ms(10), 0.1).is_err());
        assert!(Backoff::new(ms(10), ms(20), -0.1).is_err());
        assert!(Backoff::new(ms(10), ms(20), 1.5).is_err());
        assert!(Backoff::new(ms(10), ms(20), f64::NAN).is_err());
        assert_eq!(
            Backoff::new(ms(10), ms(20), 2.0),
            Err(InvalidStrategy::RandomFactorOutOfRange { random_factor: 2.0 })
        );
        assert_eq!(
            SupervisorStrategy::restart().with_limit(0, ms(10)),
            Err(InvalidStrategy::NoRestarts)
        );
        assert_eq!(
            SupervisorStrategy::restart().with_limit(1, ms(0)),
            Err(InvalidStrategy::ZeroWindow)
        );
        assert_eq!(
            Backoff::new(ms(0), ms(10), 0.0),
            Err(InvalidStrategy::ZeroMinBackoff)
        );
        assert!(SupervisorStrategy::restart().with_limit(0, ms(10)).is_err());
        assert!(SupervisorStrategy::restart().with_limit(3, ms(0)).is_err());
        let message = Backoff::new(ms(20), ms(10), 0.0)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            message.as_deref(),
            Some(
                "invalid supervisor strategy: min_backoff (20ms) is greater than max_backoff (10ms): swap them"
            )
        );
    }

    #[test]
    fn the_default_backoff_is_documented_and_valid() {
        let default = Backoff::default();
        assert_eq!(
            Backoff::new(
                Backoff::DEFAULT_MIN,
                Backoff::DEFAULT_MAX,
                Backoff::DEFAULT_RANDOM_FACTOR
            ),
            Ok(default.clone())
        );
        assert_eq!(default.delay(0, 0.0), ms(100));
        assert_eq!(default.delay(20, 0.0), Duration::from_secs(10));
        assert_eq!(default.delay(20, 1.0), Duration::from_secs(12));
    }

    #[test]
    fn a_random_number_that_is_not_one_means_no_jitter() {
        let backoff = Backoff::new(ms(100), ms(150), 1.0).unwrap();
        assert_eq!(backoff.delay(0, f64::NAN), ms(100));
        assert_eq!(backoff.delay(0, f64::INFINITY), ms(100));
    }

    #[test]
    fn jitter_stays_in_range_and_varies() {
        let draws: Vec<f64> = (0..1000).map(|_| jitter()).collect();
        for j in &draws {
            assert!((0.0..1.0).contains(j), "{j}");
        }
        let distinct: std::collections::HashSet<u64> = draws.iter().map(|j| j.to_bits()).collect();
        assert!(
            distinct.len() > 990,
            "{} distinct draws of 1000",
            distinct.len()
        );
    }
}
