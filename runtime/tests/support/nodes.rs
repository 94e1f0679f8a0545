//! What the tests of linked systems share: loopback settings with a fast or a slow
//! failure detector, a certificate authority made at test time for TLS settings,
//! a watcher that reports each `Terminated` it hears, waits for a link, a give-up
//! and a recovery, and small helpers on addresses, ports, settings errors and the
//! peer a dead letter names.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;
use tapio::prelude::*;
use tapio::remote::{PeerUnreachable, RemoteError, RemoteSettings, TlsSettings};
use tapio::testkit::LinkDirection;
use tapio::{Address, AnyActorRef, DeadLetterReason, Subscription, SystemError};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::outside::T;

/// Loopback with a failure detector that gives a silent peer up after 300 ms.
pub fn fast() -> RemoteSettings {
    RemoteSettings::loopback()
        .heartbeat_interval(Duration::from_millis(30))
        .unreachable_after(Duration::from_millis(300))
}

/// Loopback with a failure detector that never fires during a test.
pub fn slow_detector() -> RemoteSettings {
    RemoteSettings::loopback()
        .heartbeat_interval(Duration::from_millis(100))
        .unreachable_after(Duration::from_secs(20))
}

/// The URI of `path` on `system`.
pub fn uri(system: &ActorSystem, path: &str) -> String {
    format!("{}{}", system.address(), path)
}

/// The peer a dead letter's reason names, if it names one.
pub fn peer_of(reason: &DeadLetterReason) -> Option<&Address> {
    match reason {
        DeadLetterReason::NoLink { peer }
        | DeadLetterReason::Unreachable { peer }
        | DeadLetterReason::ConnectionLost { peer }
        | DeadLetterReason::Quarantined { peer }
        | DeadLetterReason::SessionEnded { peer }
        | DeadLetterReason::OutboundFull { peer }
        | DeadLetterReason::FromPeer { peer, .. } => Some(peer),
        _ => None,
    }
}

/// An actor on `system` that watches `target` and forwards each `Terminated` it hears.
pub fn watcher<Q: Message>(
    system: &ActorSystem,
    name: &str,
    target: ActorRef<Q>,
) -> mpsc::UnboundedReceiver<AnyActorRef> {
    let (tx, rx) = mpsc::unbounded_channel();
    let behavior: Behavior<u64> = Behaviors::setup(move |ctx: &mut ActorContext<u64>| {
        ctx.watch(&target);
        let tx = tx.clone();
        Behaviors::receive_message(|_: u64| {}).on_signal(move |_, signal: &Signal| {
            if let Signal::Terminated(terminated) = signal {
                let _ = tx.send(terminated.actor().clone());
            }
        })
    });
    system.spawn(behavior, name).expect("spawn the watcher");
    rx
}

/// A certificate authority made for one test.
pub struct Ca {
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    pub fn new(name: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let pem = params.self_signed(&key).unwrap().pem();
        Self {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// A node certificate for 127.0.0.1 and localhost (server and client), and its
    /// key, as PEM.
    pub fn node(&self, name: &str) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    /// TLS settings for a node whose certificate this CA signs, trusting `roots`.
    pub fn tls(&self, name: &str, roots: &Ca) -> TlsSettings {
        let (cert, key) = self.node(name);
        TlsSettings::from_pem(cert.as_bytes(), key.as_bytes(), roots.pem.as_bytes()).unwrap()
    }
}

/// The reason of the TLS error `result` must be.
pub fn tls_reason(result: Result<TlsSettings, RemoteError>) -> String {
    match result {
        Err(RemoteError::Tls { reason }) => reason,
        other => panic!("expected RemoteError::Tls, got {other:?}"),
    }
}

/// A loopback port that was bound and closed again: nobody listens there.
pub fn closed_port() -> u16 {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    closed.local_addr().unwrap().port()
}

/// The remote-settings error a system refused to start with.
pub fn remote_error(result: Result<ActorSystem, SystemError>) -> RemoteError {
    match result {
        Err(SystemError::Remote(error)) => error,
        Err(other) => panic!("expected a RemoteError, got {other}"),
        Ok(system) => {
            drop(system.terminate());
            panic!("the settings were accepted")
        }
    }
}

/// Waits, within `within`, for a `PeerUnreachable` naming `peer` (others are
/// skipped), and checks that the peer was quarantined.
pub async fn given_up(sub: &mut Subscription<PeerUnreachable>, peer: &Address, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, sub.recv()).await {
            Ok(Some(event)) if &event.peer == peer => {
                assert!(event.quarantined);
                return;
            }
            Ok(Some(_)) => {}
            Ok(None) => panic!("the event stream ended"),
            Err(_) => panic!("{peer} was not given up on within {within:?}"),
        }
    }
}

/// Partitions `a` and `b` both ways until each has given up on the other (each
/// give-up within `within`).
pub async fn partition_until_given_up(a: &ActorSystem, b: &ActorSystem, within: Duration) {
    let mut on_a = a.events().subscribe::<PeerUnreachable>();
    let mut on_b = b.events().subscribe::<PeerUnreachable>();
    LinkDirection::between(a, b.address()).partition();
    LinkDirection::between(b, a.address()).partition();
    given_up(&mut on_a, b.address(), within).await;
    given_up(&mut on_b, a.address(), within).await;
}

/// Heals `a` and `b`, clears both quarantines and links `a` to `b` again.
pub async fn recover(a: &ActorSystem, b: &ActorSystem) {
    LinkDirection::between(a, b.address()).heal();
    LinkDirection::between(b, a.address()).heal();
    assert!(a.clear_quarantine(b.address()));
    assert!(b.clear_quarantine(a.address()));
    linked(a, b, T).await;
}

/// Waits (within `within`) until `a` is linked to `b`.
pub async fn linked(a: &ActorSystem, b: &ActorSystem, within: Duration) {
    tokio::time::timeout(within, a.reconnect(b.address()))
        .await
        .expect("reconnect hung")
        .expect("a links to b");
}

/// A system listening on 127.0.0.1:`port` (0: the OS picks), with heartbeats every
/// 100 ms and a detector that gives a silent peer up after `unreachable_after`.
pub fn node_on(name: &str, port: u16, unreachable_after: Duration) -> ActorSystem {
    ActorSystem::builder(name)
        .remote(
            RemoteSettings::bind("127.0.0.1", port)
                .heartbeat_interval(Duration::from_millis(100))
                .unreachable_after(unreachable_after),
        )
        .build()
        .unwrap()
}

/// A free loopback port below the ephemeral range, a different one for each call,
/// so that no port-0 socket of a test running alongside takes it while the system
/// that had it is down.
pub fn low_port() -> u16 {
    static NEXT: AtomicU16 = AtomicU16::new(0);
    // 20,000 to 32,491: below Linux's ephemeral range (from 32,768).
    let base = 20_000 + (std::process::id() % 1_500) as u16 * 8;
    loop {
        let port = base + NEXT.fetch_add(1, Ordering::SeqCst) % 500;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}
