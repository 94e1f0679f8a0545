//! Links over mutual TLS, two systems in one process on loopback (S38's optional
//! TLS): a tell and an ask cross; a peer whose certificate another CA signed is
//! refused, whichever end it is; an end without TLS and an end with it do not link;
//! bad PEM is a typed error before anything starts; the settings' `Debug` shows no
//! key. Every certificate is made here, at test time: no key is committed.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::{RemoteSettings, TlsSettings};
use tapio::{DeadLetter, DeadLetterReason};

use crate::support::greeter;
use crate::support::nodes::{Ca, tls_reason};
use greeter::*;

const WAIT: Duration = Duration::from_secs(10);
const SECRET: &[u8] = b"0123456789abcdef";

fn node(name: &str, tls: Option<TlsSettings>) -> ActorSystem {
    let mut settings = RemoteSettings::loopback().secret(SECRET.to_vec());
    if let Some(tls) = tls {
        settings = settings.tls(tls);
    }
    ActorSystem::builder(name).remote(settings).build().unwrap()
}

/// A directory of its own under the system's temporary one, for PEM files.
fn scratch_dir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tapio-link-tls-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// A tell crosses a TLS link and the answer comes back over the other one; an ask
// crosses both ways. One node's settings come from PEM files, the other's from
// memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tell_and_an_ask_cross_a_tls_link() {
    let ca = Ca::new("cluster ca");
    let dir = scratch_dir("cross");
    let (cert, key) = ca.node("away");
    std::fs::write(dir.join("away.pem"), cert).unwrap();
    std::fs::write(dir.join("away.key"), key).unwrap();
    std::fs::write(dir.join("ca.pem"), &ca.pem).unwrap();
    let from_files = TlsSettings::from_pem_files(
        dir.join("away.pem"),
        dir.join("away.key"),
        dir.join("ca.pem"),
    )
    .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();

    let away = node("away", Some(from_files));
    let home = node("home", Some(ca.tls("home", &ca)));
    away.spawn(Behaviors::setup(|_| Greeter { greeted: 0 }), "greeter")
        .unwrap();
    let greeter = home
        .resolve::<GreeterMsg>(&format!("{}/user/greeter", away.address()))
        .unwrap();
    let (me, mut heard) = listener(&home);
    greeter.tell(Greet {
        whom: "ada".into(),
        reply_to: me,
    });
    assert_eq!(
        tokio::time::timeout(WAIT, heard.recv())
            .await
            .unwrap()
            .unwrap(),
        "hello, ada!"
    );
    assert_eq!(greeter.ask(Count).timeout(WAIT).await.unwrap(), Counted(1));
    home.terminate().await;
    away.terminate().await;
}

/// Tell `away`'s greeter something from `home`, and assert that the link is
/// refused: the sender dead-letters it as `Unreachable`, and nothing reached the
/// greeter.
async fn assert_refused(home: &ActorSystem, away: &ActorSystem) {
    let greeter = away
        .spawn(Behaviors::setup(|_| Greeter { greeted: 0 }), "greeter")
        .unwrap();
    let mut letters = home.events().subscribe::<DeadLetter>();
    let remote = home
        .resolve::<GreeterMsg>(&format!("{}/user/greeter", away.address()))
        .unwrap();
    let (me, mut heard) = listener(home);
    remote.tell(Greet {
        whom: "mallory".into(),
        reply_to: me,
    });
    let letter = tokio::time::timeout(WAIT, letters.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::Unreachable {
            peer: away.address().clone()
        }
    );
    // Asked on its own system: the greeter never saw the message.
    assert_eq!(greeter.ask(Count).timeout(WAIT).await.unwrap(), Counted(0));
    assert!(heard.try_recv().is_err());
}

// The dialer's certificate is signed by a CA the listener does not trust: the
// listener refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialer_signed_by_another_ca_is_refused() {
    let ca = Ca::new("cluster ca");
    let rogue = Ca::new("rogue ca");
    let away = node("away", Some(ca.tls("away", &ca)));
    // It trusts the cluster's CA, so only the listener's check can refuse it.
    let home = node("home", Some(rogue.tls("home", &ca)));
    assert_refused(&home, &away).await;
    home.terminate().await;
    away.terminate().await;
}

// The listener's certificate is signed by a CA the dialer does not trust: the
// dialer refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_signed_by_another_ca_is_refused() {
    let ca = Ca::new("cluster ca");
    let rogue = Ca::new("rogue ca");
    // It trusts the cluster's CA, so only the dialer's check can refuse it.
    let away = node("away", Some(rogue.tls("away", &ca)));
    let home = node("home", Some(ca.tls("home", &ca)));
    assert_refused(&home, &away).await;
    home.terminate().await;
    away.terminate().await;
}

// A dialer without TLS (but with the right secret) against a TLS listener is
// refused, and so is the other way round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_and_plain_tcp_do_not_link() {
    let ca = Ca::new("cluster ca");
    let away = node("away", Some(ca.tls("away", &ca)));
    let home = node("home", None);
    assert_refused(&home, &away).await;
    home.terminate().await;
    away.terminate().await;

    let away = node("away", None);
    let home = node("home", Some(ca.tls("home", &ca)));
    assert_refused(&home, &away).await;
    home.terminate().await;
    away.terminate().await;
}

// Bad PEM, a key that is not the certificate's, no CA root, or a missing file: a
// typed error, before any system is built, that names the part at fault.
#[test]
fn bad_pem_is_a_typed_error() {
    let ca = Ca::new("cluster ca");
    let (cert, key) = ca.node("node");
    let (_, other_key) = ca.node("other");
    let (cert, key, roots) = (cert.as_bytes(), key.as_bytes(), ca.pem.as_bytes());

    let reason = tls_reason(TlsSettings::from_pem(b"garbage", key, roots));
    assert!(reason.contains("certificate chain"), "{reason}");
    let reason = tls_reason(TlsSettings::from_pem(cert, b"garbage", roots));
    assert!(reason.contains("private key"), "{reason}");
    let reason = tls_reason(TlsSettings::from_pem(cert, key, b""));
    assert!(reason.contains("CA roots"), "{reason}");
    let reason = tls_reason(TlsSettings::from_pem(cert, other_key.as_bytes(), roots));
    assert!(reason.contains("private key"), "{reason}");
    let reason = tls_reason(TlsSettings::from_pem_files("/nonexistent/a.pem", "b", "c"));
    assert!(reason.contains("/nonexistent/a.pem"), "{reason}");

    // The message says what to do.
    let message = TlsSettings::from_pem(b"", b"", b"")
        .err()
        .unwrap()
        .to_string();
    assert!(message.contains("PEM"), "{message}");
}

// `Debug` of the settings (and of `RemoteSettings` holding them) shows no key
// material; `RemoteSettings` stays `Clone`.
#[test]
fn debug_shows_no_key() {
    let ca = Ca::new("cluster ca");
    let (cert, key) = ca.node("node");
    let tls = TlsSettings::from_pem(cert.as_bytes(), key.as_bytes(), ca.pem.as_bytes()).unwrap();
    let settings = RemoteSettings::loopback().tls(tls);
    let printed = format!("{:?} {:?}", settings.clone(), settings);
    let key_body: String = key
        .lines()
        .filter(|line| !line.starts_with("-----"))
        .collect();
    for chunk in key_body.as_bytes().chunks(16) {
        let chunk = std::str::from_utf8(chunk).unwrap();
        assert!(!printed.contains(chunk), "{printed}");
    }
    assert!(!printed.contains("PRIVATE"), "{printed}");
    assert!(settings.has_tls());
}
