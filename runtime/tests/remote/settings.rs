//! Remote settings (S38): the port is bound while the system is built, so the
//! address is settled before any ref is handed out; port 0 lets the OS pick;
//! listening beyond loopback without a shared secret refuses to start; the port is
//! given back when the system terminates.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::nodes::remote_error;
use tapio::prelude::*;
use tapio::remote::{RemoteError, RemoteSettings};

// S38: port 0 lets the OS pick; the address every ref writes down carries the host
// and the port actually bound, from the start.
#[tokio::test]
async fn s38_the_port_is_bound_while_the_system_is_built() {
    let system = ActorSystem::builder("node")
        .remote(RemoteSettings::loopback())
        .build()
        .unwrap();
    let (host, port) = system.address().host_port().expect("a listening system");
    assert_eq!(host, "127.0.0.1");
    assert_ne!(port, 0, "the OS picked a port");
    let echo = system
        .spawn(Behaviors::receive_message(|_: u64| {}), "echo")
        .unwrap();
    assert_eq!(
        echo.to_string(),
        format!("tapio://node@127.0.0.1:{port}/user/echo#{}", echo.uid())
    );
    // The port is taken while the system runs.
    let taken = remote_error(
        ActorSystem::builder("other")
            .remote(RemoteSettings::bind("127.0.0.1", port))
            .build(),
    );
    assert!(matches!(taken, RemoteError::Bind { .. }), "{taken}");
    system.terminate().await;
    // And given back once it has terminated.
    let again = ActorSystem::builder("again")
        .remote(RemoteSettings::bind("127.0.0.1", port))
        .build()
        .unwrap();
    assert_eq!(again.address().host_port(), Some(("127.0.0.1", port)));
    again.terminate().await;
}

// S38: beyond loopback, a shared secret is required, and a real one.
#[tokio::test]
async fn s38_listening_beyond_loopback_needs_a_secret() {
    let refused = remote_error(
        ActorSystem::builder("open")
            .remote(RemoteSettings::bind("0.0.0.0", 0))
            .build(),
    );
    assert_eq!(
        refused,
        RemoteError::SecretRequired {
            host: "0.0.0.0".into()
        }
    );
    assert!(refused.to_string().contains("RemoteSettings::secret"));
    let short = remote_error(
        ActorSystem::builder("open")
            .remote(RemoteSettings::bind("0.0.0.0", 0).secret("hunter2"))
            .build(),
    );
    assert_eq!(short, RemoteError::SecretTooShort { len: 7 });
    let settings = RemoteSettings::bind("0.0.0.0", 0).secret(*b"0123456789abcdef0123");
    assert!(
        !format!("{settings:?}").contains("0123456789"),
        "the secret is never printed"
    );
    let system = ActorSystem::builder("guarded")
        .remote(settings)
        .build()
        .unwrap();
    assert_eq!(
        system.address().host_port().map(|(h, _)| h),
        Some("0.0.0.0")
    );
    system.terminate().await;
}

// S38: a host that does not resolve is refused with the resolver's reason.
#[tokio::test]
async fn s38_an_unresolvable_host_is_refused() {
    let error = remote_error(
        ActorSystem::builder("nowhere")
            .remote(RemoteSettings::bind("no such host!", 0))
            .build(),
    );
    assert!(matches!(error, RemoteError::Unresolvable { .. }), "{error}");
}

#[message(remote = "settings-test.note.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Note(pub u64);

// S38 + S39: a zero handshake timeout is refused with a message that says what to
// do; a peer that accepts the connection and then says nothing holds what is sent
// to it for the handshake timeout only, then it is a dead letter (`Unreachable`)
// with its message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_the_handshake_timeout_bounds_a_silent_peer() {
    let zero = ActorSystem::builder("zero")
        .remote(RemoteSettings::loopback().handshake_timeout(std::time::Duration::ZERO))
        .build();
    let error = remote_error(zero);
    assert!(matches!(error, RemoteError::HandshakeTimeout));
    assert!(error.to_string().contains("above zero"), "{error}");

    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    // Accepts, holds the connection open, and never writes a byte.
    let holder = tokio::spawn(async move {
        let (socket, _) = silent.accept().await.unwrap();
        std::future::pending::<()>().await;
        drop(socket);
    });
    let patience = std::time::Duration::from_millis(200);
    let system = ActorSystem::builder("asker")
        .remote(RemoteSettings::loopback().handshake_timeout(patience))
        .build()
        .unwrap();
    let mut letters = system.events().subscribe::<tapio::DeadLetter>();
    let remote = system
        .resolve::<Note>(&format!("tapio://silent@127.0.0.1:{port}/user/x"))
        .unwrap();
    let started = std::time::Instant::now();
    remote.tell(Note(1));
    let letter = tokio::time::timeout(std::time::Duration::from_secs(10), letters.recv())
        .await
        .expect("no dead letter")
        .expect("the event stream closed");
    let waited = started.elapsed();
    assert!(
        matches!(letter.reason(), tapio::DeadLetterReason::Unreachable { .. }),
        "{letter}"
    );
    assert_eq!(letter.take_message::<Note>(), Some(Note(1)));
    // Given up after the timeout asked for, not the default's five seconds.
    assert!(waited >= patience, "{waited:?}");
    assert!(
        waited < RemoteSettings::DEFAULT_HANDSHAKE_TIMEOUT,
        "{waited:?}"
    );
    holder.abort();
    system.terminate().await;
}
