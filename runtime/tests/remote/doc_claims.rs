//! Remoting as the README and the guides describe it: the named examples exist, the
//! secret required beyond loopback, the settings' defaults and `Debug`, a tell to a
//! closed port, and a stopped peer heard at once.
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::doc_claims::*;

use std::time::Duration;

use tapio::prelude::*;

use tapio::remote::{RemoteError, RemoteSettings};

use tapio::testkit::{TestProbe, two_nodes};

use tapio::{AskError, DeadLetter, DeadLetterReason, SystemError};

// ---------------------------------------------------------------- remoting

// remoting.md, Security: "Listening on anything but loopback without a secret refuses
// to start. The secret must be at least 16 bytes".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_loopback_a_secret_of_at_least_16_bytes_is_required() {
    let none = ActorSystem::builder("open")
        .remote(RemoteSettings::bind("0.0.0.0", 0))
        .build();
    assert!(
        matches!(
            none,
            Err(SystemError::Remote(RemoteError::SecretRequired { .. }))
        ),
        "{none:?}"
    );
    let short = ActorSystem::builder("short")
        .remote(RemoteSettings::bind("0.0.0.0", 0).secret(vec![7u8; 15]))
        .build();
    assert!(
        matches!(
            short,
            Err(SystemError::Remote(RemoteError::SecretTooShort { len: 15 }))
        ),
        "{short:?}"
    );
    let ok = ActorSystem::builder("long")
        .remote(RemoteSettings::bind("0.0.0.0", 0).secret(vec![7u8; 16]))
        .build()
        .unwrap();
    within("terminate", ok.terminate()).await;
}

// remoting.md, Failure model: "`heartbeat_interval` (1 s by default)", "`unreachable_after`
// (10 s by default)"; TLS: "Neither `TlsSettings` nor `RemoteSettings` prints key
// material in its `Debug`."
#[test]
fn remote_settings_defaults_and_debug_without_the_secret() {
    let settings = RemoteSettings::loopback().secret("correct-horse-battery-staple");
    let debug = format!("{settings:?}");
    assert!(!debug.contains("correct-horse"), "{debug}");
    assert!(debug.contains("heartbeat_interval: 1s"), "{debug}");
    assert!(debug.contains("unreachable_after: 10s"), "{debug}");
}

#[message(remote = "docs8.note.v1")]
pub struct Note(pub u64);

#[message(remote = "docs8.pong.v1")]
#[derive(Debug)]
pub struct Pong(pub u64);

#[message(remote = "docs8.ping.v1", reply = Pong)]
pub struct Ping;

#[derive(Clone)]
pub struct Echo;

#[actor]
impl Echo {
    fn ping(&mut self, _: Ping) -> Pong {
        Pong(1)
    }
    fn note(&mut self, _: Note) {}
}

// remoting.md, Security: "a port nobody listens on fails at once" (the dead letter is
// `Unreachable`; not after the 5 s handshake timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tell_to_a_port_nobody_listens_on_is_dead_lettered_unreachable_at_once() {
    let system = ActorSystem::builder("dialer")
        .remote(RemoteSettings::loopback())
        .build()
        .unwrap();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let uri = format!("tapio://nobody@127.0.0.1:{port}/user/sink");
    let remote = system.resolve::<Note>(&uri).unwrap();
    remote.tell(Note(1));
    let letter = tokio::time::timeout(Duration::from_secs(2), letters.recv())
        .await
        .expect("at once, not after the handshake timeout")
        .unwrap();
    assert!(
        matches!(letter.reason(), DeadLetterReason::Unreachable { .. }),
        "{letter}"
    );
    within("terminate", system.terminate()).await;
}

// remoting.md, Failure model: "A system that stops tells its peers. Their watchers
// hear `Terminated` at once, not after the detector's window"; table: an ask to an
// actor that is gone: "`Unreachable`, at once, once its system was ... stopped"; "refs
// resolved before then dead-letter (`SessionEnded`)".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_peer_is_heard_at_once_and_its_refs_refuse() {
    let nodes = two_nodes(RemoteSettings::loopback()).unwrap();
    let echo = nodes.b.spawn(Echo, "echo").unwrap();
    let remote = nodes.a.resolve::<EchoMsg>(&echo.path().to_uri()).unwrap();
    let pong = within("remote ask", remote.ask(Ping).timeout(WAIT))
        .await
        .unwrap();
    assert_eq!(pong.0, 1);
    let mut probe = TestProbe::<u64>::new(&nodes.a);
    probe.watch(&remote);
    let mut letters = nodes.a.events().subscribe::<DeadLetter>();
    within("terminate b", nodes.b.terminate()).await;
    probe
        .expect_terminated(&remote, Duration::from_secs(3))
        .await;

    let answer = tokio::time::timeout(SECOND, remote.ask(Ping).timeout(Duration::from_secs(30)))
        .await
        .expect("refused at once");
    assert!(
        matches!(answer, Err(AskError::Unreachable { .. })),
        "{answer:?}"
    );

    remote.tell(Note(2));
    let letter = loop {
        let letter = letter_within(&mut letters, WAIT).await;
        if letter.short_message_type() == "Note" {
            break letter;
        }
    };
    assert!(
        matches!(letter.reason(), DeadLetterReason::SessionEnded { .. }),
        "{letter}"
    );
    within("terminate", nodes.terminate()).await;
}
