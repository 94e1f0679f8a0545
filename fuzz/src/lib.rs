//! What the fuzz targets share: one system, with an actor at `/user/sink` whose
//! protocol takes every registered message below, and the runtime that drives it.
//!
//! A target hands the system bytes as if a peer had sent them. Whatever they are,
//! `deliver_frame` must return (delivered, or a `WireProblem` and a dead letter
//! naming the peer), never panic, and the actor must go on.

use std::sync::OnceLock;

use tapio::prelude::*;
use tapio::wire::WireMessage;
use tapio::{Address, DeadLetter, Subscription};

/// A message that nests: decoding a deep one must be refused, not overflow.
#[message(remote = "fuzz.tree.v1")]
pub enum Tree {
    /// A leaf.
    Leaf(u64),
    /// A node and its children.
    Node(Vec<Tree>),
}

/// An answer, and a message that carries where to send one.
#[message(remote = "fuzz.ack.v1")]
pub struct Ack(pub u32);

/// Text, lists, options and a ref that a peer chose.
#[message(remote = "fuzz.note.v1")]
pub struct Note {
    /// Any text.
    pub text: String,
    /// Any number of words.
    pub tags: Vec<String>,
    /// Maybe a number.
    pub n: Option<i64>,
    /// Maybe where to answer: a URI the peer wrote.
    pub reply: Option<ActorRef<Ack>>,
}

/// A request.
#[message(remote = "fuzz.ping.v1", reply = Ack)]
pub struct Ping(pub u32);

/// Takes all of the above; answers when asked to.
#[derive(Debug, Default, Clone)]
pub struct Sink {
    seen: u64,
}

#[actor]
impl Sink {
    fn tree(&mut self, tree: Tree) {
        let mut stack = vec![tree];
        while let Some(tree) = stack.pop() {
            self.seen += 1;
            if let Tree::Node(children) = tree {
                stack.extend(children);
            }
        }
    }

    fn note(&mut self, note: Note) {
        self.seen += note.tags.len() as u64;
        if let Some(reply) = note.reply {
            reply.tell(Ack(note.text.len() as u32));
        }
    }

    fn ping(&mut self, Ping(n): Ping) -> Ack {
        self.seen += 1;
        Ack(n)
    }
}

/// The keys a structured target picks from, and one nobody registered.
pub const KEYS: [&str; 5] = [
    Tree::KEY,
    Ack::KEY,
    Note::KEY,
    Ping::KEY,
    "fuzz.nobody.v1",
];

/// The paths a structured target picks from: the sink, nobody, and ones that are
/// not paths at all.
pub const PATHS: [&str; 6] = ["/user/sink", "/user/nobody", "/system", "", "/user/..", "//"];

/// The system, its runtime, and its dead letters (drained so they do not pile up).
pub struct Harness {
    /// Drives the system's actors.
    pub runtime: tokio::runtime::Runtime,
    /// The system the bytes are delivered to.
    pub system: ActorSystem,
    /// The peer every frame comes from.
    pub peer: Address,
    letters: std::sync::Mutex<Subscription<DeadLetter>>,
}

impl Harness {
    /// The one harness of this process.
    pub fn get() -> &'static Harness {
        static HARNESS: OnceLock<Harness> = OnceLock::new();
        HARNESS.get_or_init(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            let (system, letters) = runtime.block_on(async {
                let system = ActorSystem::new("fuzz").expect("a system");
                system.spawn(Sink::default(), "sink").expect("the sink");
                let letters = system
                    .events()
                    .subscribe_with_capacity::<DeadLetter>(1024)
                    .expect("a subscription");
                (system, letters)
            });
            Harness {
                runtime,
                system,
                peer: Address::local("peer"),
                letters: std::sync::Mutex::new(letters),
            }
        })
    }

    /// Deliver `frame` as the peer's, let the actors run, and drop the letters.
    pub fn deliver(&self, frame: &[u8]) {
        let _ = self.system.deliver_frame(&self.peer, frame);
        self.runtime.block_on(tokio::task::yield_now());
        let mut letters = self.letters.lock().unwrap_or_else(|p| p.into_inner());
        while letters.try_recv().is_some() {}
        assert!(
            !self.system.is_terminating(),
            "a peer's frame stopped the system"
        );
    }
}
