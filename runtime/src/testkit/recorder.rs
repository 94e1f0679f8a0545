//! What a context records instead of doing, when a `BehaviorTestKit` runs it.

use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::actor::spawn::ChildName;
use crate::actor::{
    ActorPath, ActorRef, AnonymousName, AnyActorRef, AnyCell, LocalCell, Parent, validate_name,
};
use crate::behavior::Behavior;
use crate::error::{NotAChild, SpawnError};
use crate::message::Message;
use crate::system::ActorSystem;
use crate::testkit::Effect;

/// Effects in the order they happened, shared by a context's recorder and its timers.
#[derive(Debug, Clone, Default)]
pub(crate) struct EffectLog(Arc<Mutex<Vec<Effect>>>);

impl EffectLog {
    fn lock(&self) -> MutexGuard<'_, Vec<Effect>> {
        self.0.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    pub(crate) fn record(&self, effect: Effect) {
        self.lock().push(effect);
    }

    pub(crate) fn take(&self) -> Vec<Effect> {
        std::mem::take(&mut *self.lock())
    }

    /// Put effects taken out back in front of any recorded since.
    pub(crate) fn put_back(&self, mut effects: Vec<Effect>) {
        let mut log = self.lock();
        effects.append(&mut log);
        *log = effects;
    }
}

/// The effects of a behavior under test, and the children it spawned.
pub(crate) struct Recorder {
    system: ActorSystem,
    effects: EffectLog,
    children: Vec<RecordedChild>,
    next_anonymous: u64,
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

impl Recorder {
    pub(crate) fn new(system: ActorSystem) -> Self {
        Self {
            system,
            effects: EffectLog::default(),
            children: Vec::new(),
            next_anonymous: 0,
        }
    }

    pub(crate) fn system(&self) -> &ActorSystem {
        &self.system
    }

    pub(crate) fn effect_log(&self) -> EffectLog {
        self.effects.clone()
    }

    pub(crate) fn spawn<Q: Message>(
        &mut self,
        parent: &AnyActorRef,
        behavior: Behavior<Q>,
        name: ChildName<'_>,
    ) -> Result<ActorRef<Q>, SpawnError> {
        let (name, anonymous) = match name {
            ChildName::Given(name) => {
                validate_name(name)?;
                if self.children.iter().any(|c| c.actor.path().name() == name) {
                    return Err(SpawnError::NameTaken {
                        name: name.to_owned(),
                        parent: parent.path().clone(),
                    });
                }
                (name.to_owned(), false)
            }
            ChildName::Anonymous => {
                self.next_anonymous += 1;
                (
                    AnonymousName::new(self.next_anonymous - 1)
                        .as_str()
                        .to_owned(),
                    true,
                )
            }
        };
        let cell = detached_cell::<Q>(
            &self.system,
            parent.path().child(&name),
            Parent::Cell(parent.clone()),
        );
        let actor = AnyActorRef::from_cell(cell.clone() as Arc<dyn AnyCell>);
        self.effects.record(if anonymous {
            Effect::SpawnedAnonymous { name }
        } else {
            Effect::Spawned { name }
        });
        self.children.push(RecordedChild {
            actor,
            cell: Box::new(cell.clone()),
            behavior: Some(Box::new(behavior)),
            protocol: std::any::type_name::<Q>(),
        });
        Ok(ActorRef::local(cell))
    }

    pub(crate) fn stop(&mut self, child: &AnyActorRef, caller: ActorPath) -> Result<(), NotAChild> {
        let Some(at) = self.children.iter().position(|c| c.actor == *child) else {
            return Err(NotAChild {
                target: child.path().clone(),
                caller,
            });
        };
        let stopped = self.children.remove(at);
        self.effects.record(Effect::Stopped {
            name: stopped.actor.path().name().to_owned(),
        });
        Ok(())
    }

    pub(crate) fn children(&self) -> Vec<AnyActorRef> {
        self.children.iter().map(|c| c.actor.clone()).collect()
    }

    pub(crate) fn child(&self, name: &str) -> Option<AnyActorRef> {
        self.children
            .iter()
            .find(|c| c.actor.path().name() == name)
            .map(|c| c.actor.clone())
    }

    pub(crate) fn child_mut(&mut self, name: &str) -> Option<&mut RecordedChild> {
        self.children
            .iter_mut()
            .find(|c| c.actor.path().name() == name)
    }

    pub(crate) fn watched(&mut self, actor: AnyActorRef) {
        self.effects.record(Effect::Watched { actor });
    }

    pub(crate) fn unwatched(&mut self, actor: AnyActorRef) {
        self.effects.record(Effect::Unwatched { actor });
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
        user: crate::mailbox::UserLane::new(),
    })
}
