//! The one seam a context's capabilities go through: where what a handler asks for
//! (a child, a stop, a watch, a timer) takes effect.
//!
//! A context is built with its [`Effects`] and keeps them. Each capability is written
//! once, in the context, against this seam: names are checked, children listed in the
//! parent's table, watches deduplicated, timers keyed, the same way for every context.
//! Only the last step, the one that leaves the actor, depends on the effects:
//!
//! - [`Effects::Live`], a running actor's: a child's task is spawned, a stop or a watch
//!   goes to the target's system lane, a timer gets a task that ticks.
//! - `Effects::Recorded`, a behavior's under the testkit's `BehaviorTestKit`: the
//!   step is handed to a `Recorder` instead, which writes it down (a child is kept,
//!   without a task, for the test to run as a kit of its own).
//!
//! The runtime defines the seam and the `Recorder` trait; the testkit implements the
//! recorder, so the runtime never depends on the testkit. The recorded arm and the
//! recorder exist only with the `testkit` feature: a build without it has the live
//! arm alone. The live arm costs a match on an enum: no box, no dynamic call, no
//! allocation.
//!
//! `ActorContext` holds its self ref and an `Option<Box<Extra>>` (watches, timers,
//! effects) that a live context does not allocate until needed. The `BehaviorTestKit`
//! runs the same `Running`, `NextStep::of` and `AfterSignal` as the cell, on an
//! `ActorSystem::detached` system with no runtime.
//!
//! Leak tracking exists only with the `testkit` feature; there it is a setting of the
//! system (`ActorSystemBuilder::track_leaks`, on by default under `debug_assertions`,
//! always under `TestConfig` and `#[tapio::test]`). Only then do promises and armed
//! timers count themselves in `SystemShared` (`live_promises`, `live_timers`); live
//! cells are always counted.
//!
//! Layer: actor. Imports ground, the mailbox and the actor.

#[cfg(feature = "testkit")]
use std::any::Any;
#[cfg(feature = "testkit")]
use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Handle;

#[cfg(feature = "testkit")]
use crate::actor::AnonymousName;
use crate::actor::SystemShared;
use crate::actor::timer::{TimerKey, TimerMode, TimerScheduler};
use crate::actor::{ActorRef, AnyActorRef, CellCore};
use crate::ground::error::SpawnError;
use crate::ground::message::Message;
use crate::mailbox::SystemMessage;

/// Where a context's capabilities take effect; chosen when the context is built.
#[derive(Clone, Default)]
pub(crate) enum Effects {
    /// A running actor: children run, stops and watches are sent, timers tick.
    #[default]
    Live,
    /// A behavior under a test kit: the step that would leave the actor is recorded.
    #[cfg(feature = "testkit")]
    Recorded(Arc<dyn Recorder>),
}

/// What a context under a test kit does instead of leaving the actor. Implemented by
/// the testkit; shared by the context and its timers, hence `Sync`.
#[cfg(feature = "testkit")]
pub(crate) trait Recorder: Send + Sync + 'static {
    /// The name of the next anonymous child: `$a`, `$b`, ..., counted per behavior.
    fn anonymous_name(&self) -> AnonymousName;
    /// A child was spawned and listed: keep it, as no task will run it.
    fn spawned(&self, child: KeptChild);
    /// A child was stopped; it is off its parent's table already.
    fn stopped(&self, child: &AnyActorRef);
    /// `target` is now watched.
    fn watched(&self, target: &AnyActorRef);
    /// `target` is no longer watched.
    fn unwatched(&self, target: &AnyActorRef);
    /// A timer was started, or restarted under the same key.
    fn timer_started(&self, key: &TimerKey, mode: TimerMode, delay: Duration);
    /// A running timer was cancelled.
    fn timer_cancelled(&self, key: &TimerKey);
}

/// A child spawned under a recorder: its cell, which no task runs, and the behavior it
/// was spawned with, both with their protocol erased.
#[cfg(feature = "testkit")]
pub(crate) struct KeptChild {
    pub(crate) actor: AnyActorRef,
    /// `Arc<LocalCell<Q>>`.
    pub(crate) cell: Box<dyn Any + Send>,
    /// `Behavior<Q>`.
    pub(crate) behavior: Box<dyn Any + Send>,
    /// `Q`'s type name, for a test that asks for the wrong one.
    pub(crate) protocol: &'static str,
    /// Spawned with `spawn_anonymous`.
    pub(crate) anonymous: bool,
}

/// How a child is started, known before it is listed so that a refusal leaves
/// nothing behind.
pub(crate) enum Start<'a> {
    /// Its task is spawned on the system's runtime.
    Task(&'a Handle),
    /// It gets no task: the recorder keeps it.
    #[cfg(feature = "testkit")]
    Kept(&'a dyn Recorder),
}

impl Effects {
    /// The effects of a context built without a choice: a running actor's.
    pub(crate) const LIVE: &'static Effects = &Effects::Live;

    /// The generated name of an anonymous child with `uid`, and whether its parent's
    /// name index has to list it: a live name encodes the uid, which finds the child;
    /// a recorded one is counted per behavior and is found by name.
    pub(crate) fn anonymous_name(
        &self,
        system: &SystemShared,
        uid: u64,
    ) -> (crate::actor::AnonymousName, bool) {
        match self {
            Effects::Live => (system.anonymous_name(uid), false),
            #[cfg(feature = "testkit")]
            Effects::Recorded(recorder) => (recorder.anonymous_name(), true),
        }
    }

    /// How a child of an actor of `system` is started.
    ///
    /// # Errors
    ///
    /// For a live child of a system without a runtime (a test kit's),
    /// `SpawnError::NoRuntime`.
    pub(crate) fn start<'a>(&'a self, system: &'a SystemShared) -> Result<Start<'a>, SpawnError> {
        match self {
            Effects::Live => system
                .runtime()
                .map(Start::Task)
                .ok_or_else(|| system.no_runtime()),
            #[cfg(feature = "testkit")]
            Effects::Recorded(recorder) => Ok(Start::Kept(&**recorder)),
        }
    }

    /// Stop `child`, a live child of `parent`. A live child stops in its own time and
    /// leaves the table when it has; a recorded one has no task, so it leaves now.
    pub(crate) fn stop_child(&self, parent: &CellCore, child: &AnyActorRef) {
        match self {
            Effects::Live => {
                let _ = parent;
                child.request_stop();
            }
            #[cfg(feature = "testkit")]
            Effects::Recorded(recorder) => {
                parent.children().remove(child);
                recorder.stopped(child);
            }
        }
    }

    /// Watch `target` on behalf of `me`. A target that has stopped already answers
    /// with `Terminated` at once.
    pub(crate) fn watch(&self, me: &AnyActorRef, target: &AnyActorRef) {
        match self {
            Effects::Live => {
                if let Some(remote) = target.outbox() {
                    remote.watch(me, target);
                    return;
                }
                if let Err(SystemMessage::Watch(_)) =
                    target.send_system(SystemMessage::Watch(me.clone()))
                {
                    let _ = me.send_system(SystemMessage::Terminated(target.clone()));
                }
            }
            #[cfg(feature = "testkit")]
            Effects::Recorded(recorder) => recorder.watched(target),
        }
    }

    /// Stop watching `target` on behalf of `me`.
    pub(crate) fn unwatch(&self, me: &AnyActorRef, target: &AnyActorRef) {
        match self {
            Effects::Live => {
                if let Some(remote) = target.outbox() {
                    remote.unwatch(me, target);
                    return;
                }
                let _ = target.send_system(SystemMessage::Unwatch(me.clone()));
            }
            #[cfg(feature = "testkit")]
            Effects::Recorded(recorder) => recorder.unwatched(target),
        }
    }

    /// The timers of the actor `me`.
    pub(crate) fn timers<P: Message>(&self, me: &ActorRef<P>) -> TimerScheduler<P> {
        TimerScheduler::new(me, self.clone())
    }

    /// A timer was started (or restarted under its key): a live one is armed by
    /// `arm`, which says whether it could be; a recorded one is written down, and
    /// never ticks. Returns whether the timer runs.
    pub(crate) fn timer_started(
        &self,
        key: &TimerKey,
        mode: TimerMode,
        delay: Duration,
        arm: impl FnOnce() -> bool,
    ) -> bool {
        match self {
            Effects::Live => {
                let _ = (key, mode, delay);
                arm()
            }
            #[cfg(feature = "testkit")]
            Effects::Recorded(recorder) => {
                recorder.timer_started(key, mode, delay);
                true
            }
        }
    }

    /// A running timer was cancelled. A live one's task ends as the timer is dropped;
    /// a recorded one is written down.
    pub(crate) fn timer_cancelled(&self, key: &TimerKey) {
        #[cfg(feature = "testkit")]
        if let Effects::Recorded(recorder) = self {
            recorder.timer_cancelled(key);
        }
        #[cfg(not(feature = "testkit"))]
        let _ = key;
    }
}
