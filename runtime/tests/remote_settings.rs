//! Remote settings (S38): the port is bound while the system is built, so the
//! address is settled before any ref is handed out; port 0 lets the OS pick;
//! listening beyond loopback without a shared secret refuses to start; the port is
//! given back when the system terminates.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tapio::SystemError;
use tapio::prelude::*;
use tapio::remote::{RemoteError, RemoteSettings};

fn remote_error(result: Result<ActorSystem, SystemError>) -> RemoteError {
    match result {
        Err(SystemError::Remote(error)) => error,
        Err(other) => panic!("expected a remote settings error, got {other}"),
        Ok(_) => panic!("expected the system not to start"),
    }
}

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
