//! The wire (S35–S37): registered message types decoded from frames by key, and
//! every bad frame from a peer turned into a dead letter that names the peer, with
//! nothing panicking, failing or stopping.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::letter_within;
use std::time::Duration;

use tapio::prelude::*;
use tapio::wire::{
    FrameHeader, Registry, WireLimits, WireMessage, WireProblem, encode_frame, encode_payload,
};
use tapio::{Address, DeadLetter, DeadLetterReason, Subscription};
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(10);

/// A registered message.
#[message(remote = "test.greet.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Greet {
    pub whom: String,
}

/// A registered message the greeter does not handle.
#[message(remote = "test.shout.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Shout(pub String);

/// A registered recursive message.
#[message(remote = "test.tree.v1")]
#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    Leaf,
    Node(Box<Tree>),
}

pub struct Greeter {
    heard: mpsc::UnboundedSender<String>,
}

#[actor]
impl Greeter {
    fn greet(&mut self, message: Greet) {
        let _ = self.heard.send(message.whom);
    }

    fn tree(&mut self, message: Tree) {
        let mut depth = 0;
        let mut node = &message;
        while let Tree::Node(inner) = node {
            depth += 1;
            node = inner;
        }
        let _ = self.heard.send(format!("tree of {depth}"));
    }
}

/// A bad frame: its name, its bytes, and the problem it must be refused for.
type Case = (&'static str, Vec<u8>, fn(&WireProblem) -> bool);

fn peer() -> Address {
    Address::local("peer")
}

fn frame(key: &str, recipient: &str, uid: u64, payload: &[u8]) -> Vec<u8> {
    let header = FrameHeader {
        key,
        recipient,
        uid,
        reply_to: None,
    };
    encode_frame(&header, payload, &WireLimits::DEFAULT).unwrap()
}

fn greet(whom: &str) -> Vec<u8> {
    encode_payload(&Greet { whom: whom.into() }).unwrap()
}

fn letters(system: &ActorSystem) -> Subscription<DeadLetter> {
    system.events().subscribe::<DeadLetter>()
}

/// The problem a dead letter from the peer carries.
fn problem_of(letter: &DeadLetter) -> WireProblem {
    match letter.reason() {
        DeadLetterReason::FromPeer {
            peer: from,
            problem,
        } => {
            assert_eq!(from, &peer(), "the letter names the peer");
            problem.clone()
        }
        other => panic!("expected a letter from the peer, got {other:?}"),
    }
}

async fn greeter(system: &ActorSystem) -> (ActorRef<GreeterMsg>, mpsc::UnboundedReceiver<String>) {
    let (heard, rx) = mpsc::unbounded_channel();
    let greeter = system
        .spawn(
            Behaviors::setup(move |_| Greeter {
                heard: heard.clone(),
            }),
            "greeter",
        )
        .unwrap();
    (greeter, rx)
}

// S35: a frame whose key is registered is decoded by the registry's type and
// delivered to the actor at its path, addressed by uid or by path alone.
#[tapio::test]
async fn s35_a_registered_message_is_delivered_by_key(system: ActorSystem) {
    let (greeter, mut heard) = greeter(&system).await;
    system
        .deliver_frame(
            &peer(),
            &frame(Greet::KEY, "/user/greeter", greeter.uid(), &greet("ada")),
        )
        .unwrap();
    system
        .deliver_frame(
            &peer(),
            &frame(Greet::KEY, "/user/greeter", 0, &greet("grace")),
        )
        .unwrap();
    assert_eq!(
        tokio::time::timeout(WAIT, heard.recv())
            .await
            .unwrap()
            .unwrap(),
        "ada"
    );
    assert_eq!(
        tokio::time::timeout(WAIT, heard.recv())
            .await
            .unwrap()
            .unwrap(),
        "grace"
    );
    assert_eq!(Greet::KEY, "test.greet.v1");
    let registry = Registry::linked().unwrap();
    assert_eq!(
        registry.get("test.greet.v1").map(|r| r.type_name()),
        Some(std::any::type_name::<Greet>())
    );
}

// S37: each bad frame becomes a dead letter naming the peer and what was wrong; the
// greeter keeps working after all of them.
#[tapio::test]
async fn s37_every_bad_frame_is_a_dead_letter_naming_the_peer(system: ActorSystem) {
    let (greeter, mut heard) = greeter(&system).await;
    let mut letters = letters(&system);
    let uid = greeter.uid();
    let good = frame(Greet::KEY, "/user/greeter", uid, &greet("ada"));

    let mut cases: Vec<Case> = Vec::new();
    let mut huge = good.clone();
    huge[..4].copy_from_slice(&u32::MAX.to_be_bytes());
    cases.push(("u32::MAX prefix", huge, |p| {
        matches!(p, WireProblem::FrameTooLarge { .. })
    }));
    let mut truncated = good.clone();
    truncated.truncate(good.len() - 2);
    cases.push(("truncated", truncated, |p| {
        matches!(p, WireProblem::BadLength { .. })
    }));
    cases.push(("garbage", vec![0xde, 0xad, 0xbe, 0xef, 0x01], |p| {
        matches!(p, WireProblem::FrameTooLarge { .. })
    }));
    cases.push(("two bytes", vec![0x01, 0x02], |p| {
        matches!(p, WireProblem::BadLength { .. })
    }));
    let mut scrambled = vec![0, 0, 0, 6];
    scrambled.extend([0xff; 6]);
    cases.push(("unreadable header", scrambled, |p| {
        matches!(p, WireProblem::UnreadableHeader(_))
    }));
    cases.push((
        "unknown key",
        frame("test.nobody.v1", "/user/greeter", uid, &greet("ada")),
        |p| matches!(p, WireProblem::UnknownKey(k) if k == "test.nobody.v1"),
    ));
    let mut trailing = greet("ada");
    trailing.push(7);
    cases.push((
        "trailing bytes",
        frame(Greet::KEY, "/user/greeter", uid, &trailing),
        |p| matches!(p, WireProblem::TrailingBytes { left: 1, .. }),
    ));
    cases.push((
        "undecodable",
        frame(Greet::KEY, "/user/greeter", uid, &[0xff, 0xff, 0xff]),
        |p| matches!(p, WireProblem::Undecodable { .. }),
    ));
    cases.push((
        "invalid path",
        frame(Greet::KEY, "/user/..", uid, &greet("ada")),
        |p| matches!(p, WireProblem::InvalidPath(_)),
    ));
    cases.push((
        "not a guardian",
        frame(Greet::KEY, "/elsewhere/greeter", uid, &greet("ada")),
        |p| matches!(p, WireProblem::InvalidPath(_)),
    ));
    cases.push((
        "nobody there",
        frame(Greet::KEY, "/user/nobody", 0, &greet("ada")),
        |p| matches!(p, WireProblem::NoRecipient),
    ));
    cases.push((
        "stale incarnation",
        frame(
            Greet::KEY,
            "/user/greeter",
            uid.wrapping_add(1),
            &greet("ada"),
        ),
        |p| matches!(p, WireProblem::StaleIncarnation { .. }),
    ));
    cases.push((
        "not accepted",
        frame(
            Shout::KEY,
            "/user/greeter",
            uid,
            &encode_payload(&Shout("hey".into())).unwrap(),
        ),
        |p| matches!(p, WireProblem::NotAccepted(k) if k == "test.shout.v1"),
    ));
    let mut deep = Tree::Leaf;
    for _ in 0..100_000 {
        deep = Tree::Node(Box::new(deep));
    }
    // Encoding recurses too: do it on a thread with room for it.
    let deep_payload = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let payload = encode_payload(&deep).unwrap();
            // Dropping a 100,000-deep box chain recurses as well.
            let mut node = deep;
            while let Tree::Node(inner) = node {
                node = *inner;
            }
            payload
        })
        .unwrap()
        .join()
        .unwrap();
    cases.push((
        "nested 100,000 deep",
        frame(Tree::KEY, "/user/greeter", uid, &deep_payload),
        |p| matches!(p, WireProblem::TooDeep { max: 128, .. }),
    ));

    for (name, bytes, expected) in cases {
        let problem = system.deliver_frame(&peer(), &bytes).expect_err(name);
        assert!(expected(&problem), "{name}: {problem:?}");
        let letter = letter_within(&mut letters, WAIT).await;
        assert_eq!(problem_of(&letter), problem, "{name}");
    }

    // The message refused as not accepted is in its letter, decoded.
    system
        .deliver_frame(
            &peer(),
            &frame(
                Shout::KEY,
                "/user/greeter",
                uid,
                &encode_payload(&Shout("hey".into())).unwrap(),
            ),
        )
        .unwrap_err();
    let refused = letter_within(&mut letters, WAIT).await;
    assert_eq!(refused.take_message::<Shout>(), Some(Shout("hey".into())));
    assert_eq!(refused.recipient(), greeter.path());

    // Nothing stopped: the good frame still goes through, and a tree within the
    // depth limit too.
    system.deliver_frame(&peer(), &good).unwrap();
    assert_eq!(
        tokio::time::timeout(WAIT, heard.recv())
            .await
            .unwrap()
            .unwrap(),
        "ada"
    );
    let mut shallow = Tree::Leaf;
    for _ in 0..100 {
        shallow = Tree::Node(Box::new(shallow));
    }
    system
        .deliver_frame(
            &peer(),
            &frame(
                Tree::KEY,
                "/user/greeter",
                uid,
                &encode_payload(&shallow).unwrap(),
            ),
        )
        .unwrap();
    assert_eq!(
        tokio::time::timeout(WAIT, heard.recv())
            .await
            .unwrap()
            .unwrap(),
        "tree of 100"
    );
}

// S37: the frame limit is inclusive: a frame of exactly the maximum is read, one
// byte more is refused before anything is decoded.
#[tokio::test]
async fn s37_the_frame_limit_is_checked_before_anything_else() {
    let body = frame(Greet::KEY, "/user/greeter", 0, &greet("ada"));
    let exact = body.len() - 4;
    let system = ActorSystem::builder("limits")
        .wire_limits(WireLimits {
            max_frame: exact,
            ..WireLimits::DEFAULT
        })
        .build()
        .unwrap();
    let (_greeter, mut heard) = greeter(&system).await;
    system.deliver_frame(&peer(), &body).unwrap();
    assert_eq!(
        tokio::time::timeout(WAIT, heard.recv())
            .await
            .unwrap()
            .unwrap(),
        "ada"
    );
    let longer = frame(Greet::KEY, "/user/greeter", 0, &greet("adam"));
    assert_eq!(
        system.deliver_frame(&peer(), &longer),
        Err(WireProblem::FrameTooLarge {
            announced: (exact + 1) as u64,
            max: exact
        })
    );
    system.terminate().await;
}

// S35: a registry built by hand lists what may come in. A key it leaves out is
// refused as unknown even when the recipient's protocol would decode it (the
// greeter handles `Tree`), and a key it lists goes through; an unknown key is the
// reason given before a missing recipient.
#[tokio::test]
async fn s35_a_hand_built_registry_refuses_what_it_leaves_out() {
    let registry = Registry::builder().register::<Greet>().build().unwrap();
    let system = ActorSystem::builder("listed")
        .wire_registry(registry)
        .build()
        .unwrap();
    let mut letters = letters(&system);
    let (_greeter, mut heard) = greeter(&system).await;
    let tree = encode_payload(&Tree::Node(Box::new(Tree::Leaf))).unwrap();
    let unlisted = frame(Tree::KEY, "/user/greeter", 0, &tree);
    assert_eq!(
        system.deliver_frame(&peer(), &unlisted),
        Err(WireProblem::UnknownKey(Tree::KEY.to_owned()))
    );
    assert_eq!(
        problem_of(&letter_within(&mut letters, WAIT).await),
        WireProblem::UnknownKey(Tree::KEY.to_owned())
    );
    let nobody = frame(Tree::KEY, "/user/nobody", 0, &tree);
    assert_eq!(
        system.deliver_frame(&peer(), &nobody),
        Err(WireProblem::UnknownKey(Tree::KEY.to_owned()))
    );
    system
        .deliver_frame(
            &peer(),
            &frame(Greet::KEY, "/user/greeter", 0, &greet("ada")),
        )
        .unwrap();
    let first = tokio::time::timeout(WAIT, heard.recv()).await.unwrap();
    assert_eq!(first.as_deref(), Some("ada"), "the tree was never handled");
    system.terminate().await;
}

// S35: with the registry of every linked type (the default), a key no protocol of
// the recipient decodes is still refused as unknown when nothing registers it, and
// as not accepted when something does, whether or not the recipient exists.
#[tapio::test]
async fn s35_the_linked_registry_tells_unknown_from_not_accepted(system: ActorSystem) {
    let _greeter = greeter(&system).await;
    let shout = encode_payload(&Shout("hey".into())).unwrap();
    for recipient in ["/user/greeter", "/user/nobody"] {
        assert_eq!(
            system.deliver_frame(&peer(), &frame("test.nobody.v1", recipient, 0, &shout)),
            Err(WireProblem::UnknownKey("test.nobody.v1".to_owned())),
            "{recipient}"
        );
    }
    assert_eq!(
        system.deliver_frame(&peer(), &frame(Shout::KEY, "/user/greeter", 0, &shout)),
        Err(WireProblem::NotAccepted(Shout::KEY.to_owned()))
    );
}

// S37: once a good frame has put the recipient's path in the route cache, frames to
// it skip the header's UTF-8 check; every bad one is still refused, and named, as
// it is for a recipient found by walking the tree, and bytes that are not UTF-8 in
// the header are still an unreadable header.
#[tapio::test]
async fn s37_frames_to_a_cached_recipient_are_refused_as_any_other(system: ActorSystem) {
    let (greeter, mut heard) = greeter(&system).await;
    let mut letters = letters(&system);
    let uid = greeter.uid();
    system
        .deliver_frame(
            &peer(),
            &frame(Greet::KEY, "/user/greeter", uid, &greet("ada")),
        )
        .unwrap();
    assert_eq!(
        tokio::time::timeout(WAIT, heard.recv())
            .await
            .unwrap()
            .unwrap(),
        "ada"
    );
    let mut trailing = greet("bob");
    trailing.push(7);
    let shout = encode_payload(&Shout("hey".into())).unwrap();
    // The recipient's path with one byte that is not UTF-8, where `/` was.
    let mut not_utf8 = frame(Greet::KEY, "/user/greeter", uid, &greet("cy"));
    let at = not_utf8.iter().rposition(|&b| b == b'/').unwrap();
    not_utf8[at] = 0xff;
    let cases: Vec<Case> = vec![
        (
            "trailing bytes",
            frame(Greet::KEY, "/user/greeter", uid, &trailing),
            |p| matches!(p, WireProblem::TrailingBytes { left: 1, .. }),
        ),
        (
            "undecodable",
            frame(Greet::KEY, "/user/greeter", 0, &[0xff, 0xff]),
            |p| matches!(p, WireProblem::Undecodable { .. }),
        ),
        (
            "not accepted",
            frame(Shout::KEY, "/user/greeter", uid, &shout),
            |p| matches!(p, WireProblem::NotAccepted(k) if k == "test.shout.v1"),
        ),
        (
            "unknown key",
            frame("test.nobody.v1", "/user/greeter", uid, &shout),
            |p| matches!(p, WireProblem::UnknownKey(k) if k == "test.nobody.v1"),
        ),
        (
            "stale incarnation",
            frame(
                Greet::KEY,
                "/user/greeter",
                uid.wrapping_add(1),
                &greet("dee"),
            ),
            |p| matches!(p, WireProblem::StaleIncarnation { .. }),
        ),
        ("not UTF-8", not_utf8, |p| {
            matches!(p, WireProblem::UnreadableHeader(_))
        }),
    ];
    for (name, bytes, expected) in cases {
        let problem = system.deliver_frame(&peer(), &bytes).expect_err(name);
        assert!(expected(&problem), "{name}: {problem:?}");
        let letter = letter_within(&mut letters, WAIT).await;
        assert_eq!(problem_of(&letter), problem, "{name}");
    }
    // Nothing else came: the refused frames reached nobody, and no letter is left.
    assert!(heard.try_recv().is_err());
    assert!(letters.try_recv().is_none());
}

// S37: a stopped recipient refuses the frame as such.
#[tapio::test]
async fn s37_a_stopped_recipient_is_a_dead_letter_naming_the_peer(system: ActorSystem) {
    let (greeter, _heard) = greeter(&system).await;
    let mut letters = letters(&system);
    let uid = greeter.uid();
    let mut probe = tapio::testkit::TestProbe::<u8>::new(&system);
    probe.watch(&greeter);
    system.stop(&greeter).unwrap();
    probe.expect_terminated(&greeter, WAIT).await;
    let problem = system
        .deliver_frame(
            &peer(),
            &frame(Greet::KEY, "/user/greeter", uid, &greet("ada")),
        )
        .unwrap_err();
    assert!(
        matches!(
            problem,
            WireProblem::NoRecipient | WireProblem::RecipientStopped
        ),
        "{problem:?}"
    );
    assert_eq!(
        problem_of(&letter_within(&mut letters, WAIT).await),
        problem
    );
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    fn system() -> (tokio::runtime::Runtime, ActorSystem) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let system = runtime.block_on(async { ActorSystem::new("props").unwrap() });
        (runtime, system)
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        // S37: no sequence of bytes makes `deliver_frame` panic.
        #[test]
        fn s37_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let (runtime, system) = system();
            let _ = system.deliver_frame(&peer(), &bytes);
            runtime.block_on(system.terminate());
        }

        // S37: a valid prefix and header followed by arbitrary payload bytes never
        // panics either.
        #[test]
        fn s37_arbitrary_payloads_never_panic(payload in proptest::collection::vec(any::<u8>(), 0..256)) {
            let (runtime, system) = system();
            let _ = system.deliver_frame(&peer(), &frame(Tree::KEY, "/user/greeter", 0, &payload));
            let _ = system.deliver_frame(&peer(), &frame(Greet::KEY, "/user/greeter", 0, &payload));
            runtime.block_on(system.terminate());
        }

        // S35: every registered type round-trips through its payload.
        #[test]
        fn s35_registered_types_round_trip(whom in ".{0,40}", depth in 0usize..100) {
            let greet = Greet { whom };
            let bytes = encode_payload(&greet).unwrap();
            prop_assert_eq!(postcard::from_bytes::<Greet>(&bytes).unwrap(), greet);
            let mut tree = Tree::Leaf;
            for _ in 0..depth {
                tree = Tree::Node(Box::new(tree));
            }
            let bytes = encode_payload(&tree).unwrap();
            prop_assert_eq!(postcard::from_bytes::<Tree>(&bytes).unwrap(), tree);
        }
    }
}

/// A request across the wire: the answer's ref travels inside the message.
#[message(remote = "test.hello.v1")]
#[derive(Debug)]
pub struct Hello {
    pub whom: String,
    pub reply_to: ActorRef<Hi>,
}

#[message(remote = "test.hi.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Hi(pub String);

/// Answers every `Hello` through the ref it carries.
fn host() -> Behavior<Hello> {
    Behaviors::receive_message(|hello: Hello| {
        hello.reply_to.tell(Hi(format!("hi, {}", hello.whom)));
    })
    .into()
}

fn hello_frame(system: &ActorSystem, recipient: &str, reply_to: ActorRef<Hi>) -> Vec<u8> {
    let payload = system.as_deserialization_context(|| {
        encode_payload(&Hello {
            whom: "ada".into(),
            reply_to,
        })
        .unwrap()
    });
    frame(Hello::KEY, recipient, 0, &payload)
}

// S36: a ref serializes as its full URI and decodes, inside the system's context,
// to the live local actor: the host answers through it.
#[tapio::test]
async fn s36_a_local_ref_crosses_the_wire_and_comes_back_live(system: ActorSystem) {
    system.spawn(host(), "host").unwrap();
    let (heard, mut answers) = mpsc::unbounded_channel();
    let listener = system
        .spawn(
            Behaviors::receive_message(move |hi: Hi| {
                let _ = heard.send(hi.0);
            }),
            "listener",
        )
        .unwrap();
    let payload = encode_payload(&Hello {
        whom: "ada".into(),
        reply_to: listener.clone(),
    })
    .unwrap();
    let uri = postcard::from_bytes::<(String, String)>(&payload)
        .unwrap()
        .1;
    assert_eq!(uri, listener.to_string());
    assert!(uri.starts_with("tapio://"), "{uri}");
    assert!(
        uri.ends_with(&format!("/user/listener#{}", listener.uid())),
        "{uri}"
    );
    system
        .deliver_frame(&peer(), &frame(Hello::KEY, "/user/host", 0, &payload))
        .unwrap();
    assert_eq!(
        tokio::time::timeout(WAIT, answers.recv())
            .await
            .unwrap()
            .unwrap(),
        "hi, ada"
    );
}

// S36: an ask's promise is exported when its ref is serialized, so an answer that
// comes back in a frame addressed to it completes the ask.
#[tapio::test]
async fn s36_an_ask_is_answered_through_a_frame_to_its_promise(system: ActorSystem) {
    let (sent, mut requests) = mpsc::unbounded_channel();
    // Stands for the link: what the ask sends is encoded as it would cross it.
    let outbound = system
        .spawn(
            Behaviors::receive_message(move |hello: Hello| {
                let _ = sent.send(encode_payload(&hello).unwrap());
            }),
            "outbound",
        )
        .unwrap();
    let ask = outbound.ask_with(|reply_to| Hello {
        whom: "grace".into(),
        reply_to,
    });
    let answer = tokio::spawn(async move { ask.timeout(WAIT).await });
    let request = tokio::time::timeout(WAIT, requests.recv())
        .await
        .unwrap()
        .unwrap();
    let uri = postcard::from_bytes::<(String, String)>(&request)
        .unwrap()
        .1;
    let path = &uri[uri.find("/system/promises/").unwrap()..uri.rfind('#').unwrap()];
    system
        .deliver_frame(
            &peer(),
            &frame(
                Hi::KEY,
                path,
                0,
                &encode_payload(&Hi("hi, grace".into())).unwrap(),
            ),
        )
        .unwrap();
    assert_eq!(answer.await.unwrap().unwrap(), Hi("hi, grace".into()));
}

// S36: a URI of another system decodes to a ref bound to that peer; with no link to
// it, what is told to it is a dead letter that names the peer.
#[tapio::test]
async fn s36_a_ref_to_another_system_is_bound_to_that_peer(system: ActorSystem) {
    system.spawn(host(), "host").unwrap();
    let mut letters = letters(&system);
    let remote = "tapio://elsewhere@10.0.0.7:2552/user/listener#42";
    let payload = [
        postcard::to_allocvec(&"ada").unwrap(),
        postcard::to_allocvec(&remote).unwrap(),
    ]
    .concat();
    system
        .deliver_frame(&peer(), &frame(Hello::KEY, "/user/host", 0, &payload))
        .unwrap();
    let letter = letter_within(&mut letters, WAIT).await;
    assert_eq!(
        letter.recipient().to_uri(),
        "tapio://elsewhere@10.0.0.7:2552/user/listener"
    );
    match letter.reason() {
        DeadLetterReason::NoLink { peer } => {
            assert_eq!(peer.to_string(), "tapio://elsewhere@10.0.0.7:2552");
        }
        other => panic!("expected no link, got {other:?}"),
    }
    assert_eq!(letter.take_message::<Hi>(), Some(Hi("hi, ada".into())));
    // Decoded twice, the same URI gives equal refs.
    let decode = || {
        system.as_deserialization_context(|| {
            postcard::from_bytes::<ActorRef<Hi>>(&postcard::to_allocvec(&remote).unwrap()).unwrap()
        })
    };
    assert_eq!(decode(), decode());
    assert_eq!(decode().to_string(), remote);
}

// S36: outside a decode context a ref does not decode; a URI that names a local
// actor of another protocol, or nobody, makes the payload undecodable.
#[tapio::test]
async fn s36_a_ref_decodes_only_to_a_live_actor_of_its_protocol(system: ActorSystem) {
    let host = system.spawn(host(), "host").unwrap();
    let uri = postcard::to_allocvec(&host.to_string()).unwrap();
    assert!(postcard::from_bytes::<ActorRef<Hi>>(&uri).is_err());
    let wrong = system.as_deserialization_context(|| postcard::from_bytes::<ActorRef<Hi>>(&uri));
    assert!(wrong.is_err(), "the host takes `Hello`, not `Hi`");
    let right = system.as_deserialization_context(|| postcard::from_bytes::<ActorRef<Hello>>(&uri));
    assert_eq!(right.unwrap(), host);
    let mut letters = letters(&system);
    // A URI of this system that is not an actor path: the payload does not decode.
    let invalid = format!("{}/user/..#1", system.address());
    let payload = [
        postcard::to_allocvec(&"ada").unwrap(),
        postcard::to_allocvec(&invalid).unwrap(),
    ]
    .concat();
    let problem = system
        .deliver_frame(&peer(), &frame(Hello::KEY, "/user/host", 0, &payload))
        .unwrap_err();
    assert!(
        matches!(problem, WireProblem::Undecodable { .. }),
        "{problem:?}"
    );
    assert_eq!(
        problem_of(&letter_within(&mut letters, WAIT).await),
        problem
    );
    let _ = hello_frame;
}

// S36 + S31: a ref to an incarnation of this system that has stopped (or to a path
// where nothing lives) decodes as a ref to that stopped incarnation, as a local
// message can carry one: the message is delivered, and what is told through the ref
// is a dead letter (`RecipientStopped`) naming the path it named; watching it
// reports `Terminated` at once.
#[tapio::test]
async fn s36_a_ref_to_a_stopped_incarnation_decodes_as_a_stopped_ref(system: ActorSystem) {
    system.spawn(host(), "host").unwrap();
    let mut letters = letters(&system);
    let nobody = format!("{}/user/nobody#1", system.address());
    let payload = [
        postcard::to_allocvec(&"ada").unwrap(),
        postcard::to_allocvec(&nobody).unwrap(),
    ]
    .concat();
    system
        .deliver_frame(&peer(), &frame(Hello::KEY, "/user/host", 0, &payload))
        .unwrap();
    let letter = letter_within(&mut letters, WAIT).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::RecipientStopped,
        "{letter}"
    );
    assert_eq!(letter.recipient().to_string(), "/user/nobody");
    assert_eq!(letter.take_message::<Hi>(), Some(Hi("hi, ada".into())));

    let gone = system
        .as_deserialization_context(|| {
            postcard::from_bytes::<ActorRef<Hi>>(&postcard::to_allocvec(&nobody).unwrap())
        })
        .unwrap();
    assert_eq!(gone.uid(), 1);
    let mut probe = tapio::testkit::TestProbe::<u8>::new(&system);
    probe.watch(&gone);
    probe.expect_terminated(&gone, WAIT).await;
}

/// A request that crosses the wire: its answer's ref travels in the frame's header.
#[message(remote = "test.howmany.v1", reply = Many)]
pub struct HowMany;

#[message(remote = "test.many.v1")]
#[derive(Debug, Clone, PartialEq)]
pub struct Many(pub u64);

pub struct Tally {
    count: u64,
}

#[actor]
impl Tally {
    fn how_many(&mut self, _: HowMany) -> Many {
        self.count += 1;
        Many(self.count)
    }
}

// S36: a request's answer goes to the ref named in the frame's `reply_to`, decoded
// like any ref: here a local listener, which gets the handler's answer.
#[tapio::test]
async fn s36_a_request_from_a_peer_is_answered_to_its_reply_ref(system: ActorSystem) {
    system
        .spawn(Behaviors::setup(|_| Tally { count: 0 }), "tally")
        .unwrap();
    let (heard, mut answers) = mpsc::unbounded_channel();
    let listener = system
        .spawn(
            Behaviors::receive_message(move |many: Many| {
                let _ = heard.send(many.0);
            }),
            "listener",
        )
        .unwrap();
    let uri = listener.to_string();
    let header = FrameHeader {
        key: HowMany::KEY,
        recipient: "/user/tally",
        uid: 0,
        reply_to: Some(&uri),
    };
    let bytes = encode_frame(
        &header,
        &encode_payload(&HowMany).unwrap(),
        &WireLimits::DEFAULT,
    )
    .unwrap();
    system.deliver_frame(&peer(), &bytes).unwrap();
    system.deliver_frame(&peer(), &bytes).unwrap();
    assert_eq!(
        tokio::time::timeout(WAIT, answers.recv()).await.unwrap(),
        Some(1)
    );
    assert_eq!(
        tokio::time::timeout(WAIT, answers.recv()).await.unwrap(),
        Some(2)
    );
}

/// A registered message that checks itself as it is decoded, with serde's own
/// container attributes written beside `#[message(remote)]`: it travels as a `u32`
/// and only a value up to 100 becomes one.
#[message(remote = "test.percent.v1")]
#[serde(try_from = "u32", into = "u32")]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percent(u8);

impl TryFrom<u32> for Percent {
    type Error = String;

    fn try_from(value: u32) -> Result<Self, Self::Error> {
        u8::try_from(value)
            .ok()
            .filter(|value| *value <= 100)
            .map(Percent)
            .ok_or_else(|| format!("{value} is not a percentage"))
    }
}

impl From<Percent> for u32 {
    fn from(percent: Percent) -> Self {
        u32::from(percent.0)
    }
}

// S35, S37: serde's container attributes work on a registered message, so a type can
// refuse a value as it is decoded: the frame of such a value is a dead letter naming
// the peer and the key, and the one behind it is delivered.
#[tapio::test]
async fn s35_s37_a_message_that_refuses_a_value_on_decode(system: ActorSystem) {
    let (heard, mut percents) = mpsc::unbounded_channel();
    let gauge = system
        .spawn(
            Behaviors::receive_message(move |percent: Percent| {
                let _ = heard.send(percent);
            }),
            "gauge",
        )
        .unwrap();
    let mut letters = letters(&system);
    // It travels as its `u32`: postcard writes 42 as one byte, 200 as two (a varint).
    assert_eq!(encode_payload(&Percent(42)).unwrap(), [42]);
    let bad = frame(Percent::KEY, "/user/gauge", gauge.uid(), &[0xc8, 0x01]);
    let good = frame(
        Percent::KEY,
        "/user/gauge",
        gauge.uid(),
        &encode_payload(&Percent(42)).unwrap(),
    );
    match system.deliver_frame(&peer(), &bad) {
        // The type's own words reach the sender's side of the story.
        Err(WireProblem::Undecodable { error, .. }) => {
            assert!(error.contains("200 is not a percentage"), "{error}");
        }
        other => panic!("expected an undecodable payload, got {other:?}"),
    }
    system.deliver_frame(&peer(), &good).unwrap();
    match problem_of(&letter_within(&mut letters, WAIT).await) {
        // The letter keeps the text of the type's own error, not only that the
        // payload did not decode.
        WireProblem::Undecodable { key, error } => {
            assert_eq!(key, Percent::KEY);
            assert!(error.contains("200 is not a percentage"), "{error}");
        }
        other => panic!("expected an undecodable payload, got {other:?}"),
    }
    assert_eq!(
        tokio::time::timeout(WAIT, percents.recv()).await.unwrap(),
        Some(Percent(42))
    );
}
