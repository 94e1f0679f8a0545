//! The untyped, shared part of a cell: identity, system lane, wake-up and children.
//!
//! The path of an anonymous child and of a promise is built on first use
//! (`CellCore::path`, a `OnceLock`): when it is printed, compared or hashed (ref
//! equality, watcher sets), or at spawn when a subscriber wants actor spans. An
//! anonymous child is found by the uid its name encodes (`CellCore::child`), in the
//! `BTreeMap` by uid, so anonymous children are never hashed or put in the name index.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tokio::task::AbortHandle;

use crate::actor::{ActorPath, AnonymousName, AnyActorRef};
use crate::actor::{ActorSystem, SystemShared};
use crate::mailbox::{ABANDONED, IN_HANDLER, STOPPING, SystemLane, WAITING_FOR_CHILDREN};

/// Who hears about an actor's end.
pub(crate) enum Parent {
    /// An ordinary actor: its parent cell.
    Cell(AnyActorRef),
    /// A guardian: the system itself; also an ask's promise and a message adapter,
    /// which have no task and no parent.
    System,
}

pub(crate) struct CellCore {
    /// Written when the cell is made, except for an anonymous child and an ask's
    /// promise, whose paths follow from their uid and are built the first time they
    /// are asked for: most never are, and a path is an allocation.
    path: OnceLock<ActorPath>,
    uid: u64,
    system: ActorSystem,
    parent: Parent,
    lane: SystemLane,
    children: Mutex<Children>,
}

/// The children of one actor, in spawn order (by uid: uids grow with every spawn),
/// with an index by name for the ones that were given one. An anonymous child is
/// found through its uid, which its name encodes; it costs no hashing at all.
#[derive(Default)]
pub(crate) struct Children {
    // Boxed: most actors have no children, and an absent box is one word in every
    // actor's cell.
    table: Option<Box<ChildTable>>,
    /// Set when the actor begins to stop: from then on it takes no new children.
    closed: bool,
}

#[derive(Default)]
struct ChildTable {
    by_uid: BTreeMap<u64, ChildEntry>,
    named: HashSet<NamedChild>,
}

pub(crate) struct ChildEntry {
    pub(crate) child: AnyActorRef,
    /// `None` for the moment between listing the child and spawning its task.
    pub(crate) abort: Option<AbortHandle>,
}

/// A named child in the name index, keyed by the name its path holds.
struct NamedChild(AnyActorRef);

impl Borrow<str> for NamedChild {
    fn borrow(&self) -> &str {
        self.0.path().name()
    }
}

impl PartialEq for NamedChild {
    fn eq(&self, other: &Self) -> bool {
        self.0.path().name() == other.0.path().name()
    }
}

impl Eq for NamedChild {}

impl Hash for NamedChild {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.path().name().hash(state);
    }
}

impl Children {
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether a live child is named `name` (anonymous names are unique by
    /// construction and never asked about).
    pub(crate) fn has_named(&self, name: &str) -> bool {
        self.table.as_ref().is_some_and(|t| t.named.contains(name))
    }

    pub(crate) fn insert(&mut self, entry: ChildEntry, named: bool) {
        let table = self.table.get_or_insert_with(Default::default);
        if named {
            table.named.insert(NamedChild(entry.child.clone()));
        }
        table.by_uid.insert(entry.child.uid(), entry);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.table.as_ref().is_none_or(|t| t.by_uid.is_empty())
    }

    /// The listed children if every one of them was abandoned at the shutdown
    /// deadline, `None` if any is still to be waited for.
    fn all_abandoned(&self) -> Option<Vec<AnyActorRef>> {
        let Some(table) = &self.table else {
            return Some(Vec::new());
        };
        table
            .by_uid
            .values()
            .map(|entry| {
                entry
                    .child
                    .local()
                    .is_some_and(CellCore::is_abandoned)
                    .then(|| entry.child.clone())
            })
            .collect()
    }

    /// Keep the handle that cancels the task of the child with `uid`, if it is still
    /// listed.
    pub(crate) fn set_abort(&mut self, uid: u64, abort: AbortHandle) {
        if let Some(entry) = self.table.as_mut().and_then(|t| t.by_uid.get_mut(&uid)) {
            entry.abort = Some(abort);
        }
    }

    /// The live child named `name`, given a name's owner.
    pub(crate) fn named(&self, name: &str) -> Option<&AnyActorRef> {
        Some(&self.table.as_ref()?.named.get(name)?.0)
    }

    /// The live child with `uid`.
    pub(crate) fn by_uid(&self, uid: u64) -> Option<&AnyActorRef> {
        Some(&self.table.as_ref()?.by_uid.get(&uid)?.child)
    }

    /// Free `child`'s name for a successor, if the name is still its own; it stays
    /// listed until [`remove`](Self::remove).
    pub(crate) fn release_name(&mut self, child: &AnyActorRef) {
        if let Some(table) = self.table.as_mut().filter(|table| !table.named.is_empty()) {
            let name = child.path().name();
            if table.named.get(name).is_some_and(|n| n.0.same_cell(child)) {
                table.named.remove(name);
            }
        }
    }

    /// Remove `child` if it is still listed (the very incarnation, not a later actor
    /// under the same name).
    pub(crate) fn remove(&mut self, child: &AnyActorRef) -> bool {
        let Some(table) = self.table.as_mut() else {
            return false;
        };
        if table.by_uid.remove(&child.uid()).is_none() {
            return false;
        }
        if !table.named.is_empty() {
            let name = child.path().name();
            if table.named.get(name).is_some_and(|n| n.0.same_cell(child)) {
                table.named.remove(name);
            }
        }
        if table.by_uid.is_empty() {
            self.table = None;
        }
        true
    }

    /// The children, oldest first: listed, and told to stop, in the order they were
    /// spawned.
    pub(crate) fn refs(&self) -> Vec<AnyActorRef> {
        self.table
            .iter()
            .flat_map(|t| t.by_uid.values())
            .map(|e| e.child.clone())
            .collect()
    }

    /// Take no new children from now on, and ask the ones there are to stop, oldest
    /// first. Asking costs a flag and a wake-up, so it is done here rather than on a
    /// copy of the list.
    pub(crate) fn close_and_stop(&mut self) {
        self.closed = true;
        for entry in self.entries() {
            entry.child.request_stop();
        }
    }

    /// The listed children's entries, oldest first.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &ChildEntry> {
        self.table.iter().flat_map(|t| t.by_uid.values())
    }

    /// Take every entry out (used when the system gives up on a tree at its deadline).
    pub(crate) fn drain(&mut self) -> Vec<ChildEntry> {
        self.closed = true;
        self.table
            .take()
            .map(|t| t.by_uid.into_values().collect())
            .unwrap_or_default()
    }
}

impl CellCore {
    pub(crate) fn new(
        path: Option<ActorPath>,
        uid: u64,
        system: Arc<SystemShared>,
        parent: Parent,
    ) -> Self {
        let lane = SystemLane::default();
        // A task that has not run yet is waiting for its turn, not busy.
        lane.park();
        Self::with_lane(path, uid, system, parent, lane)
    }

    /// The core of an ask's promise: stopped from the start (its system lane is
    /// closed, so watching it reports `Terminated` at once), its path built if asked
    /// for.
    #[inline]
    pub(crate) fn promise(uid: u64, system: Arc<SystemShared>) -> Self {
        let lane = SystemLane::closed(STOPPING);
        Self::with_lane(None, uid, system, Parent::System, lane)
    }

    /// The core of a message adapter at `path`: it takes no system messages (its
    /// lane is closed from the start); its end is its owner's.
    pub(crate) fn adapter(path: ActorPath, uid: u64, system: Arc<SystemShared>) -> Self {
        let lane = SystemLane::adapter();
        Self::with_lane(Some(path), uid, system, Parent::System, lane)
    }

    /// The core of a narrowed ref to the actor at `path` of incarnation `uid`: the
    /// same identity, a lane that takes no system messages; its end is the actor's.
    pub(crate) fn narrowed(path: ActorPath, uid: u64, system: Arc<SystemShared>) -> Self {
        let lane = SystemLane::narrowed();
        Self::with_lane(Some(path), uid, system, Parent::System, lane)
    }

    /// The core of a ref to the incarnation `uid` of the actor at `path`, of this
    /// system, which has stopped: what is told to it is a dead letter, and watching
    /// it reports `Terminated` at once.
    pub(crate) fn gone(path: ActorPath, uid: u64, system: Arc<SystemShared>) -> Self {
        Self::with_lane(Some(path), uid, system, Parent::System, SystemLane::gone())
    }

    /// The core of a ref to the actor at `path` (an address of another system)
    /// with incarnation `uid`.
    pub(crate) fn remote(path: ActorPath, uid: u64, system: Arc<SystemShared>) -> Self {
        Self::with_lane(
            Some(path),
            uid,
            system,
            Parent::System,
            SystemLane::remote(),
        )
    }

    #[inline]
    fn with_lane(
        path: Option<ActorPath>,
        uid: u64,
        system: Arc<SystemShared>,
        parent: Parent,
        lane: SystemLane,
    ) -> Self {
        Self {
            path: path.map_or_else(OnceLock::new, OnceLock::from),
            uid,
            system: ActorSystem::from_shared(system),
            parent,
            lane,
            children: Mutex::new(Children::default()),
        }
    }

    pub(crate) fn path(&self) -> &ActorPath {
        self.path.get_or_init(|| match &self.parent {
            Parent::Cell(parent) => {
                let name = self.system().anonymous_name(self.uid);
                parent.path().child(name.as_str())
            }
            // An adapter's path is written when it is made.
            Parent::System => crate::actor::promise::path_of(self.system(), self.uid),
        })
    }

    /// Whether the actor's name was generated, without building its path.
    pub(crate) fn is_anonymous(&self) -> bool {
        // A given name is written with the cell; a generated one only when asked for.
        self.path
            .get()
            .is_none_or(|path| AnonymousName::is_one(path.name()))
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

    /// Whether this is a message adapter's cell (read without a lock).
    pub(crate) fn is_adapter(&self) -> bool {
        self.lane.is_adapter()
    }

    pub(crate) fn lane(&self) -> &SystemLane {
        &self.lane
    }

    /// Mark that the actor awaits an `async` handler (or no longer does): what the
    /// shutdown deadline reports about an actor it cancels.
    pub(crate) fn set_in_handler(&self, busy: bool) {
        self.lane.set_flag(IN_HANDLER, busy);
    }

    pub(crate) fn is_in_handler(&self) -> bool {
        self.lane.has_flag(IN_HANDLER)
    }

    /// Mark that the cell waits for something to do, outside every handler.
    pub(crate) fn set_parked(&self) {
        self.lane.park();
    }

    /// Whether the actor is running a handler (synchronous, or an `async` one it
    /// awaits) rather than waiting for something to do.
    pub(crate) fn is_busy(&self) -> bool {
        self.is_in_handler() || !self.lane.is_parked()
    }

    /// Give up on the actor at the shutdown deadline: its parent stops waiting for it.
    pub(crate) fn set_abandoned(&self) {
        self.lane.set_flag(ABANDONED, true);
    }

    pub(crate) fn is_abandoned(&self) -> bool {
        self.lane.has_flag(ABANDONED)
    }

    /// Whether nothing below this actor is left to wait for: no children, or only
    /// children abandoned at the shutdown deadline whose own children are settled.
    pub(crate) fn children_settled(&self) -> bool {
        // The lock is released before looking below, so it is never held with a
        // descendant's.
        let abandoned = self.children().all_abandoned();
        abandoned.is_some_and(|children| {
            children
                .iter()
                .all(|child| child.local().is_none_or(CellCore::children_settled))
        })
    }

    /// Mark that the actor waits for its children to end (or no longer does).
    pub(crate) fn set_waiting_for_children(&self, waiting: bool) {
        self.lane.set_flag(WAITING_FOR_CHILDREN, waiting);
    }

    pub(crate) fn is_waiting_for_children(&self) -> bool {
        self.lane.has_flag(WAITING_FOR_CHILDREN)
    }

    /// One of this actor's children has ended and left the table: wake the actor if
    /// it waits for its children. The flag is set before the actor looks at its table
    /// and read here after the child left it, both around the table's lock, so either
    /// the actor sees the table without the child or the child sees the flag. Of the
    /// children that end between two looks, only the first wakes it: a parent of
    /// thousands is not woken (nor its waker locked) thousands of times. Returns
    /// whether to wake it.
    pub(crate) fn child_ended(&self) -> bool {
        self.is_waiting_for_children() && self.lane.note_child_ended()
    }

    /// Whether nothing below this actor is left to wait for, as its own task asks
    /// before it goes on with a stop or a restart: from here on, the next child to end
    /// wakes it again.
    pub(crate) fn look_at_children(&self) -> bool {
        self.lane.clear_child_ended();
        self.children_settled()
    }

    /// Mark that the actor has begun to stop.
    pub(crate) fn set_stopping(&self) {
        self.lane.set_flag(STOPPING, true);
    }

    /// Whether the actor has begun to stop (or has stopped).
    pub(crate) fn is_stopping(&self) -> bool {
        self.lane.has_flag(STOPPING)
    }

    /// The live child named `name`, anonymous or not.
    pub(crate) fn child(&self, name: &str) -> Option<AnyActorRef> {
        let children = self.children();
        match self.system().anonymous_uid(name) {
            Some(uid) => children
                .by_uid(uid)
                .filter(|child| child.path().name() == name)
                // A generated name that does not encode the uid (a test kit counts
                // its own) is in the name index.
                .or_else(|| children.named(name)),
            None => children.named(name),
        }
        .cloned()
    }

    pub(crate) fn children(&self) -> MutexGuard<'_, Children> {
        // The critical sections run no user code, so a poisoned lock holds
        // consistent data.
        self.children
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}
