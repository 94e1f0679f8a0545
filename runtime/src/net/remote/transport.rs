//! Links between systems over TCP: the accept loop, one association per peer (see
//! `association`), the handshake of a connection a peer dials, the frames read
//! from it, and leaving. The connection this system dials to a peer, for what it
//! sends, is `outbound`.
//!
//! Each system sends over the connection it dialled, and reads what the peer sends
//! on the connection the peer dialled: two systems that dial each other at once
//! end with one association each, and each direction keeps its order. A system
//! that was dialled dials back (its heartbeats need a way to the peer), so a linked
//! pair holds two TCP connections, one per direction.
//!
//! Every task of the links (the dialling writer, the readers, the detector, the watch
//! relays, the accept loop) is spawned on `Transport::runtime`, the runtime the system
//! was built in, so a tell from a thread no runtime drives still dials.
//!
//! # Accepting
//!
//! Each accepted connection is wrapped in TLS if set and handshaken, both within
//! `RemoteSettings::handshake_timeout` (kept in `Timing`), then answered with the
//! listener's verdict frame: `!welcome`, `!quarantined`, or `!leaving` once the system
//! has begun to leave. `admit` decides under the lock of the association table, which
//! `leave` takes to set `closing` and list the peers to tell, so a peer welcomed is
//! listed and one not listed hears it in its verdict. Then `read_frames`: every frame
//! marks the association `heard`; a frame must arrive whole within `unreachable_after`;
//! a frame over `max_frame` is a dead letter from its prefix and its bytes are read
//! through (`frames_in`, up to `SKIP_AT_MOST`, past which the connection ends);
//! `receive` hands `!`-keyed frames to the association and the rest to the wire.
//!
//! # Leaving, quarantine
//!
//! At termination `leave` sends `!leaving` to every peer in use (over a connection
//! dialled for it if this system had not dialled back yet), gives the writers a second
//! to flush, and then, if every notice went out, reads the connections peers dialled to
//! their end (counted by `reading`, for at most a second more), so what a peer wrote
//! before it heard is delivered or lettered here (S31). `close_listener` then stops the
//! accept loop: connections the OS accepted and the loop had not (the backlog) are
//! handshaken and answered `!leaving`, the socket is closed and the loop awaited, so the
//! port is free when `terminate` returns; handshakes under way (each holding a permit of
//! `handshaking` until its verdict is written) get `LEAVE_TIMEOUT` to end. A peer that
//! dials after that is refused and hears only through its detector.
//!
//! `quarantine` ends a peer's session; `clear_quarantine` drops the association and
//! marks its session cleared, which reads as left: refs still bound to it dead-letter
//! `SessionEnded` and must be resolved again. `reconnect` waits on the outbound
//! connection's `LinkStatus`. The faults injected per peer (`link`) live here too.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Handle;
use tokio::sync::{Semaphore, mpsc, oneshot, watch};
use tokio::task::AbortHandle;

use crate::actor::Address;
use crate::actor::SystemShared;
use crate::net::remote::association::{
    Association, LinkStatus, Outbound, SessionEnd, control, control_frame,
};
use crate::net::remote::detector::Timing;
use crate::net::remote::frames_in::{read_body, skip_body};
use crate::net::remote::handshake;
#[cfg(feature = "testkit")]
use crate::net::remote::link::LinkShaper;
use crate::net::remote::tls::{self, LinkStream, TlsSettings};
use crate::net::remote::{LinkError, PeerUnreachable};
use crate::net::wire::{WireLimits, WireProblem};

/// How long a terminating system waits for its notices to peers to be written.
pub(super) const LEAVE_TIMEOUT: Duration = Duration::from_secs(1);

/// The size of a connection's read and write buffers.
pub(super) const BUFFER: usize = 64 * 1024;

/// Past this many associations, making another first lets go of the ones nothing
/// refers to that never carried a frame.
const IDLE_SWEEP_AT: usize = 1024;

/// The frames queued for one peer's connection, at most this many.
pub(crate) const OUTBOUND_CAPACITY: usize = 1024;
/// Room for the link's own frames (watches, `!ended`, `!refused`, heartbeats) on
/// top of the messages' bound: they queue in order with the messages, and never
/// compete with them for room. A link that falls this far behind on its own frames
/// is given up (quarantined), not left half-informed.
pub(crate) const CONTROL_CAPACITY: usize = 4096;

/// The links of one system.
pub(crate) struct Transport {
    pub(super) me: Address,
    pub(super) secret: Vec<u8>,
    /// The TLS every link runs over, if any.
    pub(super) tls: Option<TlsSettings>,
    timing: Timing,
    pub(super) system: Weak<SystemShared>,
    /// The runtime the system was built in: every task of the links runs there,
    /// whichever thread sends the frame that dials (a tell is a plain call, made
    /// from any thread, a runtime's or not).
    runtime: Handle,
    associations: Mutex<HashMap<Address, Arc<Association>>>,
    /// The faults injected toward each peer; kept across its associations.
    #[cfg(feature = "testkit")]
    faults: Mutex<HashMap<Address, Arc<LinkShaper>>>,
    /// Every task of the links, stopped when the system terminates.
    tasks: Mutex<Vec<AbortHandle>>,
    /// Set when the system leaves: nothing more is sent, and a peer whose
    /// handshake ends from then on is told the system is leaving, not welcomed.
    /// Set under the lock of `associations` (see `admit`).
    closing: AtomicBool,
    /// The task that owns the listening socket, and what tells it to stop: awaited
    /// when the system terminates, so that the port is free once `terminate`
    /// returns.
    accepting: Mutex<Option<Accepting>>,
    /// One permit for each connection a peer may have in its handshake at once
    /// (`HANDSHAKE_PERMITS`); each is held until the listener's verdict is written.
    handshaking: Arc<Semaphore>,
    /// The connections in their handshake, by source: the budget a newcomer is
    /// admitted within, by evicting one of them if need be.
    pending: Mutex<PendingHandshakes>,
    /// Places for connections past the budget waiting for their first bytes.
    probation: Arc<Semaphore>,
    /// How many connections peers dialled are being read: a terminating system
    /// reads each until its peer closes it (see `leave`).
    reading: watch::Sender<usize>,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Transport {
    /// The transport of the system `system`, accepting links on `listener`, over
    /// `tls` if set, its tasks on `runtime`.
    pub(crate) fn start(
        system: &Arc<SystemShared>,
        runtime: Handle,
        listener: std::net::TcpListener,
        secret: Vec<u8>,
        tls: Option<TlsSettings>,
        timing: Timing,
    ) -> std::io::Result<Arc<Self>> {
        listener.set_nonblocking(true)?;
        let listener = {
            let _inside = runtime.enter();
            TcpListener::from_std(listener)?
        };
        let transport = Arc::new(Self {
            me: system.address().clone(),
            secret,
            tls,
            timing,
            system: Arc::downgrade(system),
            runtime,
            associations: Mutex::new(HashMap::new()),
            #[cfg(feature = "testkit")]
            faults: Mutex::new(HashMap::new()),
            tasks: Mutex::new(Vec::new()),
            closing: AtomicBool::new(false),
            accepting: Mutex::new(None),
            handshaking: Arc::new(Semaphore::new(HANDSHAKE_PERMITS)),
            pending: Mutex::new(PendingHandshakes::default()),
            probation: Arc::new(Semaphore::new(PROBATION)),
            reading: watch::Sender::new(0),
        });
        let (stop, stopped) = oneshot::channel();
        let task = transport.runtime.spawn(accept_loop(
            listener,
            Arc::downgrade(&transport),
            transport.handshaking.clone(),
            stopped,
        ));
        *locked(&transport.accepting) = Some(Accepting { stop, task });
        Ok(transport)
    }

    /// Run `task` as one of the links' tasks.
    pub(crate) fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) -> AbortHandle {
        let handle = self.runtime.spawn(task).abort_handle();
        self.keep(handle.clone());
        handle
    }

    fn keep(&self, task: AbortHandle) {
        let mut tasks = locked(&self.tasks);
        if tasks.len() >= 64 {
            tasks.retain(|task| !task.is_finished());
        }
        tasks.push(task);
    }

    /// How often associations heartbeat, and how long a silence gives a peer up.
    pub(crate) fn timing(&self) -> Timing {
        self.timing
    }

    /// Whether nothing more is sent: the system is terminating.
    pub(crate) fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
            || self
                .system
                .upgrade()
                .is_none_or(|system| system.is_terminating())
    }

    /// The association with `peer`, made (without dialling) if there is none.
    pub(crate) fn association(self: &Arc<Self>, peer: &Address) -> Arc<Association> {
        let mut associations = locked(&self.associations);
        self.association_in(&mut associations, peer)
    }

    /// The association with `peer` in `associations` (the table, locked), made if
    /// there is none.
    fn association_in(
        self: &Arc<Self>,
        associations: &mut HashMap<Address, Arc<Association>>,
        peer: &Address,
    ) -> Arc<Association> {
        if let Some(association) = associations.get(peer) {
            return association.clone();
        }
        if associations.len() >= IDLE_SWEEP_AT {
            // Refs decoded from peers' messages may name any address: an
            // association nothing refers to and that never carried a frame is let go.
            associations.retain(|_, association| {
                Arc::strong_count(association) > 1 || association.has_been_used()
            });
        }
        #[cfg(feature = "testkit")]
        let faults = locked(&self.faults).get(peer).cloned().unwrap_or_default();
        #[cfg(not(feature = "testkit"))]
        let faults = Arc::default();
        let association = Arc::new(Association::new(peer.clone(), faults, Arc::downgrade(self)));
        associations.insert(peer.clone(), association.clone());
        association
    }

    fn existing(&self, peer: &Address) -> Option<Arc<Association>> {
        locked(&self.associations).get(peer).cloned()
    }

    /// The faults injected into what this system sends to `peer`.
    #[cfg(feature = "testkit")]
    pub(crate) fn faults(&self, peer: &Address) -> Arc<LinkShaper> {
        // Kept by address too, so the association made after a quarantine is
        // cleared has the same faults.
        let current = self
            .existing(peer)
            .map(|association| association.faults().clone());
        locked(&self.faults)
            .entry(peer.clone())
            .or_insert_with(|| current.unwrap_or_default())
            .clone()
    }

    /// Open a connection to `association`'s peer: its queue now, the dial behind it.
    pub(crate) fn open(self: &Arc<Self>, association: &Arc<Association>, id: u64) -> Outbound {
        let (queue, frames) = mpsc::channel(OUTBOUND_CAPACITY + CONTROL_CAPACITY);
        let (status, watching) = watch::channel(LinkStatus::Dialling);
        let writer = self.runtime.spawn(crate::net::remote::outbound::link_out(
            association.clone(),
            id,
            frames,
            status,
            Arc::downgrade(self),
        ));
        self.keep(writer.abort_handle());
        Outbound {
            id,
            queue,
            room: Arc::new(tokio::sync::Semaphore::new(OUTBOUND_CAPACITY)),
            status: watching,
            writer,
        }
    }

    /// Give up on `peer`: quarantine its address (S42).
    pub(crate) fn quarantine(&self, peer: &Address) {
        let Some(association) = self.existing(peer) else {
            return;
        };
        if association.end(SessionEnd::Quarantined)
            && let Some(system) = self.system.upgrade()
        {
            system.events.publish(PeerUnreachable {
                peer: peer.clone(),
                quarantined: true,
            });
        }
    }

    /// What the listener answers `peer`, whose handshake on a connection it dialled
    /// has just checked out. Decided under the lock of the association table, which
    /// `leave` also takes to set `closing` and list the peers to tell: a peer
    /// welcomed here is in use before `leave` lists it (so it is told, over a
    /// connection dialled for it if need be), and one whose handshake ends after
    /// is told now, in the verdict (S41).
    fn admit(self: &Arc<Self>, peer: &Address) -> Admission<'_> {
        let mut associations = locked(&self.associations);
        if self.closing.load(Ordering::Acquire) {
            return Admission::Leaving;
        }
        let association = self.association_in(&mut associations, peer);
        if association.session().ended().is_some() {
            return Admission::Quarantined;
        }
        // Heartbeats start, and with them the connection back to the peer; what
        // it writes is read before this system leaves.
        association.in_use();
        Admission::Welcome(association, self.reading())
    }

    /// `peer` said its system stops: the session ends, and the next ref resolved to
    /// it begins a new one.
    pub(super) fn peer_left(&self, association: &Arc<Association>) {
        tracing::debug!(peer = %association.peer(), "the peer's system is stopping");
        association.end(SessionEnd::Left);
        let mut associations = locked(&self.associations);
        if associations
            .get(association.peer())
            .is_some_and(|current| Arc::ptr_eq(current, association))
        {
            associations.remove(association.peer());
        }
    }

    /// Whether `peer` is quarantined.
    pub(crate) fn is_quarantined(&self, peer: &Address) -> bool {
        self.existing(peer)
            .is_some_and(|a| a.session().ended() == Some(SessionEnd::Quarantined))
    }

    /// Lift the quarantine of `peer`; says whether it was quarantined.
    pub(crate) fn clear_quarantine(&self, peer: &Address) -> bool {
        let mut associations = locked(&self.associations);
        let quarantined = associations
            .get(peer)
            .is_some_and(|a| a.session().ended() == Some(SessionEnd::Quarantined));
        if quarantined && let Some(association) = associations.remove(peer) {
            // Refs still bound to it now say their session ended: resolve again.
            association.session().lift_quarantine();
        }
        quarantined
    }

    /// Dial `peer` now and wait until the link is up (S43).
    pub(crate) async fn reconnect(self: &Arc<Self>, peer: &Address) -> Result<(), LinkError> {
        if self.is_quarantined(peer) {
            return Err(LinkError::Quarantined { peer: peer.clone() });
        }
        if self.is_closing() {
            return Err(LinkError::Terminating);
        }
        let association = self.association(peer);
        let Some(mut status) = association.link_status() else {
            return Err(LinkError::Quarantined { peer: peer.clone() });
        };
        // A handshake timeout of `Duration::MAX` is valid (a link may take
        // forever): the grace second saturates rather than overflowing.
        let settled = tokio::time::timeout(
            self.timing.handshake.saturating_add(Duration::from_secs(1)),
            status.wait_for(|status| *status != LinkStatus::Dialling),
        )
        .await;
        let failed = |reason: String| LinkError::Failed {
            peer: peer.clone(),
            reason,
        };
        match settled {
            Ok(Ok(status)) => match &*status {
                LinkStatus::Linked => Ok(()),
                LinkStatus::Down(reason) => Err(failed(reason.clone())),
                LinkStatus::Dialling => Err(failed("the dial did not settle".into())),
            },
            Ok(Err(_)) => Err(failed("the connection was given up".into())),
            Err(_) => Err(failed("the handshake timed out".into())),
        }
    }

    /// The system is terminating: tell every linked peer, and give the notices a
    /// moment to be written. Nothing is sent after this, and a peer whose handshake
    /// ends from now on is told in the listener's verdict (see `admit`).
    ///
    /// Then read what the peers wrote before they heard: a peer that hears this
    /// system leave writes the frame in hand, closes its connection and letters
    /// what it had not written; what it did write is read here to the end, and
    /// lettered here (the actors are gone), so that no message in flight is lost
    /// without a dead letter on one side (S31, S39). Each wait is bounded by
    /// `LEAVE_TIMEOUT`; a peer that could not be told is not waited for.
    pub(crate) async fn leave(&self) {
        let associations: Vec<_> = {
            let associations = locked(&self.associations);
            self.closing.store(true, Ordering::Release);
            associations.values().cloned().collect()
        };
        let writers: Vec<_> = associations
            .iter()
            .filter_map(|association| association.leave())
            .collect();
        let told = tokio::time::timeout(LEAVE_TIMEOUT, async {
            for writer in writers {
                let _ = writer.await;
            }
        })
        .await;
        if told.is_ok() {
            let mut reading = self.reading.subscribe();
            let _ = tokio::time::timeout(LEAVE_TIMEOUT, reading.wait_for(|n| *n == 0)).await;
        }
    }

    /// Count a connection a peer dialled as read until the guard drops.
    fn reading(&self) -> Reading<'_> {
        self.reading.send_modify(|n| *n += 1);
        Reading(&self.reading)
    }

    /// Close the listening socket, and wait (a second at most) until it is closed:
    /// a system started on the same port right after `terminate` returns binds it.
    ///
    /// The connections the OS had accepted and the accept loop had not are taken
    /// first, and every handshake under way is given `LEAVE_TIMEOUT` to end: each
    /// peer whose dial reached this system before the socket closed is told, in the
    /// verdict, that it is leaving, so that its watchers hear `Terminated` at once
    /// (S41). A peer that dials after the socket closed is refused, as by a system
    /// that is not there: its failure detector speaks for this one.
    pub(crate) async fn close_listener(&self) {
        let accepting = locked(&self.accepting).take();
        if let Some(Accepting { stop, mut task }) = accepting {
            let _ = stop.send(());
            if tokio::time::timeout(LISTENER_CLOSE, &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
        let all = u32::try_from(HANDSHAKE_PERMITS).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(LEAVE_TIMEOUT, self.handshaking.acquire_many(all)).await;
    }

    /// Stop every link: the system has terminated.
    pub(crate) fn stop(&self) {
        self.closing.store(true, Ordering::Release);
        let associations = std::mem::take(&mut *locked(&self.associations));
        drop(associations);
        for task in locked(&self.tasks).drain(..) {
            task.abort();
        }
    }
}

/// The accept loop's task, and what tells it to stop.
struct Accepting {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

/// What the listener answers a peer whose handshake checked out.
enum Admission<'a> {
    /// `!welcome`: frames are read from it, counted while they are.
    Welcome(Arc<Association>, Reading<'a>),
    /// `!quarantined`.
    Quarantined,
    /// `!leaving`: this system is terminating.
    Leaving,
}

/// A connection a peer dialled, counted while it is read.
struct Reading<'a>(&'a watch::Sender<usize>);

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The longest `terminate` waits for the listening socket to close.
const LISTENER_CLOSE: Duration = Duration::from_secs(1);

/// Connections still in their handshake are held to this many in all, and to
/// `HANDSHAKES_PER_SOURCE` from one IP address. A newcomer past either budget is not
/// refused: it takes the place of the oldest connection of the source holding the
/// most (one that has sent nothing first), so a crowd of idle sockets cannot lock
/// a genuine peer out, and it costs a bounded amount (each is held at most the
/// handshake timeout, `FIRST_BYTE_WITHIN` while it says nothing, and
/// `HANDSHAKE_LIMIT` bytes a message).
const HANDSHAKES_AT_ONCE: usize = 128;
/// The most connections one IP address may have in their handshake at once.
const HANDSHAKES_PER_SOURCE: usize = 32;
/// Permits for the handshakes in flight: room for the budget and for the evicted
/// ones still being dropped by the runtime.
const HANDSHAKE_PERMITS: usize = 2 * HANDSHAKES_AT_ONCE;
/// How long a connection may stay silent before its first byte: a dialer speaks at
/// once (its hello, or its TLS client hello), so one that says nothing for this
/// long is closed, whatever the handshake timeout.
const FIRST_BYTE_WITHIN: Duration = Duration::from_secs(1);
/// How long a silent connection is safe from eviction by another silent one: long
/// enough for a dialer's first bytes to arrive and be seen. A connection past the
/// budget waits as long on probation for them.
const SILENT_GRACE: Duration = Duration::from_millis(250);
/// The most connections on probation at once.
const PROBATION: usize = 1024;

/// The connections in their handshake, oldest first.
#[derive(Default)]
struct PendingHandshakes {
    next: u64,
    entries: std::collections::VecDeque<PendingHandshake>,
}

/// One connection in its handshake.
struct PendingHandshake {
    id: u64,
    source: Option<std::net::IpAddr>,
    /// When it was accepted.
    since: std::time::Instant,
    /// Set once it has sent its first byte.
    spoke: Arc<AtomicBool>,
    task: Option<AbortHandle>,
    /// Its permit among `Transport::handshaking`, given back with its place.
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl PendingHandshakes {
    /// Make room for a connection from `source` within both budgets, taken from
    /// `source` when it holds its share, else from the source holding the most
    /// when all places are taken: its oldest connection that has said nothing for
    /// `SILENT_GRACE`; failing that, when the newcomer has already spoken, its
    /// oldest silent one however young (a speaker beats a silent socket); failing
    /// that, nobody is evicted and the newcomer is refused (`Err`). `Ok` holds the
    /// task to end, if one was evicted.
    fn make_room(
        &mut self,
        source: Option<std::net::IpAddr>,
        spoken: bool,
        now: std::time::Instant,
    ) -> Result<Option<AbortHandle>, ()> {
        let from_source = self.entries.iter().filter(|e| e.source == source).count();
        let crowd = if from_source >= HANDSHAKES_PER_SOURCE {
            source
        } else if self.entries.len() >= HANDSHAKES_AT_ONCE {
            let mut counts: HashMap<Option<std::net::IpAddr>, usize> = HashMap::new();
            for entry in &self.entries {
                *counts.entry(entry.source).or_default() += 1;
            }
            match counts.into_iter().max_by_key(|(_, n)| *n) {
                Some((crowd, _)) => crowd,
                None => return Ok(None),
            }
        } else {
            return Ok(None);
        };
        let silent = |e: &PendingHandshake| e.source == crowd && !e.spoke.load(Ordering::Acquire);
        let at = self
            .entries
            .iter()
            .position(|e| silent(e) && now.duration_since(e.since) >= SILENT_GRACE)
            .or_else(|| {
                spoken
                    .then(|| self.entries.iter().position(silent))
                    .flatten()
            })
            .ok_or(())?;
        // Its permit goes back here, as it leaves the table.
        Ok(self.entries.remove(at).and_then(|evicted| evicted.task))
    }

    /// List a connection from `source`, which may have `spoken` already; returns
    /// its id and its "spoke" mark.
    fn add(
        &mut self,
        source: Option<std::net::IpAddr>,
        spoken: bool,
        now: std::time::Instant,
    ) -> (u64, Arc<AtomicBool>) {
        let id = self.next;
        self.next += 1;
        let spoke = Arc::new(AtomicBool::new(spoken));
        self.entries.push_back(PendingHandshake {
            id,
            source,
            since: now,
            spoke: spoke.clone(),
            task: None,
            permit: None,
        });
        (id, spoke)
    }

    /// The task handshaking connection `id`, and the permit it holds.
    fn started(&mut self, id: u64, task: AbortHandle, permit: tokio::sync::OwnedSemaphorePermit) {
        if let Some(entry) = self.entries.iter_mut().find(|e| e.id == id) {
            entry.task = Some(task);
            entry.permit = Some(permit);
        }
    }

    fn remove(&mut self, id: u64) {
        self.entries.retain(|e| e.id != id);
    }
}

/// Whether bytes are waiting on `stream`, looked at without waiting or reading.
fn has_spoken(stream: &TcpStream) -> bool {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut byte = [0_u8; 1];
    let mut buf = tokio::io::ReadBuf::new(&mut byte);
    matches!(stream.poll_peek(&mut cx, &mut buf), std::task::Poll::Ready(Ok(n)) if n > 0)
}

/// A connection's place among those in their handshake, given up when dropped
/// (its handshake ended, either way, or its task was ended).
struct PendingPlace {
    transport: Weak<Transport>,
    id: u64,
}

impl Drop for PendingPlace {
    fn drop(&mut self) {
        if let Some(transport) = self.transport.upgrade() {
            locked(&transport.pending).remove(self.id);
        }
    }
}

/// How long the accept loop pauses after the OS refuses an accept (out of file
/// descriptors, say), rather than spin.
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);

/// Accept links, each handshaken and then read in a task of its own. Told to stop
/// (the system is terminating), take the connections the OS has accepted on this
/// loop's behalf and not handed over yet, each handshaken like the others (and so
/// told the system is leaving), then close the listening socket.
async fn accept_loop(
    listener: TcpListener,
    transport: Weak<Transport>,
    handshaking: Arc<Semaphore>,
    mut stop: oneshot::Receiver<()>,
) {
    loop {
        let stream = tokio::select! {
            biased;
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "cannot accept a link; pausing");
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                    continue;
                }
            },
        };
        if !handshake_in_task(stream, &transport, &handshaking) {
            return;
        }
    }
    // The backlog, read with the socket's own calls: the reactor may not have
    // seen the latest connections yet.
    let Ok(listener) = listener.into_std() else {
        return;
    };
    while let Ok((stream, _)) = listener.accept() {
        let stream = stream
            .set_nonblocking(true)
            .and_then(|()| TcpStream::from_std(stream));
        let Ok(stream) = stream else {
            continue;
        };
        if !handshake_in_task(stream, &transport, &handshaking) {
            return;
        }
    }
    // The listening socket closes here.
}

/// Handshake `stream`, a connection a peer dialled, in a task of its own. Past the
/// budget, a connection that has not spoken yet waits on probation (at most
/// `PROBATION` of them, each at most `SILENT_GRACE`) for its first bytes, and is
/// admitted as a speaker if they come; otherwise it is closed. Says whether the
/// transport is still there.
fn handshake_in_task(
    stream: TcpStream,
    transport: &Weak<Transport>,
    handshaking: &Arc<Semaphore>,
) -> bool {
    let Some(links) = transport.upgrade() else {
        return false;
    };
    // A dialer's first bytes are usually there by the time its connection is
    // taken from the backlog: a newcomer that has spoken is preferred to a
    // silent connection.
    let spoken = has_spoken(&stream);
    let Err(stream) = admit_handshake(&links, transport, handshaking, stream, spoken) else {
        return true;
    };
    let Ok(probation) = links.probation.clone().try_acquire_owned() else {
        tracing::debug!(
            "the handshake budget is spent, and so is probation: a connection is refused"
        );
        return true;
    };
    let (transport, handshaking) = (transport.clone(), handshaking.clone());
    links.spawn(async move {
        let spoke = matches!(
            tokio::time::timeout(SILENT_GRACE, stream.readable()).await,
            Ok(Ok(()))
        );
        drop(probation);
        if spoke && let Some(links) = transport.upgrade() {
            let _ = admit_handshake(&links, &transport, &handshaking, stream, true);
        }
    });
    true
}

/// Give `stream` a place among the connections in their handshake (evicting a
/// silent one if the budget says so) and handshake it in a task of its own; the
/// stream back when there is no place for it.
fn admit_handshake(
    links: &Arc<Transport>,
    transport: &Weak<Transport>,
    handshaking: &Arc<Semaphore>,
    stream: TcpStream,
    spoken: bool,
) -> Result<(), TcpStream> {
    let source = stream.peer_addr().ok().map(|address| address.ip());
    let now = std::time::Instant::now();
    let (id, spoke) = {
        let mut pending = locked(&links.pending);
        match pending.make_room(source, spoken, now) {
            Ok(Some(evicted)) => {
                tracing::debug!(?source, "a silent connection made room for a newer one");
                evicted.abort();
            }
            Ok(None) => {}
            Err(()) => return Err(stream),
        }
        pending.add(source, spoken, now)
    };
    let place = PendingPlace {
        transport: transport.clone(),
        id,
    };
    let Ok(permit) = handshaking.clone().try_acquire_owned() else {
        tracing::warn!(
            ?source,
            "too many links in their handshake at once: one is refused"
        );
        drop((stream, place));
        return Ok(());
    };
    let transport = transport.clone();
    let task = links.spawn(async move {
        // A dialer speaks at once: one that says nothing soon gives its place up.
        match tokio::time::timeout(FIRST_BYTE_WITHIN, stream.readable()).await {
            Ok(Ok(())) => spoke.store(true, Ordering::Release),
            _ => return,
        }
        if let Err(error) = accept(stream, transport, place).await {
            tracing::debug!(%error, "link refused");
        }
    });
    // The permit is kept with the place, not in the task: a connection evicted
    // gives it back at once, not when the runtime gets to drop its task.
    locked(&links.pending).started(id, task, permit);
    Ok(())
}

/// Handshake a connection a peer dialled (holding its `place`, and with it a permit,
/// until the verdict is written), then
/// read what it sends.
async fn accept(
    stream: TcpStream,
    transport: Weak<Transport>,
    place: PendingPlace,
) -> Result<(), String> {
    let _ = stream.set_nodelay(true);
    let (secret, me, settings, patience) = {
        let links = transport.upgrade().ok_or("the system has terminated")?;
        let patience = links.timing.handshake;
        (
            links.secret.clone(),
            links.me.clone(),
            links.tls.clone(),
            patience,
        )
    };
    let (mut stream, peer) = tokio::time::timeout(patience, async {
        let (mut stream, binding) = tls::accepted(settings.as_ref(), stream)
            .await
            .map_err(|error| format!("TLS: {error}"))?;
        let peer = handshake::accept(&mut stream, &secret, &binding, &me)
            .await
            .map_err(|error| error.to_string())?;
        Ok::<_, String>((stream, peer))
    })
    .await
    .map_err(|_| "the handshake timed out".to_owned())??;
    let links = transport.upgrade().ok_or("the system has terminated")?;
    let (association, _reading) = match links.admit(&peer) {
        Admission::Welcome(association, reading) => (association, reading),
        Admission::Quarantined => {
            let _ = say_verdict(&mut stream, control::QUARANTINED).await;
            return Err(format!("{peer} is quarantined"));
        }
        Admission::Leaving => {
            // The peer's watchers of this system's actors hear `Terminated` now,
            // not at its failure detector's give-up (S41). The permit is held until
            // the verdict is out: `close_listener` waits for it.
            say_verdict(&mut stream, control::LEAVING).await?;
            return Err(format!("{peer} told this system is leaving"));
        }
    };
    let welcomed = say_verdict(&mut stream, control::WELCOME).await;
    drop(place);
    welcomed?;
    association.heard();
    let session_end = association.session().wait_end();
    tokio::select! {
        () = session_end => {}
        () = read_frames(stream, &association, &links) => {}
    }
    Ok(())
}

/// Write the listener's verdict `key` on `stream` (within `LEAVE_TIMEOUT`); a
/// verdict other than `!welcome` ends the connection, so it is shut after it.
async fn say_verdict(stream: &mut LinkStream, key: &str) -> Result<(), String> {
    tokio::time::timeout(LEAVE_TIMEOUT, async {
        stream.write_all(&control_frame(key, "/", 0)).await?;
        if key == control::WELCOME {
            stream.flush().await
        } else {
            stream.shutdown().await
        }
    })
    .await
    .map_err(|_| "the verdict could not be written in time".to_owned())?
    .map_err(|error| error.to_string())
}

/// Read frames from the peer of `association` and deliver them, until the
/// connection ends. A frame must arrive whole within `unreachable_after`, and so
/// must the next one begin (heartbeats come more often): a peer that stalls is cut
/// off. A frame that announces more than the system's limit is a dead letter, and
/// its bytes are read through, up to `SKIP_AT_MOST`: past that it ends the
/// connection.
async fn read_frames(stream: LinkStream, association: &Arc<Association>, links: &Arc<Transport>) {
    let patience = links.timing.unreachable_after;
    let peer = association.peer().clone();
    // Frames are read out of a buffer: many small frames cost one read.
    let mut stream = BufReader::with_capacity(BUFFER, stream);
    loop {
        let mut prefix = [0; 4];
        match tokio::time::timeout(patience, stream.read_exact(&mut prefix)).await {
            Ok(Ok(_)) => {}
            _ => return,
        }
        let Some(system) = links.system.upgrade() else {
            return;
        };
        let limits = system.wire_limits();
        let length = u32::from_be_bytes(prefix) as usize;
        if length > limits.max_frame {
            // Refused as a frame: a dead letter naming the peer. Its bytes are read
            // and dropped, so that the frames behind it still arrive and the
            // association stays up (S37); an announcement past what is worth
            // reading through ends the connection.
            let _ = crate::net::wire::deliver_frame(&system, &peer, &prefix);
            match tokio::time::timeout(patience, skip_body(&mut stream, length)).await {
                Ok(Ok(())) => {
                    association.heard();
                    continue;
                }
                _ => return,
            }
        }
        let frame = match tokio::time::timeout(patience, read_body(&mut stream, prefix)).await {
            Ok(Ok(frame)) => frame,
            Ok(Err(_)) => return,
            Err(_) => {
                tracing::debug!(%peer, "a frame did not arrive whole in time: the link is cut");
                return;
            }
        };
        association.heard();
        receive(&system, links, association, &frame, &limits);
    }
}

/// One frame from the peer of `association`: the link's own, or a message.
fn receive(
    system: &Arc<SystemShared>,
    links: &Arc<Transport>,
    association: &Arc<Association>,
    frame: &[u8],
    limits: &WireLimits,
) {
    let peer = association.peer();
    // A tell to an actor a frame found before goes without reading its header's
    // text (a control frame's key is never registered, so it is read whole).
    if crate::net::wire::deliver_to_known(system, peer, frame, limits).is_some() {
        return;
    }
    let (header, payload) = match crate::net::wire::decode_frame(frame, limits) {
        Ok(parts) => parts,
        Err(problem) => {
            crate::net::wire::refuse_undecodable(system, peer, &problem);
            return;
        }
    };
    if !control::is_control(header.key) {
        // Every problem is a dead letter naming the peer; the link goes on.
        let _ = crate::net::wire::deliver_parts(system, peer, &header, payload);
        return;
    }
    match header.key {
        control::HEARTBEAT => {}
        control::WATCH => association.peer_watches(system, header.recipient, header.uid),
        control::UNWATCH => association.peer_unwatches(header.recipient, header.uid),
        control::ENDED => association.remote_ended(header.recipient, header.uid),
        control::LEAVING => links.peer_left(association),
        control::REFUSED => refused_here(system, peer, &header, payload),
        key => crate::net::wire::refuse_undecodable(
            system,
            peer,
            &WireProblem::UnknownKey(key.to_owned()),
        ),
    }
}

/// A `!refused` frame from `peer`: the request an ask of this system sent was
/// refused there, so the ask fails at once. A refusal for a promise whose ask has
/// ended changes nothing; one that does not read is a dead letter naming the peer.
fn refused_here(
    system: &Arc<SystemShared>,
    peer: &Address,
    header: &crate::net::wire::FrameHeader<'_>,
    payload: &[u8],
) {
    let Some(refusal) = crate::actor::promise::Refusal::from_wire(payload) else {
        let problem = WireProblem::Undecodable {
            key: header.key.to_owned(),
            error: "not a refusal".to_owned(),
        };
        crate::net::wire::refuse_undecodable(system, peer, &problem);
        return;
    };
    if let Ok(promise) = system.find_path(header.recipient, header.uid)
        && promise.is_promise()
    {
        promise.request_refused(refusal);
    }
}

#[cfg(test)]
mod tests {
    use crate::ActorSystem;
    use crate::net::remote::RemoteSettings;
    use crate::net::remote::spawn::SpawnReply;

    // Refs to any number of addresses nobody talks to (decoded from a peer's
    // messages, say) do not make the association table grow without bound.
    #[tokio::test]
    async fn unused_associations_are_let_go() {
        let system = ActorSystem::builder("many")
            .remote(RemoteSettings::loopback())
            .build()
            .unwrap_or_else(|error| panic!("{error}"));
        let kept = system
            .resolve::<SpawnReply>("tapio://kept@127.0.0.1:1/user/a")
            .unwrap_or_else(|error| panic!("{error}"));
        for port in 2..3000 {
            let uri = format!("tapio://n{port}@127.0.0.1:{port}/user/a");
            drop(system.resolve::<SpawnReply>(&uri));
        }
        let transport = system.shared().transport().cloned();
        let count = transport.map_or(0, |t| super::locked(&t.associations).len());
        assert!(count <= super::IDLE_SWEEP_AT + 1, "{count} associations");
        // One a ref still refers to is kept.
        let again = system
            .resolve::<SpawnReply>("tapio://kept@127.0.0.1:1/user/a")
            .unwrap_or_else(|error| panic!("{error}"));
        let slot = |outbox: &std::sync::Arc<dyn crate::mailbox::Outbox>| {
            outbox
                .as_any()
                .downcast_ref::<crate::net::remote::lane::RemoteSlot>()
                .and_then(|slot| slot.association.clone())
        };
        let same = match (kept.erase().outbox(), again.erase().outbox()) {
            (Some(a), Some(b)) => match (slot(&a), slot(&b)) {
                (Some(a), Some(b)) => std::sync::Arc::ptr_eq(&a, &b),
                _ => false,
            },
            _ => false,
        };
        assert!(same);
        system.terminate().await;
    }
}
