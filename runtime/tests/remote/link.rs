//! Two systems on a link, in one process on loopback (S38–S40): a ref resolved from
//! the other system's address is an ordinary typed ref; a tell crosses; the answer
//! comes back through a reply ref that crossed the wire; an ask crosses both ways; a
//! system with another secret is refused; a peer nobody listens at dead-letters
//! what it is told, naming the peer.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tapio::prelude::*;
use tapio::remote::RemoteSettings;
use tapio::{DeadLetter, DeadLetterReason};
use tokio::sync::mpsc;

use crate::support::greeter;
use greeter::*;

const WAIT: Duration = Duration::from_secs(10);

fn node(name: &str, secret: &[u8]) -> ActorSystem {
    let mut settings = RemoteSettings::loopback();
    if !secret.is_empty() {
        settings = settings.secret(secret.to_vec());
    }
    ActorSystem::builder(name).remote(settings).build().unwrap()
}

// S38, S39: a tell crosses the link, and the answer comes back through the reply
// ref that crossed with it; an ask crosses both ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_a_tell_and_an_ask_cross_the_link_and_come_back() {
    let away = node("away", b"0123456789abcdef");
    let home = node("home", b"0123456789abcdef");
    away.spawn(Behaviors::setup(|_| Greeter { greeted: 0 }), "greeter")
        .unwrap();
    let uri = format!("{}/user/greeter", away.address());
    let greeter = home.resolve::<GreeterMsg>(&uri).unwrap();
    let (me, mut heard) = listener(&home);
    greeter.tell(Greet {
        whom: "ada".into(),
        reply_to: me.clone(),
    });
    assert_eq!(
        tokio::time::timeout(WAIT, heard.recv())
            .await
            .unwrap()
            .unwrap(),
        "hello, ada!"
    );
    let counted = greeter.ask(Count).timeout(WAIT).await.unwrap();
    assert_eq!(counted, Counted(1));
    home.terminate().await;
    away.terminate().await;
}

// S38: a system with another secret is refused, and what was told to it becomes a
// dead letter naming the peer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_another_secret_is_refused() {
    let away = node("away", b"0123456789abcdef");
    let home = node("home", b"fedcba9876543210");
    away.spawn(Behaviors::setup(|_| Greeter { greeted: 0 }), "greeter")
        .unwrap();
    let mut letters = home.events().subscribe::<DeadLetter>();
    let greeter = home
        .resolve::<GreeterMsg>(&format!("{}/user/greeter", away.address()))
        .unwrap();
    let (me, _heard) = listener(&home);
    greeter.tell(Greet {
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
    home.terminate().await;
    away.terminate().await;
}

// S40: a peer nobody listens at does not hang the sender: what it is told is a dead
// letter naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_an_unreachable_peer_dead_letters_instead_of_hanging() {
    let gone = node("gone", b"");
    let uri = format!("{}/user/greeter", gone.address());
    let gone_address = gone.address().clone();
    gone.terminate().await;
    let home = node("home", b"");
    let mut letters = home.events().subscribe::<DeadLetter>();
    let greeter = home.resolve::<GreeterMsg>(&uri).unwrap();
    let (me, _heard) = listener(&home);
    greeter.tell(Greet {
        whom: "nobody".into(),
        reply_to: me,
    });
    let letter = tokio::time::timeout(WAIT, letters.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::Unreachable { peer: gone_address }
    );
    home.terminate().await;
}

/// A raw TCP client at `system`'s port.
async fn raw_client(system: &ActorSystem) -> tokio::net::TcpStream {
    let (host, port) = system.address().host_port().unwrap();
    tokio::net::TcpStream::connect((host, port)).await.unwrap()
}

/// Whether the server closes the connection (reads EOF or an error) in time.
async fn closed_by_server(stream: &mut tokio::net::TcpStream) -> bool {
    use tokio::io::AsyncReadExt;
    let mut buffer = [0; 256];
    loop {
        match tokio::time::timeout(WAIT, stream.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) => return true,
            // Whatever the server answered before closing (a rejection) is read on.
            Ok(Ok(_)) => {}
            Err(_) => return false,
        }
    }
}

// S38: bad input through a socket: garbage, a frame before the handshake, an
// announced length past the handshake limit, a wrong version. Each closes the
// connection; the system keeps serving a proper link afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_bad_input_on_a_socket_closes_that_connection_only() {
    use tokio::io::AsyncWriteExt;
    let away = node("away", b"");
    away.spawn(Behaviors::setup(|_| Greeter { greeted: 0 }), "greeter")
        .unwrap();

    let mut garbage = raw_client(&away).await;
    garbage
        .write_all(&[0, 0, 0, 3, 0xde, 0xad, 0xbe])
        .await
        .unwrap();
    assert!(closed_by_server(&mut garbage).await, "garbage");

    let mut early = raw_client(&away).await;
    let frame = tapio::wire::encode_frame(
        &tapio::wire::FrameHeader {
            key: "link.count.v1",
            recipient: "/user/greeter",
            uid: 0,
            reply_to: None,
        },
        &[],
        &tapio::wire::WireLimits::DEFAULT,
    )
    .unwrap();
    early.write_all(&frame).await.unwrap();
    assert!(
        closed_by_server(&mut early).await,
        "a frame before the handshake"
    );

    let mut huge = raw_client(&away).await;
    huge.write_all(&u32::MAX.to_be_bytes()).await.unwrap();
    assert!(closed_by_server(&mut huge).await, "a length past the limit");

    let mut version = raw_client(&away).await;
    let mut hello =
        postcard::to_allocvec(&(*b"TAPIO", 99_u16, [0_u8; 32], "tapio://x@127.0.0.1:1")).unwrap();
    let mut message = (hello.len() as u32).to_be_bytes().to_vec();
    message.append(&mut hello);
    version.write_all(&message).await.unwrap();
    assert!(closed_by_server(&mut version).await, "another version");

    // A proper link still works.
    let home = node("home", b"");
    let greeter = home
        .resolve::<GreeterMsg>(&format!("{}/user/greeter", away.address()))
        .unwrap();
    assert_eq!(greeter.ask(Count).timeout(WAIT).await.unwrap(), Counted(0));
    home.terminate().await;
    away.terminate().await;
}

// S28, S36: a message adapter is a reply ref like any other across a link: the
// answer comes back through it, translated, into its owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_a_message_adapter_answers_across_the_link() {
    let away = node("away", b"");
    let home = node("home", b"");
    away.spawn(Behaviors::setup(|_| Greeter { greeted: 0 }), "greeter")
        .unwrap();
    let greeter = home
        .resolve::<GreeterMsg>(&format!("{}/user/greeter", away.address()))
        .unwrap();
    let (heard, mut rx) = mpsc::unbounded_channel();
    home.spawn(
        Behaviors::setup(move |ctx: &mut ActorContext<String>| {
            // The owner speaks `String`; the adapter takes the greeter's `Greeted`.
            let replies =
                ctx.message_adapter(|greeted: Greeted| format!("via adapter: {}", greeted.0));
            greeter.tell(Greet {
                whom: "lin".into(),
                reply_to: replies,
            });
            let heard = heard.clone();
            Behaviors::receive_message(move |line: String| {
                let _ = heard.send(line);
            })
        }),
        "owner",
    )
    .unwrap();
    assert_eq!(
        tokio::time::timeout(WAIT, rx.recv())
            .await
            .unwrap()
            .unwrap(),
        "via adapter: hello, lin!"
    );
    home.terminate().await;
    away.terminate().await;
}
