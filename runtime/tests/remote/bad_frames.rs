//! Bad input on a link (S37–S39): raw TCP clients that speak the link protocol badly
//! on purpose, and a fake peer that resets the connection, against real systems with
//! a shared secret. Each bad case ends in a closed connection or in a dead letter
//! naming the peer, and the legitimate link between the test's two systems goes on
//! delivering through it.
//!
//! The clients speak the protocol through `raw_link`, written by hand from its
//! format so that they can break it anywhere. Every wait is bounded; the only
//! pauses are those of a slow client.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::{letter_within, recv_within};
use crate::support::raw_link;

use std::time::{Duration, Instant};

use tapio::prelude::*;
use tapio::remote::{PROTOCOL_VERSION, RemoteSettings};
use tapio::testkit::{LinkDirection, TwoNodes, two_nodes};
use tapio::wire::{FrameHeader, WireLimits, WireMessage, WireProblem};
use tapio::{Address, DeadLetter, DeadLetterReason};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use raw_link::*;

/// How long the node gives a handshake (the transport's `HANDSHAKE_TIMEOUT`).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// `unreachable_after` for the tests of the frame deadline.
const SHORT: Duration = Duration::from_millis(500);

/// `unreachable_after` for the rest: long enough that no close within [`WAIT`] is
/// the failure detector's doing.
const LONG: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------
// The systems: `b` is the node under attack, `a` its legitimate peer.
// ---------------------------------------------------------------------------

#[message(remote = "bad_input.note.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Note(pub u64);

#[message(remote = "bad_input.echo.v1", reply = Echoed)]
#[derive(Debug)]
pub struct Echo(pub u64);

#[message(remote = "bad_input.echoed.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Echoed(pub u64);

pub struct Echoer;

#[actor]
impl Echoer {
    fn echo(&mut self, message: Echo) -> Echoed {
        Echoed(message.0)
    }
}

fn settings(unreachable_after: Duration) -> RemoteSettings {
    RemoteSettings::loopback()
        .secret(SECRET.to_vec())
        .heartbeat_interval(HEARTBEAT)
        .unreachable_after(unreachable_after)
}

/// Two linked systems: `b` runs an echoer at `/user/echo` and an inbox at
/// `/user/inbox`, and `a` holds refs to both.
struct Setup {
    nodes: TwoNodes,
    echo: ActorRef<EchoerMsg>,
    to_inbox: ActorRef<Note>,
    /// What `b`'s inbox receives, in order.
    inbox: mpsc::UnboundedReceiver<u64>,
}

async fn setup(unreachable_after: Duration) -> Setup {
    let nodes = two_nodes(settings(unreachable_after)).unwrap();
    nodes.b.spawn(Behaviors::setup(|_| Echoer), "echo").unwrap();
    let (heard, inbox) = mpsc::unbounded_channel();
    nodes
        .b
        .spawn(
            Behaviors::receive_message(move |note: Note| {
                let _ = heard.send(note.0);
            }),
            "inbox",
        )
        .unwrap();
    let b = nodes.b.address().clone();
    let echo = nodes
        .a
        .resolve::<EchoerMsg>(&format!("{b}/user/echo"))
        .unwrap();
    let to_inbox = nodes.a.resolve::<Note>(&format!("{b}/user/inbox")).unwrap();
    let setup = Setup {
        nodes,
        echo,
        to_inbox,
        inbox,
    };
    setup.good_link_delivers(0).await;
    setup
}

impl Setup {
    /// The legitimate link from `a` to `b` works both ways: an ask is answered.
    async fn good_link_delivers(&self, n: u64) {
        assert_eq!(
            self.echo.ask(Echo(n)).timeout(WAIT).await,
            Ok(Echoed(n)),
            "the good link"
        );
    }

    /// A note told over the good link is the next thing `b`'s inbox receives:
    /// nothing a bad client sent reached it first (a frame that was delivered
    /// would have been before its connection closed).
    async fn inbox_next_is_from_the_good_link(&mut self, n: u64) {
        self.to_inbox.tell(Note(n));
        let next = tokio::time::timeout(WAIT, self.inbox.recv())
            .await
            .expect("the inbox hears within the bound");
        assert_eq!(next, Some(n), "the next note in b's inbox");
    }

    async fn terminate(self) {
        self.nodes.terminate().await;
    }
}

/// A frame of `Note(n)` to `b`'s inbox.
fn note_frame(n: u64) -> Vec<u8> {
    frame(
        Note::KEY,
        "/user/inbox",
        &postcard::to_allocvec(&Note(n)).unwrap(),
    )
}

// ---------------------------------------------------------------------------
// Frames after the handshake.
// ---------------------------------------------------------------------------

// S37: a frame's length prefix and then silence: the reader cuts the connection
// once the frame has not arrived whole within `unreachable_after`, while the peer's
// other connection keeps the failure detector content (the cut is the frame
// deadline's). The good link goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_frame_prefix_then_silence_is_cut_at_the_deadline() {
    let setup = setup(SHORT).await;
    let address = raw_address("silent");
    let peer = Address::parse(&address).unwrap();
    let (mut stream, _, _) = linked(&setup.nodes.b, &address).await;
    let alive = keep_alive(&setup.nodes.b, &address).await;

    let started = Instant::now();
    stream.write_all(&64_u32.to_be_bytes()).await.unwrap();
    assert_eq!(closed_by_node(&mut stream).await, b"");
    let after = started.elapsed();
    assert!(after >= SHORT, "cut after {after:?}, before the deadline");
    assert!(!setup.nodes.b.is_quarantined(&peer), "the detector cut it");
    alive.abort();

    setup.good_link_delivers(1).await;
    setup.terminate().await;
}

// S37: a frame dribbled a byte every 100 ms, each byte well within
// `unreachable_after` but the whole frame not: cut at the frame deadline, long
// before the frame is through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_frame_dribbled_slower_than_the_deadline_is_cut() {
    let mut setup = setup(SHORT).await;
    let address = raw_address("dribbler");
    let peer = Address::parse(&address).unwrap();
    let (mut stream, _, _) = linked(&setup.nodes.b, &address).await;
    let alive = keep_alive(&setup.nodes.b, &address).await;

    let note = note_frame(1);
    let pause = Duration::from_millis(100);
    assert!(
        pause * note.len() as u32 > 4 * SHORT,
        "the frame is slow enough"
    );
    let started = Instant::now();
    let after = dribble(&mut stream, &note, pause, started)
        .await
        .expect("cut before the whole frame was written");
    assert!(after >= SHORT, "cut after {after:?}, before the deadline");
    assert!(!setup.nodes.b.is_quarantined(&peer), "the detector cut it");
    alive.abort();

    setup.good_link_delivers(1).await;
    setup.inbox_next_is_from_the_good_link(2).await;
    setup.terminate().await;
}

// S37: half a frame and then EOF: the connection is closed at once (not at a
// deadline: `unreachable_after` is 30 s here), and the half frame delivers nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_truncated_frame_then_eof_closes_the_connection() {
    let mut setup = setup(LONG).await;
    let (mut stream, _, _) = linked(&setup.nodes.b, &raw_address("truncated")).await;
    let note = note_frame(666);
    stream.write_all(&note[..note.len() / 2]).await.unwrap();
    stream.shutdown().await.unwrap();
    assert_eq!(closed_by_node(&mut stream).await, b"");

    setup.good_link_delivers(1).await;
    setup.inbox_next_is_from_the_good_link(2).await;
    setup.terminate().await;
}

// S37: a TCP reset in the middle of a frame: the node keeps serving, raw links
// (a whole frame from a new client is delivered) and the good link alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_reset_in_the_middle_of_a_frame_leaves_the_node_serving() {
    let mut setup = setup(LONG).await;
    let (mut stream, _, _) = linked(&setup.nodes.b, &raw_address("reset")).await;
    let note = note_frame(666);
    stream.write_all(&note[..note.len() / 2]).await.unwrap();
    stream.set_zero_linger().unwrap();
    drop(stream);

    let (mut next, _, _) = linked(&setup.nodes.b, &raw_address("after-reset")).await;
    next.write_all(&note_frame(7)).await.unwrap();
    let delivered = tokio::time::timeout(WAIT, setup.inbox.recv())
        .await
        .unwrap();
    assert_eq!(delivered, Some(7), "the first note b's inbox hears");

    setup.good_link_delivers(1).await;
    setup.inbox_next_is_from_the_good_link(8).await;
    setup.terminate().await;
}

// S37: a frame announcing more than `WireLimits::max_frame` is refused from its
// prefix alone, as a dead letter naming the peer, without the node making room for
// what was announced. Its bytes are read through and dropped, so the connection
// stays and the next frame is read; an announcement past what is worth reading
// through (here `u32::MAX`) closes the connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_frame_announcing_more_than_max_frame_is_refused_from_its_prefix() {
    let setup = setup(LONG).await;
    let max = WireLimits::DEFAULT.max_frame;
    let mut letters = setup.nodes.b.events().subscribe::<DeadLetter>();
    let address = raw_address("oversized");
    let (mut stream, _, _) = linked(&setup.nodes.b, &address).await;
    let over = u32::try_from(max + 1).unwrap();
    stream.write_all(&over.to_be_bytes()).await.unwrap();
    stream.write_all(&vec![0; max + 1]).await.unwrap();
    stream.write_all(&u32::MAX.to_be_bytes()).await.unwrap();
    assert_eq!(closed_by_node(&mut stream).await, b"");
    for announced in [u64::from(over), u64::from(u32::MAX)] {
        let letter = letter_within(&mut letters, WAIT).await;
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::FromPeer {
                peer: Address::parse(&address).unwrap(),
                problem: WireProblem::FrameTooLarge { announced, max },
            },
            "{announced}"
        );
    }

    setup.good_link_delivers(1).await;
    setup.terminate().await;
}

// ---------------------------------------------------------------------------
// The handshake.
// ---------------------------------------------------------------------------

// S38: a client that sends its hello a byte a second is cut at the handshake
// deadline (5 s), long before the hello is through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_a_hello_dribbled_a_byte_a_second_is_cut_at_the_handshake_deadline() {
    let setup = setup(LONG).await;
    let hello = framed(&hello(PROTOCOL_VERSION, &raw_address("slowpoke")));
    let pause = Duration::from_secs(1);
    assert!(pause * hello.len() as u32 > 4 * HANDSHAKE_TIMEOUT);
    // The node's clock starts at the accept, after the connect began.
    let started = Instant::now();
    let mut stream = connect(&setup.nodes.b).await;
    let after = dribble(&mut stream, &hello, pause, started)
        .await
        .expect("cut before the hello was through");
    assert!(after >= HANDSHAKE_TIMEOUT, "cut after {after:?}");
    assert!(
        after < HANDSHAKE_TIMEOUT + Duration::from_secs(3),
        "cut after {after:?}"
    );

    setup.good_link_delivers(1).await;
    setup.terminate().await;
}

// S38: bytes that are not a hello (an HTTP request, a body postcard cannot read as
// one, a hello with another magic, a hello from something that is not an address)
// close the connection without an answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_garbage_instead_of_a_hello_closes_the_connection() {
    let setup = setup(LONG).await;
    let odd_hello = |magic: [u8; 5], address: &str| {
        framed(
            &postcard::to_allocvec(&Hello {
                magic,
                version: PROTOCOL_VERSION,
                nonce: [0; 32],
                address: address.to_owned(),
            })
            .unwrap(),
        )
    };
    let cases = [
        ("http", b"GET / HTTP/1.1\r\nHost: tapio\r\n\r\n".to_vec()),
        ("unreadable", framed(&[0xff; 40])),
        ("another magic", odd_hello(*b"HTTP/", &raw_address("magic"))),
        ("no address", odd_hello(*b"TAPIO", "127.0.0.1:1")),
    ];
    for (name, bytes) in cases {
        let mut stream = connect(&setup.nodes.b).await;
        stream.write_all(&bytes).await.unwrap();
        assert_eq!(closed_by_node(&mut stream).await, b"", "{name}");
    }

    setup.good_link_delivers(1).await;
    setup.terminate().await;
}

// S38: an application frame where the proof belongs (right after the hello) is
// refused as a proof: the connection closes without a verdict, and the frame never
// reaches its recipient.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_a_frame_before_the_handshake_finished_is_refused_and_never_delivered() {
    let mut setup = setup(LONG).await;
    let mut stream = connect(&setup.nodes.b).await;
    hello_accepted(&mut stream, hello(PROTOCOL_VERSION, &raw_address("hasty"))).await;
    stream.write_all(&note_frame(666)).await.unwrap();
    assert_eq!(closed_by_node(&mut stream).await, b"");

    setup.good_link_delivers(1).await;
    setup.inbox_next_is_from_the_good_link(2).await;
    setup.terminate().await;
}

// S38: a hello of another protocol version is answered `Reject { "version 1" }`
// (this runtime's version, so the dialer can say which end to upgrade), and the
// connection closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_another_protocol_version_is_rejected_with_ours() {
    let setup = setup(LONG).await;
    for theirs in [0, PROTOCOL_VERSION + 1, u16::MAX] {
        let mut stream = connect(&setup.nodes.b).await;
        write_message(&mut stream, &hello(theirs, &raw_address("future"))).await;
        let answer = read_message(&mut stream).await.expect("an answer");
        assert_eq!(
            postcard::from_bytes::<Answer>(&answer).unwrap(),
            Answer::Reject {
                reason: format!("version {PROTOCOL_VERSION}")
            },
            "version {theirs}"
        );
        assert_eq!(closed_by_node(&mut stream).await, b"", "version {theirs}");
    }

    setup.good_link_delivers(1).await;
    setup.terminate().await;
}

// S38: a proof made with another secret, or with none, is refused: no verdict, the
// connection closes. A real system without a secret dead-letters what it tells the
// node, naming the node, and nothing of it arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_a_wrong_or_missing_secret_is_refused() {
    let mut setup = setup(LONG).await;
    for (name, secret) in [("wrong", &b"fedcba9876543210"[..]), ("empty", &b""[..])] {
        let mut stream = connect(&setup.nodes.b).await;
        let accepted =
            hello_accepted(&mut stream, hello(PROTOCOL_VERSION, &raw_address(name))).await;
        // A dialer with this secret would refuse the listener too.
        assert_ne!(
            accepted.tag,
            handshake_tag(secret, Side::Listener, accepted.transcript()),
            "{name}"
        );
        send_proof(&mut stream, accepted.proof(secret)).await;
        assert_eq!(closed_by_node(&mut stream).await, b"", "{name}");
    }

    let open = ActorSystem::builder("open")
        .remote(RemoteSettings::loopback())
        .build()
        .unwrap();
    let mut letters = open.events().subscribe::<DeadLetter>();
    let inbox = open
        .resolve::<Note>(&format!("{}/user/inbox", setup.nodes.b.address()))
        .unwrap();
    inbox.tell(Note(666));
    let letter = letter_within(&mut letters, WAIT).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::Unreachable {
            peer: setup.nodes.b.address().clone()
        }
    );
    open.terminate().await;

    setup.good_link_delivers(1).await;
    setup.inbox_next_is_from_the_good_link(2).await;
    setup.terminate().await;
}

// S38: the proof of one session, replayed in another with the very same hello, is
// refused: the listener's nonce differs, so the tag does not check out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_a_replayed_dialer_tag_is_refused() {
    let setup = setup(LONG).await;
    let (_first, captured, proof) = linked(&setup.nodes.b, &raw_address("replayer")).await;

    let mut replay = connect(&setup.nodes.b).await;
    let second = hello_accepted(&mut replay, captured.hello.clone()).await;
    assert_ne!(second.nonce, captured.nonce, "a fresh listener nonce");
    send_proof(&mut replay, proof).await;
    assert_eq!(closed_by_node(&mut replay).await, b"");

    setup.good_link_delivers(1).await;
    setup.terminate().await;
}

// S38: the listener's own tag sent back as the proof is refused: the direction
// labels make the two tags differ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_a_reflected_listener_tag_is_refused() {
    let setup = setup(LONG).await;
    let mut stream = connect(&setup.nodes.b).await;
    let accepted =
        hello_accepted(&mut stream, hello(PROTOCOL_VERSION, &raw_address("mirror"))).await;
    send_proof(&mut stream, accepted.tag).await;
    assert_eq!(closed_by_node(&mut stream).await, b"");

    setup.good_link_delivers(1).await;
    setup.terminate().await;
}

// ---------------------------------------------------------------------------
// The dialer's side: a peer that resets.
// ---------------------------------------------------------------------------

/// What the fake peer saw.
#[derive(Debug, PartialEq)]
enum Seen {
    /// Its `n`th connection was handshaken.
    Connection(u32),
    /// A note arrived on connection `.0`.
    Note(u32, u64),
}

/// Report every note that arrives on `connection` until it ends.
async fn read_notes(stream: &mut TcpStream, connection: u32, seen: &mpsc::UnboundedSender<Seen>) {
    loop {
        let mut prefix = [0; 4];
        if stream.read_exact(&mut prefix).await.is_err() {
            return;
        }
        let mut body = vec![0; u32::from_be_bytes(prefix) as usize];
        if stream.read_exact(&mut body).await.is_err() {
            return;
        }
        let (header, payload) = postcard::take_from_bytes::<FrameHeader<'_>>(&body).unwrap();
        if header.key == Note::KEY {
            let Note(n) = postcard::from_bytes(payload).unwrap();
            let _ = seen.send(Seen::Note(connection, n));
        }
    }
}

/// A peer at `listener` that links as `address`, reads what its first connection
/// brings until `reset`, resets it, then serves one more connection.
async fn fake_peer(
    listener: TcpListener,
    address: String,
    seen: mpsc::UnboundedSender<Seen>,
    reset: oneshot::Receiver<()>,
) {
    let (mut first, _) = listener.accept().await.unwrap();
    accept_as_listener(&mut first, &address).await;
    let _ = seen.send(Seen::Connection(1));
    tokio::select! {
        () = read_notes(&mut first, 1, &seen) => {}
        _ = reset => {}
    }
    first.set_zero_linger().unwrap();
    drop(first);
    let (mut second, _) = listener.accept().await.unwrap();
    accept_as_listener(&mut second, &address).await;
    let _ = seen.send(Seen::Connection(2));
    read_notes(&mut second, 2, &seen).await;
}

// S39: a peer that resets the connection this system dialled: what was queued or
// in flight on it becomes dead letters `ConnectionLost` naming the peer, and the
// next send dials again (the peer sees a second connection, and the note on it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_a_reset_by_the_peer_dead_letters_what_was_on_the_connection_and_dials_again() {
    let mut setup = setup(LONG).await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!(
        "tapio://fake@127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    let peer = Address::parse(&address).unwrap();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let (reset, reset_rx) = oneshot::channel();
    let fake = tokio::spawn(fake_peer(listener, address.clone(), seen_tx, reset_rx));
    let a = &setup.nodes.a;
    let mut letters = a.events().subscribe::<DeadLetter>();
    let to_fake = a.resolve::<Note>(&format!("{address}/user/inbox")).unwrap();

    for n in 1..=3 {
        to_fake.tell(Note(n));
    }
    assert_eq!(recv_within(&mut seen, WAIT).await, Seen::Connection(1));
    for n in 1..=3 {
        assert_eq!(recv_within(&mut seen, WAIT).await, Seen::Note(1, n));
    }

    // Three notes held in the writer and the queue when the peer resets.
    let toward = LinkDirection::between(a, &peer);
    toward.partition();
    for n in 4..=6 {
        to_fake.tell(Note(n));
    }
    reset.send(()).unwrap();
    // One letter per note, and one for what the writer held (a note, or a
    // heartbeat): at least three, each naming the peer.
    for _ in 0..3 {
        let letter = letter_within(&mut letters, WAIT).await;
        assert_eq!(
            letter.reason(),
            &DeadLetterReason::ConnectionLost { peer: peer.clone() },
            "{letter:?}"
        );
    }

    toward.clear();
    to_fake.tell(Note(7));
    assert_eq!(recv_within(&mut seen, WAIT).await, Seen::Connection(2));
    assert_eq!(recv_within(&mut seen, WAIT).await, Seen::Note(2, 7));
    assert!(!a.is_quarantined(&peer));

    setup.good_link_delivers(1).await;
    setup.inbox_next_is_from_the_good_link(2).await;
    fake.abort();
    setup.terminate().await;
}

/// A peer at `listener` that accepts the handshake as `address` and then never
/// sends its verdict, holding every connection open.
async fn stalling_peer(listener: TcpListener, address: String) {
    let mut held = Vec::new();
    loop {
        let (mut stream, _) = listener.accept().await.unwrap();
        accept_as_listener_without_verdict(&mut stream, &address).await;
        held.push(stream);
    }
}

/// A peer at `listener` that answers every hello with bytes that are no answer.
async fn babbling_peer(listener: TcpListener) {
    loop {
        let (mut stream, _) = listener.accept().await.unwrap();
        let _ = stream.write_all(&[0xff; 64]).await;
    }
}

// S39: the dialer's side of a handshake that goes wrong: a peer that answers with
// garbage, and one that accepts the handshake but never sends its verdict. Neither
// hangs the sender: what was told becomes a dead letter `Unreachable` naming the
// peer, the silent one's at the handshake deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_a_peer_that_babbles_or_stalls_in_the_handshake_dead_letters_instead_of_hanging() {
    let mut setup = setup(LONG).await;
    let a = &setup.nodes.a;
    let mut letters = a.events().subscribe::<DeadLetter>();
    let fake = |name: &str, listener: &TcpListener| {
        let port = listener.local_addr().unwrap().port();
        format!("tapio://{name}@127.0.0.1:{port}")
    };
    let babbler = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let babbler_address = fake("babbler", &babbler);
    let staller = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let staller_address = fake("staller", &staller);
    let peers = [
        tokio::spawn(babbling_peer(babbler)),
        tokio::spawn(stalling_peer(staller, staller_address.clone())),
    ];

    let started = Instant::now();
    for address in [&babbler_address, &staller_address] {
        let to_fake = a.resolve::<Note>(&format!("{address}/user/inbox")).unwrap();
        to_fake.tell(Note(1));
    }
    let babbled = letter_within(&mut letters, WAIT).await;
    assert_eq!(
        babbled.reason(),
        &DeadLetterReason::Unreachable {
            peer: Address::parse(&babbler_address).unwrap()
        }
    );
    let stalled = letter_within(&mut letters, WAIT).await;
    assert_eq!(
        stalled.reason(),
        &DeadLetterReason::Unreachable {
            peer: Address::parse(&staller_address).unwrap()
        }
    );
    assert!(
        started.elapsed() >= HANDSHAKE_TIMEOUT,
        "given up after {:?}",
        started.elapsed()
    );

    setup.good_link_delivers(1).await;
    setup.inbox_next_is_from_the_good_link(2).await;
    for peer in peers {
        peer.abort();
    }
    setup.terminate().await;
}

// S38: a crowd of strangers that connect and say nothing holds at most 128
// handshakes open at once: the connections past that are closed at once, not held
// for the handshake deadline, and the established link keeps delivering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_connections_stuck_in_the_handshake_are_bounded() {
    let mut setup = setup(LONG).await;
    let mut silent = Vec::new();
    for _ in 0..128 {
        silent.push(connect(&setup.nodes.b).await);
    }
    // Past the bound: closed at once, long before the 5 s handshake deadline.
    let mut extra = connect(&setup.nodes.b).await;
    let started = Instant::now();
    assert!(closed_by_node(&mut extra).await.is_empty());
    assert!(
        started.elapsed() < HANDSHAKE_TIMEOUT,
        "{:?}",
        started.elapsed()
    );
    setup.good_link_delivers(1).await;
    setup.inbox_next_is_from_the_good_link(2).await;
    drop(silent);
    setup.nodes.terminate().await;
}
