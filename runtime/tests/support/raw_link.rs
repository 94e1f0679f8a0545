//! A client, and the listener's side, of the link protocol written by hand from
//! the format in `remote/handshake.rs` and `wire/frame.rs`, so that a test can
//! break it anywhere: `Hello`, `Answer` and `Proof` as postcard behind a big-endian
//! `u32` length, tags computed in one function ([`handshake_tag`]), frames built
//! with the public `encode_frame` and read by hand.

use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use tapio::ActorSystem;
use tapio::remote::PROTOCOL_VERSION;
use tapio::wire::{FrameHeader, WireLimits};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// The bound of every wait for something that should happen.
pub const WAIT: Duration = Duration::from_secs(10);

/// The secret every system of these tests shares.
pub const SECRET: &[u8] = b"0123456789abcdef";

/// The heartbeat interval of every system here, and of [`keep_alive`].
pub const HEARTBEAT: Duration = Duration::from_millis(100);

/// The dialer's first message.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    pub magic: [u8; 5],
    pub version: u16,
    pub nonce: [u8; 32],
    pub address: String,
}

/// The listener's answer to a `Hello`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Answer {
    Accept {
        nonce: [u8; 32],
        address: String,
        tag: [u8; 32],
    },
    Reject {
        reason: String,
    },
}

/// The dialer's tag, its last message.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Proof {
    pub tag: [u8; 32],
}

/// What the two tags of one handshake cover: the dialer's `Hello` as sent, the
/// listener's nonce and address.
#[derive(Clone, Copy)]
pub struct Transcript<'a> {
    pub hello: &'a [u8],
    pub nonce: &'a [u8; 32],
    pub address: &'a str,
}

/// Whose tag.
#[derive(Clone, Copy)]
pub enum Side {
    /// The listener's, in its `Accept`.
    Listener,
    /// The dialer's `Proof`, which also covers the listener's tag.
    Dialer { listener_tag: [u8; 32] },
}

/// A handshake tag as `remote/handshake.rs` computes it: HMAC-SHA256 under
/// `secret` of the side's label, then each part of the transcript behind its
/// length as a big-endian `u64`. The one place the raw clients and the fake peer
/// compute a tag: a change to what the tags cover (a TLS channel binding, say) is
/// made here.
pub fn handshake_tag(secret: &[u8], side: Side, transcript: Transcript<'_>) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key");
    let (label, listener_tag): (&[u8], Option<[u8; 32]>) = match side {
        Side::Listener => (b"tapio/listener", None),
        Side::Dialer { listener_tag } => (b"tapio/dialer", Some(listener_tag)),
    };
    mac.update(label);
    // The first part is the TLS session's binding: empty on a plain link.
    let mut parts: Vec<&[u8]> = vec![
        &[],
        transcript.hello,
        transcript.nonce,
        transcript.address.as_bytes(),
    ];
    if let Some(listener_tag) = &listener_tag {
        parts.push(listener_tag);
    }
    for part in parts {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// `body` behind its length, a big-endian `u32`: a handshake message, or a frame.
pub fn framed(body: &[u8]) -> Vec<u8> {
    let mut message = u32::try_from(body.len()).unwrap().to_be_bytes().to_vec();
    message.extend_from_slice(body);
    message
}

pub async fn write_message(stream: &mut TcpStream, body: &[u8]) {
    stream.write_all(&framed(body)).await.unwrap();
}

/// The next length-prefixed message; `None` when the connection ends first.
pub async fn read_message(stream: &mut TcpStream) -> Option<Vec<u8>> {
    tokio::time::timeout(WAIT, async {
        let mut prefix = [0; 4];
        stream.read_exact(&mut prefix).await.ok()?;
        let mut body = vec![0; u32::from_be_bytes(prefix) as usize];
        stream.read_exact(&mut body).await.ok()?;
        Some(body)
    })
    .await
    .expect("a message or the end of the connection within the bound")
}

pub fn random_nonce() -> [u8; 32] {
    let mut nonce = [0; 32];
    for chunk in nonce.chunks_mut(8) {
        chunk.copy_from_slice(&rand::random::<u64>().to_le_bytes());
    }
    nonce
}

/// A `Hello` of `version` from `address`, as postcard bytes.
pub fn hello(version: u16, address: &str) -> Vec<u8> {
    postcard::to_allocvec(&Hello {
        magic: *b"TAPIO",
        version,
        nonce: random_nonce(),
        address: address.to_owned(),
    })
    .unwrap()
}

/// An address for a raw client: a name of its own, at port 1 of loopback, where
/// nothing listens (the node's dials back to it, for heartbeats, fail at once).
pub fn raw_address(name: &str) -> String {
    format!("tapio://{name}@127.0.0.1:1")
}

pub async fn connect(node: &ActorSystem) -> TcpStream {
    let (host, port) = node.address().host_port().unwrap();
    let stream = TcpStream::connect((host, port)).await.unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

/// What a dialer has seen once the listener accepted its `Hello`.
pub struct Accepted {
    pub hello: Vec<u8>,
    pub nonce: [u8; 32],
    pub address: String,
    pub tag: [u8; 32],
}

impl Accepted {
    pub fn transcript(&self) -> Transcript<'_> {
        Transcript {
            hello: &self.hello,
            nonce: &self.nonce,
            address: &self.address,
        }
    }

    /// The dialer's proof under `secret`.
    pub fn proof(&self, secret: &[u8]) -> [u8; 32] {
        handshake_tag(
            secret,
            Side::Dialer {
                listener_tag: self.tag,
            },
            self.transcript(),
        )
    }
}

/// Send `hello` and read the listener's answer, which must accept.
pub async fn hello_accepted(stream: &mut TcpStream, hello: Vec<u8>) -> Accepted {
    write_message(stream, &hello).await;
    let answer = read_message(stream).await.expect("an answer to the hello");
    match postcard::from_bytes(&answer).expect("an answer") {
        Answer::Accept {
            nonce,
            address,
            tag,
        } => Accepted {
            hello,
            nonce,
            address,
            tag,
        },
        Answer::Reject { reason } => panic!("the hello was rejected: {reason}"),
    }
}

pub async fn send_proof(stream: &mut TcpStream, tag: [u8; 32]) {
    write_message(stream, &postcard::to_allocvec(&Proof { tag }).unwrap()).await;
}

/// The key of the next frame: after a handshake, the listener's verdict.
pub async fn verdict(stream: &mut TcpStream) -> Option<String> {
    let body = read_message(stream).await?;
    let (header, _) = postcard::take_from_bytes::<FrameHeader<'_>>(&body).ok()?;
    Some(header.key.to_owned())
}

/// A raw client linked to `node` as `address`: the whole handshake done with the
/// shared secret, and the verdict "!welcome" read. Returns the connection, what
/// the listener accepted and the proof sent.
pub async fn linked(node: &ActorSystem, address: &str) -> (TcpStream, Accepted, [u8; 32]) {
    let mut stream = connect(node).await;
    let accepted = hello_accepted(&mut stream, hello(PROTOCOL_VERSION, address)).await;
    // The replicated tag is the node's: the listener's checks out.
    assert_eq!(
        accepted.tag,
        handshake_tag(SECRET, Side::Listener, accepted.transcript())
    );
    let proof = accepted.proof(SECRET);
    send_proof(&mut stream, proof).await;
    assert_eq!(verdict(&mut stream).await.as_deref(), Some("!welcome"));
    (stream, accepted, proof)
}

/// A frame of `key` to `recipient` carrying `payload`.
pub fn frame(key: &str, recipient: &str, payload: &[u8]) -> Vec<u8> {
    tapio::wire::encode_frame(
        &FrameHeader {
            key,
            recipient,
            uid: 0,
            reply_to: None,
        },
        payload,
        &WireLimits::DEFAULT,
    )
    .unwrap()
}
/// Read until the node closes the connection (EOF or a reset), and return what
/// arrived before; fail if it is still open after [`WAIT`].
pub async fn closed_by_node(stream: &mut TcpStream) -> Vec<u8> {
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut got = Vec::new();
    let mut buffer = [0; 1024];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) => return got,
            Ok(Ok(n)) => got.extend_from_slice(&buffer[..n]),
            Err(_) => panic!("the node kept the connection open for {WAIT:?}"),
        }
    }
}

/// Write `bytes` one at a time, `pause` apart, until the node closes the
/// connection. Returns when it closed, counted from `since`, or `None` when every
/// byte went and the connection is still open.
pub async fn dribble(
    stream: &mut TcpStream,
    bytes: &[u8],
    pause: Duration,
    since: Instant,
) -> Option<Duration> {
    let mut buffer = [0; 64];
    for byte in bytes {
        if stream.write_all(&[*byte]).await.is_err() {
            return Some(since.elapsed());
        }
        // A deliberate pause, cut short when the node closes the connection.
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            read = stream.read(&mut buffer) => match read {
                Ok(0) | Err(_) => return Some(since.elapsed()),
                Ok(n) => panic!("the node sent {n} bytes to a dribbling client"),
            },
        }
    }
    None
}

/// A second connection of the raw peer `address`, with a heartbeat every
/// [`HEARTBEAT`]: the node's failure detector keeps hearing from the peer, so only
/// the frame deadline can cut its other connection. Abort the task to stop it.
pub async fn keep_alive(node: &ActorSystem, address: &str) -> JoinHandle<()> {
    let (mut stream, _, _) = linked(node, address).await;
    let heartbeat = frame("!hb", "/", &[]);
    tokio::spawn(async move {
        while stream.write_all(&heartbeat).await.is_ok() {
            tokio::time::sleep(HEARTBEAT).await;
        }
    })
}

/// The listener's side of the handshake, as `address`, with the shared secret,
/// then the verdict "!welcome".
pub async fn accept_as_listener(stream: &mut TcpStream, address: &str) {
    accept_as_listener_without_verdict(stream, address).await;
    stream
        .write_all(&frame("!welcome", "/", &[]))
        .await
        .unwrap();
}

/// The listener's side of the handshake, as `address`, with the shared secret, up
/// to the dialer's proof, which must check out.
pub async fn accept_as_listener_without_verdict(stream: &mut TcpStream, address: &str) {
    let hello = read_message(stream).await.expect("a hello");
    let _: Hello = postcard::from_bytes(&hello).expect("a hello");
    let nonce = random_nonce();
    let transcript = Transcript {
        hello: &hello,
        nonce: &nonce,
        address,
    };
    let listener_tag = handshake_tag(SECRET, Side::Listener, transcript);
    let answer = Answer::Accept {
        nonce,
        address: address.to_owned(),
        tag: listener_tag,
    };
    write_message(stream, &postcard::to_allocvec(&answer).unwrap()).await;
    let proof: Proof = postcard::from_bytes(&read_message(stream).await.expect("a proof")).unwrap();
    assert_eq!(
        proof.tag,
        handshake_tag(SECRET, Side::Dialer { listener_tag }, transcript),
        "the dialer's proof"
    );
}
