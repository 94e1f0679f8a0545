//! Three systems in one process: refs handed on and going round, asks answered by
//! another actor or a third system, message shapes and the frame limit, unknown and
//! undecodable keys, cut connections, give-ups and leaves seen from each peer (S31,
//! S35-S47).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::type_complexity)]

use crate::support::nodes::linked;
use crate::support::outside::ms;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tapio::prelude::*;
use tapio::remote::spawn::{
    RemoteSpawnError, Spawn, SpawnFailure, SpawnReply, Spawned, Spawner, SpawnerMsg,
};
use tapio::remote::{LinkError, PeerUnreachable, RemoteSettings};
use tapio::testkit::{LinkDirection, TestProbe, two_nodes};
use tapio::wire::{Registry, RemoteProtocol, WireLimits, WireProblem};
use tapio::{
    ActorSystemBuilder, Address, AskError, DeadLetter, DeadLetterReason, Subscription,
    remote_behavior,
};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::time::{Instant, timeout};

/// The bound of every wait that expects something to happen.
const T: Duration = Duration::from_secs(10);

// =================================================================================
// Messages (each key is this binary's own)
// =================================================================================

#[message(remote = "sweep8.note.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub from: String,
    pub n: u64,
}

#[message(remote = "sweep8.seq.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seq {
    pub from: String,
    pub n: u64,
}

#[message(remote = "sweep8.hop.v1")]
pub struct Hop {
    pub target: ActorRef<Note>,
    pub path: Vec<ActorRef<Hop>>,
    pub trail: Vec<String>,
}

#[message(remote = "sweep8.dir.v1")]
pub enum Dir {
    Register(ActorRef<Note>),
    Lookup(ActorRef<Found>),
}

#[message(remote = "sweep8.found.v1")]
pub struct Found(pub Option<ActorRef<Note>>);

#[message(remote = "sweep8.watch-this.v1")]
pub struct WatchThis(pub ActorRef<Note>);

#[message(remote = "sweep8.question.v1")]
pub struct Question {
    pub text: String,
    pub reply_to: ActorRef<Answer>,
}

#[message(remote = "sweep8.answer.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub text: String,
    pub by: String,
}

#[message(remote = "sweep8.big-question.v1")]
pub struct BigQuestion {
    pub bytes: Vec<u8>,
    pub reply_to: ActorRef<Answer>,
}

#[message(remote = "sweep8.blob.v1")]
#[derive(Clone, PartialEq, Eq)]
pub struct Blob {
    pub tag: u64,
    pub bytes: Vec<u8>,
}

impl Debug for Blob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Blob {{ tag: {}, {} bytes }}",
            self.tag,
            self.bytes.len()
        )
    }
}

#[message(remote = "sweep8.blob-please.v1")]
pub struct BlobPlease {
    pub size: usize,
    pub reply_to: ActorRef<Blob>,
}

#[message(remote = "sweep8.unit.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit;

#[message(remote = "sweep8.empty-braces.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmptyBraces {}

#[message(remote = "sweep8.empties.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Empties {
    pub s: String,
    pub v: Vec<u64>,
    pub m: HashMap<String, String>,
    pub o: Option<u8>,
    pub t: (),
    pub nested: Vec<Vec<String>>,
}

#[message(remote = "sweep8.wide.v1")]
#[derive(Debug, Clone, PartialEq)]
pub enum Wide {
    U0,
    U1,
    T2(u8),
    T3(i8, i16),
    T4(i32, i64, i128),
    S5 { a: u16, b: u32, c: u64, d: u128 },
    F6(f32, f64),
    B7(bool),
    C8(char),
    Str9(String),
    Bytes10(Vec<u8>),
    Opt11(Option<Box<Wide>>),
    Nest12(Vec<Wide>),
    Tup13((u8, String, Option<u64>)),
    Map14(BTreeMap<String, i64>),
    Unit15(()),
    Arr16([u32; 4]),
    Neg17(isize),
    Us18(usize),
    Empty19 {},
    Last20,
}

#[message(remote = "sweep8.nested.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nested {
    pub a: Option<Vec<HashMap<String, Option<Vec<u64>>>>>,
    pub b: Vec<Option<Option<String>>>,
    pub c: HashMap<u64, Vec<HashMap<String, Vec<Option<bool>>>>>,
    pub d: BTreeMap<(u8, String), Vec<Vec<u8>>>,
    pub e: Option<HashSet<String>>,
    pub f: (Option<()>, Vec<()>),
}

#[message(remote = "sweep8.secret.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret(pub u64);

#[message(remote = "sweep8.tree.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tree {
    Leaf(u64),
    Node(Vec<Tree>),
}

/// Encoded without `b` when it is `None`, decoded always with it: a payload that
/// the receiving side cannot read (postcard is not self-describing).
#[message(remote = "sweep8.skewed.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skewed {
    pub a: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<u64>,
}

/// Encoded with `b`, decoded without it: bytes left over on the receiving side.
#[message(remote = "sweep8.extra.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extra {
    pub a: u64,
    #[serde(skip_deserializing)]
    pub b: u64,
}

#[message(remote = "sweep8.echo-args.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EchoArgs {
    pub prefix: String,
}

/// A worker another system can ask for: answers each question with the prefix.
#[remote_behavior("sweep8.echo")]
pub fn echo_worker(args: EchoArgs) -> Behavior<Question> {
    let prefix = args.prefix;
    Behaviors::receive(move |ctx, q: Question| {
        q.reply_to.tell(Answer {
            text: format!("{prefix}{}", q.text),
            by: ctx.system().name().to_string(),
        });
    })
    .into()
}

/// An actor of two registered messages, for a key one side does not decode.
#[derive(Clone)]
pub struct Keeper {
    out: UnboundedSender<String>,
}

#[actor]
impl Keeper {
    fn note(&mut self, note: Note) {
        let _ = self.out.send(format!("note {}", note.n));
    }
    fn secret(&mut self, secret: Secret) {
        let _ = self.out.send(format!("secret {}", secret.0));
    }
}

// =================================================================================
// Helpers
// =================================================================================

/// Heartbeats every `beat` ms, a peer given up after `window` ms of silence.
fn detector(beat: u64, window: u64) -> RemoteSettings {
    RemoteSettings::loopback()
        .heartbeat_interval(ms(beat))
        .unreachable_after(ms(window))
}

/// The settings of scenarios that expect no give-up: a generous window.
fn calm() -> RemoteSettings {
    detector(100, 3_000)
}

/// The settings of scenarios that wait for a give-up.
fn quick() -> RemoteSettings {
    detector(100, 1_500)
}

fn node(name: &str, settings: RemoteSettings) -> ActorSystem {
    ActorSystem::builder(name)
        .remote(settings)
        .build()
        .expect("a node on loopback")
}

/// A node on loopback with the calm settings, its builder first passed to `more`.
fn node_with(
    name: &str,
    more: impl FnOnce(ActorSystemBuilder) -> ActorSystemBuilder,
) -> ActorSystem {
    more(ActorSystem::builder(name).remote(calm()))
        .build()
        .unwrap()
}

/// The wire limits of a receiver that holds frames to 16 KiB.
fn small_frames() -> WireLimits {
    WireLimits {
        max_frame: 16 * 1024,
        ..WireLimits::DEFAULT
    }
}

fn three(settings: RemoteSettings) -> (ActorSystem, ActorSystem, ActorSystem) {
    (
        node("a", settings.clone()),
        node("b", settings.clone()),
        node("c", settings),
    )
}

/// Terminate every system, all at once.
async fn end(systems: &[&ActorSystem]) {
    let ends: Vec<_> = systems.iter().map(|s| s.terminate()).collect();
    for e in ends {
        timeout(T, e).await.expect("terminated in time");
    }
}

fn uri<P: Message>(r: &ActorRef<P>) -> String {
    r.path().to_uri()
}

/// The URI with the incarnation: `tapio://system@host:port/path#uid`.
fn full_uri<P: Message>(r: &ActorRef<P>) -> String {
    format!("{}#{}", r.path().to_uri(), r.uid())
}

fn dir(from: &ActorSystem, to: &ActorSystem) -> LinkDirection {
    LinkDirection::between(from, to.address())
}

/// Partition `x` and `y` both ways.
fn cut(x: &ActorSystem, y: &ActorSystem) {
    dir(x, y).partition();
    dir(y, x).partition();
}

fn heal(x: &ActorSystem, y: &ActorSystem) {
    dir(x, y).heal();
    dir(y, x).heal();
}

/// An actor that forwards everything it is told to a channel.
fn sink<M: Message>(system: &ActorSystem, name: &str) -> (ActorRef<M>, UnboundedReceiver<M>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let r = system
        .spawn(
            Behaviors::receive_message(move |m: M| {
                let _ = tx.send(m);
            }),
            name,
        )
        .expect("a sink");
    (r, rx)
}

async fn recv<X>(rx: &mut UnboundedReceiver<X>, what: &str) -> X {
    timeout(T, rx.recv())
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {T:?}"))
        .unwrap_or_else(|| panic!("{what}: the channel closed"))
}

async fn nothing<X: Debug>(rx: &mut UnboundedReceiver<X>, within: Duration, what: &str) {
    if let Ok(Some(x)) = timeout(within, rx.recv()).await {
        panic!("{what}: expected nothing within {within:?}, got {x:?}");
    }
}

async fn letter_where(
    letters: &mut Subscription<DeadLetter>,
    what: &str,
    found: impl Fn(&DeadLetter) -> bool,
) -> DeadLetter {
    let mut seen = Vec::new();
    let got = timeout(T, async {
        loop {
            let letter = letters.recv().await.expect("the event stream is open");
            if found(&letter) {
                return letter;
            }
            seen.push(format!(
                "{} to {}: {}",
                letter.short_message_type(),
                letter.recipient(),
                letter.reason()
            ));
        }
    })
    .await;
    got.unwrap_or_else(|_| panic!("no dead letter {what} within {T:?}; saw {seen:?}"))
}

/// The next dead letter sent to `to`'s URI.
async fn letter_to<P: Message>(
    letters: &mut Subscription<DeadLetter>,
    what: &str,
    to: &ActorRef<P>,
) -> DeadLetter {
    let to = uri(to);
    letter_where(letters, what, |l| l.recipient().to_uri() == to).await
}

/// The next letter refused from a peer: it must name `peer`, its problem pass `expected`.
async fn from_peer(
    letters: &mut Subscription<DeadLetter>,
    what: &str,
    peer: &Address,
    expected: impl Fn(&WireProblem) -> bool,
) -> DeadLetter {
    let letter = letter_where(letters, what, |l| {
        matches!(l.reason(), DeadLetterReason::FromPeer { .. })
    })
    .await;
    match letter.reason() {
        DeadLetterReason::FromPeer {
            peer: from,
            problem,
        } => {
            assert_eq!(from, peer);
            assert!(expected(problem), "{problem:?}");
        }
        other => panic!("{other}"),
    }
    letter
}

/// Every letter that arrives within `quiet` of the previous one.
async fn drain_letters(letters: &mut Subscription<DeadLetter>, quiet: Duration) -> Vec<String> {
    let mut seen = Vec::new();
    while let Ok(Some(letter)) = timeout(quiet, letters.recv()).await {
        seen.push(format!(
            "{} to {}: {}",
            letter.short_message_type(),
            letter.recipient(),
            letter.reason()
        ));
    }
    seen
}

async fn given_up(events: &mut Subscription<PeerUnreachable>, peer: &Address) -> PeerUnreachable {
    timeout(T, async {
        loop {
            let e = events.recv().await.expect("the event stream is open");
            if &e.peer == peer {
                return e;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{peer} was not given up within {T:?}"))
}

/// An actor that watches `targets` and reports each `Terminated` it hears.
fn watcher<Q: Message>(
    system: &ActorSystem,
    name: &str,
    targets: Vec<ActorRef<Q>>,
) -> UnboundedReceiver<Terminated> {
    let (tx, rx) = mpsc::unbounded_channel();
    system
        .spawn(
            Behaviors::setup_once(move |ctx: &mut ActorContext<u64>| {
                for target in &targets {
                    ctx.watch(target);
                }
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                    if let Signal::Terminated(t) = signal {
                        let _ = tx.send(t.clone());
                    }
                })
            }),
            name,
        )
        .expect("a watcher");
    rx
}

/// Answers each question in upper case, signed with its system's name.
fn answerer(system: &ActorSystem, name: &str) -> ActorRef<Question> {
    let me = system.name().to_string();
    system
        .spawn(
            Behaviors::receive_message(move |q: Question| {
                q.reply_to.tell(Answer {
                    text: q.text.to_uppercase(),
                    by: me.clone(),
                });
            }),
            name,
        )
        .expect("an answerer")
}

/// Keeps every reply ref and never answers; reports each question's text.
fn hoarder(system: &ActorSystem, name: &str) -> (ActorRef<Question>, UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let kept: Arc<Mutex<Vec<ActorRef<Answer>>>> = Arc::default();
    let r = system
        .spawn(
            Behaviors::receive_message(move |q: Question| {
                kept.lock().unwrap().push(q.reply_to);
                let _ = tx.send(q.text);
            }),
            name,
        )
        .expect("a hoarder");
    (r, rx)
}

/// Passes each question on to `next`, reply ref and all.
fn front(system: &ActorSystem, name: &str, next: ActorRef<Question>) -> ActorRef<Question> {
    system
        .spawn(
            Behaviors::receive_message(move |q: Question| next.tell(q)),
            name,
        )
        .expect("a front")
}

fn ask_text(to: &ActorRef<Question>, text: &str, deadline: Duration) -> tapio::Ask<Answer> {
    let text = text.to_string();
    to.ask_with(|reply_to| Question { text, reply_to })
        .timeout(deadline)
}

/// Ask `to` about `text` (deadline `T`), and the answer.
async fn answered(to: &ActorRef<Question>, text: &str, what: &str) -> Answer {
    timeout(T, ask_text(to, text, T))
        .await
        .unwrap()
        .expect(what)
}

/// A note `n` from `from`.
fn note_from(from: &str, n: u64) -> Note {
    Note {
        from: from.into(),
        n,
    }
}

/// Message `n` of the sequence from `from`.
fn seq_from(from: &str, n: u64) -> Seq {
    Seq {
        from: from.into(),
        n,
    }
}

/// A blob tagged `tag`.
fn blob(tag: u64, bytes: Vec<u8>) -> Blob {
    Blob { tag, bytes }
}

/// Offer `to` the messages `0..n` from `who`, in turn; answers how many were refused.
async fn refused_offers(to: &ActorRef<Seq>, who: &str, n: u64) -> u64 {
    let mut refused = 0;
    for k in 0..n {
        if !to.offer(seq_from(who, k)).await {
            refused += 1;
        }
    }
    refused
}

/// A directory on `system` holding the last worker registered; the receiver hears each one.
fn directory(system: &ActorSystem) -> (ActorRef<Dir>, UnboundedReceiver<()>) {
    let (registered, rx) = mpsc::unbounded_channel::<()>();
    let held: Arc<Mutex<Option<ActorRef<Note>>>> = Arc::default();
    let directory = system
        .spawn(
            Behaviors::receive_message(move |d: Dir| match d {
                Dir::Register(r) => {
                    *held.lock().unwrap() = Some(r);
                    let _ = registered.send(());
                }
                Dir::Lookup(reply_to) => reply_to.tell(Found(held.lock().unwrap().clone())),
            }),
            "directory",
        )
        .unwrap();
    (directory, rx)
}

/// A spawner on `on` offering `echo_worker`, and its ref as `from` resolves it.
fn echo_spawner(
    on: &ActorSystem,
    from: &ActorSystem,
) -> (ActorRef<SpawnerMsg>, ActorRef<SpawnerMsg>) {
    let spawner = on
        .spawn(
            Spawner::offering::<echo_worker>().build().unwrap(),
            "spawner",
        )
        .unwrap();
    let resolved = from.resolve::<SpawnerMsg>(&uri(&spawner)).unwrap();
    (spawner, resolved)
}

/// A [`sink`] named `name` on `on`, and its ref as `from` resolves it.
fn remote_sink<M: RemoteProtocol>(
    from: &ActorSystem,
    on: &ActorSystem,
    name: &str,
) -> (ActorRef<M>, ActorRef<M>, UnboundedReceiver<M>) {
    let (local, rx) = sink::<M>(on, name);
    let resolved = from.resolve::<M>(&uri(&local)).unwrap();
    (local, resolved, rx)
}

/// Subscriptions to `x`'s and `y`'s `PeerUnreachable` events.
fn give_ups(
    x: &ActorSystem,
    y: &ActorSystem,
) -> (Subscription<PeerUnreachable>, Subscription<PeerUnreachable>) {
    (
        x.events().subscribe::<PeerUnreachable>(),
        y.events().subscribe::<PeerUnreachable>(),
    )
}

/// After a give-up both ways: both sides clear the quarantine and `x` links to `y` again.
async fn recover(x: &ActorSystem, y: &ActorSystem) {
    assert!(x.clear_quarantine(y.address()));
    assert!(y.clear_quarantine(x.address()));
    timeout(T, x.reconnect(y.address()))
        .await
        .unwrap()
        .expect("reconnected");
}

/// Ask the spawner `at` to start `factory` from `args` as `name`, and its answer.
async fn ask_spawn(
    at: &ActorRef<SpawnerMsg>,
    factory: &str,
    args: Vec<u8>,
    name: &str,
) -> SpawnReply {
    let request = Spawn {
        factory: factory.into(),
        args,
        name: name.into(),
    };
    timeout(T, at.ask(request).timeout(T))
        .await
        .unwrap()
        .expect("the spawner answers")
}

/// Ask the spawner `at` to start an `echo_worker` with `prefix` as `name`.
async fn spawn_echo(
    at: &ActorRef<SpawnerMsg>,
    prefix: &str,
    name: &str,
) -> Result<Spawned<Question>, RemoteSpawnError> {
    let args = EchoArgs {
        prefix: prefix.into(),
    };
    timeout(T, at.spawn_remote::<echo_worker>(args, name))
        .await
        .unwrap()
}

fn relay(system: &ActorSystem, out: Option<UnboundedSender<ActorRef<Note>>>) -> ActorRef<Hop> {
    system
        .spawn(
            Behaviors::receive(move |ctx, hop: Hop| {
                let mut trail = hop.trail;
                trail.push(ctx.system().name().to_string());
                let mut path = hop.path;
                if path.is_empty() {
                    if let Some(out) = &out {
                        let _ = out.send(hop.target.clone());
                    }
                    hop.target.tell(Note {
                        from: trail.join(">"),
                        n: trail.len() as u64,
                    });
                } else {
                    let next = path.remove(0);
                    next.tell(Hop {
                        target: hop.target,
                        path,
                        trail,
                    });
                }
            }),
            "relay",
        )
        .expect("a relay")
}

fn pattern(size: usize, seed: u64) -> Vec<u8> {
    (0..size)
        .map(|i| ((i as u64).wrapping_mul(31).wrapping_add(seed) % 251) as u8)
        .collect()
}

// =================================================================================
// 1. Refs through a third system (S36)
// =================================================================================

/// S36: C registers its worker with a directory on B; A looks it up there. The ref
/// A gets is bound to C (address, path, uid), and a tell through it reaches C
/// although A never resolved anything on C.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_a_ref_to_c_handed_to_a_by_b_reaches_c_directly() {
    let (a, b, c) = three(calm());
    let (directory, mut registered) = directory(&b);
    let (worker, mut at_c) = sink::<Note>(&c, "worker");
    c.resolve::<Dir>(&uri(&directory))
        .unwrap()
        .tell(Dir::Register(worker.clone()));
    recv(&mut registered, "C's registration at B").await;

    let dir_at_a = a.resolve::<Dir>(&uri(&directory)).unwrap();
    let Found(found) = timeout(T, dir_at_a.ask_with(Dir::Lookup).timeout(T))
        .await
        .unwrap()
        .expect("B answers the lookup");
    let found = found.expect("B holds C's worker");
    assert_eq!(found.path().address(), c.address(), "the ref names C");
    assert_eq!(found.path().to_uri(), worker.path().to_uri());
    assert_eq!(found.uid(), worker.uid(), "the incarnation travels too");

    found.tell(note_from("a", 7));
    assert_eq!(recv(&mut at_c, "A's note at C").await, note_from("a", 7));
    end(&[&a, &b, &c]).await;
}

/// S36: a ref of A goes A -> B -> C -> A inside messages and arrives home as the
/// local actor: equal to the original, and local (a tell through it and a tell
/// through the original, from one sender, arrive in order: S5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_a_ref_that_goes_round_three_systems_comes_home_local() {
    let (a, b, c) = three(calm());
    let (home_tx, mut home) = mpsc::unbounded_channel();
    let relay_a = relay(&a, Some(home_tx));
    let relay_b = relay(&b, None);
    let relay_c = relay(&c, None);
    let (target, mut notes) = sink::<Note>(&a, "target");

    let first = a.resolve::<Hop>(&uri(&relay_b)).unwrap();
    // The path's refs are encoded and decoded on the way like the target.
    first.tell(Hop {
        target: target.clone(),
        path: vec![a.resolve::<Hop>(&uri(&relay_c)).unwrap(), relay_a.clone()],
        trail: vec!["a".into()],
    });
    let note = recv(&mut notes, "the note after the round trip").await;
    assert_eq!(note, note_from("a>b>c>a", 4));

    let decoded = recv(&mut home, "the ref as A's relay decoded it").await;
    assert_eq!(decoded, target);
    assert_eq!(decoded.uid(), target.uid());
    assert_eq!(decoded.path().address(), a.address());
    decoded.tell(note_from("through the decoded ref", 1));
    target.tell(note_from("through the original", 2));
    let one = recv(&mut notes, "the first local note").await;
    let two = recv(&mut notes, "the second local note").await;
    assert_eq!(
        (one.n, two.n),
        (1, 2),
        "a ref of A decoded on A is the local actor: FIFO per sender holds"
    );
    end(&[&a, &b, &c]).await;
}

/// S36, S41: B is handed a ref to an actor on C inside a message from A, having
/// never resolved anything on C. It sends through it and watches it; when the
/// actor stops, B hears `Terminated` for exactly that ref.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s41_b_watches_a_ref_to_c_it_got_from_a() {
    let (a, b, c) = three(calm());
    let (worker, mut at_c) = sink::<Note>(&c, "worker");
    let (got_tx, mut got) = mpsc::unbounded_channel();
    let (end_tx, mut ends) = mpsc::unbounded_channel();
    let desk = b
        .spawn(
            Behaviors::receive(move |ctx, msg: WatchThis| {
                let WatchThis(r) = msg;
                ctx.watch(&r);
                r.tell(note_from("b", 1));
                let _ = got_tx.send(r);
            })
            .on_signal(move |_, signal| {
                if let Signal::Terminated(t) = signal {
                    let _ = end_tx.send(t.clone());
                }
            }),
            "desk",
        )
        .unwrap();
    a.resolve::<WatchThis>(&uri(&desk))
        .unwrap()
        .tell(WatchThis(a.resolve::<Note>(&full_uri(&worker)).unwrap()));
    let at_b = recv(&mut got, "the ref as B decoded it").await;
    assert_eq!(at_b.path().address(), c.address());
    assert_eq!(at_b.uid(), worker.uid());
    // B's note (sent after its watch, on the same association) has reached C.
    assert_eq!(recv(&mut at_c, "B's note at C").await.from, "b");

    c.stop(&worker).unwrap();
    let t = recv(&mut ends, "B's Terminated for C's worker").await;
    assert_eq!(t, Terminated::new(at_b.erase()));
    nothing(&mut ends, ms(300), "a second Terminated").await;
    end(&[&a, &b, &c]).await;
}

// =================================================================================
// 2. Asks (S44)
// =================================================================================

/// S44: the asked actor passes the reply ref to another actor of its system, which
/// answers; the answer finds the promise on the asking system.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_an_ask_answered_by_another_actor_than_the_one_asked() {
    let (a, b) = (node("a", calm()), node("b", calm()));
    let worker = answerer(&b, "worker");
    let front = front(&b, "front", worker);
    let at_a = a.resolve::<Question>(&uri(&front)).unwrap();
    for i in 0..5 {
        let answer = answered(
            &at_a,
            &format!("q{i}"),
            "answered by the worker behind the front",
        )
        .await;
        assert_eq!(
            answer,
            Answer {
                text: format!("Q{i}"),
                by: "b".into()
            }
        );
    }
    end(&[&a, &b]).await;
}

/// S44, S36: the asked actor on B forwards the request, reply ref inside, to a
/// worker on C; C (which never heard of A) answers A's promise directly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_an_ask_answered_from_a_third_system() {
    let (a, b, c) = three(calm());
    let worker = answerer(&c, "worker");
    let front = front(&b, "front", b.resolve::<Question>(&uri(&worker)).unwrap());
    let at_a = a.resolve::<Question>(&uri(&front)).unwrap();
    for i in 0..5 {
        let answer = answered(&at_a, &format!("via c {i}"), "answered from C").await;
        assert_eq!(
            answer,
            Answer {
                text: format!("VIA C {i}"),
                by: "c".into()
            }
        );
    }
    end(&[&a, &b, &c]).await;
}

/// S44: the request is forwarded from B to C, and C terminates holding it. The
/// actor asked (on B) is there throughout: nobody answered, so the ask ends at
/// its deadline as `Timeout`, not as `Unreachable` nor `TargetTerminated`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_an_ask_forwarded_to_a_system_that_terminates_times_out() {
    let (a, b, c) = three(calm());
    let (keeper, mut kept) = hoarder(&c, "keeper");
    let front = front(&b, "front", b.resolve::<Question>(&uri(&keeper)).unwrap());
    let at_a = a.resolve::<Question>(&uri(&front)).unwrap();
    let asked = Instant::now();
    let ask = tokio::spawn(ask_text(&at_a, "held", ms(2_000)).into_future());
    assert_eq!(recv(&mut kept, "the request at C").await, "held");
    timeout(T, c.terminate()).await.unwrap();
    let outcome = timeout(T, ask).await.unwrap().unwrap();
    assert!(
        matches!(outcome, Err(AskError::Timeout { .. })),
        "the asked actor was there and nobody answered: {outcome:?}"
    );
    assert!(
        asked.elapsed() >= ms(1_900),
        "ended at its deadline, not before"
    );
    end(&[&a, &b]).await;
}

/// S44, S42: ten asks held on B with thirty-second deadlines all fail with
/// `Unreachable` as soon as B is given up on; an ask to C answers meanwhile; and
/// an ask made after the give-up fails at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_asks_in_flight_to_a_given_up_peer_fail_fast_while_a_third_answers() {
    let (a, b, c) = three(quick());
    let (keeper, mut kept) = hoarder(&b, "keeper");
    let worker_c = answerer(&c, "worker");
    let keeper_at_a = a.resolve::<Question>(&uri(&keeper)).unwrap();
    let worker_at_a = a.resolve::<Question>(&uri(&worker_c)).unwrap();
    linked(&a, &c, T).await;

    let mut asks = Vec::new();
    for i in 0..10 {
        asks.push(tokio::spawn(
            ask_text(&keeper_at_a, &format!("held {i}"), Duration::from_secs(30)).into_future(),
        ));
    }
    for _ in 0..10 {
        recv(&mut kept, "a held request at B").await;
    }
    let mut gave_up = a.events().subscribe::<PeerUnreachable>();
    let cut_at = Instant::now();
    cut(&a, &b);

    let answer = answered(&worker_at_a, "still there?", "C answers while B is cut off").await;
    assert_eq!(answer.by, "c");

    for ask in asks {
        let outcome = timeout(T, ask)
            .await
            .expect("the ask ended in time")
            .unwrap();
        assert!(
            matches!(outcome, Err(AskError::Unreachable { .. })),
            "an ask held by a peer given up on: {outcome:?}"
        );
    }
    assert!(
        cut_at.elapsed() < Duration::from_secs(5),
        "failed with the give-up (window 1.5 s), not at the 30 s deadline: {:?}",
        cut_at.elapsed()
    );
    let event = given_up(&mut gave_up, b.address()).await;
    assert!(event.quarantined);

    let after = Instant::now();
    let late = timeout(T, ask_text(&keeper_at_a, "late", Duration::from_secs(30)))
        .await
        .unwrap();
    assert!(
        matches!(late, Err(AskError::Unreachable { .. })),
        "{late:?}"
    );
    assert!(after.elapsed() < ms(500), "at once: {:?}", after.elapsed());
    heal(&a, &b);
    end(&[&a, &b, &c]).await;
}

/// S44, S40: a request larger than any frame may be can never be sent; the ask
/// fails at once as `Unreachable` ("the request could not be sent there") rather
/// than waiting out its deadline, and the request is a dead letter on the asker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_s40_a_request_over_the_frame_limit_fails_the_ask_at_once() {
    let (a, b) = (node("a", calm()), node("b", calm()));
    let big = b
        .spawn(
            Behaviors::receive_message(|q: BigQuestion| {
                q.reply_to.tell(Answer {
                    text: q.bytes.len().to_string(),
                    by: "b".into(),
                });
            }),
            "big",
        )
        .unwrap();
    let at_a = a.resolve::<BigQuestion>(&uri(&big)).unwrap();
    let small = timeout(
        T,
        at_a.ask_with(|reply_to| BigQuestion {
            bytes: vec![1; 10],
            reply_to,
        })
        .timeout(T),
    )
    .await
    .unwrap()
    .expect("a small request is answered");
    assert_eq!(small.text, "10");

    let mut letters = a.events().subscribe::<DeadLetter>();
    let asked = Instant::now();
    let outcome = timeout(
        T,
        at_a.ask_with(|reply_to| BigQuestion {
            bytes: vec![7; 2 << 20],
            reply_to,
        })
        .timeout(Duration::from_secs(8)),
    )
    .await
    .unwrap();
    let took = asked.elapsed();
    assert!(
        matches!(outcome, Err(AskError::Unreachable { .. })),
        "a 2 MiB request cannot cross a 1 MiB frame limit: {outcome:?} after {took:?}"
    );
    assert!(
        took < Duration::from_secs(2),
        "at once, not at the deadline: {took:?}"
    );
    let letter = letter_to(&mut letters, "for the big request", &big).await;
    assert!(
        !matches!(letter.reason(), DeadLetterReason::FromPeer { .. }),
        "refused on the sender: {}",
        letter.reason()
    );
    end(&[&a, &b]).await;
}

// =================================================================================
// 3. What arrives equals what was sent (S40)
// =================================================================================

/// S40: unit structs, a struct with empty braces, and empty strings, vectors,
/// maps and unit fields arrive equal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_unit_and_empty_messages_arrive_equal() {
    let (a, b) = (node("a", calm()), node("b", calm()));
    let (units, mut got_units) = sink::<Unit>(&b, "units");
    let (braces, mut got_braces) = sink::<EmptyBraces>(&b, "braces");
    let (empties, mut got_empties) = sink::<Empties>(&b, "empties");
    let units = a.resolve::<Unit>(&uri(&units)).unwrap();
    let braces = a.resolve::<EmptyBraces>(&uri(&braces)).unwrap();
    let empties = a.resolve::<Empties>(&uri(&empties)).unwrap();

    let all_empty = Empties {
        s: String::new(),
        v: vec![],
        m: HashMap::new(),
        o: None,
        t: (),
        nested: vec![vec![], vec![String::new()], vec![]],
    };
    for _ in 0..3 {
        units.tell(Unit);
        braces.tell(EmptyBraces {});
        empties.tell(all_empty.clone());
    }
    for _ in 0..3 {
        assert_eq!(recv(&mut got_units, "a unit").await, Unit);
        assert_eq!(recv(&mut got_braces, "empty braces").await, EmptyBraces {});
        assert_eq!(recv(&mut got_empties, "empties").await, all_empty);
    }
    nothing(&mut got_units, ms(200), "a fourth unit").await;
    end(&[&a, &b]).await;
}

fn wide_values() -> Vec<Wide> {
    let mut map = BTreeMap::new();
    map.insert(String::new(), i64::MIN);
    map.insert("ключ".into(), i64::MAX);
    vec![
        Wide::U0,
        Wide::U1,
        Wide::T2(u8::MAX),
        Wide::T3(i8::MIN, i16::MIN),
        Wide::T4(i32::MIN, i64::MAX, i128::MIN),
        Wide::S5 {
            a: u16::MAX,
            b: u32::MAX,
            c: u64::MAX,
            d: u128::MAX,
        },
        Wide::F6(f32::MIN_POSITIVE, f64::NEG_INFINITY),
        Wide::F6(-0.0, f64::MAX),
        Wide::B7(true),
        Wide::B7(false),
        Wide::C8('\u{10FFFF}'),
        Wide::C8('\0'),
        Wide::Str9("nul \0, tab \t, emoji 🦀, rtl עברית".into()),
        Wide::Bytes10((0..=255).collect()),
        Wide::Opt11(None),
        Wide::Opt11(Some(Box::new(Wide::Opt11(Some(Box::new(Wide::U1)))))),
        Wide::Nest12(vec![
            Wide::U0,
            Wide::Nest12(vec![]),
            Wide::Str9(String::new()),
        ]),
        Wide::Tup13((0, "t".into(), Some(0))),
        Wide::Map14(map),
        Wide::Unit15(()),
        Wide::Arr16([0, 1, u32::MAX, 3]),
        Wide::Neg17(isize::MIN),
        Wide::Us18(usize::MAX),
        Wide::Empty19 {},
        Wide::Last20,
    ]
}

/// S40: every variant of a 21-variant enum (unit, tuple, struct, recursive;
/// extreme integers, floats, chars, unicode) arrives equal and in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_every_variant_of_a_wide_enum_arrives_equal_in_order() {
    let (a, b) = (node("a", calm()), node("b", calm()));
    let (_, at_a, mut got) = remote_sink::<Wide>(&a, &b, "wide");
    let values = wide_values();
    for v in &values {
        at_a.tell(v.clone());
    }
    let mut received = Vec::new();
    for v in &values {
        let item = recv(&mut got, "a variant").await;
        assert_eq!(&item, v);
        received.push(item);
    }
    // -0.0 == 0.0: check the sign survived too.
    assert!(
        matches!(received[7], Wide::F6(x, _) if x.is_sign_negative()),
        "{:?}",
        received[7]
    );
    end(&[&a, &b]).await;
}

fn nested_value() -> Nested {
    let mut inner = HashMap::new();
    inner.insert("none".to_string(), None);
    inner.insert("empty".to_string(), Some(vec![]));
    inner.insert("full".to_string(), Some(vec![0, u64::MAX, 42]));
    let mut deep = HashMap::new();
    deep.insert("k".to_string(), vec![Some(true), None, Some(false)]);
    deep.insert(String::new(), vec![]);
    let mut c = HashMap::new();
    c.insert(0, vec![]);
    c.insert(u64::MAX, vec![deep.clone(), HashMap::new(), deep]);
    let mut d = BTreeMap::new();
    d.insert((0, String::new()), vec![]);
    d.insert(
        (255, "x".repeat(300)),
        vec![vec![], vec![1, 2, 3], pattern(1_000, 5)],
    );
    Nested {
        a: Some(vec![inner.clone(), HashMap::new(), inner]),
        b: vec![
            None,
            Some(None),
            Some(Some("s".into())),
            Some(Some(String::new())),
        ],
        c,
        d,
        e: Some(["α", "β", ""].iter().map(|s| s.to_string()).collect()),
        f: (Some(()), vec![(), (), ()]),
    }
}

/// S40: `Option` of `Vec` of `HashMap` of `Option` of `Vec`, and friends, arrive
/// equal, both ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_nested_options_vecs_and_maps_arrive_equal_both_ways() {
    let (a, b) = (node("a", calm()), node("b", calm()));
    let (at_b, mut got_b) = sink::<Nested>(&b, "nested");
    let (at_a, mut got_a) = sink::<Nested>(&a, "nested");
    let value = nested_value();
    a.resolve::<Nested>(&uri(&at_b))
        .unwrap()
        .tell(value.clone());
    b.resolve::<Nested>(&uri(&at_a))
        .unwrap()
        .tell(value.clone());
    let empty = Nested {
        a: None,
        b: vec![],
        c: HashMap::new(),
        d: BTreeMap::new(),
        e: None,
        f: (None, vec![]),
    };
    a.resolve::<Nested>(&uri(&at_b))
        .unwrap()
        .tell(empty.clone());
    assert_eq!(recv(&mut got_b, "nested at B").await, value);
    assert_eq!(recv(&mut got_a, "nested at A").await, value);
    assert_eq!(recv(&mut got_b, "empty nested at B").await, empty);
    end(&[&a, &b]).await;
}

/// S40, S44: a reply of 900,000 bytes (under the 1 MiB frame limit) arrives equal,
/// and a 900,000-byte tell the other way too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_a_reply_near_the_frame_limit_arrives_equal() {
    let (a, b) = (node("a", calm()), node("b", calm()));
    let maker = b
        .spawn(
            Behaviors::receive_message(|p: BlobPlease| {
                p.reply_to.tell(Blob {
                    tag: p.size as u64,
                    bytes: pattern(p.size, 1),
                });
            }),
            "maker",
        )
        .unwrap();
    let (blobs, mut got) = sink::<Blob>(&b, "blobs");
    let maker = a.resolve::<BlobPlease>(&uri(&maker)).unwrap();
    for size in [0, 1, 65_536, 900_000] {
        let blob = timeout(
            T,
            maker
                .ask_with(|reply_to| BlobPlease { size, reply_to })
                .timeout(T),
        )
        .await
        .unwrap()
        .expect("the blob");
        assert_eq!(
            blob,
            Blob {
                tag: size as u64,
                bytes: pattern(size, 1)
            }
        );
    }
    let sent = Blob {
        tag: 9,
        bytes: pattern(900_000, 9),
    };
    a.resolve::<Blob>(&uri(&blobs)).unwrap().tell(sent.clone());
    assert_eq!(recv(&mut got, "the big tell").await, sent);
    end(&[&a, &b]).await;
}

/// S40, S31, S37: a tell over the frame limit cannot cross: it is a dead letter on
/// the sender, naming its recipient and carrying the message; the association goes
/// on, and the receiver sees no refused frame from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_a_tell_over_the_frame_limit_is_a_dead_letter_on_the_sender_only() {
    let (a, b) = (node("a", calm()), node("b", calm()));
    let (blobs, at_a, mut got) = remote_sink::<Blob>(&a, &b, "blobs");
    at_a.tell(blob(0, vec![]));
    assert_eq!(recv(&mut got, "a small blob").await.tag, 0);

    let mut at_a_letters = a.events().subscribe::<DeadLetter>();
    let mut at_b_letters = b.events().subscribe::<DeadLetter>();
    at_a.tell(blob(1, vec![0; 1_200_000]));
    at_a.tell(blob(2, vec![2; 10]));
    let letter = letter_to(&mut at_a_letters, "for the oversized blob", &blobs).await;
    assert!(
        !matches!(letter.reason(), DeadLetterReason::FromPeer { .. }),
        "{}",
        letter.reason()
    );
    assert_eq!(
        letter.take_message::<Blob>().map(|b| b.tag),
        Some(1),
        "the letter carries it"
    );
    assert_eq!(recv(&mut got, "the next blob").await, blob(2, vec![2; 10]));
    let at_b = drain_letters(&mut at_b_letters, ms(300)).await;
    assert!(at_b.is_empty(), "the receiver saw nothing of it: {at_b:?}");
    end(&[&a, &b]).await;
}

/// S40, S31: 5,000 tells in one burst, from a system not yet linked: what arrives
/// is in order without duplicates, and every message that did not arrive is a
/// dead letter on the sender (a full outbound buffer is allowed to refuse; nothing
/// is silently lost).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_s31_a_tell_burst_keeps_order_and_accounts_for_every_message() {
    const N: u64 = 5_000;
    let (a, b) = (node("a", calm()), node("b", calm()));
    let (seqs, mut got) = sink::<Seq>(&b, "seqs");
    let mut letters = a
        .events()
        .subscribe_with_capacity::<DeadLetter>(20_000)
        .unwrap();
    let at_a = a.resolve::<Seq>(&uri(&seqs)).unwrap();
    for n in 0..N {
        at_a.tell(seq_from("a", n));
    }
    let mut arrived = Vec::new();
    let mut lettered = BTreeSet::new();
    let mut reasons = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while (arrived.len() + lettered.len()) < N as usize {
        assert!(
            Instant::now() < deadline,
            "after 20 s: {} arrived, {} dead-lettered, {} unaccounted for (reasons {reasons:?})",
            arrived.len(),
            lettered.len(),
            N as usize - arrived.len() - lettered.len()
        );
        tokio::select! {
            Some(seq) = got.recv() => arrived.push(seq.n),
            Some(letter) = letters.recv() => {
                if let Some(seq) = letter.take_message::<Seq>() {
                    reasons.insert(letter.reason().to_string());
                    lettered.insert(seq.n);
                }
            }
            _ = tokio::time::sleep(ms(100)) => {}
        }
    }
    assert!(
        arrived.windows(2).all(|w| w[0] < w[1]),
        "in order, no duplicates"
    );
    let arrived_set: BTreeSet<u64> = arrived.iter().copied().collect();
    assert!(
        arrived_set.is_disjoint(&lettered),
        "arrived and dead-lettered"
    );
    assert_eq!(letters.lost(), 0);
    nothing(&mut got, ms(300), "more than was sent").await;
    end(&[&a, &b]).await;
}

/// S40, S47: A and C each offer 3,000 messages to one sink on B at once. Offers
/// never drop: every one resolves `true`, all 6,000 arrive, and each sender's
/// arrive in the order offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_s47_offer_bursts_from_two_systems_arrive_whole_and_in_order() {
    const N: u64 = 3_000;
    let (a, b, c) = three(calm());
    let (seqs, from_a, mut got) = remote_sink::<Seq>(&a, &b, "seqs");
    let from_c = c.resolve::<Seq>(&uri(&seqs)).unwrap();
    let offer_all =
        |to: ActorRef<Seq>, who: &'static str| async move { refused_offers(&to, who, N).await };
    let (ra, rc) = timeout(Duration::from_secs(30), async {
        tokio::join!(offer_all(from_a, "a"), offer_all(from_c, "c"))
    })
    .await
    .expect("the offers resolved in time");
    assert_eq!((ra, rc), (0, 0), "offers refused");
    let mut next = HashMap::from([("a".to_string(), 0_u64), ("c".to_string(), 0_u64)]);
    for _ in 0..2 * N {
        let seq = recv(&mut got, "an offered message").await;
        let expected = next.get_mut(&seq.from).unwrap();
        assert_eq!(seq.n, *expected, "from {}: out of order or lost", seq.from);
        *expected += 1;
    }
    end(&[&a, &b, &c]).await;
}

/// S40, S45: associations are independent: C's frames to B are held by a one-way
/// partition while A's flow; healed, C's arrive, all of them, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s40_s45_a_held_association_does_not_hold_another() {
    let (a, b, c) = three(calm());
    let (seqs, from_a, mut got) = remote_sink::<Seq>(&a, &b, "seqs");
    let from_c = c.resolve::<Seq>(&uri(&seqs)).unwrap();
    linked(&c, &b, T).await;
    dir(&c, &b).partition();
    for n in 0..50 {
        from_c.tell(seq_from("c", n));
        from_a.tell(seq_from("a", n));
    }
    for n in 0..50 {
        let seq = recv(&mut got, "A's message").await;
        assert_eq!(seq, seq_from("a", n), "only A's arrive while C's are held");
    }
    nothing(&mut got, ms(200), "C's messages during the partition").await;
    dir(&c, &b).heal();
    for n in 0..50 {
        assert_eq!(recv(&mut got, "C's message").await, seq_from("c", n));
    }
    end(&[&a, &b, &c]).await;
}

async fn drops_with_seed(seed: u64) -> BTreeSet<u64> {
    let nodes = two_nodes(calm()).unwrap();
    let (_, at_a, mut got) = remote_sink::<Seq>(&nodes.a, &nodes.b, "seqs");
    linked(&nodes.a, &nodes.b, T).await;
    nodes.a_to_b().drop_ratio(0.5, seed);
    for n in 0..200 {
        at_a.tell(seq_from("a", n));
    }
    nodes.a_to_b().clear();
    at_a.tell(seq_from("a", 1_000));
    let mut arrived = Vec::new();
    loop {
        let seq = recv(&mut got, "a message, or the last one").await;
        if seq.n == 1_000 {
            break;
        }
        arrived.push(seq.n);
    }
    assert!(
        arrived.windows(2).all(|w| w[0] < w[1]),
        "in order: {arrived:?}"
    );
    nodes.terminate().await;
    arrived.into_iter().collect()
}

/// S45: `drop_ratio(r, seed)`: "the same seed loses the same ones", on two fresh
/// pairs of systems.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s45_a_drop_ratio_with_one_seed_loses_the_same_messages() {
    let first = drops_with_seed(8).await;
    let second = drops_with_seed(8).await;
    assert!(
        !first.is_empty() && first.len() < 200,
        "about half: {}",
        first.len()
    );
    assert_eq!(first, second, "the same seed, the same losses");
}

// =================================================================================
// 4. The receiving side (S35, S37)
// =================================================================================

/// S35, S37: B decodes only the keys it lists, and not `Secret`'s. A frame of it
/// from A is a dead letter on B naming A and the unknown key; the association and
/// the actor go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s35_s37_a_key_the_receiver_does_not_register_is_a_dead_letter_naming_the_peer() {
    let a = node("a", calm());
    let b = node_with("b", |b| {
        b.wire_registry(Registry::builder().register::<Note>().build().unwrap())
    });
    let (out, mut seen) = mpsc::unbounded_channel();
    let keeper = b.spawn(Keeper { out }, "keeper").unwrap();
    let mut letters = b.events().subscribe::<DeadLetter>();
    let at_a = a.resolve::<KeeperMsg>(&uri(&keeper)).unwrap();
    at_a.tell(note_from("a", 1));
    assert_eq!(recv(&mut seen, "the first note").await, "note 1");
    at_a.tell(Secret(2));
    at_a.tell(note_from("a", 3));
    from_peer(
        &mut letters,
        "for the secret",
        a.address(),
        |problem| matches!(problem, WireProblem::UnknownKey(k) if k == "sweep8.secret.v1"),
    )
    .await;
    assert_eq!(recv(&mut seen, "the note after it").await, "note 3");
    nothing(&mut seen, ms(200), "the secret").await;
    end(&[&a, &b]).await;
}

/// S35, S37, S44: the asking system does not decode the answer's key. The answer
/// is a dead letter there naming the peer it came from; the ask is not answered,
/// and ends at its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s35_s44_an_answer_whose_key_the_asker_does_not_register() {
    let a = node_with("a", |b| {
        b.wire_registry(Registry::builder().register::<Question>().build().unwrap())
    });
    let b = node("b", calm());
    let worker = answerer(&b, "worker");
    let mut letters = a.events().subscribe::<DeadLetter>();
    let at_a = a.resolve::<Question>(&uri(&worker)).unwrap();
    let outcome = timeout(T, ask_text(&at_a, "hello", ms(1_500)))
        .await
        .unwrap();
    assert!(
        matches!(outcome, Err(AskError::Timeout { .. })),
        "{outcome:?}"
    );
    from_peer(
        &mut letters,
        "for the answer",
        b.address(),
        |problem| matches!(problem, WireProblem::UnknownKey(k) if k == "sweep8.answer.v1"),
    )
    .await;
    end(&[&a, &b]).await;
}

/// S37: B holds payloads to a nesting depth of 8, A to the default. A tree nested
/// twenty deep is a dead letter on B (`TooDeep`, naming A); a shallow one after it
/// arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_payload_past_the_receivers_depth_limit_is_refused_alone() {
    let a = node("a", calm());
    let b = node_with("b", |b| {
        b.wire_limits(WireLimits {
            max_depth: 8,
            ..WireLimits::DEFAULT
        })
    });
    let (trees, mut got) = sink::<Tree>(&b, "trees");
    let mut letters = b.events().subscribe::<DeadLetter>();
    let at_a = a.resolve::<Tree>(&uri(&trees)).unwrap();
    let mut deep = Tree::Leaf(0);
    for _ in 0..20 {
        deep = Tree::Node(vec![deep]);
    }
    at_a.tell(deep);
    at_a.tell(Tree::Node(vec![Tree::Leaf(1), Tree::Leaf(2)]));
    from_peer(&mut letters, "for the deep tree", a.address(), |problem| {
        matches!(problem, WireProblem::TooDeep { max: 8, .. })
    })
    .await;
    assert_eq!(
        recv(&mut got, "the shallow tree").await,
        Tree::Node(vec![Tree::Leaf(1), Tree::Leaf(2)])
    );
    end(&[&a, &b]).await;
}

/// S37: a payload that does not decode as its key's type (a field the sender
/// left out) is a dead letter on the receiver naming the peer and the key
/// (`Undecodable`); the messages around it arrive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_payload_that_does_not_decode_is_a_dead_letter_naming_the_peer() {
    let (a, b) = (node("a", calm()), node("b", calm()));
    let (skewed, mut got) = sink::<Skewed>(&b, "skewed");
    let mut letters = b.events().subscribe::<DeadLetter>();
    let at_a = a.resolve::<Skewed>(&uri(&skewed)).unwrap();
    at_a.tell(Skewed { a: 1, b: Some(1) });
    at_a.tell(Skewed { a: 2, b: None }); // encoded one field short
    at_a.tell(Skewed { a: 3, b: Some(3) });
    assert_eq!(recv(&mut got, "1").await, Skewed { a: 1, b: Some(1) });
    assert_eq!(recv(&mut got, "3").await, Skewed { a: 3, b: Some(3) });
    let letter = from_peer(&mut letters, "for the short one", a.address(), |problem| {
        matches!(problem, WireProblem::Undecodable { key, .. } if key == "sweep8.skewed.v1")
    })
    .await;
    assert_eq!(letter.recipient().to_string(), skewed.path().to_string());

    // Bytes left after the payload: `TrailingBytes`, naming the key and the count.
    let (_, extras_at_a, mut got_extra) = remote_sink::<Extra>(&a, &b, "extras");
    extras_at_a.tell(Extra { a: 1, b: 5 });
    let letter = letter_where(&mut letters, "for the extra bytes", |l| {
        matches!(l.reason(), DeadLetterReason::FromPeer { .. })
    })
    .await;
    assert!(
        matches!(letter.reason(), DeadLetterReason::FromPeer { problem: WireProblem::TrailingBytes { key, left: 1 }, .. } if key == "sweep8.extra.v1"),
        "{:?}",
        letter.reason()
    );
    nothing(&mut got_extra, ms(200), "a payload with bytes left over").await;
    at_a.tell(Skewed { a: 4, b: Some(4) });
    assert_eq!(recv(&mut got, "4").await, Skewed { a: 4, b: Some(4) });
    end(&[&a, &b]).await;
}

/// S37: B holds frames to 16 KiB, A to the default 1 MiB. A 32 KiB frame from A is
/// refused by B (`FrameTooLarge`, naming A), and "none of them takes down the
/// association": the small message sent right after it arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s37_a_frame_over_the_receivers_max_frame_leaves_the_association_up() {
    let a = node("a", calm());
    let b = node_with("b", |b| b.wire_limits(small_frames()));
    let (blobs, mut got) = sink::<Blob>(&b, "blobs");
    let mut b_letters = b.events().subscribe::<DeadLetter>();
    let mut a_letters = a.events().subscribe::<DeadLetter>();
    let at_a = a.resolve::<Blob>(&uri(&blobs)).unwrap();
    at_a.tell(blob(0, vec![0; 10]));
    assert_eq!(recv(&mut got, "the first small blob").await.tag, 0);
    at_a.tell(blob(1, vec![1; 32 * 1024]));
    at_a.tell(blob(2, vec![2; 10]));
    from_peer(
        &mut b_letters,
        "for the large frame",
        a.address(),
        |problem| matches!(problem, WireProblem::FrameTooLarge { max: 16384, .. }),
    )
    .await;
    let next = timeout(ms(3_000), got.recv()).await;
    let on_a = drain_letters(&mut a_letters, ms(300)).await;
    assert!(
        matches!(&next, Ok(Some(blob)) if blob.tag == 2),
        "the message after the refused frame should arrive; got {next:?}; A's dead letters: {on_a:?}"
    );
    end(&[&a, &b]).await;
}

/// S39, S31: the same refusal seen from the sender. B cuts the connection under
/// the messages sent right after the oversized one; S39 allows losing them as dead
/// letters ("what was queued or in flight on it is dead-lettered"), and the docs'
/// table says such a letter carries "the message, the path it was sent to and
/// why". So each of Blobs 2..=5 either arrives, or is a dead letter on A carrying
/// it and naming `/user/blobs`: nothing is lost unaccounted for (S31).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_s31_messages_lost_with_a_cut_connection_are_letters_naming_them() {
    let a = node("a", calm());
    let b = node_with("b", |b| b.wire_limits(small_frames()));
    let (blobs, mut got) = sink::<Blob>(&b, "blobs");
    let mut letters = a.events().subscribe::<DeadLetter>();
    let at_a = a.resolve::<Blob>(&uri(&blobs)).unwrap();
    at_a.tell(blob(0, vec![0; 10]));
    assert_eq!(recv(&mut got, "the first small blob").await.tag, 0);
    at_a.tell(blob(1, vec![1; 32 * 1024]));
    for tag in 2..=5 {
        at_a.tell(Blob {
            tag,
            bytes: vec![2; 10],
        });
    }
    let mut arrived = BTreeSet::new();
    let mut lettered = BTreeSet::new();
    let mut other_letters = Vec::new();
    let deadline = Instant::now() + ms(3_000);
    while arrived.len() + lettered.len() < 4 && Instant::now() < deadline {
        tokio::select! {
            Some(blob) = got.recv() => { arrived.insert(blob.tag); }
            Some(letter) = letters.recv() => {
                let blob = letter.take_message::<Blob>();
                match blob {
                    Some(blob) if letter.recipient().to_uri() == uri(&blobs) => { lettered.insert(blob.tag); }
                    _ => other_letters.push(format!(
                        "{} to {}: {:?}, carrying {blob:?}",
                        letter.short_message_type(),
                        letter.recipient(),
                        letter.reason()
                    )),
                }
            }
            _ = tokio::time::sleep(ms(100)) => {}
        }
    }
    let accounted: BTreeSet<u64> = arrived.union(&lettered).copied().collect();
    assert_eq!(
        accounted,
        (2..=5).collect::<BTreeSet<u64>>(),
        "after 3 s: arrived {arrived:?}, dead-lettered naming /user/blobs {lettered:?}; A's other dead letters: {other_letters:?}"
    );
    end(&[&a, &b]).await;
}

/// S39, S44: a system built without remote settings has no links: a ref to another
/// system still resolves (nothing is dialled), a tell through it is a dead letter
/// `NoLink` naming the peer and carrying the message, and an ask fails at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s39_s44_a_system_without_links_dead_letters_remote_sends_as_no_link() {
    let b = node("b", calm());
    let solo = ActorSystem::new("solo").unwrap();
    let (notes, mut got) = sink::<Note>(&b, "notes");
    let worker = answerer(&b, "worker");
    let mut letters = solo.events().subscribe::<DeadLetter>();
    let at_solo = solo
        .resolve::<Note>(&uri(&notes))
        .expect("resolves without dialling");
    at_solo.tell(note_from("solo", 1));
    let letter = letter_to(&mut letters, "for the note", &notes).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::NoLink {
            peer: b.address().clone()
        }
    );
    assert_eq!(letter.take_message::<Note>().map(|n| n.n), Some(1));
    let asked = Instant::now();
    let outcome = timeout(
        T,
        ask_text(&solo.resolve::<Question>(&uri(&worker)).unwrap(), "?", T),
    )
    .await
    .unwrap();
    assert!(
        matches!(outcome, Err(AskError::Unreachable { .. })),
        "{outcome:?}"
    );
    assert!(asked.elapsed() < ms(500), "{:?}", asked.elapsed());
    assert_eq!(
        timeout(T, solo.reconnect(b.address())).await.unwrap(),
        Err(LinkError::NotRemote)
    );
    nothing(&mut got, ms(200), "a note from a system without links").await;
    end(&[&solo, &b]).await;
}

// =================================================================================
// 5. Watching and the failure detector (S41, S42, S45, S49)
// =================================================================================

/// S41: one watcher on A; an actor on B stops, C's system stops, and B is given up
/// on (a partition) for a second actor there. The three `Terminated`s look the
/// same: each equals the signal for the ref watched, and comes exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_a_stop_a_system_end_and_a_give_up_look_the_same() {
    let (a, b, c) = three(detector(100, 2_000));
    let (w1, _r1) = sink::<Note>(&b, "w1");
    let (w2, _r2) = sink::<Note>(&c, "w2");
    let (w3, _r3) = sink::<Note>(&b, "w3");
    let r1 = a.resolve::<Note>(&uri(&w1)).unwrap();
    let r2 = a.resolve::<Note>(&uri(&w2)).unwrap();
    let r3 = a.resolve::<Note>(&uri(&w3)).unwrap();
    linked(&a, &b, T).await;
    linked(&a, &c, T).await;
    let mut ends = watcher(&a, "watcher", vec![r1.clone(), r2.clone(), r3.clone()]);
    nothing(&mut ends, ms(300), "a Terminated before anything stopped").await;

    b.stop(&w1).unwrap();
    let t1 = recv(&mut ends, "the actor's stop").await;
    assert_eq!(t1, Terminated::new(r1.erase()));

    let before = Instant::now();
    timeout(T, c.terminate()).await.unwrap();
    let t2 = recv(&mut ends, "the system's end").await;
    assert_eq!(t2, Terminated::new(r2.erase()));
    assert!(
        before.elapsed() < ms(1_900),
        "a system that stops tells its peers: at once, not after the window: {:?}",
        before.elapsed()
    );

    let mut gave_up = a.events().subscribe::<PeerUnreachable>();
    cut(&a, &b);
    let t3 = recv(&mut ends, "the give-up").await;
    assert_eq!(t3, Terminated::new(r3.erase()));
    given_up(&mut gave_up, b.address()).await;

    for (t, r) in [(&t1, &r1), (&t2, &r2), (&t3, &r3)] {
        assert_eq!(t.actor().path().to_uri(), r.path().to_uri());
        assert_eq!(t.actor().uid(), r.uid());
        assert_eq!(
            format!("{t:?}"),
            format!("{:?}", Terminated::new(r.erase()))
        );
    }
    nothing(&mut ends, ms(500), "a second Terminated").await;
    heal(&a, &b);
    end(&[&a, &b]).await;
}

/// S41, S42, S49: A watches actors on B and on C; only A <-> C is partitioned. A
/// gives up C alone (one `PeerUnreachable`, for C), hears `Terminated` for C's
/// actors only, and its watch of B's actor still works afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_s42_a_partition_from_one_peer_ends_only_its_watches() {
    let (a, b, c) = three(quick());
    let (wb, _rb) = sink::<Note>(&b, "wb");
    let (wc1, _r1) = sink::<Note>(&c, "wc1");
    let (wc2, _r2) = sink::<Note>(&c, "wc2");
    let rb = a.resolve::<Note>(&uri(&wb)).unwrap();
    let rc1 = a.resolve::<Note>(&uri(&wc1)).unwrap();
    let rc2 = a.resolve::<Note>(&uri(&wc2)).unwrap();
    linked(&a, &b, T).await;
    linked(&a, &c, T).await;
    let mut ends_b = watcher(&a, "watch-b", vec![rb.clone()]);
    let mut ends_c = watcher(&a, "watch-c", vec![rc1.clone(), rc2.clone()]);
    let mut gave_up = a.events().subscribe::<PeerUnreachable>();
    cut(&a, &c);

    let mut heard: Vec<String> = Vec::new();
    for _ in 0..2 {
        heard.push(
            recv(&mut ends_c, "a Terminated for C's actors")
                .await
                .actor()
                .path()
                .to_uri(),
        );
    }
    heard.sort();
    let mut expected = vec![uri(&wc1), uri(&wc2)];
    expected.sort();
    assert_eq!(heard, expected);
    let event = given_up(&mut gave_up, c.address()).await;
    assert_eq!(
        event,
        PeerUnreachable {
            peer: c.address().clone(),
            quarantined: true
        }
    );
    assert!(a.is_quarantined(c.address()));
    assert!(!a.is_quarantined(b.address()), "B is not C");
    nothing(&mut ends_b, ms(1_500), "a Terminated for B's actor").await;
    if let Some(other) = gave_up.try_recv() {
        panic!("only C was given up, then {other:?}");
    }
    b.stop(&wb).unwrap();
    assert_eq!(
        recv(&mut ends_b, "B's actor stopping").await,
        Terminated::new(rb.erase())
    );
    heal(&a, &c);
    end(&[&a, &b, &c]).await;
}

/// S41, S42: a watch made while the link is partitioned hears `Terminated` when
/// the peer is given up on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s41_a_watch_made_during_a_partition_hears_the_give_up() {
    let nodes = two_nodes(quick()).unwrap();
    let (_, r, _rw) = remote_sink::<Note>(&nodes.a, &nodes.b, "w");
    linked(&nodes.a, &nodes.b, T).await;
    nodes.partition();
    let started = Instant::now();
    let mut probe = TestProbe::<u64>::new(&nodes.a);
    probe.watch(&r);
    probe.expect_terminated(&r, T).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    nodes.heal();
    nodes.terminate().await;
}

/// S42: only the direction A -> B is partitioned. B hears nothing from A for its
/// window: it gives A up (`PeerUnreachable`, quarantined), its watcher of A's actor
/// hears `Terminated`, and its sends to A dead-letter as `Quarantined`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_a_one_way_partition_gives_up_on_the_silent_side() {
    let nodes = two_nodes(quick()).unwrap();
    let (a, b) = (&nodes.a, &nodes.b);
    let (wa, at_b, _ra) = remote_sink::<Note>(b, a, "wa");
    linked(b, a, T).await;
    let mut ends = watcher(b, "watcher", vec![at_b.clone()]);
    let mut gave_up = b.events().subscribe::<PeerUnreachable>();
    let mut letters = b.events().subscribe::<DeadLetter>();
    nodes.a_to_b().partition();
    let event = given_up(&mut gave_up, a.address()).await;
    assert!(event.quarantined);
    assert_eq!(
        recv(&mut ends, "B's watcher").await,
        Terminated::new(at_b.erase())
    );
    at_b.tell(note_from("b", 1));
    let letter = letter_to(&mut letters, "for the note to A", &wa).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::Quarantined {
            peer: a.address().clone()
        }
    );
    nodes.heal();
    nodes.terminate().await;
}

/// S42, S45, S40: frames delayed by 400 ms both ways, well under a 2 s window:
/// heartbeats still arrive, so nobody is given up; messages arrive in order, none
/// sooner than the delay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_s45_a_delay_under_the_window_gives_nobody_up() {
    let nodes = two_nodes(detector(100, 2_000)).unwrap();
    let (_, at_a, mut got) = remote_sink::<Seq>(&nodes.a, &nodes.b, "seqs");
    linked(&nodes.a, &nodes.b, T).await;
    let (mut a_gave_up, mut b_gave_up) = give_ups(&nodes.a, &nodes.b);
    nodes.a_to_b().delay(ms(400));
    nodes.b_to_a().delay(ms(400));
    let sent = Instant::now();
    for n in 0..20 {
        at_a.tell(seq_from("a", n));
    }
    let first = recv(&mut got, "the first delayed message").await;
    assert!(
        sent.elapsed() >= ms(390),
        "delivered after {:?}",
        sent.elapsed()
    );
    assert_eq!(first.n, 0);
    for n in 1..20 {
        assert_eq!(recv(&mut got, "a delayed message").await.n, n);
    }
    let watch_until = sent + Duration::from_secs(4);
    while Instant::now() < watch_until {
        if let Ok(Some(e)) = timeout(ms(100), a_gave_up.recv()).await {
            panic!("A gave up {e:?} under a 400 ms delay with a 2 s window");
        }
        if let Some(e) = b_gave_up.try_recv() {
            panic!("B gave up {e:?} under a 400 ms delay with a 2 s window");
        }
    }
    nodes.terminate().await;
}

/// S42, S45: `drop_ratio(1.0)` loses every message A -> B but "the link's own
/// frames are never dropped": heartbeats go on, nobody is given up over several
/// windows, and once cleared the next message arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_s45_dropping_every_message_keeps_the_heartbeats() {
    let nodes = two_nodes(detector(100, 1_200)).unwrap();
    let (_, at_a, mut got) = remote_sink::<Note>(&nodes.a, &nodes.b, "notes");
    linked(&nodes.a, &nodes.b, T).await;
    let (mut a_gave_up, mut b_gave_up) = give_ups(&nodes.a, &nodes.b);
    nodes.a_to_b().drop_ratio(1.0, 3);
    for n in 0..10 {
        at_a.tell(note_from("a", n));
    }
    nothing(&mut got, Duration::from_millis(3_600), "a dropped message").await;
    assert!(a_gave_up.try_recv().is_none(), "A gave B up");
    assert!(b_gave_up.try_recv().is_none(), "B gave A up");
    nodes.a_to_b().clear();
    at_a.tell(note_from("a", 99));
    assert_eq!(recv(&mut got, "the message after clear").await.n, 99);
    nodes.terminate().await;
}

/// S42, S47, S40: offers made during a partition shorter than the window all
/// resolve `true` (an offer never drops), and once healed every one arrives, in
/// order: "a partition shorter than `unreachable_after` loses nothing".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s42_s47_offers_through_a_short_partition_all_arrive_in_order() {
    const N: u64 = 1_500;
    let nodes = two_nodes(detector(100, 4_000)).unwrap();
    let (_, at_a, mut got) = remote_sink::<Seq>(&nodes.a, &nodes.b, "seqs");
    linked(&nodes.a, &nodes.b, T).await;
    let mut gave_up = nodes.a.events().subscribe::<PeerUnreachable>();
    nodes.partition();
    let offering = tokio::spawn(async move { refused_offers(&at_a, "a", N).await });
    // The fault is held for a set time, well inside the 4 s window.
    nothing(&mut got, ms(1_000), "a message through the partition").await;
    nodes.heal();
    let refused = timeout(T, offering)
        .await
        .expect("the offers resolved")
        .unwrap();
    assert_eq!(refused, 0);
    for n in 0..N {
        assert_eq!(recv(&mut got, "an offered message").await.n, n);
    }
    assert!(gave_up.try_recv().is_none(), "nobody was given up");
    nodes.terminate().await;
}

/// S36, S38: two systems with one name, on two ports, are two peers. A ref to the
/// other `x` never decodes as this `x`'s own actor at the same path, and giving one
/// up leaves the other linked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s42_two_systems_with_one_name_are_two_peers() {
    let x1 = node("x", quick());
    let x2 = node("x", quick());
    let a = node("a", quick());
    assert_ne!(x1.address(), x2.address());
    let (sink1, mut at1) = sink::<Note>(&x1, "sink");
    let (sink2, mut at2) = sink::<Note>(&x2, "sink");
    // x1 resolves x2's sink: the same name and path, another address.
    let two_from_one = x1.resolve::<Note>(&uri(&sink2)).unwrap();
    assert_eq!(two_from_one.path().address(), x2.address());
    two_from_one.tell(note_from("x1", 1));
    assert_eq!(recv(&mut at2, "x1's note at x2").await, note_from("x1", 1));
    nothing(&mut at1, ms(200), "x1's note looping back to x1").await;

    // A talks to both.
    let to1 = a.resolve::<Note>(&uri(&sink1)).unwrap();
    let to2 = a.resolve::<Note>(&uri(&sink2)).unwrap();
    to1.tell(note_from("a", 10));
    to2.tell(note_from("a", 20));
    assert_eq!(recv(&mut at1, "A's note at x1").await.n, 10);
    assert_eq!(recv(&mut at2, "A's note at x2").await.n, 20);

    let mut gave_up = a.events().subscribe::<PeerUnreachable>();
    cut(&a, &x1);
    given_up(&mut gave_up, x1.address()).await;
    assert!(a.is_quarantined(x1.address()));
    assert!(!a.is_quarantined(x2.address()), "x2 is another peer");
    to2.tell(note_from("a", 21));
    assert_eq!(
        recv(&mut at2, "A's note at x2 after x1 was given up")
            .await
            .n,
        21
    );
    heal(&a, &x1);
    end(&[&a, &x1, &x2]).await;
}

// =================================================================================
// 6. Recovery (S43)
// =================================================================================

/// S43: `clear_quarantine` of a peer never given up says `false` and changes
/// nothing; after a give-up on both sides, clearing on one side only is not
/// enough (`reconnect` fails: the peer still has this system quarantined); once
/// both sides clear, it links and a ref resolved again works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_a_quarantine_cleared_on_one_side_only_does_not_link() {
    let nodes = two_nodes(quick()).unwrap();
    let (a, b) = (&nodes.a, &nodes.b);
    let (notes, mut got) = sink::<Note>(b, "notes");
    linked(a, b, T).await;
    assert!(!a.clear_quarantine(b.address()), "B was never given up");
    a.resolve::<Note>(&uri(&notes))
        .unwrap()
        .tell(note_from("a", 0));
    assert_eq!(recv(&mut got, "a note before").await.n, 0);

    let (mut a_gave_up, mut b_gave_up) = give_ups(a, b);
    nodes.partition();
    given_up(&mut a_gave_up, b.address()).await;
    given_up(&mut b_gave_up, a.address()).await;
    nodes.heal();

    assert!(a.clear_quarantine(b.address()));
    assert!(!a.is_quarantined(b.address()));
    assert!(b.is_quarantined(a.address()));
    let one_sided = timeout(T, a.reconnect(b.address())).await.unwrap();
    assert!(
        matches!(&one_sided, Err(LinkError::Failed { peer, .. }) if peer == b.address()),
        "{one_sided:?}"
    );

    assert!(b.clear_quarantine(a.address()));
    timeout(T, a.reconnect(b.address()))
        .await
        .unwrap()
        .expect("links once both cleared");
    a.resolve::<Note>(&uri(&notes))
        .unwrap()
        .tell(note_from("a", 1));
    assert_eq!(recv(&mut got, "a note after").await.n, 1);
    nodes.terminate().await;
}

/// S43, S36, S41: A and C give each other up while B carries on with both. After
/// heal, clear and reconnect, A's refs resolved again (directly, and one handed
/// over by B) reach C, a new watch works, and the old ref says its session ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_recovery_between_two_of_three_with_refs_resolved_again() {
    let (a, b, c) = three(quick());
    let (worker, mut at_c) = sink::<Note>(&c, "worker");
    let b_answerer = answerer(&b, "answerer");
    let (directory, mut dir_rx) = directory(&b);
    c.resolve::<Dir>(&uri(&directory))
        .unwrap()
        .tell(Dir::Register(worker.clone()));
    recv(&mut dir_rx, "the registration").await;

    let old = a.resolve::<Note>(&uri(&worker)).unwrap();
    old.tell(note_from("a", 0));
    assert_eq!(recv(&mut at_c, "before").await.n, 0);
    let at_b = a.resolve::<Question>(&uri(&b_answerer)).unwrap();

    let (mut a_gave_up, mut c_gave_up) = give_ups(&a, &c);
    cut(&a, &c);
    given_up(&mut a_gave_up, c.address()).await;
    given_up(&mut c_gave_up, a.address()).await;
    // B was there throughout.
    let answer = answered(&at_b, "b?", "B answers").await;
    assert_eq!(answer.by, "b");
    heal(&a, &c);
    recover(&a, &c).await;

    let mut letters = a.events().subscribe::<DeadLetter>();
    old.tell(note_from("old", 1));
    let letter = letter_to(&mut letters, "through the old ref", &worker).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::SessionEnded {
            peer: c.address().clone()
        }
    );

    let fresh = a.resolve::<Note>(&uri(&worker)).unwrap();
    fresh.tell(note_from("fresh", 2));
    assert_eq!(recv(&mut at_c, "through the ref resolved again").await.n, 2);

    let Found(via_b) = timeout(
        T,
        a.resolve::<Dir>(&uri(&directory))
            .unwrap()
            .ask_with(Dir::Lookup)
            .timeout(T),
    )
    .await
    .unwrap()
    .expect("B answers the lookup");
    let via_b = via_b.expect("B holds C's worker");
    via_b.tell(note_from("via b", 3));
    assert_eq!(recv(&mut at_c, "through the ref B handed over").await.n, 3);

    let mut probe = TestProbe::<u64>::new(&a);
    probe.watch(&fresh);
    c.stop(&worker).unwrap();
    probe.expect_terminated(&fresh, T).await;
    end(&[&a, &b, &c]).await;
}

/// S43, S18, S41: a watch ended by a give-up has had its one `Terminated`. After
/// recovery the actor (which never stopped) is watched again through a ref
/// resolved again; when it stops, the new watch hears it, and the old one hears
/// nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_s18_a_watch_ended_by_a_give_up_does_not_fire_again_after_recovery() {
    let nodes = two_nodes(quick()).unwrap();
    let (a, b) = (&nodes.a, &nodes.b);
    let (w, mut at_w) = sink::<Note>(b, "w");
    let old = a.resolve::<Note>(&full_uri(&w)).unwrap();
    linked(a, b, T).await;
    let mut old_ends = watcher(a, "old-watcher", vec![old.clone()]);
    let (mut a_gave_up, mut b_gave_up) = give_ups(a, b);
    nodes.partition();
    assert_eq!(
        recv(&mut old_ends, "the give-up").await,
        Terminated::new(old.erase())
    );
    given_up(&mut a_gave_up, b.address()).await;
    given_up(&mut b_gave_up, a.address()).await;
    nodes.heal();
    recover(a, b).await;

    let fresh = a.resolve::<Note>(&full_uri(&w)).unwrap();
    assert_eq!(fresh.uid(), w.uid(), "the same incarnation lives on");
    fresh.tell(note_from("a", 1));
    assert_eq!(recv(&mut at_w, "the note after recovery").await.n, 1);
    let mut new_ends = watcher(a, "new-watcher", vec![fresh.clone()]);
    nothing(&mut new_ends, ms(300), "a Terminated for a live actor").await;
    b.stop(&w).unwrap();
    assert_eq!(
        recv(&mut new_ends, "the stop").await,
        Terminated::new(fresh.erase())
    );
    nothing(
        &mut old_ends,
        ms(500),
        "a second Terminated for the old watch",
    )
    .await;
    nodes.terminate().await;
}

/// S43: `reconnect` says why it did not link, typed: a peer that has terminated
/// (`Failed`, naming it, without waiting for a deadline), and a system that is
/// terminating (`Terminating`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_reconnect_refusals_are_typed() {
    let (a, b, c) = three(calm());
    timeout(T, b.terminate()).await.unwrap();
    let started = Instant::now();
    let failed = timeout(T, a.reconnect(b.address())).await.unwrap();
    assert!(
        matches!(&failed, Err(LinkError::Failed { peer, reason }) if peer == b.address() && !reason.is_empty()),
        "{failed:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a closed port fails at once: {:?}",
        started.elapsed()
    );
    assert!(
        failed
            .unwrap_err()
            .to_string()
            .contains(&b.address().to_string())
    );
    let ending = a.terminate();
    let refused = timeout(T, a.reconnect(c.address())).await.unwrap();
    assert_eq!(refused, Err(LinkError::Terminating));
    timeout(T, ending).await.unwrap();
    end(&[&c]).await;
}

/// S44, S22: the reply ref goes from B to a worker on B and to one on C; both
/// answer. The ask takes one answer; the other is a dead letter on A,
/// `AlreadyAnswered`, carrying it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_two_answers_from_two_systems_the_second_is_already_answered() {
    let (a, b, c) = three(calm());
    let at_b = answerer(&b, "worker");
    let at_c = b
        .resolve::<Question>(&uri(&answerer(&c, "worker")))
        .unwrap();
    let both = b
        .spawn(
            Behaviors::receive_message(move |q: Question| {
                at_b.tell(Question {
                    text: q.text.clone(),
                    reply_to: q.reply_to.clone(),
                });
                at_c.tell(q);
            }),
            "both",
        )
        .unwrap();
    let mut letters = a.events().subscribe::<DeadLetter>();
    let both = a.resolve::<Question>(&uri(&both)).unwrap();
    let answer = answered(&both, "twice", "one answer").await;
    assert_eq!(answer.text, "TWICE");
    let letter = letter_where(&mut letters, "for the second answer", |l| l.is::<Answer>()).await;
    assert_eq!(letter.reason(), &DeadLetterReason::AlreadyAnswered);
    let second = letter
        .take_message::<Answer>()
        .expect("the letter carries it");
    let mut by = [answer.by, second.by];
    by.sort();
    assert_eq!(
        by,
        ["b".to_string(), "c".to_string()],
        "one answer from each"
    );
    end(&[&a, &b, &c]).await;
}

// =================================================================================
// 7. Remote spawn (S46)
// =================================================================================

/// S46: refused requests (arguments that do not decode, a name that breaks the
/// rules, a factory the binary lacks) say why and start nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_refused_spawns_say_why_and_start_nothing() {
    let (a, b) = (node("a", calm()), node("b", calm()));
    let (_, at_a) = echo_spawner(&b, &a);

    let bad_args = ask_spawn(&at_a, "sweep8.echo", vec![0xff, 0xff, 0xff], "bad").await;
    assert!(
        matches!(&bad_args, SpawnReply::SpawnFailed { reason: SpawnFailure::BadArguments { factory, .. } } if factory == "sweep8.echo"),
        "{bad_args:?}"
    );

    let bad_name = spawn_echo(&at_a, "x", "no/slash").await;
    assert!(
        matches!(&bad_name, Err(RemoteSpawnError::Refused(SpawnFailure::InvalidName { name, .. })) if name == "no/slash"),
        "{:?}",
        bad_name.as_ref().map(|s| s.name.clone())
    );

    let unknown = ask_spawn(&at_a, "sweep8.nobody", vec![], "n").await;
    assert!(
        matches!(&unknown, SpawnReply::SpawnFailed { reason: SpawnFailure::UnknownFactory { factory } } if factory == "sweep8.nobody"),
        "{unknown:?}"
    );
    for name in ["bad", "n"] {
        let local = format!("{}/user/spawner/{name}", b.address());
        assert!(b.resolve::<Question>(&local).is_err(), "{local} exists");
    }
    // The name refused for bad arguments is free: a good request takes it.
    let good = spawn_echo(&at_a, "p:", "bad").await.expect("started");
    let answer = timeout(T, ask_text(&good.actor, "hi", T))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        answer,
        Answer {
            text: "p:hi".into(),
            by: "b".into()
        }
    );
    end(&[&a, &b]).await;
}

/// S46, S41: two actors started on B for A; one ref travels on to C. Stopping the
/// spawner on B stops its children: A's watch and C's watch both hear it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s46_s41_stopping_the_spawner_ends_its_remote_children_for_every_watcher() {
    let (a, b, c) = three(calm());
    let (spawner, at_a) = echo_spawner(&b, &a);
    let w1 = spawn_echo(&at_a, "1", "w1").await.expect("w1").actor;
    let w2 = spawn_echo(&at_a, "2", "w2").await.expect("w2").actor;
    assert_eq!(w1.path().address(), b.address());
    assert!(
        uri(&w1).starts_with(&format!("{}/user/spawner/w1", b.address())),
        "{}",
        uri(&w1)
    );
    let mut a_ends = watcher(&a, "watcher", vec![w1.clone(), w2.clone()]);
    let at_c = c.resolve::<Question>(&uri(&w2)).unwrap();
    let mut c_ends = watcher(&c, "watcher", vec![at_c.clone()]);
    let answer = answered(&at_c, "c", "answered").await;
    assert_eq!(answer.text, "2c");

    b.stop(&spawner).unwrap();
    let mut heard = vec![
        recv(&mut a_ends, "A's watch").await.actor().path().to_uri(),
        recv(&mut a_ends, "A's watch").await.actor().path().to_uri(),
    ];
    heard.sort();
    assert_eq!(
        heard,
        vec![uri(&w1), uri(&w2)],
        "both children, in any order"
    );
    assert_eq!(
        recv(&mut c_ends, "C's watch").await,
        Terminated::new(at_c.erase())
    );
    end(&[&a, &b, &c]).await;
}

// =================================================================================
// 8. Settings and addresses (S38, S36)
// =================================================================================

/// S38: A and B share a secret; C has another. Only the links to C fail (each
/// side's sends to the other dead-letter as `Unreachable`), and A <-> B is
/// undisturbed by the failed handshakes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s38_a_node_with_another_secret_fails_alone_in_a_cluster_of_three() {
    let shared = RemoteSettings::loopback().secret(b"sweep8-shared-secret-0001".to_vec());
    let a = node("a", shared.clone());
    let b = node("b", shared);
    let c = node(
        "c",
        RemoteSettings::loopback().secret(b"sweep8-other-secret-00002".to_vec()),
    );
    let b_answerer = answerer(&b, "answerer");
    let (c_sink, mut at_c) = sink::<Note>(&c, "sink");
    let (a_sink, mut at_a_sink) = sink::<Note>(&a, "sink");
    let at_b = a.resolve::<Question>(&uri(&b_answerer)).unwrap();
    assert_eq!(answered(&at_b, "x", "answered").await.by, "b");

    let mut a_letters = a.events().subscribe::<DeadLetter>();
    let mut c_letters = c.events().subscribe::<DeadLetter>();
    a.resolve::<Note>(&uri(&c_sink))
        .unwrap()
        .tell(note_from("a", 1));
    c.resolve::<Note>(&uri(&a_sink))
        .unwrap()
        .tell(note_from("c", 2));
    let from_a = letter_to(&mut a_letters, "A's note to C", &c_sink).await;
    assert_eq!(
        from_a.reason(),
        &DeadLetterReason::Unreachable {
            peer: c.address().clone()
        }
    );
    let from_c = letter_to(&mut c_letters, "C's note to A", &a_sink).await;
    assert_eq!(
        from_c.reason(),
        &DeadLetterReason::Unreachable {
            peer: a.address().clone()
        }
    );
    nothing(&mut at_c, ms(200), "A's note at C").await;
    nothing(&mut at_a_sink, ms(200), "C's note at A").await;
    assert_eq!(answered(&at_b, "y", "answered").await.text, "Y");
    end(&[&a, &b, &c]).await;
}

/// S36: `resolve` of malformed URIs gives a `ResolveError` carrying the URI and a
/// reason, and its message quotes the URI; well-formed URIs of another system
/// resolve without dialling; a local URI of no actor, or of an actor of another
/// protocol, is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_resolve_refuses_malformed_uris_with_typed_errors() {
    let a = node("a", calm());
    let (note_sink, _rx) = sink::<Note>(&a, "notes");
    let long_name = "x".repeat(1_000);
    let malformed = [
        String::new(),
        "not a uri".into(),
        "tapio:/".into(),
        "http://b@127.0.0.1:25520/user/x".into(),
        "tapio://b@127.0.0.1:25520".into(),
        "tapio://b@127.0.0.1:notaport/user/x".into(),
        "tapio://b@127.0.0.1:70000/user/x".into(),
        "tapio://b@127.0.0.1:25520/user/../x".into(),
        "tapio://b@127.0.0.1:25520/user//x".into(),
        "tapio://b@127.0.0.1:25520/user/x y".into(),
        "tapio://b@127.0.0.1:25520/user/x?q=1".into(),
        "tapio://b@127.0.0.1:25520/user/x#uid".into(),
        "tapio://b c@127.0.0.1:25520/user/x".into(),
        "tapio://@127.0.0.1:25520/user/x".into(),
        "tapio://b@:25520/user/x".into(),
        format!("tapio://b@127.0.0.1:25520/user/{long_name}"),
        format!("{}/user/nobody", a.address()),
    ];
    let mut accepted = Vec::new();
    for text in &malformed {
        match a.resolve::<Note>(text) {
            Ok(r) => accepted.push(format!("{text:?} -> {r}")),
            Err(e) => {
                assert_eq!(&e.uri, text);
                assert!(!e.reason.trim().is_empty(), "no reason for {text:?}");
                assert!(e.to_string().contains(&format!("{text:?}")), "{e}");
            }
        }
    }
    let wrong_protocol = a.resolve::<Question>(&uri(&note_sink));
    if wrong_protocol.is_ok() {
        accepted.push(format!("{} as a Question ref", uri(&note_sink)));
    }
    assert!(accepted.is_empty(), "accepted: {accepted:#?}");

    let fine = a
        .resolve::<Note>("tapio://b@127.0.0.1:25520/user/x")
        .expect("well formed");
    assert_eq!(
        fine.path().to_uri().split('#').next(),
        Some("tapio://b@127.0.0.1:25520/user/x")
    );
    let with_uid = a
        .resolve::<Note>("tapio://b@127.0.0.1:25520/user/x#12345")
        .expect("with a uid");
    assert_eq!(with_uid.uid(), 12345);
    let local = a
        .resolve::<Note>(&uri(&note_sink))
        .expect("the local actor");
    assert_eq!(local, note_sink);
    end(&[&a]).await;
}
