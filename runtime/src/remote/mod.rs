//! Remoting settings (S38): where a system listens, and the secret its links share.
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
//! Not there yet: TLS, watching an actor of another system, the failure detector,
//! quarantine and reconnect policies, and `offer` across a link.
#![doc = ""]
#![doc = include_str!("../../../docs/remoting.md")]

mod handshake;
pub(crate) mod transport;

use std::fmt;
use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};

pub use self::handshake::{HANDSHAKE_LIMIT, HandshakeError, PROTOCOL_VERSION};

/// The shortest shared secret accepted, in bytes.
pub const MIN_SECRET_LEN: usize = 16;

/// Where a system listens for links, and the secret they share.
#[derive(Clone)]
pub struct RemoteSettings {
    host: String,
    port: u16,
    secret: Option<Vec<u8>>,
}

impl RemoteSettings {
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
        }
    }

    /// The secret both ends of every link must know (at least [`MIN_SECRET_LEN`]
    /// bytes). It never crosses the wire.
    #[must_use]
    pub fn secret(mut self, secret: impl Into<Vec<u8>>) -> Self {
        self.secret = Some(secret.into());
        self
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
        })
    }
}

fn is_loopback(ip: IpAddr) -> bool {
    ip.is_loopback()
}

impl fmt::Debug for RemoteSettings {
    /// The secret is never printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("secret", &self.secret.as_ref().map(|_| "<set>"))
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
    #[error("cannot listen on {host:?}: {reason}")]
    Unresolvable {
        /// The host asked for.
        host: String,
        /// What the resolver said.
        reason: String,
    },
    /// Binding failed (the port is taken, or not ours to take).
    #[error("cannot bind {address}: {reason}; pick another port, or 0 to let the OS pick")]
    Bind {
        /// The address.
        address: String,
        /// What the OS said.
        reason: String,
    },
}
