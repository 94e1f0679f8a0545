//! An association (S38–S43): everything this system keeps about one peer. Its
//! session, which refs resolved while it lives are bound to; the queue to the
//! connection this system dialled; whether anything arrived lately (for the failure
//! detector); which of the peer's actors local actors watch, and which local actors
//! the peer watches.
//!
//! A session ends once: when the failure detector gives up on the peer (the address
//! is quarantined) or when the peer says its system stops. Then every watcher of
//! the peer's actors hears `Terminated`, asks waiting on them fail, what was queued
//! becomes dead letters, and refs bound to the session dead-letter what is sent
//! through them: they are resolved again, into a new session.
//!
//! Control frames have keys that start with `!` (a message key never does): `!hb`,
//! `!watch`, `!unwatch`, `!ended`, `!leaving`, and `!refused`, whose payload is
//! `Refusal::to_wire` (a tag, then a state's name or the `WireProblem` that kept a
//! request from its recipient). The outbound queue holds 1,024 messages; a full one
//! is `NotSent::Full`, a dead letter `OutboundFull` (`offer` waits for room instead).
//! The link's own frames queue in order with the messages but outside their bound,
//! in 4,096 places of their own; a link that falls that far behind on them is
//! given up (quarantined) rather than left without a watch or an end.
//! `end(why)` ends the session once: watchers hear `Terminated`, the peer's watches
//! (tasks waiting on `AnyActorRef::ended`) stop, and every task of the association
//! waits on the session's end and stops. A remote ref reaches its association through
//! `AnyCell::outbox`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::sync::{Notify, mpsc, watch};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::actor::SystemShared;
use crate::actor::{Address, AnyActorRef};
use crate::ground::events::DeadLetterReason;
use crate::mailbox::SystemMessage;
use crate::net::remote::link::LinkShaper;
use crate::net::remote::transport::Transport;
use crate::net::wire::{FrameHeader, WireLimits};

/// The keys of the link's own frames. A message's wire key has no `!`, so these
/// never meet one.
pub(crate) mod control {
    /// Something arrived: nothing else to say.
    pub(crate) const HEARTBEAT: &str = "!hb";
    /// Tell me when the recipient (path and uid of the header) ends.
    pub(crate) const WATCH: &str = "!watch";
    /// No longer.
    pub(crate) const UNWATCH: &str = "!unwatch";
    /// The actor (path and uid of the header) a watch named has ended.
    pub(crate) const ENDED: &str = "!ended";
    /// The sender's system is stopping: its actors have ended. Also the
    /// listener's verdict after a handshake that ends while its system leaves.
    pub(crate) const LEAVING: &str = "!leaving";
    /// The request whose answer goes to the promise (path and uid of the header)
    /// was refused; the payload says why (`Refusal::to_wire`).
    pub(crate) const REFUSED: &str = "!refused";
    /// After the handshake, from the listener: frames are welcome.
    pub(crate) const WELCOME: &str = "!welcome";
    /// After the handshake, from the listener: it has quarantined the dialler.
    pub(crate) const QUARANTINED: &str = "!quarantined";

    /// Whether `key` is one of the link's own.
    pub(crate) fn is_control(key: &str) -> bool {
        key.starts_with('!')
    }
}

/// The frame of a control message `key` about `path` and `uid`.
pub(crate) fn control_frame(key: &str, path: &str, uid: u64) -> Vec<u8> {
    control_frame_with(key, path, uid, &[])
}

/// The frame of a control message `key` about `path` and `uid`, carrying `payload`.
fn control_frame_with(key: &str, path: &str, uid: u64, payload: &[u8]) -> Vec<u8> {
    let header = FrameHeader {
        key,
        recipient: path,
        uid,
        reply_to: None,
    };
    // A control frame is a few dozen bytes, or a few hundred with a state's name
    // in a refusal: far under any limit.
    crate::net::wire::encode_frame(&header, payload, &WireLimits::DEFAULT).unwrap_or_default()
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionEnd {
    /// The failure detector gave up on the peer: its address is quarantined.
    Quarantined,
    /// The peer's system stopped.
    Left,
}

const LIVE: u8 = 0;
const QUARANTINED: u8 = 1;
const LEFT: u8 = 2;
/// Quarantined, and the quarantine lifted since: to the refs still bound to it, the
/// session has ended as if the peer had left (resolve them again).
const CLEARED: u8 = 3;

/// A session with a peer: live until it ends, once.
#[derive(Debug, Default)]
pub(crate) struct Session {
    end: AtomicU8,
    ended: Notify,
}

impl Session {
    /// How it ended, if it has. A quarantine lifted since reads as `Left`: the
    /// address is no longer quarantined, and what was bound to this session is
    /// resolved again (`SessionEnded`), not waited out (`Quarantined`).
    #[inline]
    pub(crate) fn ended(&self) -> Option<SessionEnd> {
        match self.end.load(Ordering::Acquire) {
            LIVE => None,
            QUARANTINED => Some(SessionEnd::Quarantined),
            _ => Some(SessionEnd::Left),
        }
    }

    /// The quarantine this session ended in is lifted (`clear_quarantine`).
    pub(crate) fn lift_quarantine(&self) {
        let _ =
            self.end
                .compare_exchange(QUARANTINED, CLEARED, Ordering::AcqRel, Ordering::Acquire);
    }

    /// End it; says whether this call did.
    fn end(&self, why: SessionEnd) -> bool {
        let code = match why {
            SessionEnd::Quarantined => QUARANTINED,
            SessionEnd::Left => LEFT,
        };
        let ended = self
            .end
            .compare_exchange(LIVE, code, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if ended {
            self.ended.notify_waiters();
        }
        ended
    }

    /// Wait until it ends.
    pub(crate) async fn wait_end(&self) {
        let notified = self.ended.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.ended().is_some() {
            return;
        }
        notified.await;
    }
}

/// A frame queued for the peer.
#[derive(Debug)]
pub(crate) struct Frame {
    /// The bytes, prefix and all.
    pub(crate) bytes: Vec<u8>,
    /// Whether it carries a message (else it is the link's own).
    pub(crate) message: bool,
    /// The uid of the ask's promise exported while the message was encoded (0:
    /// none): if the frame is given up, that ask fails at once.
    pub(crate) ask: u64,
    /// When it was queued, kept only while the link has faults (for their delay).
    pub(crate) queued: Option<Instant>,
    /// A message's place in the messages' bound, given back when the frame is
    /// written or given up; the link's own frames take none.
    pub(crate) room: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// Why a frame for a peer was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotSent {
    /// The outbound queue is full.
    Full,
    /// This system is terminating.
    Closed,
    /// The connection was given up before the frame was queued.
    Lost,
    /// The session has ended.
    Ended(SessionEnd),
}

impl NotSent {
    /// The reason of the dead letter of a message not sent to `peer`.
    pub(crate) fn reason(self, peer: &Address) -> DeadLetterReason {
        let peer = peer.clone();
        match self {
            Self::Full => DeadLetterReason::OutboundFull { peer },
            Self::Closed => DeadLetterReason::Unreachable { peer },
            Self::Lost => DeadLetterReason::ConnectionLost { peer },
            Self::Ended(SessionEnd::Quarantined) => DeadLetterReason::Quarantined { peer },
            Self::Ended(SessionEnd::Left) => DeadLetterReason::SessionEnded { peer },
        }
    }
}

/// How the connection this system dialled is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LinkStatus {
    /// Being dialled.
    Dialling,
    /// Handshaken: frames flow.
    Linked,
    /// It could not be made, or it broke; the next frame dials again.
    Down(String),
}

/// An actor by path and uid (0: whichever incarnation lives there).
type Target = (Box<str>, u64);

/// What this system keeps about one peer.
pub(crate) struct Association {
    peer: Address,
    session: Session,
    /// Set by every frame that arrives; read and cleared by the failure detector.
    heard: AtomicBool,
    faults: Arc<LinkShaper>,
    transport: Weak<Transport>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Whether the failure detector runs (from the first frame sent or received).
    detecting: bool,
    /// The connection this system dialled, while it is open or being opened.
    outbound: Option<Outbound>,
    /// Connections dialled so far, to tell the current one from the ones before.
    dialled: u64,
    /// Local watchers of the peer's actors: (watcher, the ref it watches).
    watching: HashMap<Target, Vec<(AnyActorRef, AnyActorRef)>>,
    /// The peer's watches of local actors: the task waiting for each one's end.
    watched: HashMap<Target, AbortHandle>,
}

/// The queue of the connection this system dialled.
pub(crate) struct Outbound {
    /// Which connection it is.
    pub(crate) id: u64,
    /// Messages and the link's own frames, in the order they were sent.
    pub(crate) queue: mpsc::Sender<Frame>,
    /// The messages' bound (`OUTBOUND_CAPACITY`): a message takes a place before it
    /// is queued; the queue itself has `CONTROL_CAPACITY` more for the link's own.
    pub(crate) room: Arc<tokio::sync::Semaphore>,
    pub(crate) status: watch::Receiver<LinkStatus>,
    pub(crate) writer: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Association {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Association")
            .field("peer", &self.peer)
            .field("session", &self.session.ended())
            .finish_non_exhaustive()
    }
}

impl Association {
    pub(crate) fn new(peer: Address, faults: Arc<LinkShaper>, transport: Weak<Transport>) -> Self {
        Self {
            peer,
            session: Session::default(),
            heard: AtomicBool::new(false),
            faults,
            transport,
            state: Mutex::new(State::default()),
        }
    }

    /// The peer.
    pub(crate) fn peer(&self) -> &Address {
        &self.peer
    }

    /// Its session.
    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    /// The faults of the direction toward the peer.
    pub(crate) fn faults(&self) -> &Arc<LinkShaper> {
        &self.faults
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Something arrived from the peer.
    #[inline]
    pub(crate) fn heard(&self) {
        self.heard.store(true, Ordering::Relaxed);
    }

    /// Whether anything arrived since the last call.
    pub(crate) fn take_heard(&self) -> bool {
        self.heard.swap(false, Ordering::Relaxed)
    }

    /// Whether it was ever used (a frame sent or received, a watch), or its session
    /// ended: such an association is kept by its address.
    pub(crate) fn has_been_used(&self) -> bool {
        self.session.ended().is_some() || self.state().detecting
    }

    /// This system's end of the link is in use: heartbeats and the failure
    /// detector start, once.
    pub(crate) fn in_use(self: &Arc<Self>) {
        let mut state = self.state();
        self.start_detecting(&mut state);
    }

    fn start_detecting(self: &Arc<Self>, state: &mut State) {
        if state.detecting {
            return;
        }
        state.detecting = true;
        if let Some(transport) = self.transport.upgrade() {
            transport.spawn(crate::net::remote::detector::watch_over(
                Arc::downgrade(self),
                transport.timing(),
            ));
        }
    }

    /// Queue a frame for the peer, dialling it first when no connection is open.
    pub(crate) fn send(
        self: &Arc<Self>,
        bytes: Vec<u8>,
        message: bool,
        ask: u64,
    ) -> Result<(), NotSent> {
        let (transport, frame) = self.frame(bytes, message, ask)?;
        let Some(mut frame) = frame else {
            return Ok(());
        };
        let mut state = self.state();
        self.start_detecting(&mut state);
        let outbound = self.outbound(&mut state, &transport);
        if message {
            let room = outbound.room.clone().try_acquire_owned();
            frame.room = Some(room.map_err(|_| NotSent::Full)?);
        }
        let queued = outbound.queue.try_send(frame);
        drop(state);
        match queued {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(NotSent::Lost),
            // Only the link's own frames can find the queue full: more than
            // `CONTROL_CAPACITY` of them wait. Rather than lose a watch or an end
            // silently, the peer is given up: watchers hear `Terminated`,
            // `PeerUnreachable` is published.
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!(peer = %self.peer, "the link's own frames fell too far behind; giving the peer up");
                transport.quarantine(&self.peer);
                Err(NotSent::Full)
            }
        }
    }

    /// Queue a message's frame for the peer once the outbound queue has room
    /// (`offer`, S47): local backpressure only.
    pub(crate) async fn offer(self: Arc<Self>, bytes: Vec<u8>, ask: u64) -> Result<(), NotSent> {
        let (transport, frame) = self.frame(bytes, true, ask)?;
        let Some(frame) = frame else {
            return Ok(());
        };
        let mut frame = frame;
        let (queue, room) = {
            let mut state = self.state();
            self.start_detecting(&mut state);
            let outbound = self.outbound(&mut state, &transport);
            (outbound.queue.clone(), outbound.room.clone())
        };
        let gone = || self.session.ended().map_or(NotSent::Lost, NotSent::Ended);
        tokio::select! {
            place = room.acquire_owned() => frame.room = Some(place.map_err(|_| gone())?),
            // The connection was given up while the offer waited.
            () = queue.closed() => return Err(gone()),
        }
        queue.send(frame).await.map_err(|_| gone())
    }

    /// The frame of `bytes` (a message's, or the link's own), and the transport
    /// to carry it; `None` for a message a fault of the link loses.
    fn frame(
        &self,
        bytes: Vec<u8>,
        message: bool,
        ask: u64,
    ) -> Result<(Arc<Transport>, Option<Frame>), NotSent> {
        if let Some(end) = self.session.ended() {
            return Err(NotSent::Ended(end));
        }
        let transport = self.transport.upgrade().ok_or(NotSent::Closed)?;
        if transport.is_closing() {
            return Err(NotSent::Closed);
        }
        let faulty = self.faults.active();
        if faulty && message && self.faults.loses() {
            // Lost on the way, as a network may: no dead letter says so.
            return Ok((transport, None));
        }
        let frame = Frame {
            bytes,
            message,
            ask,
            queued: faulty.then(Instant::now),
            room: None,
        };
        Ok((transport, Some(frame)))
    }

    /// The open outbound connection, or a new one, dialled behind the caller.
    fn outbound<'a>(
        self: &Arc<Self>,
        state: &'a mut State,
        transport: &Arc<Transport>,
    ) -> &'a mut Outbound {
        if state.outbound.as_ref().is_some_and(|outbound| {
            outbound.queue.is_closed() || matches!(*outbound.status.borrow(), LinkStatus::Down(_))
        }) {
            state.outbound = None;
        }
        let dialled = &mut state.dialled;
        state.outbound.get_or_insert_with(|| {
            *dialled += 1;
            transport.open(self, *dialled)
        })
    }

    /// Send one of the link's own frames; one that cannot go is dropped, with no
    /// dead letter (the failure detector speaks for a link that is down).
    pub(crate) fn send_control(self: &Arc<Self>, key: &str, path: &str, uid: u64) {
        let _ = self.send(control_frame(key, path, uid), false, 0);
    }

    /// Tell the peer that the request answered to its promise at `path` (`uid`)
    /// was refused, for the reason `payload` encodes.
    pub(crate) fn send_refusal(self: &Arc<Self>, path: &str, uid: u64, payload: &[u8]) {
        let frame = control_frame_with(control::REFUSED, path, uid, payload);
        let _ = self.send(frame, false, 0);
    }

    /// The connection `id` ended (or never came): the next frame dials again.
    pub(crate) fn forget_outbound(&self, id: u64) {
        let mut state = self.state();
        if state.outbound.as_ref().is_some_and(|o| o.id == id) {
            state.outbound = None;
        }
    }

    /// How the current outbound connection is doing, opening one if there is none.
    pub(crate) fn link_status(self: &Arc<Self>) -> Option<watch::Receiver<LinkStatus>> {
        if self.session.ended().is_some() {
            return None;
        }
        let transport = self.transport.upgrade()?;
        let mut state = self.state();
        self.start_detecting(&mut state);
        let status = self.outbound(&mut state, &transport).status.clone();
        Some(status)
    }

    /// This system is terminating: tell the peer, let the outbound connection write
    /// what it holds and close. Returns its writer, to wait for.
    ///
    /// A peer that dialled this system and was not dialled back yet (that happens
    /// with the first heartbeat) is dialled now, for the notice alone: it reads
    /// nothing on the connection it dialled, and would otherwise hear of the end
    /// only from its failure detector (S41).
    pub(crate) fn leave(self: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        let outbound = {
            let mut state = self.state();
            if state.outbound.is_none() && state.detecting && self.session.ended().is_none() {
                let transport = self.transport.upgrade()?;
                self.outbound(&mut state, &transport);
            }
            state.outbound.take()?
        };
        let notice = Frame {
            bytes: control_frame(control::LEAVING, "/", 0),
            message: false,
            ask: 0,
            queued: None,
            room: None,
        };
        let _ = outbound.queue.try_send(notice);
        Some(outbound.writer)
    }

    /// The transport, while the system has one.
    pub(crate) fn transport(&self) -> Option<Arc<Transport>> {
        self.transport.upgrade()
    }

    /// `watcher` watches `target`, the peer's actor at `path` of incarnation `uid`.
    pub(crate) fn watch(
        self: &Arc<Self>,
        watcher: &AnyActorRef,
        target: &AnyActorRef,
        path: &str,
        uid: u64,
    ) {
        if self.session.ended().is_some() {
            let _ = watcher.send_system(SystemMessage::Terminated(target.clone()));
            return;
        }
        let first = {
            let mut state = self.state();
            let watchers = state.watching.entry((path.into(), uid)).or_default();
            if watchers
                .iter()
                .any(|(w, t)| w == watcher && t.same_cell(target))
            {
                return;
            }
            watchers.push((watcher.clone(), target.clone()));
            watchers.len() == 1
        };
        if first {
            self.send_control(control::WATCH, path, uid);
        }
        // The session may have ended between the check and the entry: then the
        // entry was taken by the end, or is taken here.
        if self.session.ended().is_some() {
            self.tell_watchers_all();
        }
    }

    /// `watcher` no longer watches `target`.
    pub(crate) fn unwatch(
        self: &Arc<Self>,
        watcher: &AnyActorRef,
        target: &AnyActorRef,
        path: &str,
        uid: u64,
    ) {
        let last = {
            let mut state = self.state();
            let key: Target = (path.into(), uid);
            let Some(watchers) = state.watching.get_mut(&key) else {
                return;
            };
            watchers.retain(|(w, t)| !(w == watcher && t.same_cell(target)));
            let last = watchers.is_empty();
            if last {
                state.watching.remove(&key);
            }
            last
        };
        if last {
            self.send_control(control::UNWATCH, path, uid);
        }
    }

    /// The peer says its actor at `path` of incarnation `uid` ended.
    pub(crate) fn remote_ended(&self, path: &str, uid: u64) {
        let watchers = self.state().watching.remove(&(path.into(), uid));
        for (watcher, target) in watchers.into_iter().flatten() {
            let _ = watcher.send_system(SystemMessage::Terminated(target));
        }
    }

    /// The peer watches the local actor at `path` of incarnation `uid`: tell it when
    /// that actor ends (at once if there is none).
    pub(crate) fn peer_watches(self: &Arc<Self>, system: &Arc<SystemShared>, path: &str, uid: u64) {
        let Some(transport) = self.transport.upgrade() else {
            return;
        };
        let target = match system.find_path(path, uid) {
            Ok(target) if !target.is_promise() => target,
            _ => {
                self.send_control(control::ENDED, path, uid);
                return;
            }
        };
        let mut state = self.state();
        let key: Target = (path.into(), uid);
        if state
            .watched
            .get(&key)
            .is_some_and(|task| !task.is_finished())
        {
            return;
        }
        let association = Arc::downgrade(self);
        let (path, watched) = (path.to_owned(), key.clone());
        let task = transport.spawn(async move {
            target.ended().await;
            if let Some(association) = association.upgrade() {
                association.state().watched.remove(&watched);
                association.send_control(control::ENDED, &path, uid);
            }
        });
        state.watched.insert(key, task);
    }

    /// The peer no longer watches the local actor at `path` of incarnation `uid`.
    pub(crate) fn peer_unwatches(&self, path: &str, uid: u64) {
        if let Some(task) = self.state().watched.remove(&(path.into(), uid)) {
            task.abort();
        }
    }

    /// Every watcher of the peer's actors hears `Terminated`, once.
    fn tell_watchers_all(&self) {
        let watching = std::mem::take(&mut self.state().watching);
        for (watcher, target) in watching.into_values().flatten() {
            let _ = watcher.send_system(SystemMessage::Terminated(target));
        }
    }

    /// End the session for `why`: watchers hear `Terminated`, the peer's watches end,
    /// the outbound connection gives up what it holds (its writer, the readers of
    /// the peer's connections and the failure detector all wait on the session's
    /// end). Says whether this call ended it.
    pub(crate) fn end(&self, why: SessionEnd) -> bool {
        if !self.session.end(why) {
            return false;
        }
        self.tell_watchers_all();
        let mut state = self.state();
        for (_, task) in state.watched.drain() {
            task.abort();
        }
        state.outbound = None;
        true
    }
}
