//! The untyped, shared part of a cell: identity, system lane, wake-up and children.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use atomic_waker::AtomicWaker;
use tokio::task::AbortHandle;

use crate::actor::{ActorPath, AnyActorRef};
use crate::mailbox::{IN_HANDLER, STOPPING, SystemLane};
use crate::system::{ActorSystem, SystemShared};

/// Who hears about an actor's end.
pub(crate) enum Parent {
    /// An ordinary actor: its parent cell.
    Cell(AnyActorRef),
    /// A guardian: the system itself.
    System,
}

pub(crate) struct CellCore {
    path: ActorPath,
    uid: u64,
    system: ActorSystem,
    parent: Parent,
    lane: SystemLane,
    waker: AtomicWaker,
    children: Mutex<Children>,
}

/// The children of one actor, keyed by name (borrowed from each child's path).
#[derive(Default)]
pub(crate) struct Children {
    // Boxed: most actors have no children, and an absent box is one word in every
    // actor's cell where an empty set is six.
    #[allow(clippy::box_collection)]
    table: Option<Box<HashSet<ChildEntry>>>,
    /// Cleared when the actor begins to stop: from then on it takes no new children.
    closed: bool,
}

pub(crate) struct ChildEntry {
    pub(crate) child: AnyActorRef,
    pub(crate) abort: AbortHandle,
}

impl Borrow<str> for ChildEntry {
    fn borrow(&self) -> &str {
        self.child.path().name()
    }
}

impl PartialEq for ChildEntry {
    fn eq(&self, other: &Self) -> bool {
        self.child.path().name() == other.child.path().name()
    }
}

impl Eq for ChildEntry {}

impl Hash for ChildEntry {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.child.path().name().hash(state);
    }
}

impl Children {
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.table.as_ref().is_some_and(|t| t.contains(name))
    }

    pub(crate) fn insert(&mut self, entry: ChildEntry) {
        self.table
            .get_or_insert_with(Default::default)
            .insert(entry);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.table.as_ref().is_none_or(|t| t.is_empty())
    }

    pub(crate) fn get(&self, name: &str) -> Option<&ChildEntry> {
        self.table.as_ref()?.get(name)
    }

    /// Remove `child` if the entry under its name is that very incarnation.
    pub(crate) fn remove(&mut self, child: &AnyActorRef) -> bool {
        let Some(table) = self.table.as_mut() else {
            return false;
        };
        let same = table
            .get(child.path().name())
            .is_some_and(|entry| entry.child.same_cell(child));
        if same {
            table.remove(child.path().name());
            if table.is_empty() {
                self.table = None;
            }
        }
        same
    }

    /// The children, oldest first (uids grow with every spawn): listed, and told to
    /// stop, in the order they were spawned.
    pub(crate) fn refs(&self) -> Vec<AnyActorRef> {
        let mut children: Vec<_> = self
            .table
            .iter()
            .flat_map(|t| t.iter())
            .map(|e| e.child.clone())
            .collect();
        children.sort_by_key(AnyActorRef::uid);
        children
    }

    /// Take no new children from now on; returns the ones there are, oldest first.
    pub(crate) fn close(&mut self) -> Vec<AnyActorRef> {
        self.closed = true;
        self.refs()
    }

    /// Take every entry out (used when the system gives up on a tree at its deadline).
    pub(crate) fn drain(&mut self) -> Vec<ChildEntry> {
        self.closed = true;
        self.table
            .take()
            .map(|t| t.into_iter().collect())
            .unwrap_or_default()
    }
}

impl CellCore {
    pub(crate) fn new(
        path: ActorPath,
        uid: u64,
        system: Arc<SystemShared>,
        parent: Parent,
    ) -> Self {
        Self {
            path,
            uid,
            system: ActorSystem::from_shared(system),
            parent,
            lane: SystemLane::default(),
            waker: AtomicWaker::new(),
            children: Mutex::new(Children::default()),
        }
    }

    pub(crate) fn path(&self) -> &ActorPath {
        &self.path
    }

    pub(crate) fn uid(&self) -> u64 {
        self.uid
    }

    pub(crate) fn system(&self) -> &Arc<SystemShared> {
        self.system.shared()
    }

    /// The system, as the handle users hold.
    pub(crate) fn system_handle(&self) -> &ActorSystem {
        &self.system
    }

    pub(crate) fn parent(&self) -> &Parent {
        &self.parent
    }

    pub(crate) fn lane(&self) -> &SystemLane {
        &self.lane
    }

    pub(crate) fn waker(&self) -> &AtomicWaker {
        &self.waker
    }

    /// Mark that the actor awaits an `async` handler (or no longer does): what the
    /// shutdown deadline reports about an actor it cancels.
    pub(crate) fn set_in_handler(&self, busy: bool) {
        self.lane.set_flag(IN_HANDLER, busy);
    }

    pub(crate) fn is_in_handler(&self) -> bool {
        self.lane.has_flag(IN_HANDLER)
    }

    /// Mark that the actor has begun to stop.
    pub(crate) fn set_stopping(&self) {
        self.lane.set_flag(STOPPING, true);
    }

    /// Whether the actor has begun to stop (or has stopped).
    pub(crate) fn is_stopping(&self) -> bool {
        self.lane.has_flag(STOPPING)
    }

    #[inline]
    pub(crate) fn wake(&self) {
        self.waker.wake();
    }

    pub(crate) fn children(&self) -> MutexGuard<'_, Children> {
        // The critical sections run no user code, so a poisoned lock holds
        // consistent data.
        self.children
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}
