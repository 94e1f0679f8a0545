//! The wire (S35–S37): registered message types decoded from frames by key, and
//! every bad frame from a peer turned into a dead letter that names the peer, with
//! nothing panicking, failing or stopping.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

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

async fn letter(letters: &mut Subscription<DeadLetter>) -> DeadLetter {
    tokio::time::timeout(WAIT, letters.recv())
        .await
        .expect("a dead letter in time")
        .expect("the stream is open")
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
        let letter = letter(&mut letters).await;
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
    let refused = letter(&mut letters).await;
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
    assert_eq!(problem_of(&letter(&mut letters).await), problem);
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
