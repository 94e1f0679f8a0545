//! `ctx.watch_with` (S50): the watcher's own message, on its user lane, after
//! everything the watched actor sent before it stopped; and `watch` beside it, whose
//! `Terminated` is a signal that overtakes the mailbox (S18). Watching an adapter
//! watches its owner (S51).
//!
//! Every wait is bounded; the watcher is held in a handler (a gate) while the
//! watched actor sends and stops, so what it then finds queued is the same each run.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::{Gate, T, ms, nothing_within, recv_within, take};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{MailboxConfig, OverflowStrategy};
use tokio::sync::mpsc;

/// How a watcher watches the device it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// `ctx.watch`: `Terminated`, logged as "terminated".
    Watch,
    /// `ctx.watch_with(.., Seen::Gone(tag))`.
    With(&'static str),
    /// `ctx.unwatch`.
    Unwatch,
}

#[message]
#[derive(Debug)]
pub enum Seen {
    /// Watch this device, as `How` says.
    Watch(ActorRef<u64>, How),
    /// Wait in the handler until the gate opens.
    Hold,
    /// A device's reading.
    Reading(u64),
    /// What `watch_with` asked for.
    Gone(&'static str),
}

/// What a watcher logs, in the order it handles it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Logged {
    Watching,
    Held,
    Reading(u64),
    Gone(&'static str),
    Terminated(String),
}

/// A watcher that logs everything it handles, in order, to `log`; `Hold` waits for
/// `gate` to open.
fn watcher(gate: Gate, log: mpsc::UnboundedSender<Logged>) -> Behavior<Seen> {
    let on_signal = log.clone();
    Behaviors::receive(move |ctx: &mut ActorContext<Seen>, seen: Seen| {
        let log = log.clone();
        let gate = gate.clone();
        match seen {
            Seen::Watch(device, How::Watch) => ctx.watch(&device),
            Seen::Watch(device, How::With(tag)) => ctx.watch_with(&device, Seen::Gone(tag)),
            Seen::Watch(device, How::Unwatch) => ctx.unwatch(&device),
            Seen::Reading(n) => {
                let _ = log.send(Logged::Reading(n));
                return Behaviors::same();
            }
            Seen::Gone(tag) => {
                let _ = log.send(Logged::Gone(tag));
                return Behaviors::same();
            }
            Seen::Hold => {
                let _ = log.send(Logged::Held);
                gate.pass();
                return Behaviors::same();
            }
        }
        let _ = log.send(Logged::Watching);
        Behaviors::same()
    })
    .on_signal(move |_, signal| {
        if let Signal::Terminated(end) = signal {
            let _ = on_signal.send(Logged::Terminated(end.actor().path().to_string()));
        }
    })
    .into()
}

/// A device that, told `n`, sends `n` readings to `to` and stops.
fn device(to: ActorRef<Seen>) -> Behavior<u64> {
    Behaviors::receive_message(move |n: u64| {
        for i in 0..n {
            to.tell(Seen::Reading(i));
        }
        Behaviors::stopped()
    })
    .into()
}

struct Scene {
    watcher: ActorRef<Seen>,
    device: ActorRef<u64>,
    gate: Gate,
    log: mpsc::UnboundedReceiver<Logged>,
    probe: TestProbe<u64>,
}

/// A watcher and a device, the watcher watching it as `how` says.
async fn scene(system: &ActorSystem, how: How, mailbox: MailboxConfig) -> Scene {
    let gate = Gate::new();
    let (log_tx, mut log) = mpsc::unbounded_channel();
    let watcher = system
        .spawn_with(watcher(gate.clone(), log_tx), "watcher", mailbox)
        .unwrap();
    let device = system.spawn(device(watcher.clone()), "device").unwrap();
    let probe = TestProbe::<u64>::new(system);
    probe.watch(&device);
    watcher.tell(Seen::Watch(device.clone(), how));
    assert_eq!(recv_within(&mut log, T).await, Logged::Watching);
    Scene {
        watcher,
        device,
        gate,
        log,
        probe,
    }
}

impl Scene {
    /// Hold the watcher, have the device send `n` readings and stop, wait for its
    /// stop, then free the watcher.
    async fn burst_while_held(&mut self, n: u64) {
        self.watcher.tell(Seen::Hold);
        assert_eq!(recv_within(&mut self.log, T).await, Logged::Held);
        self.device.tell(n);
        self.probe.expect_terminated(&self.device, T).await;
        self.gate.open();
    }
}

fn readings(n: u64) -> Vec<Logged> {
    (0..n).map(Logged::Reading).collect()
}

// S50: the message `watch_with` asked for comes after all 1,000 readings the device
// sent before it stopped, though the watcher was busy when the device stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s50_watch_with_arrives_after_everything_the_target_sent() {
    let system = ActorSystem::new("watch-with").unwrap();
    let mut scene = scene(&system, How::With("device"), MailboxConfig::unbounded()).await;
    scene.burst_while_held(1_000).await;
    let mut expected = readings(1_000);
    expected.push(Logged::Gone("device"));
    assert_eq!(take(&mut scene.log, 1_001).await, expected);
    nothing_within(&mut scene.log, ms(50)).await;
    system.terminate().await;
}

// S18, the control of the test above: `watch`'s `Terminated` is a signal, and it
// overtakes the readings still queued (what `watch`'s docs warn of).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s18_s50_terminated_overtakes_what_the_target_sent() {
    let system = ActorSystem::new("watch-plain").unwrap();
    let mut scene = scene(&system, How::Watch, MailboxConfig::unbounded()).await;
    scene.burst_while_held(1_000).await;
    let mut expected = vec![Logged::Terminated("/user/device".into())];
    expected.extend(readings(1_000));
    assert_eq!(take(&mut scene.log, 1_001).await, expected);
    system.terminate().await;
}

// S50: a full bounded mailbox does not refuse the message `watch_with` queues.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s50_watch_with_is_not_refused_by_a_full_mailbox() {
    let system = ActorSystem::new("watch-with-full").unwrap();
    let bounded = MailboxConfig::bounded(4, OverflowStrategy::DropNew).unwrap();
    let mut scene = scene(&system, How::With("full"), bounded).await;
    scene.burst_while_held(10).await;
    let mut expected = readings(4);
    expected.push(Logged::Gone("full"));
    assert_eq!(take(&mut scene.log, 5).await, expected);
    system.terminate().await;
}

// S50: watching again replaces the message, `watch` after `watch_with` goes back to
// `Terminated`, and each watch delivers exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s50_watching_again_replaces_the_message() {
    let system = ActorSystem::new("watch-with-again").unwrap();
    let mut scene = scene(&system, How::With("first"), MailboxConfig::unbounded()).await;
    let device = scene.device.clone();
    scene
        .watcher
        .tell(Seen::Watch(device.clone(), How::With("second")));
    assert_eq!(recv_within(&mut scene.log, T).await, Logged::Watching);
    scene.burst_while_held(2).await;
    let mut expected = readings(2);
    expected.push(Logged::Gone("second"));
    assert_eq!(take(&mut scene.log, 3).await, expected);
    nothing_within(&mut scene.log, ms(50)).await;

    // A second device, watched with a message and then plainly.
    let other = system.spawn(device_of(&scene.watcher), "other").unwrap();
    scene.probe.watch(&other);
    scene
        .watcher
        .tell(Seen::Watch(other.clone(), How::With("lost")));
    scene.watcher.tell(Seen::Watch(other.clone(), How::Watch));
    assert_eq!(
        take(&mut scene.log, 2).await,
        [Logged::Watching, Logged::Watching]
    );
    other.tell(0);
    scene.probe.expect_terminated(&other, T).await;
    assert_eq!(
        recv_within(&mut scene.log, T).await,
        Logged::Terminated("/user/other".into())
    );
    nothing_within(&mut scene.log, ms(50)).await;
    system.terminate().await;
}

fn device_of(watcher: &ActorRef<Seen>) -> Behavior<u64> {
    device(watcher.clone())
}

// S50: `unwatch` cancels a `watch_with`: the device's stop delivers nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s50_unwatch_cancels_watch_with() {
    let system = ActorSystem::new("watch-with-unwatch").unwrap();
    let mut scene = scene(&system, How::With("cancelled"), MailboxConfig::unbounded()).await;
    let device = scene.device.clone();
    scene.watcher.tell(Seen::Watch(device, How::Unwatch));
    assert_eq!(recv_within(&mut scene.log, T).await, Logged::Watching);
    scene.burst_while_held(1).await;
    assert_eq!(recv_within(&mut scene.log, T).await, Logged::Reading(0));
    nothing_within(&mut scene.log, ms(100)).await;
    system.terminate().await;
}

// S50: a target that had stopped before `watch_with` delivers the message at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s50_watch_with_of_a_stopped_target_delivers_at_once() {
    let system = ActorSystem::new("watch-with-stopped").unwrap();
    let gate = Gate::new();
    let (log_tx, mut log) = mpsc::unbounded_channel();
    let watcher = system.spawn(watcher(gate, log_tx), "watcher").unwrap();
    let gone = system.spawn(device(watcher.clone()), "gone").unwrap();
    let probe = TestProbe::<u64>::new(&system);
    probe.watch(&gone);
    gone.tell(0);
    let mut probe = probe;
    probe.expect_terminated(&gone, T).await;
    watcher.tell(Seen::Watch(gone, How::With("late")));
    assert_eq!(
        take(&mut log, 2).await,
        [Logged::Watching, Logged::Gone("late")]
    );
    system.terminate().await;
}

// S50 + S51: `watch_with` of a message adapter delivers its message when the
// adapter's owner stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s50_s51_watch_with_of_an_adapter_fires_when_its_owner_stops() {
    let system = ActorSystem::new("watch-with-adapter").unwrap();
    let (adapter_tx, mut adapter) = mpsc::unbounded_channel::<ActorRef<u64>>();
    let owner = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<String>| {
                let _ = adapter_tx.send(ctx.message_adapter(|n: u64| n.to_string()));
                Behaviors::receive_message(|_: String| Behaviors::stopped())
            }),
            "owner",
        )
        .unwrap();
    let adapter = recv_within(&mut adapter, T).await;
    let gate = Gate::new();
    let (log_tx, mut log) = mpsc::unbounded_channel();
    let watcher = system.spawn(watcher(gate, log_tx), "watcher").unwrap();
    watcher.tell(Seen::Watch(adapter, How::With("owner")));
    assert_eq!(recv_within(&mut log, T).await, Logged::Watching);
    owner.tell("stop".to_string());
    assert_eq!(recv_within(&mut log, T).await, Logged::Gone("owner"));
    system.terminate().await;
}
