//! Creating a cell: name checks, the parent's child table, and the task.
//!
//! The actor's span is an ERROR-level span with target `tapio::actor`: at ERROR it
//! passes any level filter, so even a subscriber that shows only errors gets the path;
//! only a filter by target drops it (`tapio::actor=error`). It is made at spawn, and
//! only if a subscriber wants it then; otherwise the task is spawned without
//! `instrument`, which keeps an unobserved actor smaller.
//!
//! Spawning races a runtime that shuts down: `spawn_child` lists the child under the
//! parent's lock and spawns the task after releasing it; a runtime that is shutting
//! down drops the future inside `spawn`, whose `Drop` takes the lock again to unlist the
//! child, and `NEVER_RAN` turns that into `SpawnError::RuntimeShutDown`.

use std::sync::Arc;

use tokio::runtime::Handle;
use tokio::task::AbortHandle;
use tracing::Instrument;

use crate::actor::behavior::Behavior;
use crate::actor::core::ChildEntry;
#[cfg(feature = "testkit")]
use crate::actor::effects::KeptChild;
use crate::actor::effects::{Effects, Start};
use crate::actor::lanes::UserLane;
use crate::actor::{
    ActorRef, AnyActorRef, AnyCell, CellCore, LocalCell, Parent, cell, validate_name,
};
use crate::ground::error::SpawnError;
use crate::ground::message::Message;
use crate::mailbox::{MailboxConfig, NEVER_RAN};

/// The name a child is spawned under.
pub(crate) enum ChildName<'a> {
    Given(&'a str),
    Anonymous,
}

/// Spawn `behavior` as a child of `parent`, with a `mailbox` built as configured,
/// whose context has `effects` (a
/// recorded child is listed the same way, and kept instead of started).
///
/// The cell, its span and its task's future are made first; then, under the parent's
/// child-table lock, the name is checked and the child listed, in one step, so that a
/// parent that has begun to stop cannot gain a child. The task is spawned after the
/// lock is released: a runtime that has shut down drops the task's future inside
/// `spawn`, and that drop tells the parent, which takes the same lock. No user code
/// runs under that lock.
pub(crate) fn spawn_child<Q: Message>(
    parent: &AnyActorRef,
    behavior: Behavior<Q>,
    name: ChildName<'_>,
    mailbox: MailboxConfig,
    effects: &Effects,
) -> Result<ActorRef<Q>, SpawnError> {
    // A parent is an actor of this process; a ref to anything else has no children.
    let Some(parent_core) = parent.local() else {
        return Err(SpawnError::ParentStopping {
            parent: parent.path().clone(),
        });
    };
    let system = parent_core.system();
    let uid = system.next_uid();
    let generated;
    // `indexed`: the parent's name index lists the child (an anonymous live child is
    // found through the uid its name encodes instead). Such a child's path follows
    // from its uid and is built when asked for.
    let (name, indexed, anonymous) = match name {
        ChildName::Given(name) => {
            validate_name(name)?;
            (Some(name), true, false)
        }
        ChildName::Anonymous => {
            let indexed;
            (generated, indexed) = effects.anonymous_name(system, uid);
            (indexed.then(|| generated.as_str()), indexed, true)
        }
    };
    let path = name.map(|name| parent_core.path().child(name));
    let core = CellCore::new(path, uid, system.clone(), Parent::Cell(parent.clone()));
    let (cell, launch) = prepare_cell(core, behavior, mailbox);
    let start = effects.start(system)?;
    {
        let mut children = parent_core.children();
        if children.is_closed() {
            return Err(match parent_core.parent() {
                Parent::System => SpawnError::SystemTerminated {
                    system: system.name().to_owned(),
                },
                Parent::Cell(_) => SpawnError::ParentStopping {
                    parent: parent_core.path().clone(),
                },
            });
        }
        if let Some(name) = name
            && children.has_named(name)
        {
            return Err(SpawnError::NameTaken {
                name: name.to_owned(),
                parent: parent_core.path().clone(),
            });
        }
        let child = AnyActorRef::from_cell(cell.clone() as Arc<dyn AnyCell>);
        children.insert(ChildEntry { child, abort: None }, indexed);
    }
    #[cfg(not(feature = "testkit"))]
    let (Start::Task(runtime), _) = (start, anonymous);
    #[cfg(feature = "testkit")]
    let runtime = match start {
        Start::Task(runtime) => runtime,
        Start::Kept(recorder) => {
            recorder.spawned(launch.keep(anonymous));
            return Ok(ActorRef::local(cell));
        }
    };
    let abort = launch.spawn(runtime);
    if cell.core.lane().has_flag(NEVER_RAN) {
        // Its end has already taken it off the parent's table.
        return Err(SpawnError::RuntimeShutDown {
            system: system.name().to_owned(),
        });
    }
    parent_core.children().set_abort(uid, abort);
    Ok(ActorRef::local(cell))
}

/// Create the cell for `core` and spawn its task on the system's runtime; `None`
/// for a system without one.
pub(crate) fn start_cell<Q: Message>(
    core: CellCore,
    behavior: Behavior<Q>,
) -> Option<(Arc<LocalCell<Q>>, AbortHandle)> {
    let system = core.system().clone();
    let runtime = system.runtime()?;
    let (cell, launch) = prepare_cell(core, behavior, MailboxConfig::unbounded());
    Some((cell, launch.spawn(runtime)))
}

/// Create the cell for `core`, ready to spawn its task. Nothing of the task exists
/// until it is spawned, so a cell refused at the last check just goes away.
fn prepare_cell<Q: Message>(
    core: CellCore,
    behavior: Behavior<Q>,
    mailbox: MailboxConfig,
) -> (Arc<LocalCell<Q>>, Launch<Q>) {
    let cell = Arc::new(LocalCell {
        core,
        user: UserLane::actor(mailbox),
    });
    let mut span = actor_span(&cell.core);
    if span.is_disabled() && cell.core.system().refresh_tracing() {
        span = actor_span(&cell.core);
    }
    let launch = Launch {
        cell: cell.clone(),
        behavior,
        span,
    };
    (cell, launch)
}

/// The span an actor's records carry. Its target is `tapio::actor`: a subscriber
/// that filters by target must let it through for handler records to carry the
/// actor's path.
fn actor_span(core: &CellCore) -> tracing::Span {
    tracing::error_span!(target: "tapio::actor", "actor", path = %core.path())
}

/// A cell whose task is about to be spawned.
struct Launch<Q: Message> {
    cell: Arc<LocalCell<Q>>,
    behavior: Behavior<Q>,
    span: tracing::Span,
}

impl<Q: Message> Launch<Q> {
    /// The child without a task, for a recorder to keep.
    #[cfg(feature = "testkit")]
    fn keep(self, anonymous: bool) -> KeptChild {
        KeptChild {
            actor: AnyActorRef::from_cell(self.cell.clone() as Arc<dyn AnyCell>),
            cell: Box::new(self.cell),
            behavior: Box::new(self.behavior),
            protocol: std::any::type_name::<Q>(),
            anonymous,
        }
    }

    fn spawn(self, runtime: &Handle) -> AbortHandle {
        self.cell.core.system().cell_started();
        let future = cell::run(self.cell, self.behavior);
        // Without a subscriber that wants the span, the task goes without it: a span
        // that records nothing would still cost every actor its size.
        let task = if self.span.is_disabled() {
            runtime.spawn(future)
        } else {
            runtime.spawn(future.instrument(self.span))
        };
        task.abort_handle()
    }
}
