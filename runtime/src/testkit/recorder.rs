//! The recording side of the context's seam: what a behavior under a
//! `BehaviorTestKit` did through its context, written down instead of done.
//!
//! The context checks, lists and keys everything as it would for a running actor
//! (see `actor::effects`); only the step that would leave the actor lands here.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::actor::ActorSystem;
use crate::actor::effects::{KeptChild, Recorder};
use crate::actor::timer::{TimerKey, TimerMode};
use crate::actor::{ActorPath, AnonymousName, AnyActorRef, LocalCell, Parent};
use crate::ground::message::Message;
use crate::testkit::Effect;

/// The effects of one behavior under test, in the order they happened, and the
/// children it spawned. Shared by the kit, its context and its timers.
#[derive(Default)]
pub(crate) struct Recording {
    effects: Mutex<Vec<Effect>>,
    children: Mutex<Vec<RecordedChild>>,
    next_anonymous: AtomicU64,
}

/// A child spawned under a `BehaviorTestKit`: a cell without a task, whose mailbox
/// collects what is sent to it, and the behavior it was spawned with.
pub(crate) struct RecordedChild {
    pub(crate) actor: AnyActorRef,
    /// `Arc<LocalCell<Q>>`.
    pub(crate) cell: Box<dyn Any + Send>,
    /// `Behavior<Q>`, until a kit for the child takes it.
    pub(crate) behavior: Option<Box<dyn Any + Send>>,
    pub(crate) protocol: &'static str,
}

/// The critical sections run no user code, so a poisoned lock holds consistent data.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

impl Recording {
    pub(crate) fn new() -> Arc<Self> {
        Arc::default()
    }

    fn record(&self, effect: Effect) {
        lock(&self.effects).push(effect);
    }

    /// The effects recorded so far, taken out.
    pub(crate) fn take(&self) -> Vec<Effect> {
        std::mem::take(&mut *lock(&self.effects))
    }

    /// Put effects taken out back in front of any recorded since.
    pub(crate) fn put_back(&self, mut effects: Vec<Effect>) {
        let mut log = lock(&self.effects);
        effects.append(&mut log);
        *log = effects;
    }

    /// The live children, for a test to take one's kit.
    pub(crate) fn children(&self) -> MutexGuard<'_, Vec<RecordedChild>> {
        lock(&self.children)
    }
}

impl Recorder for Recording {
    fn anonymous_name(&self) -> AnonymousName {
        AnonymousName::new(self.next_anonymous.fetch_add(1, Ordering::Relaxed))
    }

    fn spawned(&self, child: KeptChild) {
        let name = child.actor.path().name().to_owned();
        self.record(if child.anonymous {
            Effect::SpawnedAnonymous { name }
        } else {
            Effect::Spawned { name }
        });
        self.children().push(RecordedChild {
            actor: child.actor,
            cell: child.cell,
            behavior: Some(child.behavior),
            protocol: child.protocol,
        });
    }

    fn stopped(&self, child: &AnyActorRef) {
        self.children().retain(|kept| kept.actor != *child);
        self.record(Effect::Stopped {
            name: child.path().name().to_owned(),
        });
    }

    fn watched(&self, target: &AnyActorRef) {
        self.record(Effect::Watched {
            actor: target.clone(),
        });
    }

    fn unwatched(&self, target: &AnyActorRef) {
        self.record(Effect::Unwatched {
            actor: target.clone(),
        });
    }

    fn timer_started(&self, key: &TimerKey, mode: TimerMode, delay: Duration) {
        self.record(Effect::TimerStarted {
            key: key.clone(),
            mode,
            delay,
        });
    }

    fn timer_cancelled(&self, key: &TimerKey) {
        self.record(Effect::TimerCancelled { key: key.clone() });
    }
}

/// A cell with no task: what is sent to it waits in its mailbox for a test to read.
pub(crate) fn detached_cell<Q: Message>(
    system: &ActorSystem,
    path: ActorPath,
    parent: Parent,
) -> Arc<LocalCell<Q>> {
    let core = crate::actor::CellCore::new(
        Some(path),
        system.shared().next_uid(),
        system.shared().clone(),
        parent,
    );
    Arc::new(LocalCell {
        core,
        user: crate::mailbox::UserLane::actor(crate::MailboxConfig::unbounded()),
    })
}
