//! Creating a cell: name checks, the parent's child table, and the task.

use std::sync::Arc;

use tracing::Instrument;

use crate::actor::core::ChildEntry;
use crate::actor::{
    ActorRef, AnonymousName, AnyActorRef, AnyCell, CellCore, LocalCell, Parent, cell, validate_name,
};
use crate::behavior::Behavior;
use crate::error::SpawnError;
use crate::mailbox::UserLane;
use crate::message::Message;

/// The name a child is spawned under.
pub(crate) enum ChildName<'a> {
    Given(&'a str),
    Anonymous,
}

/// Spawn `behavior` as a child of `parent`.
///
/// The child table is locked while the task is spawned, so a name is checked and
/// taken in one step, and a parent that has begun to stop cannot gain a child.
pub(crate) fn spawn_child<Q: Message>(
    parent: &AnyActorRef,
    behavior: Behavior<Q>,
    name: ChildName<'_>,
) -> Result<ActorRef<Q>, SpawnError> {
    if let ChildName::Given(name) = name {
        validate_name(name)?;
    }
    let parent_core = parent.core();
    let system = parent_core.system();
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
    let owned_name;
    let name = match name {
        ChildName::Given(name) => {
            if children.contains(name) {
                return Err(SpawnError::NameTaken {
                    name: name.to_owned(),
                    parent: parent_core.path().clone(),
                });
            }
            name
        }
        ChildName::Anonymous => {
            owned_name = AnonymousName::new(system.next_anonymous());
            owned_name.as_str()
        }
    };
    let core = CellCore::new(
        parent_core.path().child(name),
        system.next_uid(),
        system.clone(),
        Parent::Cell(parent.clone()),
    );
    let (cell, abort) = start_cell(core, behavior).ok_or_else(|| SpawnError::NoRuntime {
        system: system.name().to_owned(),
    })?;
    children.insert(ChildEntry {
        child: AnyActorRef::from_cell(cell.clone() as Arc<dyn AnyCell>),
        abort,
    });
    Ok(ActorRef::local(cell))
}

/// Create the cell for `core` and spawn its task on the system's runtime; `None`
/// for a system without one.
pub(crate) fn start_cell<Q: Message>(
    core: CellCore,
    behavior: Behavior<Q>,
) -> Option<(Arc<LocalCell<Q>>, tokio::task::AbortHandle)> {
    let system = core.system().clone();
    let runtime = system.runtime()?.clone();
    let cell = Arc::new(LocalCell {
        core,
        user: UserLane::new(),
    });
    let span = tracing::error_span!("actor", path = %cell.core.path());
    system.cell_started();
    let task = cell::run(cell.clone(), behavior);
    // Without a subscriber that wants the span, the task goes without it: a span
    // that records nothing would still cost every actor its size.
    let task = if span.is_disabled() {
        runtime.spawn(task)
    } else {
        runtime.spawn(task.instrument(span))
    };
    Some((cell, task.abort_handle()))
}
