//! The handshake of a link (S38): the protocol version first, then a mutual
//! HMAC-SHA256 challenge-response over the whole transcript, with 32-byte nonces from
//! both sides and a label for each direction. The secret never crosses the wire; a
//! replayed or reflected tag fails; tags are compared in constant time; every
//! failure after the version check gets the same rejection.
//!
//! ```text
//! dialer  -> listener  Hello  { magic, version, nonce_d, address_d }
//! listener -> dialer   Accept { nonce_l, address_l, tag_l }   (or Reject { reason })
//! dialer  -> listener  Proof  { tag_d }   (only if address_l is the address dialled)
//! tag_l = HMAC(secret, "tapio/listener" | binding | hello | nonce_l | address_l)
//! tag_d = HMAC(secret, "tapio/dialer" | binding | hello | nonce_l | address_l | tag_l)
//! ```
//!
//! `binding` is what the link's transport binds the handshake to: over TLS, keying
//! material exported from the TLS session (the same at both ends of one session,
//! different in any other), so a handshake relayed between two TLS sessions fails;
//! without TLS, nothing.
//!
//! Each message is a big-endian `u32` length then postcard, held to
//! [`HANDSHAKE_LIMIT`] bytes: nothing larger is read from a peer not yet trusted.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use subtle::ConstantTimeEq;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::actor::Address;

/// The version of the link protocol this runtime speaks.
pub const PROTOCOL_VERSION: u16 = 1;

/// The most bytes a handshake message may have.
pub const HANDSHAKE_LIMIT: usize = 4096;

const MAGIC: [u8; 5] = *b"TAPIO";
const LISTENER_LABEL: &[u8] = b"tapio/listener";
const DIALER_LABEL: &[u8] = b"tapio/dialer";

#[derive(Debug, Serialize, Deserialize)]
struct Hello {
    magic: [u8; 5],
    version: u16,
    nonce: [u8; 32],
    address: String,
}

#[derive(Debug, Serialize, Deserialize)]
enum Answer {
    Accept {
        nonce: [u8; 32],
        address: String,
        tag: [u8; 32],
    },
    Reject {
        reason: String,
    },
}

#[derive(Debug, Serialize, Deserialize)]
struct Proof {
    tag: [u8; 32],
}

/// Why a handshake failed; the link is closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandshakeError {
    /// The two ends speak different versions of the link protocol.
    #[error(
        "the peer speaks link protocol version {theirs}, this system {ours}: upgrade one of them"
    )]
    VersionMismatch {
        /// This runtime's.
        ours: u16,
        /// The peer's.
        theirs: u16,
    },
    /// The listener proved the secret, and named itself as another system than
    /// the one dialled: the connection was relayed to it, or the address dialled
    /// is stale. No link is made.
    #[error(
        "dialled {dialled} and was answered by {answered}: the connection was relayed, or the address is stale; check the address (an address must be the one the peer is configured with)"
    )]
    NotTheDialledPeer {
        /// The address this system dialled.
        dialled: String,
        /// The address the listener named.
        answered: String,
    },
    /// The peer refused the link: a different shared secret, or a tag that did
    /// not check out. The same for every such failure, on purpose.
    #[error("the peer refused the link: do both systems have the same shared secret?")]
    Refused,
    /// What the peer sent is not a handshake.
    #[error("the peer does not speak the tapio link protocol")]
    NotTapio,
    /// The connection failed during the handshake.
    #[error("the connection failed during the handshake: {0}")]
    Io(String),
}

fn nonce() -> [u8; 32] {
    let mut nonce = [0; 32];
    for chunk in nonce.chunks_mut(8) {
        chunk.copy_from_slice(&rand::random::<u64>().to_le_bytes());
    }
    nonce
}

/// HMAC-SHA256 of `parts` under `secret`, behind `label`.
fn tag(secret: &[u8], label: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    // HMAC takes a key of any length, the empty one included.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
        return [0; 32];
    };
    mac.update(label);
    for part in parts {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

async fn send<S: AsyncWrite + Unpin, T: Serialize>(
    stream: &mut S,
    message: &T,
) -> Result<Vec<u8>, HandshakeError> {
    let body = postcard::to_allocvec(message).map_err(|e| HandshakeError::Io(e.to_string()))?;
    let length = u32::try_from(body.len()).map_err(|_| HandshakeError::NotTapio)?;
    stream
        .write_all(&length.to_be_bytes())
        .await
        .map_err(|e| HandshakeError::Io(e.to_string()))?;
    stream
        .write_all(&body)
        .await
        .map_err(|e| HandshakeError::Io(e.to_string()))?;
    stream
        .flush()
        .await
        .map_err(|e| HandshakeError::Io(e.to_string()))?;
    Ok(body)
}

async fn receive<S: AsyncRead + Unpin>(stream: &mut S) -> Result<Vec<u8>, HandshakeError> {
    let mut prefix = [0; 4];
    stream
        .read_exact(&mut prefix)
        .await
        .map_err(|e| HandshakeError::Io(e.to_string()))?;
    let length = u32::from_be_bytes(prefix) as usize;
    if length > HANDSHAKE_LIMIT {
        return Err(HandshakeError::NotTapio);
    }
    let mut body = vec![0; length];
    stream
        .read_exact(&mut body)
        .await
        .map_err(|e| HandshakeError::Io(e.to_string()))?;
    Ok(body)
}

fn decode<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, HandshakeError> {
    postcard::from_bytes(body).map_err(|_| HandshakeError::NotTapio)
}

/// Dial side: returns the listener's address once both ends have proved the secret
/// within the session `binding` names (empty: no binding), and the listener has
/// named itself as `dialled`, the peer this system meant to reach.
pub(crate) async fn dial<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    secret: &[u8],
    binding: &[u8],
    me: &Address,
    dialled: &Address,
) -> Result<Address, HandshakeError> {
    let hello = Hello {
        magic: MAGIC,
        version: PROTOCOL_VERSION,
        nonce: nonce(),
        address: me.to_string(),
    };
    let hello_bytes = send(stream, &hello).await?;
    let body = receive(stream).await?;
    let (nonce, address, listener_tag) = match decode::<Answer>(&body)? {
        Answer::Accept {
            nonce,
            address,
            tag,
        } => (nonce, address, tag),
        Answer::Reject { reason } => {
            return Err(match reason.strip_prefix("version ") {
                Some(theirs) => HandshakeError::VersionMismatch {
                    ours: PROTOCOL_VERSION,
                    theirs: theirs.parse().unwrap_or(0),
                },
                None => HandshakeError::Refused,
            });
        }
    };
    let expected = tag(
        secret,
        LISTENER_LABEL,
        &[binding, &hello_bytes, &nonce, address.as_bytes()],
    );
    if !bool::from(expected.ct_eq(&listener_tag)) {
        return Err(HandshakeError::Refused);
    }
    // The tag proves the answer came from a system with the secret; its address,
    // which the tag covers, says which. Another than the one dialled means the
    // connection was relayed (or the address is stale): no proof goes back, so the
    // relay holds nothing it could pass on as this system's.
    if Address::parse(&address).as_ref() != Some(dialled) {
        return Err(HandshakeError::NotTheDialledPeer {
            dialled: dialled.to_string(),
            answered: address,
        });
    }
    let proof = tag(
        secret,
        DIALER_LABEL,
        &[
            binding,
            &hello_bytes,
            &nonce,
            address.as_bytes(),
            &listener_tag,
        ],
    );
    send(stream, &Proof { tag: proof }).await?;
    Address::parse(&address).ok_or(HandshakeError::NotTapio)
}

/// Listen side: returns the dialer's address once both ends have proved the secret
/// within the session `binding` names (empty: no binding).
pub(crate) async fn accept<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    secret: &[u8],
    binding: &[u8],
    me: &Address,
) -> Result<Address, HandshakeError> {
    let hello_bytes = receive(stream).await?;
    let hello: Hello = decode(&hello_bytes)?;
    if hello.magic != MAGIC {
        return Err(HandshakeError::NotTapio);
    }
    if hello.version != PROTOCOL_VERSION {
        let reason = format!("version {PROTOCOL_VERSION}");
        send(stream, &Answer::Reject { reason }).await?;
        return Err(HandshakeError::VersionMismatch {
            ours: PROTOCOL_VERSION,
            theirs: hello.version,
        });
    }
    let peer = Address::parse(&hello.address).ok_or(HandshakeError::NotTapio)?;
    if &peer == me {
        // This system's own hello, relayed back to it: refused as any failure
        // after the version check is.
        return Err(HandshakeError::Refused);
    }
    let nonce = nonce();
    let address = me.to_string();
    let listener_tag = tag(
        secret,
        LISTENER_LABEL,
        &[binding, &hello_bytes, &nonce, address.as_bytes()],
    );
    send(
        stream,
        &Answer::Accept {
            nonce,
            address: address.clone(),
            tag: listener_tag,
        },
    )
    .await?;
    let body = receive(stream).await?;
    let proof: Proof = decode(&body).map_err(|_| HandshakeError::Refused)?;
    let expected = tag(
        secret,
        DIALER_LABEL,
        &[
            binding,
            &hello_bytes,
            &nonce,
            address.as_bytes(),
            &listener_tag,
        ],
    );
    if !bool::from(expected.ct_eq(&proof.tag)) {
        return Err(HandshakeError::Refused);
    }
    Ok(peer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me(name: &str, port: u16) -> Address {
        Address::remote(name, "127.0.0.1", port)
    }

    type Outcome = Result<Address, HandshakeError>;

    async fn run(dial_secret: &'static [u8], accept_secret: &'static [u8]) -> (Outcome, Outcome) {
        run_bound(dial_secret, b"", accept_secret, b"").await
    }

    /// A handshake whose ends are bound to `dial_binding` and `accept_binding`.
    async fn run_bound(
        dial_secret: &'static [u8],
        dial_binding: &'static [u8],
        accept_secret: &'static [u8],
        accept_binding: &'static [u8],
    ) -> (Outcome, Outcome) {
        run_between(
            (dial_secret, dial_binding, me("a", 1), me("b", 2)),
            (accept_secret, accept_binding, me("b", 2)),
        )
        .await
    }

    /// A handshake of a dialer (secret, binding, its address, the address it
    /// dialled) with a listener (secret, binding, its address).
    async fn run_between(
        dialer: (&'static [u8], &'static [u8], Address, Address),
        listener: (&'static [u8], &'static [u8], Address),
    ) -> (Outcome, Outcome) {
        let (mut a, mut b) = tokio::io::duplex(8192);
        let (dial_secret, dial_binding, dialer_me, dialled) = dialer;
        let (accept_secret, accept_binding, listener_me) = listener;
        let dialer = tokio::spawn(async move {
            dial(&mut a, dial_secret, dial_binding, &dialer_me, &dialled).await
        });
        let listener = tokio::spawn(async move {
            accept(&mut b, accept_secret, accept_binding, &listener_me).await
        });
        (
            dialer.await.unwrap_or(Err(HandshakeError::Refused)),
            listener.await.unwrap_or(Err(HandshakeError::Refused)),
        )
    }

    #[tokio::test]
    async fn the_same_secret_links_and_each_end_learns_the_other() {
        let (dialed, accepted) = run(b"0123456789abcdef", b"0123456789abcdef").await;
        assert_eq!(dialed, Ok(me("b", 2)));
        assert_eq!(accepted, Ok(me("a", 1)));
    }

    // Issue 30, item 1: a dialer that reached another system than the one it
    // dialled (a relay in between) sends no proof, and the listener links nothing.
    #[tokio::test]
    async fn an_answer_from_another_system_than_the_one_dialled_is_refused() {
        const SECRET: &[u8] = b"0123456789abcdef";
        let (dialed, accepted) = run_between(
            (SECRET, b"", me("a", 1), me("x", 9)),
            (SECRET, b"", me("b", 2)),
        )
        .await;
        assert_eq!(
            dialed,
            Err(HandshakeError::NotTheDialledPeer {
                dialled: me("x", 9).to_string(),
                answered: me("b", 2).to_string(),
            })
        );
        assert!(accepted.is_err(), "{accepted:?}");
    }

    // Issue 30, item 1: a system's own hello relayed back to it is refused.
    #[tokio::test]
    async fn a_hello_that_claims_to_be_the_listener_is_refused() {
        const SECRET: &[u8] = b"0123456789abcdef";
        let (dialed, accepted) = run_between(
            (SECRET, b"", me("a", 1), me("a", 1)),
            (SECRET, b"", me("a", 1)),
        )
        .await;
        assert_eq!(accepted, Err(HandshakeError::Refused));
        assert!(dialed.is_err(), "{dialed:?}");
    }

    #[tokio::test]
    async fn a_different_secret_is_refused_at_both_ends() {
        let (dialed, accepted) = run(b"0123456789abcdef", b"fedcba9876543210").await;
        assert_eq!(dialed, Err(HandshakeError::Refused));
        assert!(accepted.is_err());
    }

    #[tokio::test]
    async fn the_same_binding_links() {
        let secret = b"0123456789abcdef";
        let (dialed, accepted) = run_bound(secret, &[7; 32], secret, &[7; 32]).await;
        assert_eq!(dialed, Ok(me("b", 2)));
        assert_eq!(accepted, Ok(me("a", 1)));
    }

    // A handshake relayed between two TLS sessions sees two different bindings: the
    // listener's tag does not check out at the dialer, whatever the secret.
    #[tokio::test]
    async fn different_bindings_are_refused_at_both_ends() {
        let secret = b"0123456789abcdef";
        let (dialed, accepted) = run_bound(secret, &[7; 32], secret, &[8; 32]).await;
        assert_eq!(dialed, Err(HandshakeError::Refused));
        assert!(accepted.is_err());
        // A binding on one end only is a different binding too.
        let (dialed, accepted) = run_bound(secret, b"", secret, &[8; 32]).await;
        assert_eq!(dialed, Err(HandshakeError::Refused));
        assert!(accepted.is_err());
    }

    #[test]
    fn the_direction_labels_keep_a_tag_from_being_reflected() {
        let parts: [&[u8]; 2] = [b"hello", b"nonce"];
        assert_ne!(
            tag(b"k", LISTENER_LABEL, &parts),
            tag(b"k", DIALER_LABEL, &parts)
        );
        // Part boundaries are part of what is signed.
        assert_ne!(
            tag(b"k", DIALER_LABEL, &[b"ab", b"c"]),
            tag(b"k", DIALER_LABEL, &[b"a", b"bc"])
        );
    }

    #[tokio::test]
    async fn another_version_is_told_apart() {
        let (mut a, mut b) = tokio::io::duplex(8192);
        let listener = tokio::spawn(async move { accept(&mut b, b"", b"", &me("b", 2)).await });
        let hello = Hello {
            magic: MAGIC,
            version: 99,
            nonce: [0; 32],
            address: me("a", 1).to_string(),
        };
        send(&mut a, &hello).await.unwrap_or_default();
        let answer = receive(&mut a).await.unwrap_or_default();
        assert!(matches!(
            decode::<Answer>(&answer),
            Ok(Answer::Reject { reason }) if reason == "version 1"
        ));
        assert_eq!(
            listener.await.ok(),
            Some(Err(HandshakeError::VersionMismatch {
                ours: 1,
                theirs: 99
            }))
        );
    }

    #[tokio::test]
    async fn a_stranger_is_not_read_beyond_the_limit() {
        let (mut a, mut b) = tokio::io::duplex(8192);
        let listener = tokio::spawn(async move { accept(&mut b, b"", b"", &me("b", 2)).await });
        a.write_all(&u32::MAX.to_be_bytes())
            .await
            .unwrap_or_default();
        assert_eq!(listener.await.ok(), Some(Err(HandshakeError::NotTapio)));
    }
}
