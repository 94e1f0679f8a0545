//! kameo: a behaviour runs in an actor whose `on_start` hands it over, spawned with
//! `Spawn::spawn_with_mailbox(.., mailbox::unbounded())` (kameo's default mailbox is
//! bounded to 64; the unbounded one does the same work as the others'); a tell is
//! `ActorRef::tell(..).try_send()`, which on an unbounded mailbox never waits; a stop
//! is `Context::stop`; ask is `ActorRef::ask(..).await`. Skynet's nodes spawn their
//! children in `on_start`, unlinked.

use std::time::{Duration, Instant};

use kameo::actor::{ActorRef, Spawn};
use kameo::error::Infallible;
use kameo::mailbox;
use kameo::message::{Context, Message};

use super::{Behaviour, Flow, Framework};

/// The framework, for `F: Framework`.
#[derive(Clone)]
pub struct Kameo;

/// The actor that runs a behaviour.
pub struct Cell<B>(B);

impl<B: Behaviour<Kameo>> kameo::Actor for Cell<B> {
    type Args = B;
    type Error = Infallible;

    async fn on_start(mut behaviour: B, _: ActorRef<Self>) -> Result<Self, Infallible> {
        behaviour.started();
        Ok(Cell(behaviour))
    }
}

impl<B: Behaviour<Kameo>> Message<B::Msg> for Cell<B> {
    type Reply = ();

    async fn handle(&mut self, msg: B::Msg, ctx: &mut Context<Self, ()>) {
        if self.0.handle(msg, &|| ctx.actor_ref().clone()) == Flow::Stop {
            ctx.stop();
        }
    }
}

impl Framework for Kameo {
    const NAME: &'static str = "kameo";
    type Ref<B: Behaviour<Self>> = ActorRef<Cell<B>>;
    type System = ();

    fn system() {}

    async fn shutdown(_: ()) {}

    fn spawn<B: Behaviour<Self>>(
        _: &(),
        behaviour: B,
    ) -> impl Future<Output = Self::Ref<B>> + Send {
        std::future::ready(Cell::spawn_with_mailbox(behaviour, mailbox::unbounded()))
    }

    fn tell<B: Behaviour<Self>>(to: &Self::Ref<B>, msg: B::Msg) {
        let _ = to.tell(msg).try_send();
    }

    async fn ask(asks: u64) -> Duration {
        let echoer = Echoer::spawn_with_mailbox(Echoer, mailbox::unbounded());
        let start = Instant::now();
        let mut sum = 0_u64;
        for n in 0..asks {
            sum = sum.wrapping_add(echoer.ask(Echo(n)).await.expect("an answer"));
        }
        let elapsed = start.elapsed();
        std::hint::black_box(sum);
        let _ = echoer.stop_gracefully().await;
        elapsed
    }

    async fn skynet(leaves: u64) -> Duration {
        let (report, mut sum) = tokio::sync::mpsc::unbounded_channel();
        let start = Instant::now();
        let root = SkynetNode::spawn_with_mailbox(
            SkynetNode::new(0, leaves, Report::Root(report)),
            mailbox::unbounded(),
        );
        let sum = sum.recv().await;
        let elapsed = start.elapsed();
        assert_eq!(sum, Some(leaves * (leaves - 1) / 2));
        drop(root);
        elapsed
    }
}

/// A request answered with its number.
pub struct Echo(u64);

#[derive(kameo::Actor)]
struct Echoer;

impl Message<Echo> for Echoer {
    type Reply = u64;

    async fn handle(&mut self, Echo(n): Echo, _: &mut Context<Self, u64>) -> u64 {
        n
    }
}

/// Where a skynet node reports its sum: its parent, or the benchmark for the root.
pub enum Report {
    Parent(ActorRef<SkynetNode>),
    Root(tokio::sync::mpsc::UnboundedSender<u64>),
}

impl Report {
    fn send(&self, n: u64) {
        match self {
            Report::Parent(parent) => {
                let _ = parent.tell(Sum(n)).try_send();
            }
            Report::Root(root) => {
                let _ = root.send(n);
            }
        }
    }
}

/// A child's sum, told to its parent.
pub struct Sum(u64);

/// A skynet node for the numbers `num .. num + size`.
pub struct SkynetNode {
    num: u64,
    size: u64,
    report: Report,
    sum: u64,
    seen: u32,
}

impl SkynetNode {
    fn new(num: u64, size: u64, report: Report) -> Self {
        Self {
            num,
            size,
            report,
            sum: 0,
            seen: 0,
        }
    }
}

impl kameo::Actor for SkynetNode {
    type Args = Self;
    type Error = Infallible;

    async fn on_start(node: Self, me: ActorRef<Self>) -> Result<Self, Infallible> {
        if node.size == 1 {
            node.report.send(node.num);
            me.kill();
            return Ok(node);
        }
        let step = node.size / 10;
        for i in 0..10 {
            let child = SkynetNode::new(node.num + i * step, step, Report::Parent(me.clone()));
            SkynetNode::spawn_with_mailbox(child, mailbox::unbounded());
        }
        Ok(node)
    }
}

impl Message<Sum> for SkynetNode {
    type Reply = ();

    async fn handle(&mut self, Sum(n): Sum, ctx: &mut Context<Self, ()>) {
        self.sum += n;
        self.seen += 1;
        if self.seen == 10 {
            self.report.send(self.sum);
            ctx.stop();
        }
    }
}
