//! The connection a system dials to a peer, for what it sends there: dial, TLS,
//! handshake and the listener's verdict, then the outbound queue written in
//! batches through the faults injected into the link; and what becomes of the
//! frames it could not write (dead letters naming the peer, and asks failed at
//! once).
//!
//! `link_out` dials (`connect`), wraps TLS, handshakes and reads the verdict
//! (`read_verdict`), then `write_frames` writes the queue in batches through the link's
//! faults: a partition holds frames, and the dial itself until it heals
//! (`LinkFaults::unpartitioned`), so no handshake passes for a sign of life; a delay
//! waits until the frame's queued time plus the delay. It races the peer closing and
//! the session's end.
//!
//! - The peer left (`SessionEnd::Left`): `write_frames` takes no more frames, finishes
//!   the one in hand, flushes and shuts the connection (at most a second, else it is cut
//!   and one letter says the buffer was lost).
//! - A frame a partition held when the session ended comes back as `Written::Unsent`
//!   and is lettered; a quarantine cuts the writer at once.
//! - A dial answered `!leaving` (`NoLink::Leaving`) ends the session as a `!leaving`
//!   frame does (`peer_left`: watchers hear `Terminated`, the queue is lettered
//!   `SessionEnded`).
//! - A dial that fails otherwise letters the queue `Unreachable`, a broken connection
//!   `ConnectionLost`, an ended session `Quarantined` or `SessionEnded` (`give_up`);
//!   each letter carries the message and the path it was for (`wire::frame_lost`
//!   decodes the frame again), and the connection forgets itself so the next frame dials
//!   again.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

use crate::actor::SystemShared;
use crate::actor::{ActorPath, Address};
use crate::ground::events::DeadLetterReason;
use crate::net::remote::association::{
    Association, Frame, LinkStatus, Session, SessionEnd, control,
};
use crate::net::remote::handshake;
use crate::net::remote::link::{LinkShaper, Verdict};
use crate::net::remote::tls::{self, LinkStream};
use crate::net::remote::transport::{BUFFER, LEAVE_TIMEOUT, Transport};
use crate::net::wire::WireLimits;

/// Why a dial made no link.
enum NoLink {
    /// The peer's listener answered the handshake with `!leaving`: its system is
    /// terminating.
    Leaving,
    /// The handshake found something this side can act on (another version of
    /// the link protocol, another system than the one dialled), in words.
    Refused(String),
    /// Anything else, in words.
    Failed(String),
}

impl From<String> for NoLink {
    fn from(error: String) -> Self {
        Self::Failed(error)
    }
}

/// Dial the peer of `association`, handshake, and wait for its verdict.
async fn connect(
    association: &Association,
    transport: &Weak<Transport>,
) -> Result<LinkStream, NoLink> {
    let peer = association.peer();
    let (host, port) = peer
        .host_port()
        .ok_or_else(|| "it has no host and port".to_owned())?;
    let stream = TcpStream::connect((host, port))
        .await
        .map_err(|error| error.to_string())?;
    let _ = stream.set_nodelay(true);
    let (secret, me, settings) = {
        let links = transport
            .upgrade()
            .ok_or_else(|| "the system has terminated".to_owned())?;
        (links.secret.clone(), links.me.clone(), links.tls.clone())
    };
    let (mut stream, binding) = tls::dialled(settings.as_ref(), stream, host)
        .await
        .map_err(|error| format!("TLS: {error}"))?;
    handshake::dial(&mut stream, &secret, &binding, &me, peer)
        .await
        .map_err(|error| match error {
            handshake::HandshakeError::VersionMismatch { .. }
            | handshake::HandshakeError::NotTheDialledPeer { .. } => {
                NoLink::Refused(error.to_string())
            }
            other => NoLink::Failed(other.to_string()),
        })?;
    match read_verdict(&mut stream).await?.as_str() {
        control::WELCOME => Ok(stream),
        control::LEAVING => Err(NoLink::Leaving),
        control::QUARANTINED => Err(NoLink::Failed(format!(
            "{peer} has quarantined this system: it must clear the quarantine first"
        ))),
        other => Err(NoLink::Failed(format!(
            "{peer} answered the handshake with {other:?}"
        ))),
    }
}

/// The listener's verdict after the handshake: the key of its one control frame.
async fn read_verdict<S: AsyncRead + Unpin>(stream: &mut S) -> Result<String, String> {
    let mut prefix = [0; 4];
    stream
        .read_exact(&mut prefix)
        .await
        .map_err(|_| "the peer closed the link after the handshake".to_owned())?;
    let length = u32::from_be_bytes(prefix) as usize;
    if length > handshake::HANDSHAKE_LIMIT {
        return Err("the peer's verdict is too long".into());
    }
    let mut frame = vec![0; 4 + length];
    frame[..4].copy_from_slice(&prefix);
    stream
        .read_exact(&mut frame[4..])
        .await
        .map_err(|_| "the peer closed the link after the handshake".to_owned())?;
    let (header, _) = crate::net::wire::decode_frame(&frame, &WireLimits::DEFAULT)
        .map_err(|problem| problem.to_string())?;
    Ok(header.key.to_owned())
}

/// The connection this system dials to the peer of `association`: dial, handshake,
/// then write what is queued, in order, through the faults injected into it. When
/// the peer cannot be reached, or the connection breaks, what is queued becomes
/// dead letters naming the peer, and the next frame dials again; when the session
/// ends, they name why.
pub(super) async fn link_out(
    association: Arc<Association>,
    id: u64,
    mut frames: mpsc::Receiver<Frame>,
    status: watch::Sender<LinkStatus>,
    transport: Weak<Transport>,
) {
    let peer = association.peer().clone();
    let patience = transport
        .upgrade()
        .map_or(Duration::ZERO, |transport| transport.timing().handshake);
    let dialled = tokio::select! {
        () = association.session().wait_end() => Err(NoLink::Failed("the session ended".to_owned())),
        connected = async {
            // A partition holds the dial too: not even a handshake gets through.
            association.faults().unpartitioned().await;
            tokio::time::timeout(patience, connect(&association, &transport)).await
        } => {
            connected.unwrap_or_else(|_| Err(NoLink::Failed("the handshake timed out".into())))
        }
    };
    let stream = match dialled {
        Ok(stream) => stream,
        Err(NoLink::Leaving) => {
            // Its system stops: the session ends as if the peer had sent
            // `!leaving` on a link (S41), and what was queued is lettered
            // `SessionEnded`.
            if let Some(transport) = transport.upgrade() {
                transport.peer_left(&association);
            }
            association.forget_outbound(id);
            status.send_replace(LinkStatus::Down("its system is stopping".into()));
            let reason = ended_reason(&association)
                .unwrap_or(DeadLetterReason::SessionEnded { peer: peer.clone() });
            give_up(frames, &transport, &peer, reason).await;
            return;
        }
        Err(NoLink::Failed(error)) => {
            tracing::debug!(%peer, %error, "cannot link");
            // Forgotten first: whoever hears `Down` and sends again dials anew.
            association.forget_outbound(id);
            status.send_replace(LinkStatus::Down(error));
            let reason = ended_reason(&association)
                .unwrap_or(DeadLetterReason::Unreachable { peer: peer.clone() });
            give_up(frames, &transport, &peer, reason).await;
            return;
        }
        Err(NoLink::Refused(why)) => {
            tracing::warn!(%peer, %why, "the link was refused");
            association.forget_outbound(id);
            status.send_replace(LinkStatus::Down(why.clone()));
            let reason = ended_reason(&association).unwrap_or(DeadLetterReason::LinkRefused {
                peer: peer.clone(),
                why,
            });
            give_up(frames, &transport, &peer, reason).await;
            return;
        }
    };
    status.send_replace(LinkStatus::Linked);
    let (mut from_peer, to_peer) = tokio::io::split(stream);
    // The peer writes nothing on this connection after its verdict: a read that
    // returns is its end.
    let peer_closed = async {
        let mut byte = [0; 1];
        let _ = from_peer.read(&mut byte).await;
    };
    let mut out = BufWriter::with_capacity(BUFFER, to_peer);
    let session = association.session();
    // A peer that leaves reads on until this connection closes: the frame in hand
    // is written, the buffer flushed and the connection closed, within a bound. A
    // quarantined peer is cut off at once.
    let cut = async {
        session.wait_end().await;
        if session.ended() == Some(SessionEnd::Left) {
            tokio::time::sleep(LEAVE_TIMEOUT).await;
        }
    };
    // The frame the writer has taken from the queue and not yet written whole: a
    // connection cut or broken while it is held (by a partition, a delay or a full
    // socket) still letters it by name.
    let mut in_hand = None;
    let written = tokio::select! {
        () = cut => Written::Cut,
        () = peer_closed => Written::Broken,
        written = write_frames(&mut out, &mut frames, association.faults(), session, &mut in_hand) => written,
    };
    let system = transport.upgrade().and_then(|t| t.system.upgrade());
    if let Some(reason) = ended_reason(&association) {
        if let Some(system) = &system {
            if let Some(frame) = in_hand.take() {
                lose(system, &peer, &frame, reason.clone());
            }
            match written {
                Written::Unsent(frame) => lose(system, &peer, &frame, reason.clone()),
                // The peer left and did not read what was written in time.
                Written::Broken if session.ended() == Some(SessionEnd::Left) => {
                    buffer_lost(system, &peer, reason.clone());
                }
                Written::Cut if session.ended() == Some(SessionEnd::Left) => {
                    buffer_lost(system, &peer, reason.clone());
                }
                _ => {}
            }
        }
        give_up(frames, &transport, &peer, reason).await;
        return;
    }
    // The next frame dials again.
    association.forget_outbound(id);
    let reason = DeadLetterReason::ConnectionLost { peer: peer.clone() };
    if !matches!(written, Written::All) {
        status.send_replace(LinkStatus::Down("the connection broke".into()));
        if let Some(system) = &system {
            if let Some(frame) = in_hand.take() {
                lose(system, &peer, &frame, reason.clone());
            }
            if let Written::Unsent(frame) = written {
                lose(system, &peer, &frame, reason.clone());
            }
            buffer_lost(system, &peer, reason.clone());
        }
    }
    give_up(frames, &transport, &peer, reason).await;
}

/// How a connection's writing ended.
enum Written {
    /// The queue closed, or the session ended, and what was taken from the queue
    /// was written and the connection closed.
    All,
    /// A write failed, or the peer closed the connection.
    Broken,
    /// The session ended and the writer was stopped where it was.
    Cut,
    /// The session ended (or the connection broke) before this frame, taken from
    /// the queue, was written.
    Unsent(Frame),
}

/// Whatever was in a connection's write buffer or on its way when it broke: which
/// frames they were is not known any more, so one letter says so.
fn buffer_lost(system: &SystemShared, peer: &Address, reason: DeadLetterReason) {
    system.dead_letter_of_type("frame", &ActorPath::root(peer.clone()), reason);
}

/// The reason for dead letters of a session that has ended.
fn ended_reason(association: &Association) -> Option<DeadLetterReason> {
    let peer = association.peer().clone();
    association.session().ended().map(|end| match end {
        SessionEnd::Quarantined => DeadLetterReason::Quarantined { peer },
        SessionEnd::Left => DeadLetterReason::SessionEnded { peer },
    })
}

/// Write what is queued until the queue closes or the session ends, then close the
/// connection. Frames queued together go out in one write: a burst costs a few
/// syscalls, not one per message.
async fn write_frames<W: AsyncWrite + Unpin>(
    out: &mut BufWriter<W>,
    frames: &mut mpsc::Receiver<Frame>,
    faults: &LinkShaper,
    session: &Session,
    in_hand: &mut Option<Frame>,
) -> Written {
    let mut changes = faults.subscribe();
    loop {
        let frame = tokio::select! {
            biased;
            () = session.wait_end() => break,
            frame = frames.recv() => match frame {
                Some(frame) => frame,
                None => break,
            },
        };
        if let Some(unsent) =
            write_burst(out, frame, frames, faults, &mut changes, session, in_hand).await
        {
            return unsent;
        }
    }
    let closed = async {
        out.flush().await?;
        out.shutdown().await
    };
    match closed.await {
        Ok(()) => Written::All,
        Err(_) => Written::Broken,
    }
}

/// Write `frame` and whatever else is queued behind it, then flush, each frame in
/// `in_hand` until it is written. Returns how the writing ended if it cannot go on.
async fn write_burst<W: AsyncWrite + Unpin>(
    out: &mut BufWriter<W>,
    frame: Frame,
    frames: &mut mpsc::Receiver<Frame>,
    faults: &LinkShaper,
    changes: &mut watch::Receiver<u64>,
    session: &Session,
    in_hand: &mut Option<Frame>,
) -> Option<Written> {
    let mut next = Some(frame);
    while let Some(frame) = next {
        let held = in_hand.insert(frame);
        let written = write_frame(out, held, faults, changes, session).await;
        let frame = in_hand.take();
        if written.is_err() {
            return frame.map(Written::Unsent);
        }
        next = if session.ended().is_none() {
            frames.try_recv().ok()
        } else {
            None
        };
    }
    out.flush().await.err().map(|_| Written::Broken)
}

/// Write one frame, once a partition holding it heals and a delay has passed. A
/// session that ends while the frame is held leaves it unsent (`Err`).
async fn write_frame<W: AsyncWrite + Unpin>(
    out: &mut BufWriter<W>,
    frame: &Frame,
    faults: &LinkShaper,
    changes: &mut watch::Receiver<u64>,
    session: &Session,
) -> Result<(), ()> {
    while faults.active() {
        changes.borrow_and_update();
        let until = match faults.verdict(frame.queued) {
            Verdict::Pass => break,
            Verdict::Hold => None,
            Verdict::DelayUntil(at) => Some(at),
        };
        if out.flush().await.is_err() {
            return Err(());
        }
        // A change of the faults (a partition healed, a delay cleared or changed)
        // is looked at again at once.
        let sleep = async {
            match until {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = session.wait_end() => return Err(()),
            () = sleep => break,
            changed = changes.changed() => if changed.is_err() {
                break;
            },
        }
    }
    out.write_all(&frame.bytes).await.map_err(|_| ())
}

/// What was queued for a peer that cannot be reached, whose connection broke, or
/// whose session ended: dead letters with `reason` (which names the peer). The
/// link's own frames go without a letter.
async fn give_up(
    mut frames: mpsc::Receiver<Frame>,
    transport: &Weak<Transport>,
    peer: &Address,
    reason: DeadLetterReason,
) {
    frames.close();
    while let Some(frame) = frames.recv().await {
        if let Some(system) = transport.upgrade().and_then(|t| t.system.upgrade()) {
            lose(&system, peer, &frame, reason.clone());
        }
    }
}

/// `frame` never reached `peer`: a dead letter with `reason` if it carries a
/// message (the link's own frames go without one), and its ask fails at once.
fn lose(system: &Arc<SystemShared>, peer: &Address, frame: &Frame, reason: DeadLetterReason) {
    if !frame.message {
        return;
    }
    crate::net::wire::frame_lost(system, peer, &frame.bytes, reason);
    fail_ask(system, frame);
}

/// The ask whose request `frame` carries, if it is one, fails at once with
/// `Unreachable`: the request went nowhere, and waiting for its deadline would
/// tell the asker nothing more.
fn fail_ask(system: &SystemShared, frame: &Frame) {
    if frame.ask == 0 {
        return;
    }
    if let Some(promise) = system.exported_ref(frame.ask) {
        promise.request_lost();
    }
}
