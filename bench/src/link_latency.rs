//! Latency across a link (issue 13):
//!
//! - remote ask: the p50 and p99 of one ask at a time across a loopback link,
//!   against the same round trip of 100 bytes over a raw tokio `TcpStream` (the
//!   floor any transport on this machine stands on);
//! - handshake: dial, handshake and the listener's verdict (`reconnect`), plain and
//!   over mutual TLS, against a bare TCP connect.

use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tapio::prelude::*;
use tapio::remote::{RemoteSettings, TlsSettings};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Asks measured one after another in a run.
pub const ASKS: usize = 5_000;
/// Handshakes measured in a run.
pub const HANDSHAKES: usize = 50;
/// The request and its answer each carry this many bytes of body.
const BODY: usize = 100;

#[message(remote = "bench.ping.v1", reply = Pong)]
pub struct Ping(pub Vec<u8>);

#[message(remote = "bench.pong.v1")]
pub struct Pong(pub Vec<u8>);

/// Answers each ping with its body.
pub struct Echo;

#[actor]
impl Echo {
    fn ping(&mut self, Ping(body): Ping) -> Pong {
        Pong(body)
    }
}

/// The `q` quantile (0.0 to 1.0) of sorted `samples`.
pub fn quantile(samples: &[Duration], q: f64) -> Duration {
    let at = ((samples.len() as f64 - 1.0) * q).round() as usize;
    samples[at.min(samples.len() - 1)]
}

fn node(name: &str, settings: RemoteSettings) -> ActorSystem {
    ActorSystem::builder(name)
        .remote(settings)
        .build()
        .expect("a system")
}

/// The latency of each of `ASKS` asks across a loopback link, sorted.
pub async fn remote_ask() -> Vec<Duration> {
    let (away, home) = (
        node("away", RemoteSettings::loopback()),
        node("home", RemoteSettings::loopback()),
    );
    let echo = away
        .spawn(Behaviors::setup(|_| Echo), "echo")
        .expect("spawned");
    let remote = home
        .resolve::<EchoMsg>(&echo.path().to_uri())
        .expect("resolved");
    // The first ask dials: it is not measured.
    remote
        .ask(Ping(vec![0; BODY]))
        .await
        .expect("the link works");
    let mut samples = Vec::with_capacity(ASKS);
    for _ in 0..ASKS {
        let start = Instant::now();
        let Pong(body) = remote.ask(Ping(vec![7; BODY])).await.expect("answered");
        samples.push(start.elapsed());
        std::hint::black_box(body);
    }
    home.terminate().await;
    away.terminate().await;
    samples.sort_unstable();
    samples
}

/// The latency of each of `ASKS` round trips of `BODY` bytes over a raw loopback
/// TCP connection (with a length prefix, as a frame has), sorted.
pub async fn raw_round_trip() -> Vec<Duration> {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let address = listener.local_addr().expect("an address");
    let server = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.expect("accepted");
        stream.set_nodelay(true).expect("nodelay");
        let mut frame = [0; 4 + BODY];
        while stream.read_exact(&mut frame).await.is_ok() {
            if stream.write_all(&frame).await.is_err() {
                return;
            }
        }
    });
    let mut stream = TcpStream::connect(address).await.expect("connected");
    stream.set_nodelay(true).expect("nodelay");
    let mut frame = [7; 4 + BODY];
    frame[..4].copy_from_slice(&(BODY as u32).to_be_bytes());
    let mut answer = [0; 4 + BODY];
    let mut samples = Vec::with_capacity(ASKS);
    for _ in 0..=ASKS {
        let start = Instant::now();
        stream.write_all(&frame).await.expect("written");
        stream.read_exact(&mut answer).await.expect("read");
        samples.push(start.elapsed());
    }
    drop(stream);
    let _ = server.await;
    // The first round trip warms the connection: not measured.
    samples.remove(0);
    samples.sort_unstable();
    samples
}

/// A certificate authority for the TLS handshake row.
struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    fn new() -> Self {
        let key = KeyPair::generate().expect("a key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "bench ca");
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let pem = params.self_signed(&key).expect("signed").pem();
        Self {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    fn tls(&self) -> TlsSettings {
        let key = KeyPair::generate().expect("a key");
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).expect("params");
        params
            .distinguished_name
            .push(DnType::CommonName, "bench node");
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let cert = params.signed_by(&key, &self.issuer).expect("signed");
        TlsSettings::from_pem(
            cert.pem().as_bytes(),
            key.serialize_pem().as_bytes(),
            self.pem.as_bytes(),
        )
        .expect("TLS settings")
    }
}

/// The time of each of `HANDSHAKES` links made with `reconnect` (dial, TLS if
/// `tls`, handshake, verdict), each between two fresh systems, sorted.
pub async fn handshakes(tls: bool) -> Vec<Duration> {
    let ca = Ca::new();
    let settings = || {
        let settings = RemoteSettings::loopback().secret(b"0123456789abcdef".to_vec());
        if tls {
            settings.tls(ca.tls())
        } else {
            settings
        }
    };
    let mut samples = Vec::with_capacity(HANDSHAKES);
    for _ in 0..HANDSHAKES {
        let (away, home) = (node("away", settings()), node("home", settings()));
        let start = Instant::now();
        home.reconnect(away.address()).await.expect("linked");
        samples.push(start.elapsed());
        home.terminate().await;
        away.terminate().await;
    }
    samples.sort_unstable();
    samples
}

/// The time of each of `HANDSHAKES` bare TCP connects on loopback, sorted.
pub async fn tcp_connects() -> Vec<Duration> {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let address = listener.local_addr().expect("an address");
    let accepting = tokio::spawn(async move {
        let mut kept = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            kept.push(stream);
        }
    });
    let mut samples = Vec::with_capacity(HANDSHAKES);
    for _ in 0..HANDSHAKES {
        let start = Instant::now();
        let stream = TcpStream::connect(address).await.expect("connected");
        samples.push(start.elapsed());
        drop(stream);
    }
    accepting.abort();
    samples.sort_unstable();
    samples
}
