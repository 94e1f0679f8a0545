//! `ActorRef` on the wire (S36): a ref serializes as its full URI, and deserializes,
//! inside a system's decode context, into a live ref: to the local actor when the
//! URI names this system (or, when that incarnation has stopped, a ref to it that
//! counts as stopped), or to a ref bound to the peer otherwise.
//!
//! `Serialize` writes the URI (the ref's `Display`); serializing a promise exports it
//! (held while its asker waits, since the request that held it left as bytes).
//! `Deserialize` reads the URI in the thread's decode context (`DECODING`, set by
//! `decoding_into` or `as_deserialization_context`: serde gives a `Deserialize` impl no
//! context of its own). This system's address gives the live local cell, downcast
//! through `AnyCell::into_any` (`resolve_decoded`); an incarnation that has stopped, or
//! a path where nothing lives, gives a task-less cell whose lane is closed and
//! stopping (`CellCore::gone`): tells through it are `RecipientStopped` letters and a
//! watch hears `Terminated` at once, while `resolve` still refuses. Another address
//! gives a remote ref bound to the association with that system (`NoLink` letters in a
//! system without remote settings). The decode context also carries the recipient a
//! frame is delivered to, for refs to a peer's promise (see `mailbox::remote`).

use std::cell::RefCell;
use std::sync::{Arc, Weak};

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::actor::context::ActorContext;
use crate::actor::lanes::UserLane;
use crate::actor::reply::ReplyTo;
use crate::actor::{ActorPath, ActorRef, Address, AnyActorRef, AnyCell, CellCore, LocalCell};
use crate::actor::{ActorSystem, SystemShared};
use crate::ground::message::{Message, ReplySlot};
use crate::net::remote::lane::{PROMISES, RemoteSlot};
use crate::net::wire::{RemoteProtocol, WireProblem};

std::thread_local! {
    /// What refs decode into on this thread, while a decode is under way.
    static DECODING: RefCell<Option<Decoding>> = const { RefCell::new(None) };
    /// The uid of the last promise exported on this thread while `noting_promise`
    /// runs (0: none).
    static EXPORTED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// What refs decode into: a system, and the actor a frame was delivered to, if any.
enum Decoding {
    /// A frame's message, delivered to this actor: refs decode into its system.
    /// (One handle, where a system alone would be one too: a delivery costs what it
    /// did before the recipient was kept.)
    Delivered(AnyActorRef),
    /// Not a delivery (a dead letter's copy, a program's own payload): refs decode
    /// into this system.
    Detached(Arc<SystemShared>),
}

impl Decoding {
    fn system(&self) -> &Arc<SystemShared> {
        match self {
            Self::Delivered(recipient) => recipient.system(),
            Self::Detached(system) => system,
        }
    }
}

/// Run `encode`, and say which ask's promise it exported, if any (0: none): the
/// frame it becomes carries that ask, to fail it at once if the link gives the
/// frame up.
pub(crate) fn noting_promise<R>(encode: impl FnOnce() -> R) -> (R, u64) {
    let before = EXPORTED.with(|uid| uid.replace(0));
    let result = encode();
    let exported = EXPORTED.with(|uid| uid.replace(before));
    (result, exported)
}

/// Run `decode` with `system` as the decode context of this thread, then restore
/// the one before (contexts nest). `delivered_to` is the actor (of `system`) a
/// frame's message is delivered to: a ref to a peer's promise decoded from it tells
/// the peer if it is dropped unused (see `RemoteSlot`); `None` decodes refs that
/// never do (a dead letter's copy, a program's own payload).
pub(crate) fn decoding_into<R>(
    system: &Arc<SystemShared>,
    delivered_to: Option<&AnyActorRef>,
    decode: impl FnOnce() -> R,
) -> R {
    let context = match delivered_to {
        Some(recipient) => Decoding::Delivered(recipient.clone()),
        None => Decoding::Detached(system.clone()),
    };
    let before = DECODING.with(|decoding| decoding.replace(Some(context)));
    let result = decode();
    DECODING.with(|context| *context.borrow_mut() = before);
    result
}

impl ActorSystem {
    /// Run `decode` with this system as the context that refs decode into: an
    /// `ActorRef` deserialized inside it becomes a live ref of this system (local,
    /// or bound to the peer its URI names). `deliver_frame` decodes in this context
    /// by itself; this is for a program that decodes payloads of its own.
    pub fn as_deserialization_context<R>(&self, decode: impl FnOnce() -> R) -> R {
        decoding_into(self.shared(), None, decode)
    }
}

/// Why [`ActorSystem::resolve`] gave no ref.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot resolve {uri:?}: {reason}")]
pub struct ResolveError {
    /// The URI.
    pub uri: String,
    /// What is wrong with it.
    pub reason: String,
}

impl<P: Message> ActorContext<P> {
    /// The ref `uri` names, of protocol `P`, as [`ActorSystem::resolve`] gives it:
    /// another system's actor as an ordinary typed ref (nothing is dialled until
    /// the first message), or a local one.
    ///
    /// # Errors
    ///
    /// [`ResolveError`] for a URI that is not one, or a
    /// local actor that is not there or does not take `P`.
    pub fn resolve<Q: RemoteProtocol>(&self, uri: &str) -> Result<ActorRef<Q>, ResolveError> {
        self.system().resolve(uri)
    }
}

impl ActorSystem {
    /// The ref `uri` names (`tapio://system@host:port/user/name`, optionally with
    /// `#uid`), of protocol `P`: an ordinary typed ref. A URI of this system gives
    /// the live local actor; another system's gives a ref bound to that peer.
    /// Nothing is dialled: the first message sent through the ref creates the link.
    /// Only protocols whose messages are all registered for the wire resolve (S35).
    ///
    /// A message adapter or an ask's promise is no child anyone can walk to: its URI
    /// resolves on a peer only once its ref has crossed to that peer inside a
    /// message, and never on its own system (use the ref itself there).
    ///
    /// A ref that arrives inside a message is decoded more leniently than `resolve`:
    /// one naming an incarnation of this system that has stopped decodes as a ref
    /// to that stopped actor (what is told through it is a dead letter,
    /// `RecipientStopped`, and a watch hears `Terminated` at once), as a message
    /// sent locally can carry one.
    ///
    /// # Errors
    ///
    /// [`ResolveError`] for a URI that is not one, or that names a local actor
    /// that is not there or does not take `P`.
    pub fn resolve<P: RemoteProtocol>(&self, uri: &str) -> Result<ActorRef<P>, ResolveError> {
        self.shared()
            .resolve_uri::<P>(uri)
            .map_err(|reason| ResolveError {
                uri: uri.to_owned(),
                reason,
            })
    }
}

impl<P: RemoteProtocol> Serialize for ActorRef<P> {
    /// The full URI, `tapio://system@host:port/user/path#uid`. An ask's promise is
    /// exported under `/system/promises` so the answer can find it.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if crate::net::remote::spawn::refuse_ref_in_args() {
            return Err(serde::ser::Error::custom(
                "an ActorRef cannot be in spawn arguments",
            ));
        }
        serializer.serialize_str(&self.wire_uri())
    }
}

impl<P: Message> ActorRef<P> {
    /// The full URI, as it crosses a link; an ask's promise is exported under
    /// `/system/promises` (while its asker waits) so the answer can find it.
    pub(crate) fn wire_uri(&self) -> String {
        let core = self.core();
        if core.lane().is_promise() || core.is_adapter() {
            // Neither is a child anyone can walk to: an answer (or a message for
            // the adapter) from a peer finds it by uid.
            core.system().export_ref(core.uid(), self.cell());
            if core.lane().is_promise() {
                EXPORTED.with(|uid| uid.set(core.uid()));
            }
        } else if core.lane().is_remote()
            && let Some(outbox) = self.local_cell().and_then(|cell| cell.user.outbox())
        {
            outbox.mark_used();
        }
        self.to_string()
    }
}

impl<'de, P: RemoteProtocol> Deserialize<'de> for ActorRef<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if crate::net::remote::spawn::probe::noted_ref() {
            // A factory's arguments type is being checked: this is what it looks for.
            return Err(D::Error::custom("an ActorRef"));
        }
        let uri = String::deserialize(deserializer)?;
        let system = decode_context().ok_or_else(|| {
            D::Error::custom(
                "an ActorRef decodes only inside a system's decode context: decode in `system.as_deserialization_context(|| ..)`",
            )
        })?;
        system.resolve_decoded::<P>(&uri).map_err(D::Error::custom)
    }
}

/// A request's reply-to crosses the wire as the URI of its ref (or nothing when
/// the request was told), and comes back as a live ref in the decode context.
impl<T: Message> ReplySlot for ReplyTo<T> {
    fn to_wire(&self) -> Option<String> {
        self.target().map(ActorRef::wire_uri)
    }

    fn from_wire(reply_to: Option<&str>) -> Self {
        reply_to
            .and_then(resolve_in_context::<T>)
            .map_or_else(Self::nobody, Self::to)
    }

    fn refuse(self, state: &'static str) {
        self.refuse_unhandled(state);
    }

    fn refuse_dropped(self, why: crate::ground::message::Dropped) {
        use crate::actor::promise::Refusal;
        use crate::ground::message::Dropped;
        if let Some(target) = self.target() {
            target.refuse_answer(match why {
                Dropped::PushedOut => Refusal::PushedOut,
                Dropped::HolderStopped => Refusal::TargetTerminated,
            });
        }
    }
}

/// The live ref `uri` names, in the current decode context; `None` outside one or
/// for a URI that names no live actor of protocol `P`.
fn resolve_in_context<P: Message>(uri: &str) -> Option<ActorRef<P>> {
    let system = decode_context()?;
    // A request's reply ref from its frame's header: dropped unused (its handler
    // failed, say), it reads the state of the actor the request was delivered to.
    system.resolve_keeping::<P>(uri, true).ok()
}

/// The system refs decode into on this thread, if any.
fn decode_context() -> Option<Arc<SystemShared>> {
    DECODING.with(|context| {
        context
            .borrow()
            .as_ref()
            .map(|context| context.system().clone())
    })
}

/// Whether a decode is under way on this thread: a ref dropped now goes with a
/// frame being delivered (or refused, which says why itself).
pub(crate) fn is_decoding() -> bool {
    DECODING.with(|context| {
        context
            .try_borrow()
            .map_or(true, |context| context.is_some())
    })
}

/// The actor the frame being decoded on this thread was delivered to: its uid, and
/// for `handle` (a ref to a peer's promise) a handle to it when it is an actor (not
/// a promise or an adapter), whose state a dropped ref reads (see `RemoteSlot`).
fn delivered_to(handle: bool) -> Option<(u64, Option<Weak<dyn AnyCell>>)> {
    DECODING.with(|context| match context.borrow().as_ref()? {
        Decoding::Delivered(recipient) => {
            let is_actor = recipient.local().is_some_and(|core| core.lane().is_actor());
            let kept = (handle && is_actor).then(|| recipient.downgrade());
            Some((recipient.uid(), kept))
        }
        Decoding::Detached(_) => None,
    })
}

/// A URI taken apart: the address, the names of the path, the uid.
struct Uri<'a> {
    address: Address,
    path: &'a str,
    uid: u64,
}

/// The path `names` (`/user/a/b`) below the root of `address`, each name checked as
/// a segment of a URI.
fn named_path(address: Address, names: &str) -> Result<ActorPath, String> {
    Ok(checked_names(names)?.fold(ActorPath::root(address), |path, name| path.child(name)))
}

/// The names of the path `names` (`/user/a/b`), once each is checked as a segment
/// of a URI.
fn checked_names(names: &str) -> Result<std::str::Split<'_, char>, String> {
    let names = names
        .strip_prefix('/')
        .ok_or_else(|| "the path must start with `/`".to_owned())?;
    for name in names.split('/') {
        crate::actor::validate_segment(name)
            .map_err(|refused| format!("the path holds an {refused}"))?;
    }
    Ok(names.split('/'))
}

/// Whether `uri`, a request's reply-to from a frame's header, names an actor:
/// an actor URI whose path is made of valid names. A peer that writes anything
/// else has sent a header this system cannot read (S37).
pub(crate) fn check_reply_to(uri: &str) -> Result<(), WireProblem> {
    let unreadable =
        |why: String| WireProblem::UnreadableHeader(format!("its reply-to is unusable: {why}"));
    let parsed = parse_uri(uri).map_err(unreadable)?;
    // Checked, not built: the reply ref itself is resolved when the request is.
    checked_names(parsed.path)
        .map(drop)
        .map_err(|refused| unreadable(format!("{uri:?}: {refused}")))
}

fn parse_uri(uri: &str) -> Result<Uri<'_>, String> {
    let wrong =
        || format!("{uri:?} is not an actor URI (`tapio://system@host:port/user/name#uid`)");
    let rest = uri.strip_prefix("tapio://").ok_or_else(wrong)?;
    let (authority, rest) = rest.split_at(rest.find('/').ok_or_else(wrong)?);
    // Without `#uid`, whichever incarnation lives at the path.
    let (path, uid) = match rest.rsplit_once('#') {
        Some((path, uid)) => (path, uid.parse::<u64>().map_err(|_| wrong())?),
        None => (rest, 0),
    };
    let address = Address::parse_authority(authority).ok_or_else(wrong)?;
    Ok(Uri { address, path, uid })
}

impl SystemShared {
    /// Tell the system of the promise `reply_to` (a URI a peer wrote) that its
    /// request was refused here for `refusal`. A URI that does not parse, or names
    /// this system, or a system without links, gets nothing: its ask ends as it
    /// would have.
    pub(crate) fn refuse_remote_ask(
        self: &Arc<Self>,
        reply_to: &str,
        refusal: crate::actor::promise::Refusal,
    ) {
        let (Ok(uri), Some(transport), Some(payload)) =
            (parse_uri(reply_to), self.transport(), refusal.to_wire())
        else {
            return;
        };
        if &uri.address == self.address() {
            return;
        }
        transport
            .association(&uri.address)
            .send_refusal(uri.path, uri.uid, &payload);
    }

    /// The ref a URI inside a payload names, of protocol `P`: as `resolve_uri`,
    /// except that a ref to an actor of this system that is no longer there (the
    /// incarnation it names has stopped, or nothing lives at its path) decodes as a
    /// ref to that stopped incarnation, as a local message could carry one: what is
    /// told to it is a dead letter (`RecipientStopped`), and watching it reports
    /// `Terminated` at once (S36).
    pub(crate) fn resolve_decoded<P: Message>(
        self: &Arc<Self>,
        uri: &str,
    ) -> Result<ActorRef<P>, String> {
        let parsed = parse_uri(uri)?;
        if &parsed.address != self.address() {
            // A request's reply ref in its payload (`ask_with`): dropped unused, it
            // reads the state of the actor the request was delivered to.
            return self.resolve_keeping(uri, true);
        }
        match self.find_path(parsed.path, parsed.uid) {
            Err(WireProblem::NoRecipient | WireProblem::StaleIncarnation { .. })
                if parsed.uid != 0 =>
            {
                let path = named_path(parsed.address, parsed.path)
                    .map_err(|refused| format!("{uri}: {refused}"))?;
                Ok(ActorRef::local(Arc::new(LocalCell {
                    core: CellCore::gone(path, parsed.uid, self.clone()),
                    user: UserLane::actor(crate::mailbox::MailboxConfig::unbounded()),
                })))
            }
            _ => self.resolve_uri(uri),
        }
    }

    /// The live ref a URI names, of protocol `P`.
    pub(crate) fn resolve_uri<P: Message>(
        self: &Arc<Self>,
        uri: &str,
    ) -> Result<ActorRef<P>, String> {
        self.resolve_keeping(uri, false)
    }

    /// The live ref a URI names, of protocol `P`; a ref to a peer's promise decoded
    /// from a delivered frame (a request's reply ref, in its payload or its header)
    /// keeps a handle to the actor it was delivered to when `keep_recipient`.
    fn resolve_keeping<P: Message>(
        self: &Arc<Self>,
        uri: &str,
        keep_recipient: bool,
    ) -> Result<ActorRef<P>, String> {
        let parsed = parse_uri(uri)?;
        if &parsed.address == self.address() {
            let found = self
                .find_path(parsed.path, parsed.uid)
                .map_err(|problem| format!("{uri}: {problem}"))?;
            return found.typed::<P>().ok_or_else(|| {
                format!(
                    "{uri} does not take `{}`: the ref's protocol differs from the actor's",
                    std::any::type_name::<P>()
                )
            });
        }
        let path = named_path(parsed.address.clone(), parsed.path)
            .map_err(|refused| format!("{uri}: {refused}"))?;
        // Bound to the association's current session; nothing is dialled.
        let association = self
            .transport()
            .map(|transport| transport.association(&parsed.address));
        let delivered = delivered_to(keep_recipient && parsed.path.starts_with(PROMISES));
        let cell = Arc::new(LocalCell {
            core: CellCore::remote(path, parsed.uid, self.clone()),
            user: UserLane::remote(Arc::new(RemoteSlot {
                peer: parsed.address,
                path: parsed.path.to_owned(),
                uid: parsed.uid,
                system: Arc::downgrade(self),
                association,
                // Armed only when decoded from a frame delivered to an actor here.
                used: std::sync::atomic::AtomicBool::new(delivered.is_none()),
                delivered_to: delivered.as_ref().map_or(0, |(uid, _)| *uid),
                recipient: delivered.and_then(|(_, recipient)| recipient),
            })),
        });
        Ok(ActorRef::local(cell))
    }

    /// The live actor at `path` (such as `/user/a/b`) of incarnation `uid` (0: any):
    /// from the route cache when it holds that actor alive, else found by walking
    /// the tree from the guardian (and cached).
    pub(crate) fn find_path(&self, path: &str, uid: u64) -> Result<AnyActorRef, WireProblem> {
        if let Some(found) = self.cached_route(path.as_bytes())
            && (uid == 0 || found.uid() == uid)
        {
            return Ok(found);
        }
        let found = self.walk_path(path, uid)?;
        if !found.is_promise() {
            self.cache_route(path, &found);
        }
        Ok(found)
    }

    /// The actor at `path`, found by walking the tree from the guardian.
    fn walk_path(&self, path: &str, uid: u64) -> Result<AnyActorRef, WireProblem> {
        let invalid = || WireProblem::InvalidPath(path.to_owned());
        let names = path.strip_prefix('/').ok_or_else(invalid)?;
        let mut names = names.split('/');
        let guardian = names.next().ok_or_else(invalid)?;
        let mut current = match guardian {
            "user" | "system" => self
                .guardian_named(guardian)
                .ok_or(WireProblem::NoRecipient)?,
            _ => return Err(invalid()),
        };
        let mut promises = false;
        for name in names {
            if promises {
                let promise_uid = name.parse::<u64>().map_err(|_| invalid())?;
                current = self
                    .exported_ref(promise_uid)
                    .ok_or(WireProblem::NoRecipient)?;
                promises = false;
                continue;
            }
            if guardian == "system" && name == "promises" && current.path().depth() == 1 {
                promises = true;
                continue;
            }
            if let Some(adapter) = name.strip_prefix("$adapter-") {
                // A message adapter of `current`, exported when its ref was written.
                let uid = adapter.parse::<u64>().map_err(|_| invalid())?;
                let owner = current;
                current = self
                    .exported_ref(uid)
                    .filter(|found| found.owner().is_some_and(|o| o == owner))
                    .ok_or(WireProblem::NoRecipient)?;
                continue;
            }
            // A generated name (`$c`, an anonymous actor's) is a valid name but for
            // its `$`, which only the runtime gives: the child holds it.
            crate::actor::validate_name(name.strip_prefix('$').unwrap_or(name))
                .map_err(|_| invalid())?;
            let core = current.local().ok_or(WireProblem::NoRecipient)?;
            current = core.child(name).ok_or(WireProblem::NoRecipient)?;
        }
        if promises {
            return Err(WireProblem::NoRecipient);
        }
        if uid != 0 && current.uid() != uid {
            return Err(WireProblem::StaleIncarnation {
                addressed: uid,
                current: current.uid(),
            });
        }
        if current.is_stopping() && !current.is_promise() {
            return Err(WireProblem::RecipientStopped);
        }
        Ok(current)
    }
}

/// The actors frames were delivered to lately, by path: a frame's recipient is
/// found with one lookup rather than a walk down the tree. An entry is used only
/// while its actor has not begun to stop; the cache is emptied when it grows past
/// its bound, and when the system terminates (its refs hold the system).
#[derive(Default)]
pub(crate) struct Routes {
    /// Only paths of live actors are inserted, never a peer's string as it came.
    by_path: rustc_hash::FxHashMap<Box<[u8]>, AnyActorRef>,
}

/// The most routes kept.
const ROUTES: usize = 4096;

impl Routes {
    /// The live actor cached for the path whose bytes are `path` (only text of live
    /// actors' paths is inserted, so a peer's bytes need no UTF-8 check to be looked
    /// up).
    pub(crate) fn get(&mut self, path: &[u8]) -> Option<AnyActorRef> {
        let found = self.by_path.get(path)?;
        if found.is_stopping() {
            self.by_path.remove(path);
            return None;
        }
        Some(found.clone())
    }

    /// Cache `actor` for `path`.
    pub(crate) fn insert(&mut self, path: &str, actor: &AnyActorRef) {
        if self.by_path.len() >= ROUTES {
            self.by_path.clear();
        }
        self.by_path.insert(path.as_bytes().into(), actor.clone());
    }
}

/// The promises whose refs were serialized, by uid, held while their askers wait:
/// the request that carried the ref is gone (it crossed the link as bytes), so
/// nothing else keeps a promise alive for the answer that comes back. Message
/// adapters whose refs were serialized too, held while their owners live: an
/// adapter is not a child, so a frame finds it here.
#[derive(Default)]
pub(crate) struct Exported {
    promises: std::collections::HashMap<u64, Arc<dyn AnyCell>>,
    /// How many entries there were after the last sweep.
    swept_at: usize,
    /// The uids of the last `ANSWERED` promises a frame answered: a later frame
    /// for one of them is a second answer (`AlreadyAnswered`), not a late one.
    answered: std::collections::VecDeque<u64>,
}

/// The most answered promises remembered.
const ANSWERED: usize = 1024;

impl Exported {
    /// Hold `promise` under `uid`; now and then let go of the promises nobody
    /// waits on any more (answered, timed out, dropped).
    pub(crate) fn insert(&mut self, uid: u64, promise: Arc<dyn AnyCell>) {
        self.promises.insert(uid, promise);
        if self.promises.len() > 2 * self.swept_at.max(64) {
            self.promises.retain(|_, promise| still_wanted(&**promise));
            self.swept_at = self.promises.len();
        }
    }

    /// The promise exported under `uid`, while its asker waits.
    pub(crate) fn get(&mut self, uid: u64) -> Option<AnyActorRef> {
        let promise = self.promises.get(&uid)?;
        if !still_wanted(&**promise) {
            self.promises.remove(&uid);
            return None;
        }
        let found = AnyActorRef::from_cell(promise.clone());
        if found.is_promise() {
            if self.answered.len() >= ANSWERED {
                self.answered.pop_front();
            }
            self.answered.push_back(uid);
        }
        Some(found)
    }

    /// Whether a frame answered the promise `uid` lately.
    pub(crate) fn was_answered(&self, uid: u64) -> bool {
        self.answered.contains(&uid)
    }
}

/// Whether an exported ref is still worth holding: a promise while its asker waits,
/// an adapter while its owner lives.
fn still_wanted(cell: &dyn AnyCell) -> bool {
    match cell.owner() {
        Some(owner) => !owner.is_stopping(),
        None => cell.awaits_answer(),
    }
}
