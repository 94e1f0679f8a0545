//! ractor: a behaviour is the `State` of an actor whose `pre_start` hands it over;
//! `Actor::spawn` (which returns once `pre_start` has run) with no name; a tell is
//! `ActorRef::cast`; a stop is `myself.stop(None)`; ask is `ractor::call!` with an
//! `RpcReplyPort`. ractor's mailbox is unbounded. Skynet's nodes spawn their
//! children linked to themselves (`spawn_linked`), ractor's supervision tree.

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::{Behaviour, Flow, Framework};

/// The framework, for `F: Framework`.
#[derive(Clone)]
pub struct Ractor;

/// The actor that runs a behaviour: its state is the behaviour.
pub struct Cell<B>(PhantomData<fn() -> B>);

impl<B: Behaviour<Ractor>> Actor for Cell<B> {
    type Msg = B::Msg;
    type State = B;
    type Arguments = B;

    async fn pre_start(
        &self,
        _: ActorRef<B::Msg>,
        mut behaviour: B,
    ) -> Result<B, ActorProcessingErr> {
        behaviour.started();
        Ok(behaviour)
    }

    async fn handle(
        &self,
        myself: ActorRef<B::Msg>,
        msg: B::Msg,
        behaviour: &mut B,
    ) -> Result<(), ActorProcessingErr> {
        if behaviour.handle(msg, &|| myself.clone()) == Flow::Stop {
            myself.stop(None);
        }
        Ok(())
    }
}

impl Framework for Ractor {
    const NAME: &'static str = "ractor";
    type Ref<B: Behaviour<Self>> = ActorRef<B::Msg>;
    type System = ();

    fn system() {}

    async fn shutdown(_: ()) {}

    async fn spawn<B: Behaviour<Self>>(_: &(), behaviour: B) -> Self::Ref<B> {
        let (actor, _) = Actor::spawn(None, Cell(PhantomData), behaviour)
            .await
            .expect("spawned");
        actor
    }

    fn tell<B: Behaviour<Self>>(to: &Self::Ref<B>, msg: B::Msg) {
        let _ = to.cast(msg);
    }

    async fn ask(asks: u64) -> Duration {
        let (echoer, _) = Actor::spawn(None, Echoer, ()).await.expect("spawned");
        let start = Instant::now();
        let mut sum = 0_u64;
        for n in 0..asks {
            let answer: u64 = ractor::call!(echoer, Echo, n).expect("an answer");
            sum = sum.wrapping_add(answer);
        }
        let elapsed = start.elapsed();
        std::hint::black_box(sum);
        echoer.stop(None);
        elapsed
    }

    async fn skynet(leaves: u64) -> Duration {
        let (report, mut sum) = tokio::sync::mpsc::unbounded_channel();
        let start = Instant::now();
        let (root, _) = Actor::spawn(None, SkynetNode, (0, leaves, Report::Root(report)))
            .await
            .expect("spawned");
        let sum = sum.recv().await;
        let elapsed = start.elapsed();
        assert_eq!(sum, Some(leaves * (leaves - 1) / 2));
        drop(root);
        elapsed
    }
}

/// A request answered with its number, through the port it carries.
pub struct Echo(u64, RpcReplyPort<u64>);

struct Echoer;

impl Actor for Echoer {
    type Msg = Echo;
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<Echo>, (): ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn handle(
        &self,
        _: ActorRef<Echo>,
        Echo(n, reply): Echo,
        _: &mut (),
    ) -> Result<(), ActorProcessingErr> {
        let _ = reply.send(n);
        Ok(())
    }
}

/// Where a skynet node reports its sum: its parent, or the benchmark for the root.
pub enum Report {
    Parent(ActorRef<u64>),
    Root(tokio::sync::mpsc::UnboundedSender<u64>),
}

impl Report {
    fn send(&self, n: u64) {
        match self {
            Report::Parent(parent) => {
                let _ = parent.cast(n);
            }
            Report::Root(root) => {
                let _ = root.send(n);
            }
        }
    }
}

/// A skynet node for the numbers `num .. num + size`.
struct SkynetNode;

/// A node's state: its numbers, where it reports, and what its children reported.
pub struct Sums {
    num: u64,
    size: u64,
    report: Report,
    sum: u64,
    seen: u32,
}

impl Actor for SkynetNode {
    type Msg = u64;
    type State = Sums;
    /// The node's first number, its size, where it reports.
    type Arguments = (u64, u64, Report);

    async fn pre_start(
        &self,
        _: ActorRef<u64>,
        (num, size, report): (u64, u64, Report),
    ) -> Result<Sums, ActorProcessingErr> {
        Ok(Sums {
            num,
            size,
            report,
            sum: 0,
            seen: 0,
        })
    }

    /// The children are spawned here, in the node's own task, rather than in
    /// `pre_start`, which runs inside the parent's `spawn`: there the whole tree
    /// would be built one node at a time by the root's spawn call.
    async fn post_start(
        &self,
        myself: ActorRef<u64>,
        sums: &mut Sums,
    ) -> Result<(), ActorProcessingErr> {
        if sums.size == 1 {
            sums.report.send(sums.num);
            myself.stop(None);
            return Ok(());
        }
        let step = sums.size / 10;
        for i in 0..10 {
            let child = (sums.num + i * step, step, Report::Parent(myself.clone()));
            Actor::spawn_linked(None, SkynetNode, child, myself.get_cell()).await?;
        }
        Ok(())
    }

    /// A child that ends is no reason to stop (ractor's default stops a supervisor
    /// on any child's end): a node waits for all ten sums.
    async fn handle_supervisor_evt(
        &self,
        _: ActorRef<u64>,
        _: ractor::SupervisionEvent,
        _: &mut Sums,
    ) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<u64>,
        n: u64,
        sums: &mut Sums,
    ) -> Result<(), ActorProcessingErr> {
        sums.sum += n;
        sums.seen += 1;
        if sums.seen == 10 {
            sums.report.send(sums.sum);
            myself.stop(None);
        }
        Ok(())
    }
}
