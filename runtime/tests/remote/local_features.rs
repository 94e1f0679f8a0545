//! Remoting with the local features: asks to stopped and restarting actors, adapters
//! and reply refs sent home, anonymous actors, remote watches and unwatches, remote
//! routers, bounded mailboxes fed by a peer, state machines and stashes holding remote
//! asks, and stops and terminates racing a peer's tells (S2, S11, S13, S14, S18, S22,
//! S23, S27-S29, S31, S32, S34, S36, S37, S40, S41, S44, S47).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::first_contact::stop_and_wait;

use crate::support::nodes::linked;

use crate::support::nodes::slow_detector;

use crate::support::outside::nothing_within;

use crate::support::with_other_features::*;

use std::collections::BTreeSet;

use std::sync::atomic::{AtomicU64, Ordering};

use std::sync::Arc;

use std::time::{Duration, Instant};

use tapio::prelude::*;

use tapio::testkit::{TestProbe, TwoNodes, two_nodes};

use tapio::wire::{RemoteProtocol, WireProblem};

use tapio::{
    AskError, DeadLetter, DeadLetterReason, IntoBehavior, MailboxConfig, MailboxOverflow,
    OverflowStrategy, Subscription,
};

use tokio::sync::{Semaphore, mpsc};

// ---------------------------------------------------------------------------------
// Messages that cross the link
// ---------------------------------------------------------------------------------

#[message(remote = "sweep5.ping.v1", reply = Pong)]
#[derive(Debug, Clone)]
pub struct Ping(pub u64);

#[message(remote = "sweep5.quit.v1")]
#[derive(Debug, Clone)]
pub struct Quit;

#[message(remote = "sweep5.block.v1")]
#[derive(Debug, Clone)]
pub struct Block;

/// A request with its reply ref in a field, which the echo keeps and never answers.
#[message(remote = "sweep5.hold.v1")]
pub struct Hold {
    pub reply_to: ActorRef<Pong>,
}

/// Answer `Pong(n)` through `reply_to`, and keep `reply_to`.
#[message(remote = "sweep5.keep.v1")]
pub struct Keep {
    pub n: u64,
    pub reply_to: ActorRef<Pong>,
}

/// Answer `Pong(n)` through every reply ref kept so far.
#[message(remote = "sweep5.fanout.v1")]
#[derive(Debug, Clone)]
pub struct Fanout(pub u64);

/// Pass `reply_to` on to someone else, who answers it.
#[message(remote = "sweep5.relay.v1")]
pub struct Relay {
    pub n: u64,
    pub reply_to: ActorRef<Pong>,
}

/// Send `item` back to `to`.
#[message(remote = "sweep5.bounce.v1")]
pub struct Bounce {
    pub item: ActorRef<Pong>,
    pub to: ActorRef<Bounced>,
}

#[message(remote = "sweep5.bounced.v1")]
pub struct Bounced {
    pub item: ActorRef<Pong>,
}

/// A ref to tell `Note(5)` through.
#[message(remote = "sweep5.carry.v1")]
pub struct Carry {
    pub note: ActorRef<Note>,
}

#[message(remote = "sweep5.keyed.v1")]
#[derive(Debug, Clone, Copy)]
pub struct Keyed {
    pub key: u64,
    pub seq: u64,
}

#[message(remote = "sweep5.who.v1", reply = Named)]
#[derive(Debug, Clone)]
pub struct Who(pub u64);

#[message(remote = "sweep5.named.v1")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub routee: String,
    pub n: u64,
}

/// Refs for a group router to be built from.
#[message(remote = "sweep5.routees.v1")]
pub struct Routees(pub Vec<ActorRef<Pong>>);

#[message(remote = "sweep5.open-gate.v1")]
#[derive(Debug, Clone)]
pub struct OpenGate;

#[message(remote = "sweep5.close-gate.v1")]
#[derive(Debug, Clone)]
pub struct CloseGate;

#[message(remote = "sweep5.peek.v1", reply = Pong)]
#[derive(Debug, Clone)]
pub struct Peek(pub u64);

#[message(remote = "sweep5.unseal.v1")]
#[derive(Debug, Clone)]
pub struct Unseal;

#[message(remote = "sweep5.reseal.v1")]
#[derive(Debug, Clone)]
pub struct Reseal;

#[message(remote = "sweep5.fetch.v1", reply = Pong)]
#[derive(Debug, Clone)]
pub struct Fetch(pub u64);

// ---------------------------------------------------------------------------------
// Actors
// ---------------------------------------------------------------------------------

/// Answers pings, keeps `Hold` reply refs unanswered, stops on `Quit`.
#[derive(Default, Clone)]
pub struct Echo {
    held: Vec<ActorRef<Pong>>,
}

#[actor]
impl Echo {
    fn ping(&mut self, Ping(n): Ping) -> Pong {
        Pong(n)
    }

    fn hold(&mut self, hold: Hold) {
        self.held.push(hold.reply_to);
    }

    fn quit(&mut self, _: Quit) -> Behavior<EchoMsg> {
        Behaviors::stopped()
    }
}

/// Answers each `Keep` at once, and again through every kept ref on `Fanout`.
#[derive(Default, Clone)]
pub struct Keeper {
    kept: Vec<ActorRef<Pong>>,
}

#[actor]
impl Keeper {
    fn keep(&mut self, keep: Keep) {
        keep.reply_to.tell(Pong(keep.n));
        self.kept.push(keep.reply_to);
    }

    fn fanout(&mut self, Fanout(n): Fanout) {
        for kept in &self.kept {
            kept.tell(Pong(n));
        }
    }
}

/// Numbered by incarnation: answers `Pong(generation * 1000 + n)`, reports notes as
/// `(generation, n)`, fails on `Crash`.
pub struct Phoenix {
    generation: u64,
    notes: mpsc::UnboundedSender<(u64, u64)>,
}

#[actor]
impl Phoenix {
    fn ping(&mut self, Ping(n): Ping) -> Pong {
        Pong(self.generation * 1000 + n)
    }

    fn crash(&mut self, _: Crash) -> Result<(), Boom> {
        Err(Boom)
    }

    fn note(&mut self, Note(n): Note) {
        let _ = self.notes.send((self.generation, n));
    }
}

/// A pool routee that answers with its own name.
#[derive(Clone)]
pub struct PoolWorker;

#[actor]
impl PoolWorker {
    fn who(&mut self, ctx: &mut Ctx<Self>, Who(n): Who) -> Named {
        Named {
            routee: ctx.path().name().to_string(),
            n,
        }
    }
}

/// Blocks on `Block` until its gate opens; answers pings.
#[derive(Clone)]
pub struct Blocker {
    gate: Arc<Semaphore>,
    entered: mpsc::UnboundedSender<()>,
}

#[actor]
impl Blocker {
    async fn block(&mut self, _: Block) {
        let _ = self.entered.send(());
        let _ = self.gate.acquire().await;
    }

    fn ping(&mut self, Ping(n): Ping) -> Pong {
        Pong(n)
    }
}

// A gate as a state machine: `Peek` is handled only while open.

#[derive(Clone)]
pub struct Gate;

#[actor(
    messages(OpenGate, CloseGate, Peek),
    states(GateClosed => GateOpen, GateOpen => GateClosed)
)]
impl Gate {}

#[derive(Clone)]
pub struct GateClosed;

#[state(Gate)]
impl GateClosed {
    fn open(self, _: OpenGate) -> Next<Self> {
        Next::to(GateOpen)
    }
}

#[derive(Clone)]
pub struct GateOpen;

#[state(Gate)]
impl GateOpen {
    fn peek(&mut self, Peek(n): Peek) -> Pong {
        Pong(n)
    }

    fn close(self, _: CloseGate) -> Next<Self> {
        Next::to(GateClosed)
    }
}

// A vault whose sealed state stashes what it does not handle.

#[derive(Clone)]
pub struct Vault {
    served: mpsc::UnboundedSender<u64>,
}

#[actor(
    messages(Unseal, Reseal, Fetch),
    states(Sealed => Unsealed, Unsealed => Sealed)
)]
impl Vault {}

#[derive(Clone)]
pub struct Sealed;

#[state(Vault, unhandled = stash)]
impl Sealed {
    fn unseal(self, _: Unseal) -> Next<Self> {
        Next::to(Unsealed)
    }
}

#[derive(Clone)]
pub struct Unsealed;

#[state(Vault)]
impl Unsealed {
    fn fetch(&mut self, vault: &mut Vault, Fetch(n): Fetch) -> Pong {
        let _ = vault.served.send(n);
        Pong(n)
    }

    fn reseal(self, _: Reseal) -> Next<Self> {
        Next::to(Sealed)
    }
}

// Local protocols.

#[message]
#[derive(Debug)]
pub enum OwnerMsg {
    Adapted(u64),
    Stop,
}

#[message]
#[derive(Debug)]
pub enum DeskMsg {
    Direct(u64),
    Adapted(u64),
}

#[message]
#[derive(Debug, Clone, Copy)]
pub enum WatchCmd {
    Rewatch,
    Unwatch,
    Fail,
}

fn nodes() -> TwoNodes {
    two_nodes(slow_detector()).expect("two nodes on loopback")
}

/// The letters for `recipient`: at least `count` of them (each within `BOUND`), and
/// then every further one until none has come for 300 ms.
async fn collect_letters_for(
    letters: &mut Subscription<DeadLetter>,
    recipient: &tapio::ActorPath,
    count: usize,
) -> Vec<DeadLetter> {
    let mut got = Vec::new();
    while got.len() < count {
        got.push(letter_where(letters, BOUND, |l| l.recipient() == recipient).await);
    }
    for letter in letters_until_quiet(letters, ms(300)).await {
        if letter.recipient() == recipient {
            got.push(letter);
        }
    }
    got
}

/// A sink of notes that, on `Note(0)`, says it has entered and waits for `gate`;
/// every note it handles (0 included, once through the gate) goes to `seen`.
fn gated_note_sink(
    gate: Arc<Semaphore>,
    entered: mpsc::UnboundedSender<()>,
    seen: mpsc::UnboundedSender<u64>,
) -> Behavior<Note> {
    Behaviors::receive_message_async(async move |Note(n): Note| {
        if n == 0 {
            let _ = entered.send(());
            let _ = gate.acquire().await;
        }
        let _ = seen.send(n);
    })
    .into()
}

/// An owner whose adapter turns a `Pong(n)` into `Adapted(n)`; it reports
/// `(tag, n)` and hands its adapter out through `adapters` on every start.
fn pong_owner(
    tag: u64,
    seen: mpsc::UnboundedSender<(u64, u64)>,
    adapters: mpsc::UnboundedSender<ActorRef<Pong>>,
) -> Behavior<OwnerMsg> {
    Behaviors::setup(move |ctx: &mut ActorContext<OwnerMsg>| {
        let adapter: ActorRef<Pong> = ctx.message_adapter(|Pong(n)| OwnerMsg::Adapted(n));
        let _ = adapters.send(adapter);
        let seen = seen.clone();
        Behaviors::receive_message(move |message: OwnerMsg| match message {
            OwnerMsg::Adapted(n) => {
                let _ = seen.send((tag, n));
                Behaviors::same()
            }
            OwnerMsg::Stop => Behaviors::stopped(),
        })
    })
}

/// `item`, sent from b to an actor on a inside a message: the ref a peer gets.
///
/// (Not `a.resolve(adapter.to_string())`: an adapter's printed URI does not resolve
/// on its own system, and a peer's frames to it are refused as `NoRecipient` until
/// its ref has crossed the link once inside a message.)
async fn send_to_a(nodes: &TwoNodes, item: ActorRef<Pong>) -> ActorRef<Pong> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let catcher = nodes
        .a
        .spawn(
            Behaviors::receive_message(move |Bounced { item }: Bounced| {
                let _ = tx.send(item);
            }),
            "catcher",
        )
        .unwrap();
    let catcher = nodes.b.resolve::<Bounced>(&catcher.to_string()).unwrap();
    catcher.tell(Bounced { item });
    recv_within(&mut rx, BOUND).await
}

/// An actor on `system` that watches `target` in its setup (saying `"watching"`),
/// says `"terminated"` for each `Terminated`, and obeys `WatchCmd`; supervised to
/// restart on `Boom`.
fn remote_watcher<Q: Message>(
    system: &ActorSystem,
    name: &str,
    target: ActorRef<Q>,
) -> (ActorRef<WatchCmd>, mpsc::UnboundedReceiver<&'static str>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let behavior = Behaviors::setup(move |ctx: &mut ActorContext<WatchCmd>| {
        ctx.watch(&target);
        let _ = tx.send("watching");
        let (target, said, heard) = (target.clone(), tx.clone(), tx.clone());
        Behaviors::receive(move |ctx, command: WatchCmd| match command {
            WatchCmd::Rewatch => {
                ctx.watch(&target);
                let _ = said.send("rewatched");
                Ok(Behaviors::same())
            }
            WatchCmd::Unwatch => {
                ctx.unwatch(&target);
                let _ = said.send("unwatched");
                Ok(Behaviors::same())
            }
            WatchCmd::Fail => Err(Boom),
        })
        .on_signal(move |_, signal: &Signal| {
            if let Signal::Terminated(_) = signal {
                let _ = heard.send("terminated");
            }
        })
    });
    let watcher = system
        .spawn(
            Behaviors::supervise(behavior).on_failure::<Boom>(SupervisorStrategy::restart()),
            name,
        )
        .expect("spawn the watcher");
    (watcher, rx)
}

/// `behavior` spawned on b as `name` with `mailbox`: its ref there, and the ref a
/// resolves from its URI.
fn on_b_with<P: RemoteProtocol>(
    nodes: &TwoNodes,
    behavior: impl IntoBehavior<P>,
    name: &str,
    mailbox: MailboxConfig,
) -> (ActorRef<P>, ActorRef<P>) {
    let local = nodes.b.spawn_with(behavior, name, mailbox).unwrap();
    let remote = nodes.a.resolve::<P>(&local.to_string()).unwrap();
    (local, remote)
}

/// [`on_b_with`] an unbounded mailbox.
fn on_b<P: RemoteProtocol>(
    nodes: &TwoNodes,
    behavior: impl IntoBehavior<P>,
    name: &str,
) -> (ActorRef<P>, ActorRef<P>) {
    on_b_with(nodes, behavior, name, MailboxConfig::unbounded())
}

/// An `Echo` on b named `"echo"`, and the ref a resolves for it.
fn echo_on_b(nodes: &TwoNodes) -> (ActorRef<EchoMsg>, ActorRef<EchoMsg>) {
    on_b(nodes, Echo::default(), "echo")
}

/// Every dead letter until none has come for `quiet`, as text.
async fn letter_texts(letters: &mut Subscription<DeadLetter>, quiet: Duration) -> Vec<String> {
    letters_until_quiet(letters, quiet)
        .await
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Asserts that the letters [`collect_letters_for`] gathers for `recipient` (as many
/// as `expected` has, and any more) read as `expected` through `view`.
async fn expect_letters_for<T: PartialEq + std::fmt::Debug>(
    letters: &mut Subscription<DeadLetter>,
    recipient: &tapio::ActorPath,
    expected: &[T],
    view: impl Fn(&DeadLetter) -> T,
) {
    let got = collect_letters_for(letters, recipient, expected.len()).await;
    let texts: Vec<String> = got.iter().map(ToString::to_string).collect();
    let seen: Vec<T> = got.iter().map(view).collect();
    assert_eq!(seen, expected, "letters for {recipient}: {texts:#?}");
}

/// A letter's reason and, if it holds a `Note(n)`, that `n`.
fn reason_and_note(letter: &DeadLetter) -> (DeadLetterReason, Option<u64>) {
    (
        letter.reason().clone(),
        letter.take_message::<Note>().map(|Note(n)| n),
    )
}

/// The gate a [`gated_note_sink`] waits on at `Note(0)`, and both ends of the
/// channels where it says it entered and which notes it handled.
struct Gated {
    gate: Arc<Semaphore>,
    entered_tx: mpsc::UnboundedSender<()>,
    entered: mpsc::UnboundedReceiver<()>,
    seen_tx: mpsc::UnboundedSender<u64>,
    seen: mpsc::UnboundedReceiver<u64>,
}

impl Gated {
    fn new() -> Self {
        let (entered_tx, entered) = mpsc::unbounded_channel();
        let (seen_tx, seen) = mpsc::unbounded_channel();
        Self {
            gate: Arc::new(Semaphore::new(0)),
            entered_tx,
            entered,
            seen_tx,
            seen,
        }
    }

    /// A [`gated_note_sink`] on this gate and these channels.
    fn sink(&self) -> Behavior<Note> {
        gated_note_sink(
            self.gate.clone(),
            self.entered_tx.clone(),
            self.seen_tx.clone(),
        )
    }

    /// Waits (bounded) until the sink says it has entered the gate.
    async fn wait_entered(&mut self) {
        recv_within(&mut self.entered, BOUND).await;
    }

    /// Lets `n` waits through the gate.
    fn open(&self, n: usize) {
        self.gate.add_permits(n);
    }
}

/// A [`remote_watcher`] on `system`, once it has said it is watching.
async fn watching<Q: Message>(
    system: &ActorSystem,
    name: &str,
    target: ActorRef<Q>,
) -> (ActorRef<WatchCmd>, mpsc::UnboundedReceiver<&'static str>) {
    let (watcher, mut said) = remote_watcher(system, name, target);
    assert_eq!(recv_within(&mut said, BOUND).await, "watching");
    (watcher, said)
}

/// A [`pong_owner`] tagged `tag` spawned on `system` as `name`, and the adapter it
/// handed out.
async fn owner_with_adapter(
    system: &ActorSystem,
    tag: u64,
    name: &str,
    seen: mpsc::UnboundedSender<(u64, u64)>,
) -> (ActorRef<OwnerMsg>, ActorRef<Pong>) {
    let (adapters_tx, mut adapters) = mpsc::unbounded_channel();
    let owner = system
        .spawn(pong_owner(tag, seen, adapters_tx), name)
        .unwrap();
    (owner, recv_within(&mut adapters, BOUND).await)
}

// =================================================================================
// 1. Remoting combined with the other features
// =================================================================================

// S23 + S41 + S37: an ask through a remote ref whose actor has already stopped does
// not wait for its deadline: the ask watches its target over the link, the watch of
// an actor that stopped before it reports `Terminated` at once, and the ask fails with
// `TargetTerminated`. The request itself is a dead letter on the peer, naming us.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s23_s41_an_ask_to_a_remote_actor_already_stopped_fails_long_before_its_deadline() {
    let nodes = nodes();
    let mut letters_b = nodes.b.events().subscribe::<DeadLetter>();
    let (echo, remote) = echo_on_b(&nodes);
    assert_eq!(remote.ask(Ping(0)).timeout(BOUND).await.unwrap(), Pong(0));
    stop_and_wait(&nodes.b, &echo, || echo.tell(Quit)).await;

    let started = Instant::now();
    let asked = remote.ask(Ping(1)).timeout(Duration::from_secs(10)).await;
    assert!(
        matches!(asked, Err(AskError::TargetTerminated { ref target }) if target == echo.path()),
        "{asked:?} after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let letter = letter_where(&mut letters_b, BOUND, |l| {
        matches!(l.reason(), DeadLetterReason::FromPeer { .. })
    })
    .await;
    match letter.reason() {
        DeadLetterReason::FromPeer { peer, problem } => {
            assert_eq!(peer, nodes.a.address(), "{letter}");
            assert!(
                matches!(
                    problem,
                    WireProblem::NoRecipient | WireProblem::RecipientStopped
                ),
                "{letter}"
            );
        }
        other => panic!("{other:?}"),
    }
    nodes.terminate().await;
}

// S22 + S44 + S31: a reply ref that crossed the link is answered twice. The first
// answer resolves the ask; the second, coming back across the link later, is a dead
// letter on the asking system, `AlreadyAnswered` ("a second answer to an ask that
// had its answer already"), naming the promise and carrying the value, exactly as
// for the same thing done locally.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s22_s44_a_second_answer_across_the_link_is_already_answered() {
    let nodes = nodes();
    let mut letters_a = nodes.a.events().subscribe::<DeadLetter>();

    // Locally first, as the reference.
    let local = nodes.a.spawn(Keeper::default(), "local-keeper").unwrap();
    let first = local
        .ask_with(|reply_to| Keep { n: 1, reply_to })
        .timeout(BOUND)
        .await
        .unwrap();
    assert_eq!(first, Pong(1));
    local.tell(Fanout(2));
    let letter = letter_where(&mut letters_a, BOUND, |l| l.is::<Pong>()).await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::AlreadyAnswered,
        "{letter}"
    );
    assert_eq!(letter.take_message::<Pong>(), Some(Pong(2)));

    // Then across the link.
    let (_, remote) = on_b(&nodes, Keeper::default(), "keeper");
    let first = remote
        .ask_with(|reply_to| Keep { n: 3, reply_to })
        .timeout(BOUND)
        .await
        .unwrap();
    assert_eq!(first, Pong(3));
    remote.tell(Fanout(4));
    let letter = letter_where(&mut letters_a, BOUND, |l| {
        l.is::<Pong>() || l.short_message_type() == "Pong"
    })
    .await;
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::AlreadyAnswered,
        "{letter}"
    );
    assert!(
        letter
            .recipient()
            .to_string()
            .starts_with("/system/promises/"),
        "{letter}"
    );
    assert_eq!(letter.take_message::<Pong>(), Some(Pong(4)), "{letter}");
    nodes.terminate().await;
}

// S13 + S44 + S22: a remote actor backing off between incarnations is absent, not
// dead. What a peer sends meanwhile is handled by the next incarnation, in order: a
// tell, an ask whose deadline falls inside the backoff (it times out: the peer was
// there and nobody answered; its late answer is an `AskEnded` dead letter on the
// asker), and an ask with room to wait (answered by the new incarnation).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s13_s44_what_a_peer_sends_during_a_backoff_reaches_the_next_incarnation() {
    let nodes = nodes();
    let mut letters_a = nodes.a.events().subscribe::<DeadLetter>();
    let (notes_tx, mut notes) = mpsc::unbounded_channel();
    let generations = Arc::new(AtomicU64::new(0));
    let counted = generations.clone();
    let (_, remote) = on_b(
        &nodes,
        Behaviors::supervise(Behaviors::setup(move |_ctx| Phoenix {
            generation: counted.fetch_add(1, Ordering::SeqCst) + 1,
            notes: notes_tx.clone(),
        }))
        .on_failure::<Boom>(
            SupervisorStrategy::restart()
                .with_backoff(tapio::Backoff::new(ms(400), ms(400), 0.0).unwrap()),
        ),
        "phoenix",
    );
    assert_eq!(
        remote.ask(Ping(1)).timeout(BOUND).await.unwrap(),
        Pong(1001)
    );

    remote.tell(Crash);
    remote.tell(Note(5));
    let started = Instant::now();
    let short = remote.ask(Ping(2)).timeout(ms(100));
    let long = remote.ask(Ping(3)).timeout(BOUND);
    let short = short.await;
    assert!(
        matches!(short, Err(AskError::Timeout { after, .. }) if after == ms(100)),
        "{short:?}"
    );
    assert!(
        started.elapsed() < ms(390),
        "the short ask outlived the backoff"
    );
    assert_eq!(long.await.unwrap(), Pong(2003));
    assert_eq!(recv_within(&mut notes, BOUND).await, (2, 5));
    let late = letter_where(&mut letters_a, BOUND, |l| {
        l.is::<Pong>() || l.short_message_type() == "Pong"
    })
    .await;
    assert_eq!(late.reason(), &DeadLetterReason::AskEnded, "{late}");
    assert_eq!(late.take_message::<Pong>(), Some(Pong(2002)), "{late}");
    assert_eq!(generations.load(Ordering::SeqCst), 2);
    nodes.terminate().await;
}

// S34 + S44: a request a state does not handle is refused by that state, and an ask
// fails at once with `NotHandled` naming the state ("an ask fails at once"). The same
// request asked from another system is refused the same way, not left to time out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s34_s44_a_remote_ask_refused_by_a_state_fails_at_once() {
    let nodes = nodes();
    let gate = nodes
        .b
        .spawn(Machine::new(Gate, GateClosed), "gate")
        .unwrap();
    let local = gate.ask(Peek(1)).timeout(BOUND).await;
    assert!(
        matches!(
            local,
            Err(AskError::NotHandled {
                state: "GateClosed",
                ..
            })
        ),
        "{local:?}"
    );

    let remote = nodes.a.resolve::<GateMsg>(&gate.to_string()).unwrap();
    linked(&nodes.a, &nodes.b, BOUND).await;
    let mut letters_b = nodes.b.events().subscribe::<DeadLetter>();
    let started = Instant::now();
    let asked = remote.ask(Peek(2)).timeout(ms(3000)).await;
    let elapsed = started.elapsed();
    let on_b: Vec<String> = letter_texts(&mut letters_b, ms(100)).await;
    assert!(
        matches!(asked, Err(AskError::NotHandled { state: "GateClosed", ref target }) if target == gate.path()),
        "{asked:?} after {elapsed:?}; dead letters on b meanwhile: {on_b:?}"
    );
    assert!(elapsed < Duration::from_secs(1), "{elapsed:?}");
    remote.tell(OpenGate);
    assert_eq!(remote.ask(Peek(3)).timeout(BOUND).await.unwrap(), Pong(3));
    nodes.terminate().await;
}

// S28 + S36: an adapter's ref sent to a peer and back (A -> B -> A) is the adapter
// again: equal to it, it translates into its owner in order with what the peer sent
// through it, and it still cannot be asked or watched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s28_s36_an_adapter_ref_sent_home_is_still_the_adapter() {
    let nodes = nodes();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let (_owner, adapter) = owner_with_adapter(&nodes.a, 1, "owner", seen_tx).await;

    let (home_tx, mut home) = mpsc::unbounded_channel();
    let home_ref = nodes
        .a
        .spawn(
            Behaviors::receive_message(move |Bounced { item }: Bounced| {
                let _ = home_tx.send(item);
            }),
            "home",
        )
        .unwrap();
    let (_, bouncer) = on_b(
        &nodes,
        Behaviors::receive_message(|Bounce { item, to }: Bounce| {
            item.tell(Pong(8));
            to.tell(Bounced { item });
        }),
        "bouncer",
    );
    bouncer.tell(Bounce {
        item: adapter.clone(),
        to: home_ref,
    });
    let came_back = recv_within(&mut home, BOUND).await;
    assert_eq!(
        came_back, adapter,
        "the adapter did not come home as itself"
    );
    assert_eq!(recv_within(&mut seen, BOUND).await, (1, 8));
    came_back.tell(Pong(9));
    assert_eq!(recv_within(&mut seen, BOUND).await, (1, 9));

    let started = Instant::now();
    let asked = came_back
        .ask_with(|_reply_to: ActorRef<Pong>| Pong(10))
        .timeout(Duration::from_secs(3))
        .await;
    assert!(matches!(asked, Err(AskError::Adapter { .. })), "{asked:?}");
    assert!(started.elapsed() < Duration::from_secs(1));
    nothing_within(&mut seen, ms(100)).await;
    nodes.terminate().await;
}

// S36 + S44: an ask's reply ref relayed by a peer back to an actor on the asking
// system (A -> B -> A) is the local promise again: the local answer resolves the ask.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s44_a_reply_ref_relayed_home_answers_the_ask() {
    let nodes = nodes();
    let keeper = nodes.a.spawn(Keeper::default(), "keeper").unwrap();
    let keeper_from_b = nodes.b.resolve::<KeeperMsg>(&keeper.to_string()).unwrap();
    let (_, relay) = on_b(
        &nodes,
        Behaviors::receive_message(move |Relay { n, reply_to }: Relay| {
            keeper_from_b.tell(Keep { n, reply_to });
        }),
        "relay",
    );
    for n in [4, 5, 6] {
        let answer = relay
            .ask_with(|reply_to| Relay { n, reply_to })
            .timeout(BOUND)
            .await
            .unwrap();
        assert_eq!(answer, Pong(n));
    }
    nodes.terminate().await;
}

// S36 + S31: a ref names one incarnation (address, path, uid). A ref to an actor of
// B that has since stopped, sent by A back to B, still names that incarnation: what
// B tells through it does not reach the new actor at the same path, and is a dead
// letter instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_a_ref_to_a_dead_incarnation_sent_home_does_not_reach_its_successor() {
    let nodes = nodes();
    let mut letters_b = nodes.b.events().subscribe::<DeadLetter>();
    let (first, _first_rx) = note_sink(&nodes.b, "x");
    let old = nodes.a.resolve::<Note>(&first.to_string()).unwrap();
    stop_and_wait(&nodes.b, &first, || nodes.b.stop(&first).unwrap()).await;
    let (second, mut second_rx) = note_sink(&nodes.b, "x");
    assert_ne!(first.uid(), second.uid());

    let (carried_tx, mut carried) = mpsc::unbounded_channel();
    let (_, carrier) = on_b(
        &nodes,
        Behaviors::receive_message(move |Carry { note }: Carry| {
            let _ = carried_tx.send(note.uid());
            note.tell(Note(5));
        }),
        "carrier",
    );
    carrier.tell(Carry { note: old });
    let got = tokio::time::timeout(BOUND, carried.recv())
        .await
        .ok()
        .flatten();
    if got.is_none() {
        let on_b: Vec<String> = letter_texts(&mut letters_b, ms(100)).await;
        panic!("the carrier never got the message; dead letters on b: {on_b:?}");
    }
    assert_eq!(got, Some(first.uid()));
    let letter = letter_where(&mut letters_b, BOUND, |l| l.is::<Note>()).await;
    assert_eq!(letter.recipient(), first.path(), "{letter}");
    assert_eq!(
        letter.reason(),
        &DeadLetterReason::RecipientStopped,
        "{letter}"
    );
    assert_eq!(letter.take_message::<Note>(), Some(Note(5)));
    nothing_within(&mut second_rx, ms(200)).await;
    nodes.terminate().await;
}

// S36 + S2: `spawn_anonymous` picks a name, and the actor's ref is an ordinary ref:
// sent to a peer inside a message, it comes back live there, and what the peer tells
// through it (or through the same URI resolved there) reaches the anonymous actor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s36_s2_an_anonymous_actors_ref_works_from_a_peer() {
    let nodes = nodes();
    let mut letters_a = nodes.a.events().subscribe::<DeadLetter>();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let anonymous = nodes
        .a
        .spawn_anonymous(Behaviors::receive_message(move |Note(n): Note| {
            let _ = tx.send(n);
        }))
        .unwrap();
    assert!(anonymous.path().name().starts_with('$'), "{anonymous}");
    let (_, carrier) = on_b(
        &nodes,
        Behaviors::receive_message(|Carry { note }: Carry| note.tell(Note(5))),
        "carrier",
    );
    carrier.tell(Carry {
        note: anonymous.clone(),
    });
    let got = tokio::time::timeout(BOUND, rx.recv()).await.ok().flatten();
    let letters: Vec<String> = letter_texts(&mut letters_a, ms(100)).await;
    assert_eq!(got, Some(5), "dead letters on a: {letters:?}");
    let resolved = nodes.b.resolve::<Note>(&anonymous.to_string()).unwrap();
    resolved.tell(Note(6));
    assert_eq!(recv_within(&mut rx, BOUND).await, 6);
    nodes.terminate().await;
}

// S18 + S41: once a watch's `Terminated` has been delivered the watch is over, and
// watching again is a new watch that hears `Terminated` again at once; across a link
// as locally. Each watch hears it exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s18_s41_watching_a_stopped_remote_actor_again_hears_terminated_again() {
    let nodes = nodes();
    let (echo, remote) = echo_on_b(&nodes);
    let (watcher, mut said) = watching(&nodes.a, "watcher", remote.clone()).await;
    assert_eq!(remote.ask(Ping(0)).timeout(BOUND).await.unwrap(), Pong(0));
    stop_and_wait(&nodes.b, &echo, || echo.tell(Quit)).await;
    assert_eq!(recv_within(&mut said, BOUND).await, "terminated");
    nothing_within(&mut said, ms(200)).await;
    watcher.tell(WatchCmd::Rewatch);
    assert_eq!(recv_within(&mut said, BOUND).await, "rewatched");
    assert_eq!(recv_within(&mut said, BOUND).await, "terminated");
    nothing_within(&mut said, ms(300)).await;
    nodes.terminate().await;
}

// S18 + S41: `unwatch` of a remote actor means no `Terminated` for it, while another
// watcher of the same actor, on the same system, still hears its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s18_s41_unwatch_of_a_remote_actor_means_no_terminated() {
    let nodes = nodes();
    let (echo, remote) = echo_on_b(&nodes);
    let (quitter, mut quitter_said) = watching(&nodes.a, "quitter", remote.clone()).await;
    let (_stayer, mut stayer_said) = watching(&nodes.a, "stayer", remote.clone()).await;
    assert_eq!(remote.ask(Ping(0)).timeout(BOUND).await.unwrap(), Pong(0));
    quitter.tell(WatchCmd::Unwatch);
    assert_eq!(recv_within(&mut quitter_said, BOUND).await, "unwatched");
    stop_and_wait(&nodes.b, &echo, || echo.tell(Quit)).await;
    assert_eq!(recv_within(&mut stayer_said, BOUND).await, "terminated");
    nothing_within(&mut quitter_said, ms(500)).await;
    nothing_within(&mut stayer_said, ms(100)).await;
    nodes.terminate().await;
}

// S14 + S41: a watcher that restarts drops the watches of its old incarnation and its
// setup watches again; when the remote actor then stops, the watcher hears
// `Terminated` exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s14_s41_a_restarted_watcher_hears_a_remote_end_exactly_once() {
    let nodes = nodes();
    let (echo, remote) = echo_on_b(&nodes);
    let (watcher, mut said) = watching(&nodes.a, "watcher", remote.clone()).await;
    assert_eq!(remote.ask(Ping(0)).timeout(BOUND).await.unwrap(), Pong(0));
    watcher.tell(WatchCmd::Fail);
    assert_eq!(
        recv_within(&mut said, BOUND).await,
        "watching",
        "setup ran again"
    );
    assert_eq!(remote.ask(Ping(1)).timeout(BOUND).await.unwrap(), Pong(1));
    stop_and_wait(&nodes.b, &echo, || echo.tell(Quit)).await;
    assert_eq!(recv_within(&mut said, BOUND).await, "terminated");
    nothing_within(&mut said, ms(500)).await;
    nodes.terminate().await;
}

// S32 + S44 + S40: a pool router on B asked from A: each request is handed whole to
// a routee, which answers across the link; the routees take turns strictly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s32_s44_a_remote_pool_router_answers_asks_in_strict_rotation() {
    let nodes = nodes();
    let (_, remote) = on_b(&nodes, Routers::pool(3, || PoolWorker).unwrap(), "workers");
    let mut got = Vec::new();
    for n in 1..=7 {
        got.push(remote.ask(Who(n)).timeout(BOUND).await.unwrap());
    }
    let routees: Vec<&str> = got.iter().map(|named| named.routee.as_str()).collect();
    assert_eq!(
        routees,
        [
            "routee-1", "routee-2", "routee-3", "routee-1", "routee-2", "routee-3", "routee-1"
        ]
    );
    assert_eq!(
        got.iter().map(|named| named.n).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6, 7]
    );
    nodes.terminate().await;
}

// S32 + S40 + S5: a consistent-hash pool on B told from A: each key always reaches
// the same routee, and each key's messages arrive in the order A sent them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s32_s40_a_consistent_hash_pool_told_from_a_peer_keeps_each_key_together_in_order() {
    let nodes = nodes();
    let (tx, mut rx) = mpsc::unbounded_channel::<(String, u64, u64)>();
    let pool = Routers::pool(4, move || {
        let tx = tx.clone();
        Behaviors::receive(move |ctx, keyed: Keyed| {
            let _ = tx.send((ctx.path().name().to_string(), keyed.key, keyed.seq));
        })
    })
    .unwrap()
    .consistent_hash(|keyed: &Keyed| keyed.key);
    let (_, remote) = on_b(&nodes, pool, "hashed");
    for seq in 0..40 {
        for key in 0..6 {
            remote.tell(Keyed { key, seq });
        }
    }
    let got = take(&mut rx, 240).await;
    for key in 0..6 {
        let of_key: Vec<&(String, u64, u64)> = got.iter().filter(|(_, k, _)| *k == key).collect();
        let routees: BTreeSet<&str> = of_key.iter().map(|(r, _, _)| r.as_str()).collect();
        assert_eq!(routees.len(), 1, "key {key} went to {routees:?}");
        let seqs: Vec<u64> = of_key.iter().map(|(_, _, s)| *s).collect();
        assert_eq!(seqs, (0..40).collect::<Vec<_>>(), "key {key}");
    }
    nothing_within(&mut rx, ms(100)).await;
    nodes.terminate().await;
}

// S32 + S41: a group router on A over routees on B watches them across the link; when
// B's system stops, every routee's `Terminated` comes, the group is empty, and the
// router stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s32_s41_a_group_of_remote_routees_stops_when_their_system_stops() {
    let nodes = nodes();
    let (first, mut first_rx) = note_sink(&nodes.b, "r1");
    let (second, mut second_rx) = note_sink(&nodes.b, "r2");
    let routees = vec![
        nodes.a.resolve::<Note>(&first.to_string()).unwrap(),
        nodes.a.resolve::<Note>(&second.to_string()).unwrap(),
    ];
    let router = nodes
        .a
        .spawn(Routers::group(routees).unwrap(), "group")
        .unwrap();
    let mut probe = TestProbe::<Note>::new(&nodes.a);
    probe.watch(&router);
    for n in 1..=4 {
        router.tell(Note(n));
    }
    assert_eq!(take(&mut first_rx, 2).await, [1, 3]);
    assert_eq!(take(&mut second_rx, 2).await, [2, 4]);
    nodes.b.terminate().await;
    probe.expect_terminated(&router, BOUND).await;
    nodes.a.terminate().await;
}

// S32 + S28 + S41: a group router on B whose routees are message adapters of actors
// on A (their refs sent over in a message): it rotates over them, and since an adapter
// stops with its owner and the group watches the owner of an adapter routee, the group
// stops once both owners on A have stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s32_s28_s41_a_group_of_remote_adapters_ends_with_their_owners() {
    let nodes = nodes();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let (owner1, first) = owner_with_adapter(&nodes.a, 1, "owner1", seen_tx.clone()).await;
    let (owner2, second) = owner_with_adapter(&nodes.a, 2, "owner2", seen_tx).await;

    let (refs_tx, mut refs) = mpsc::unbounded_channel();
    let (_, maker) = on_b(
        &nodes,
        Behaviors::receive_message(move |Routees(list): Routees| {
            let _ = refs_tx.send(list);
        }),
        "maker",
    );
    maker.tell(Routees(vec![first, second]));
    let list = recv_within(&mut refs, BOUND).await;
    let router = nodes
        .b
        .spawn(Routers::group(list).unwrap(), "adapters")
        .unwrap();
    let mut probe = TestProbe::<Note>::new(&nodes.b);
    probe.watch(&router);
    for n in 1..=4 {
        router.tell(Pong(n));
    }
    let mut got = take(&mut seen, 4).await;
    got.sort_unstable();
    assert_eq!(got, [(1, 1), (1, 3), (2, 2), (2, 4)]);
    owner1.tell(OwnerMsg::Stop);
    owner2.tell(OwnerMsg::Stop);
    probe.expect_terminated(&router, BOUND).await;
    nodes.terminate().await;
}

// S32 + S40: a broadcast group over local and remote routees: each routee gets its
// own copy of every message, in the order sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s32_s40_broadcast_over_local_and_remote_routees() {
    let nodes = nodes();
    let (near1, mut near1_rx) = note_sink(&nodes.a, "near1");
    let (far, mut far_rx) = note_sink(&nodes.b, "far");
    let (near2, mut near2_rx) = note_sink(&nodes.a, "near2");
    let far = nodes.a.resolve::<Note>(&far.to_string()).unwrap();
    let router = nodes
        .a
        .spawn(
            Routers::group([near1, far, near2]).unwrap().broadcast(),
            "all",
        )
        .unwrap();
    for n in 1..=5 {
        router.tell(Note(n));
    }
    for rx in [&mut near1_rx, &mut far_rx, &mut near2_rx] {
        assert_eq!(take(rx, 5).await, [1, 2, 3, 4, 5]);
        nothing_within(rx, ms(50)).await;
    }
    nodes.terminate().await;
}

// S29 + S40 + S31: tells from a peer into a full drop-new mailbox: the mailbox keeps
// its bound, each refused note is one dead letter on the receiving system
// (`MailboxFull`, with the note and the recipient), and what was taken is handled in
// the order sent. Nothing is dead-lettered on the sending side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s29_s40_a_peers_tells_into_a_full_drop_new_mailbox() {
    let nodes = nodes();
    let mut letters_a = nodes.a.events().subscribe::<DeadLetter>();
    let mut letters_b = nodes.b.events().subscribe::<DeadLetter>();
    let mut gated = Gated::new();
    let (sink, remote) = on_b_with(
        &nodes,
        gated.sink(),
        "gated",
        MailboxConfig::bounded(3, OverflowStrategy::DropNew).unwrap(),
    );
    remote.tell(Note(0));
    gated.wait_entered().await;
    for n in 1..=10 {
        remote.tell(Note(n));
    }
    let expected: Vec<(DeadLetterReason, Option<u64>)> = (4..=10)
        .map(|n| (DeadLetterReason::MailboxFull, Some(n)))
        .collect();
    expect_letters_for(&mut letters_b, sink.path(), &expected, reason_and_note).await;
    gated.open(1);
    assert_eq!(take(&mut gated.seen, 4).await, [0, 1, 2, 3]);
    nothing_within(&mut gated.seen, ms(100)).await;
    assert!(letters_until_quiet(&mut letters_a, ms(10)).await.is_empty());
    nodes.terminate().await;
}

// S29 + S11 + S40 + S31: a peer's tell into a full mailbox whose strategy is `Fail`:
// the note is refused (one `MailboxFull` letter on the receiving system) and the actor
// fails with `MailboxOverflow` under its supervision: the restart keeps what was
// queued, which the next incarnation handles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s29_s11_a_peers_tell_into_a_full_fail_mailbox_fails_the_actor() {
    let nodes = nodes();
    let mut letters_b = nodes.b.events().subscribe::<DeadLetter>();
    let mut gated = Gated::new();
    let setups = Arc::new(AtomicU64::new(0));
    let counted = setups.clone();
    let (gate, entered_tx, seen_tx) = (
        gated.gate.clone(),
        gated.entered_tx.clone(),
        gated.seen_tx.clone(),
    );
    let (sink, remote) = on_b_with(
        &nodes,
        Behaviors::supervise(Behaviors::setup(move |_ctx: &mut ActorContext<Note>| {
            counted.fetch_add(1, Ordering::SeqCst);
            gated_note_sink(gate.clone(), entered_tx.clone(), seen_tx.clone())
        }))
        .on_failure::<MailboxOverflow>(SupervisorStrategy::restart()),
        "gated",
        MailboxConfig::bounded(1, OverflowStrategy::Fail).unwrap(),
    );
    remote.tell(Note(0));
    gated.wait_entered().await;
    remote.tell(Note(1));
    remote.tell(Note(2));
    expect_letters_for(
        &mut letters_b,
        sink.path(),
        &[(DeadLetterReason::MailboxFull, Some(2))],
        reason_and_note,
    )
    .await;
    gated.open(1);
    assert_eq!(take(&mut gated.seen, 2).await, [0, 1]);
    nothing_within(&mut gated.seen, ms(100)).await;
    assert_eq!(
        setups.load(Ordering::SeqCst),
        2,
        "the overflow did not restart the actor"
    );
    nodes.terminate().await;
}

// S47 + S29 + S30: `offer` on a remote ref waits only for room in the outbound
// buffer: each offer resolves `true` while the far mailbox (bounded, drop-oldest) is
// full, and the far side pushes out its oldest queued notes, each one dead letter
// (`PushedOut`) on the receiving system.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s47_s29_remote_offers_are_accepted_while_the_far_mailbox_pushes_out() {
    let nodes = nodes();
    let mut letters_b = nodes.b.events().subscribe::<DeadLetter>();
    let mut gated = Gated::new();
    let (sink, remote) = on_b_with(
        &nodes,
        gated.sink(),
        "gated",
        MailboxConfig::bounded(2, OverflowStrategy::DropOldest).unwrap(),
    );
    assert!(
        tokio::time::timeout(BOUND, remote.offer(Note(0)))
            .await
            .unwrap()
    );
    gated.wait_entered().await;
    for n in 1..=6 {
        assert!(
            tokio::time::timeout(BOUND, remote.offer(Note(n)))
                .await
                .unwrap()
        );
    }
    let expected: Vec<(DeadLetterReason, Option<u64>)> = (1..=4)
        .map(|n| (DeadLetterReason::PushedOut, Some(n)))
        .collect();
    expect_letters_for(&mut letters_b, sink.path(), &expected, reason_and_note).await;
    gated.open(1);
    assert_eq!(take(&mut gated.seen, 3).await, [0, 5, 6]);
    nothing_within(&mut gated.seen, ms(100)).await;
    nodes.terminate().await;
}

// S28 + S29 + S36: what a peer sends through a message adapter is never refused by
// the owner's bound: with the owner's one-slot drop-new mailbox full, its own tell is
// refused (one `MailboxFull` letter), and every adapted message from the peer is
// taken and handled, in order, after what was queued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s28_s29_a_peers_messages_through_an_adapter_pass_a_full_bound() {
    let nodes = nodes();
    let mut letters_b = nodes.b.events().subscribe::<DeadLetter>();
    let mut gated = Gated::new();
    let (adapter_tx, mut adapters) = mpsc::unbounded_channel();
    let (owner_gate, entered_tx, seen_tx) = (
        gated.gate.clone(),
        gated.entered_tx.clone(),
        gated.seen_tx.clone(),
    );
    let owner = nodes
        .b
        .spawn_with(
            Behaviors::setup(move |ctx: &mut ActorContext<DeskMsg>| {
                let adapter: ActorRef<Pong> = ctx.message_adapter(|Pong(n)| DeskMsg::Adapted(n));
                let _ = adapter_tx.send(adapter);
                let (gate, entered, seen) =
                    (owner_gate.clone(), entered_tx.clone(), seen_tx.clone());
                Behaviors::receive_message_async(async move |message: DeskMsg| {
                    let code = match message {
                        DeskMsg::Direct(0) => {
                            let _ = entered.send(());
                            let _ = gate.acquire().await;
                            0
                        }
                        DeskMsg::Direct(n) => n,
                        DeskMsg::Adapted(n) => 100 + n,
                    };
                    let _ = seen.send(code);
                })
            }),
            "owner",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    let adapter = recv_within(&mut adapters, BOUND).await;
    owner.tell(DeskMsg::Direct(0));
    gated.wait_entered().await;
    owner.tell(DeskMsg::Direct(1));
    owner.tell(DeskMsg::Direct(2));
    let refused = letter_where(&mut letters_b, BOUND, |_| true).await;
    assert_eq!(
        refused.reason(),
        &DeadLetterReason::MailboxFull,
        "{refused}"
    );
    assert!(
        matches!(refused.take_message::<DeskMsg>(), Some(DeskMsg::Direct(2))),
        "{refused}"
    );

    let remote_adapter = send_to_a(&nodes, adapter).await;
    for n in 10..=14 {
        remote_adapter.tell(Pong(n));
    }
    // FIFO per association: once this ask is answered, the adapted notes were
    // delivered on b.
    let (_, echo) = echo_on_b(&nodes);
    assert_eq!(echo.ask(Ping(0)).timeout(BOUND).await.unwrap(), Pong(0));
    let more = letters_until_quiet(&mut letters_b, ms(200)).await;
    assert!(
        more.is_empty(),
        "adapted messages were refused: {:?}",
        more.iter().map(ToString::to_string).collect::<Vec<_>>()
    );
    gated.open(1);
    assert_eq!(
        take(&mut gated.seen, 7).await,
        [0, 1, 110, 111, 112, 113, 114]
    );
    nothing_within(&mut gated.seen, ms(100)).await;
    nodes.terminate().await;
}

// S34 + S27 + S44: asks from a peer that arrive while a state stashes are held with
// their reply slots, replayed at the switch in arrival order ahead of what came
// after, and each answered across the link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s34_s27_s44_remote_asks_held_by_a_stashing_state_are_answered_after_the_switch() {
    let nodes = nodes();
    let (served_tx, mut served) = mpsc::unbounded_channel();
    let (_, remote) = on_b(
        &nodes,
        Machine::new(Vault { served: served_tx }, Sealed),
        "vault",
    );
    let first = remote.ask(Fetch(1)).timeout(BOUND);
    let second = remote.ask(Fetch(2)).timeout(BOUND);
    remote.tell(Unseal);
    let fourth = remote.ask(Fetch(4)).timeout(BOUND);
    assert_eq!(first.await.unwrap(), Pong(1));
    assert_eq!(second.await.unwrap(), Pong(2));
    assert_eq!(fourth.await.unwrap(), Pong(4));
    assert_eq!(take(&mut served, 3).await, [1, 2, 4]);
    nodes.terminate().await;
}

// S31 + S37 + S40: four tasks on A tell an actor on B while B stops it. Every note is
// accounted for exactly once: handled, or one dead letter (on B: queued when it
// stopped, or arriving for a stopped recipient; or on A). None is lost, none counted
// twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s31_s37_a_peers_tells_racing_a_stop_are_each_accounted_once() {
    const TASKS: u64 = 4;
    const EACH: u64 = 250;
    let nodes = nodes();
    let mut letters_a = nodes
        .a
        .events()
        .subscribe_with_capacity::<DeadLetter>(8192)
        .unwrap();
    let mut letters_b = nodes
        .b
        .events()
        .subscribe_with_capacity::<DeadLetter>(8192)
        .unwrap();
    let (sink, mut handled_rx) = note_sink(&nodes.b, "racer");
    let remote = nodes.a.resolve::<Note>(&sink.to_string()).unwrap();
    linked(&nodes.a, &nodes.b, BOUND).await;
    let mut producers = Vec::new();
    for task in 0..TASKS {
        let remote = remote.clone();
        producers.push(tokio::spawn(async move {
            for i in 0..EACH {
                remote.tell(Note(task * 1000 + i));
                if i % 25 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    let mut handled = BTreeSet::new();
    while handled.len() < 100 {
        assert!(handled.insert(recv_within(&mut handled_rx, BOUND).await));
    }
    nodes.b.stop(&sink).unwrap();
    for n in until_closed(&mut handled_rx, BOUND).await {
        assert!(handled.insert(n), "{n} handled twice");
    }
    for producer in producers {
        tokio::time::timeout(BOUND, producer)
            .await
            .unwrap()
            .unwrap();
    }

    let total = usize::try_from(TASKS * EACH).unwrap();
    let mut lettered = BTreeSet::new();
    let mut opaque = 0_usize;
    let deadline = tokio::time::Instant::now() + BOUND;
    let mut other = Vec::new();
    while handled.len() + lettered.len() + opaque < total {
        let letter = tokio::select! {
            Some(letter) = letters_a.recv() => letter,
            Some(letter) = letters_b.recv() => letter,
            () = tokio::time::sleep_until(deadline) => panic!(
                "accounted for {} handled + {} lettered + {opaque} opaque of {total}; other letters: {other:?}",
                handled.len(), lettered.len()
            ),
        };
        if let Some(Note(n)) = letter.take_message::<Note>() {
            assert!(
                !handled.contains(&n),
                "{n} handled and dead-lettered: {letter}"
            );
            assert!(lettered.insert(n), "{n} dead-lettered twice: {letter}");
        } else if matches!(letter.reason(), DeadLetterReason::FromPeer { .. }) {
            opaque += 1;
        } else {
            other.push(letter.to_string());
        }
    }
    let more = letters_until_quiet(&mut letters_b, ms(200)).await;
    assert!(
        more.iter().all(|l| !l.is::<Note>()),
        "extra letters: {more:?}"
    );
    assert_eq!(letters_a.lost(), 0);
    assert_eq!(letters_b.lost(), 0);
    assert_eq!(handled.len() + lettered.len() + opaque, total);
    nodes.terminate().await;
}

// S44 + S41: an ask held by an actor whose whole system then terminates fails at
// once: a system that stops tells its peers; the ask fails as `Unreachable` (its
// system stopped) or `TargetTerminated` (it stopped with the request in hand), the
// two outcomes the docs give for this, and not at its 30-second deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s44_s41_an_ask_held_when_the_peer_system_terminates_fails_at_once() {
    let nodes = nodes();
    let (_, remote) = echo_on_b(&nodes);
    let held = remote
        .ask_with(|reply_to| Hold { reply_to })
        .timeout(Duration::from_secs(30));
    let held = tokio::spawn(held.into_future());
    assert_eq!(remote.ask(Ping(1)).timeout(BOUND).await.unwrap(), Pong(1));
    nodes.b.terminate().await;
    let started = Instant::now();
    let outcome = tokio::time::timeout(BOUND, held)
        .await
        .expect("the ask waited for its deadline")
        .unwrap();
    assert!(
        matches!(
            outcome,
            Err(AskError::Unreachable { .. } | AskError::TargetTerminated { .. })
        ),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    nodes.a.terminate().await;
}

// S29 + S44 + S22 + S31: a request from a peer that a full drop-new mailbox refuses is
// exactly one `MailboxFull` dead letter on the receiving system, and the remote ask
// fails at once with `MailboxFull`, as a local one does; the target runs on and
// answers the next ask.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s29_s44_a_remote_ask_refused_by_a_full_mailbox_fails_at_once() {
    let nodes = nodes();
    let mut letters_b = nodes.b.events().subscribe::<DeadLetter>();
    let gate = Arc::new(Semaphore::new(0));
    let (entered_tx, mut entered) = mpsc::unbounded_channel();
    let blocker = nodes
        .b
        .spawn_with(
            Blocker {
                gate: gate.clone(),
                entered: entered_tx,
            },
            "blocker",
            MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap(),
        )
        .unwrap();
    blocker.tell(Block);
    recv_within(&mut entered, BOUND).await;
    blocker.tell(Block); // fills the one slot
    let remote = nodes.a.resolve::<BlockerMsg>(&blocker.to_string()).unwrap();
    let started = Instant::now();
    let asked = remote.ask(Ping(1)).timeout(ms(3000)).await;
    assert!(
        matches!(&asked, Err(AskError::MailboxFull { target }) if target == remote.path()),
        "{asked:?}"
    );
    assert!(
        started.elapsed() < ms(1000),
        "{asked:?} after {:?}",
        started.elapsed()
    );
    expect_letters_for(
        &mut letters_b,
        blocker.path(),
        &[DeadLetterReason::MailboxFull],
        |l| l.reason().clone(),
    )
    .await;
    gate.add_permits(2);
    // The queued `Block` is in hand: the one slot is free again.
    recv_within(&mut entered, BOUND).await;
    assert_eq!(remote.ask(Ping(2)).timeout(BOUND).await.unwrap(), Pong(2));
    nodes.terminate().await;
}

// S28 + S44: an adapter cannot be asked. Asked locally, the ask fails at once with
// `AskError::Adapter`; asked through a ref to it from another system, it must not be
// answered either, and fails the same way rather than waiting out its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s28_s44_an_adapter_asked_from_a_peer_refuses_like_a_local_one() {
    let nodes = nodes();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let (_owner, adapter) = owner_with_adapter(&nodes.b, 1, "owner", seen_tx).await;
    let local = adapter
        .ask_with(|_reply_to: ActorRef<Pong>| Pong(1))
        .timeout(BOUND)
        .await;
    assert!(matches!(local, Err(AskError::Adapter { .. })), "{local:?}");
    nothing_within(&mut seen, ms(100)).await;

    // The adapter's ref as a peer gets it: inside a message.
    let remote = send_to_a(&nodes, adapter).await;
    remote.tell(Pong(2));
    assert_eq!(
        recv_within(&mut seen, BOUND).await,
        (1, 2),
        "the crossed ref works"
    );
    let started = Instant::now();
    let asked = remote
        .ask_with(|_reply_to: ActorRef<Pong>| Pong(3))
        .timeout(ms(3000))
        .await;
    let elapsed = started.elapsed();
    let translated = tokio::time::timeout(ms(300), seen.recv())
        .await
        .ok()
        .flatten();
    assert!(
        matches!(asked, Err(AskError::Adapter { .. })) && translated.is_none(),
        "asked: {asked:?} after {elapsed:?}; the owner got {translated:?}"
    );
    assert!(elapsed < Duration::from_secs(1), "{elapsed:?}");
    nodes.terminate().await;
}

/// Holds the squarer of the S54 test below in its handler until its gate opens.
#[message(remote = "s54.hold.v1")]
#[derive(Debug, Clone)]
pub struct HoldOn;

#[message(remote = "s54.square.v1", reply = Pong)]
#[derive(Debug, Clone)]
pub struct SquareOf(pub u64);

#[derive(Clone)]
pub struct HeldSquarer {
    gate: Arc<Semaphore>,
    holding: mpsc::UnboundedSender<()>,
}

#[actor]
impl HeldSquarer {
    async fn hold(&mut self, _: HoldOn) {
        let _ = self.holding.send(());
        let _ = self.gate.acquire().await;
    }

    fn square(&mut self, SquareOf(n): SquareOf) -> Pong {
        Pong(n * n)
    }
}

// S54 + S40: a peer's request pushed out of a full drop-oldest mailbox fails its ask
// on the asking system at once, as `PushedOut`, while the squarer is still held; the
// request that pushed it out is answered once the gate opens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s54_s40_a_peers_request_pushed_out_by_drop_oldest_fails_its_ask_at_once() {
    let nodes = nodes();
    let gate = Arc::new(Semaphore::new(0));
    let (holding_tx, mut holding) = mpsc::unbounded_channel();
    let (_, remote) = on_b_with(
        &nodes,
        HeldSquarer {
            gate: gate.clone(),
            holding: holding_tx,
        },
        "squarer",
        MailboxConfig::bounded(1, OverflowStrategy::DropOldest).unwrap(),
    );
    remote.tell(HoldOn);
    tokio::time::timeout(BOUND, holding.recv())
        .await
        .expect("the squarer holds")
        .unwrap();
    let first = remote.ask(SquareOf(3)).timeout(Duration::from_secs(600));
    // The first reaches b before the second: one link keeps the order.
    let second = remote.ask(SquareOf(4)).timeout(Duration::from_secs(600));
    let error = tokio::time::timeout(BOUND, first)
        .await
        .expect("the pushed-out ask ends while the squarer is held")
        .expect_err("pushed out");
    assert!(matches!(error, AskError::PushedOut { .. }), "{error:?}");
    gate.add_permits(1);
    assert_eq!(
        tokio::time::timeout(BOUND, second).await.expect("answered"),
        Ok(Pong(16))
    );
    nodes.terminate().await;
}
