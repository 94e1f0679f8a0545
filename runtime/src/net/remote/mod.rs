//! Remoting (S38–S47): where a system listens and the secret its links share, the
//! links themselves, watching across them, the failure detector and quarantine,
//! and starting actors on another system ([`spawn`]).
//!
//! `ActorSystem::builder(name).remote(RemoteSettings::loopback())` binds a TCP port
//! while the system is built: with port 0 the OS picks one, and
//! [`ActorSystem::address`](crate::ActorSystem::address) carries the host and the
//! port actually bound before any ref is handed out. Binding anywhere but loopback
//! without a shared secret refuses to start: a port that takes frames naming actor
//! paths and message types is a serious surface.
//!
//! Links: [`ActorSystem::resolve`](crate::ActorSystem::resolve) turns another
//! system's address into an ordinary typed ref and dials nothing; the first message
//! sent through it dials that system, runs the handshake (protocol version first,
//! then a mutual HMAC-SHA256 challenge-response over the transcript, see
//! `handshake`) and sends over the connection, through a bounded outbound queue
//! ([`DeadLetterReason::OutboundFull`](crate::DeadLetterReason::OutboundFull) when
//! it is full; `tell` never waits). Frames that arrive go through
//! [`ActorSystem::deliver_frame`](crate::ActorSystem::deliver_frame). A peer that
//! cannot be reached, or refuses the handshake, dead-letters what was sent to it
//! ([`Unreachable`](crate::DeadLetterReason::Unreachable)) rather than hang. An ask
//! across a link is answered through the promise the request carries.
//!
//! With [`RemoteSettings::tls`], every link is mutual TLS (see [`TlsSettings`]),
//! and the handshake runs inside it, bound to the TLS session.
//!
//! Watching an actor of another system works as for a local one (S41); each
//! association heartbeats, and a peer silent for
//! [`RemoteSettings::unreachable_after`] is given up on and quarantined (S42,
//! [`PeerUnreachable`]) until [`ActorSystem::clear_quarantine`] and
//! [`ActorSystem::reconnect`] (S43). `offer` on a remote ref waits for room in the
//! outbound buffer (S47).

// Layer: network (rank 4, `net/`, with wire/): links, associations, handshake, TLS, the
// detector, remote spawn, the lane of a remote ref and the remote state (`links`).
// Imports every layer below; system/ (the composition root) builds it.
#![doc = ""]
#![doc = include_str!("../../../../docs/remoting.md")]

pub(crate) mod association;
pub(crate) mod detector;
mod frames_in;
mod handshake;
pub(crate) mod lane;
pub(crate) mod link;
pub(crate) mod links;
mod outbound;
pub mod spawn;
pub(crate) mod tls;
pub(crate) mod transport;

use std::fmt;
use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};
use std::time::Duration;

use crate::actor::ActorSystem;
use crate::actor::Address;

pub use self::handshake::{HANDSHAKE_LIMIT, HandshakeError, PROTOCOL_VERSION};
pub use self::tls::TlsSettings;

/// The shortest shared secret accepted, in bytes.
pub const MIN_SECRET_LEN: usize = 16;

/// Where a system listens for links, the secret they share, and optionally the TLS
/// every link runs over.
#[derive(Clone)]
pub struct RemoteSettings {
    host: String,
    port: u16,
    secret: Option<Vec<u8>>,
    heartbeat_interval: Duration,
    unreachable_after: Duration,
    handshake_timeout: Duration,
    tls: Option<TlsSettings>,
    /// The host and port this system names itself by, when peers reach it at
    /// another address than the one it listens on.
    advertised: Option<(String, u16)>,
}

impl RemoteSettings {
    /// How often an association heartbeats unless told: every second.
    pub const DEFAULT_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);

    /// How long a silence gives a peer up unless told: ten seconds, long enough
    /// for a garbage-collection pause or a busy network, short enough that a
    /// watcher hears of a dead node while it still matters.
    pub const DEFAULT_UNREACHABLE_AFTER: Duration = Duration::from_secs(10);

    /// How long a link may take to be made unless told: five seconds.
    pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

    /// Listen on `127.0.0.1`, on a port the OS picks: the one place that needs no
    /// secret.
    pub fn loopback() -> Self {
        Self::bind("127.0.0.1", 0)
    }

    /// Listen on `host` (a name or an IP address) and `port` (0: the OS picks).
    pub fn bind(host: impl Into<String>, port: u16) -> Self {
        Self {
            host: host.into(),
            port,
            secret: None,
            heartbeat_interval: Self::DEFAULT_HEARTBEAT_INTERVAL,
            unreachable_after: Self::DEFAULT_UNREACHABLE_AFTER,
            handshake_timeout: Self::DEFAULT_HANDSHAKE_TIMEOUT,
            tls: None,
            advertised: None,
        }
    }

    /// Name this system by `host` and `port` rather than by where it listens:
    /// for a system behind a port forward, a NAT or a container's port mapping,
    /// whose peers dial another address than the one it binds. The system's
    /// address (and every ref's URI) carries this host and port, and a dialer
    /// checks that the system it reached names itself by the address it dialled
    /// (a link through a relay it did not mean to use is refused), so peers must
    /// dial exactly this.
    #[must_use]
    pub fn advertise(mut self, host: impl Into<String>, port: u16) -> Self {
        self.advertised = Some((host.into(), port));
        self
    }

    /// The host and port this system names itself by, if set apart from where it
    /// listens ([`advertise`](Self::advertise)).
    pub fn advertised(&self) -> Option<(&str, u16)> {
        self.advertised
            .as_ref()
            .map(|(host, port)| (host.as_str(), *port))
    }

    /// How often each association sends a heartbeat (default
    /// [`DEFAULT_HEARTBEAT_INTERVAL`](Self::DEFAULT_HEARTBEAT_INTERVAL)); it must
    /// be shorter than [`unreachable_after`](Self::unreachable_after).
    #[must_use]
    pub fn heartbeat_interval(mut self, interval: Duration) -> Self {
        self.heartbeat_interval = interval;
        self
    }

    /// How long nothing may arrive from a peer before it is given up on (S42):
    /// every watcher of its actors hears `Terminated`, its asks fail,
    /// [`PeerUnreachable`] is published and its address is quarantined. Default
    /// [`DEFAULT_UNREACHABLE_AFTER`](Self::DEFAULT_UNREACHABLE_AFTER). A frame from
    /// a peer must also arrive whole within it.
    #[must_use]
    pub fn unreachable_after(mut self, after: Duration) -> Self {
        self.unreachable_after = after;
        self
    }

    /// How long making a link may take, from the dial (or the accept) to the end of
    /// the handshake, TLS included (default
    /// [`DEFAULT_HANDSHAKE_TIMEOUT`](Self::DEFAULT_HANDSHAKE_TIMEOUT)). A peer
    /// that accepts the connection and then says nothing holds what is sent to it
    /// this long before it is a dead letter (`Unreachable`); a port that nobody
    /// listens on fails at once.
    #[must_use]
    pub fn handshake_timeout(mut self, timeout: Duration) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// The secret both ends of every link must know (at least [`MIN_SECRET_LEN`]
    /// bytes). It never crosses the wire.
    #[must_use]
    pub fn secret(mut self, secret: impl Into<Vec<u8>>) -> Self {
        self.secret = Some(secret.into());
        self
    }

    /// The same settings on `port`.
    #[cfg(feature = "testkit")]
    pub(crate) fn on_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Run every link over mutual TLS: this system shows `tls`'s certificate and
    /// accepts only peers whose certificates its CA roots verify, and checks the
    /// certificate of each system it dials. Every system of the cluster needs it:
    /// a link with one end on TLS and the other not is refused.
    #[must_use]
    pub fn tls(mut self, tls: TlsSettings) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Whether links run over TLS.
    pub fn has_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// The host to listen on.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port asked for (0: the OS picks).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether a secret is set.
    pub fn has_secret(&self) -> bool {
        self.secret.is_some()
    }

    /// Check the settings and bind the port: what building the system does.
    pub(crate) fn listen(&self) -> Result<Listening, RemoteError> {
        if let Some(secret) = &self.secret
            && secret.len() < MIN_SECRET_LEN
        {
            return Err(RemoteError::SecretTooShort { len: secret.len() });
        }
        if self.handshake_timeout.is_zero() {
            return Err(RemoteError::HandshakeTimeout);
        }
        if self.heartbeat_interval.is_zero() || self.heartbeat_interval >= self.unreachable_after {
            return Err(RemoteError::Timing {
                heartbeat: self.heartbeat_interval,
                unreachable_after: self.unreachable_after,
            });
        }
        let addresses: Vec<SocketAddr> = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|error| RemoteError::Unresolvable {
                host: self.host.clone(),
                reason: error.to_string(),
            })?
            .collect();
        let Some(first) = addresses.first() else {
            return Err(RemoteError::Unresolvable {
                host: self.host.clone(),
                reason: "it resolves to no address".into(),
            });
        };
        if self.secret.is_none() && !addresses.iter().all(|a| is_loopback(a.ip())) {
            return Err(RemoteError::SecretRequired {
                host: self.host.clone(),
            });
        }
        let listener = TcpListener::bind(first).map_err(|error| RemoteError::Bind {
            address: first.to_string(),
            reason: error.to_string(),
        })?;
        let bound = listener.local_addr().map_err(|error| RemoteError::Bind {
            address: first.to_string(),
            reason: error.to_string(),
        })?;
        Ok(Listening {
            listener,
            port: bound.port(),
            secret: self.secret.clone().unwrap_or_default(),
            timing: detector::Timing {
                heartbeat: self.heartbeat_interval,
                unreachable_after: self.unreachable_after,
                handshake: self.handshake_timeout,
            },
            tls: self.tls.clone(),
        })
    }
}

fn is_loopback(ip: IpAddr) -> bool {
    ip.is_loopback()
}

impl fmt::Debug for RemoteSettings {
    /// Neither the secret nor any key material is printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("secret", &self.secret.as_ref().map(|_| "<set>"))
            .field("heartbeat_interval", &self.heartbeat_interval)
            .field("unreachable_after", &self.unreachable_after)
            .field("tls", &self.tls)
            .field("advertised", &self.advertised)
            .finish()
    }
}

/// A bound listening socket, and the port it got.
#[derive(Debug)]
pub(crate) struct Listening {
    /// The socket; the transport accepts links on it.
    pub(crate) listener: TcpListener,
    /// The port bound.
    pub(crate) port: u16,
    /// The secret links share (empty on loopback without one).
    pub(crate) secret: Vec<u8>,
    /// Heartbeats and the failure detector's window.
    pub(crate) timing: detector::Timing,
    /// The TLS every link runs over, if any.
    pub(crate) tls: Option<TlsSettings>,
}

/// Why remote settings could not be used; the system does not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// Listening beyond loopback needs a shared secret.
    #[error(
        "refusing to listen on {host:?} without a shared secret: anyone who can reach the port could send frames to your actors; set one with `RemoteSettings::secret(..)` on every system of the cluster, or listen on loopback"
    )]
    SecretRequired {
        /// The host asked for.
        host: String,
    },
    /// The secret is too short to be one.
    #[error(
        "the shared secret is {len} bytes; use at least 16 random bytes, the same on every system of the cluster"
    )]
    SecretTooShort {
        /// Its length.
        len: usize,
    },
    /// The host does not resolve.
    #[error(
        "cannot listen on {host:?}: {reason}; give a host name that resolves on this \
         machine, or an IP address such as 127.0.0.1"
    )]
    Unresolvable {
        /// The host asked for.
        host: String,
        /// What the resolver said.
        reason: String,
    },
    /// The heartbeat interval is zero, or not shorter than the failure detector's
    /// window.
    #[error(
        "a heartbeat every {heartbeat:?} with peers given up after {unreachable_after:?} of silence cannot work: the heartbeat interval must be above zero and well under `unreachable_after` (a fifth of it or less is usual)"
    )]
    Timing {
        /// The heartbeat interval asked for.
        heartbeat: Duration,
        /// The window asked for.
        unreachable_after: Duration,
    },
    /// The handshake timeout is zero: no link could ever be made.
    #[error(
        "a handshake timeout of zero lets no link be made: give `handshake_timeout` a duration above zero (the default is 5 s)"
    )]
    HandshakeTimeout,
    /// Binding failed (the port is taken, or not ours to take).
    #[error("cannot bind {address}: {reason}; pick another port, or 0 to let the OS pick")]
    Bind {
        /// The address.
        address: String,
        /// What the OS said.
        reason: String,
    },
    /// The TLS settings cannot be used: a file cannot be read, PEM does not parse,
    /// or the key does not belong to the certificate.
    #[error(
        "the TLS settings cannot be used: {reason}; give `TlsSettings` the node's certificate chain, its private key and the CA certificates that sign its peers', each as PEM"
    )]
    Tls {
        /// What was wrong.
        reason: String,
    },
}

/// Published on the event stream when a peer is given up on (S42): nothing arrived
/// from it for `unreachable_after`. Every watcher of its actors has heard
/// `Terminated`; when `quarantined`, its address is quarantined until
/// [`ActorSystem::clear_quarantine`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerUnreachable {
    /// The peer's address.
    pub peer: Address,
    /// Whether its address is now quarantined.
    pub quarantined: bool,
}

/// Why [`ActorSystem::reconnect`] did not link.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    /// The system has no remote settings, so it has no links.
    #[error(
        "this system has no links: build it with `ActorSystemBuilder::remote(RemoteSettings::..)`"
    )]
    NotRemote,
    /// The peer is quarantined here.
    #[error(
        "{peer} is quarantined: call `clear_quarantine` first (and make sure the peer has cleared this system's quarantine too)"
    )]
    Quarantined {
        /// The peer.
        peer: Address,
    },
    /// The system is terminating.
    #[error("the system is terminating: it makes no new links")]
    Terminating,
    /// The dial or the handshake failed.
    #[error("cannot link to {peer}: {reason}")]
    Failed {
        /// The peer.
        peer: Address,
        /// What went wrong.
        reason: String,
    },
}

impl ActorSystem {
    /// Whether `peer` is quarantined: given up on by the failure detector, so that
    /// sends to it dead-letter and nothing dials it.
    pub fn is_quarantined(&self, peer: &Address) -> bool {
        self.shared()
            .transport()
            .is_some_and(|transport| transport.is_quarantined(peer))
    }

    /// Lift the quarantine of `peer` (S43); says whether it was quarantined. Refs
    /// resolved before the quarantine stay bound to the session that ended: resolve
    /// them again. Nothing is dialled until something is sent, or until
    /// [`reconnect`](Self::reconnect).
    ///
    /// It lifts a quarantine in place and nothing else: a peer this system has not
    /// given up on yet is not affected, and may be given up on later. After a
    /// partition, wait for [`PeerUnreachable`] on both sides before clearing.
    pub fn clear_quarantine(&self, peer: &Address) -> bool {
        self.shared()
            .transport()
            .is_some_and(|transport| transport.clear_quarantine(peer))
    }

    /// Dial `peer` now, and return once the link is up (S43): after
    /// [`clear_quarantine`](Self::clear_quarantine) on both sides, this starts a
    /// new session.
    ///
    /// # Errors
    ///
    /// [`LinkError::Quarantined`] while `peer` is quarantined here,
    /// [`LinkError::Failed`] when it cannot be reached or refuses the link (it may
    /// still have this system quarantined), [`LinkError::NotRemote`] and
    /// [`LinkError::Terminating`] when this system cannot link.
    pub async fn reconnect(&self, peer: &Address) -> Result<(), LinkError> {
        let transport = self
            .shared()
            .transport()
            .ok_or(LinkError::NotRemote)?
            .clone();
        transport.reconnect(peer).await
    }
}
