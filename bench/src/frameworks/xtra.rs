//! xtra: a behaviour runs in an actor spawned with `xtra::spawn_tokio(..,
//! Mailbox::unbounded())`; a tell is `Address::send(..).detach()`, the send that
//! does not wait for the handler, which on an unbounded mailbox is ready at its first
//! poll: it is polled once, where an `async` caller would `.await` it (the handlers
//! here are not `async`, to be the same code on every framework); a stop is
//! `Context::stop_self`; ask is `Address::send(..).await`, which waits for the
//! handler's return. Skynet's nodes spawn their children in `started`.

use std::pin::pin;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::{Duration, Instant};

use xtra::{Address, Context, Handler, Mailbox};

use super::{Behaviour, Flow, Framework};

/// The framework, for `F: Framework`.
#[derive(Clone)]
pub struct Xtra;

/// The actor that runs a behaviour.
pub struct Cell<B>(B);

impl<B: Behaviour<Xtra>> xtra::Actor for Cell<B> {
    type Stop = ();

    async fn started(&mut self, _: &Mailbox<Self>) -> Result<(), ()> {
        self.0.started();
        Ok(())
    }

    async fn stopped(self) {}
}

impl<B: Behaviour<Xtra>> Handler<B::Msg> for Cell<B> {
    type Return = ();

    async fn handle(&mut self, msg: B::Msg, ctx: &mut Context<Self>) {
        let me = || {
            ctx.mailbox()
                .address()
                .try_upgrade()
                .expect("a running actor has an address")
        };
        if self.0.handle(msg, &me) == Flow::Stop {
            ctx.stop_self();
        }
    }
}

/// The output of `send`, which an unbounded mailbox makes ready at once.
fn at_once<F: Future>(send: F) -> F::Output {
    match pin!(send).poll(&mut TaskContext::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a send to an unbounded mailbox is ready at once"),
    }
}

impl Framework for Xtra {
    const NAME: &'static str = "xtra";
    type Ref<B: Behaviour<Self>> = Address<Cell<B>>;
    type System = ();

    fn system() {}

    async fn shutdown(_: ()) {}

    fn spawn<B: Behaviour<Self>>(
        _: &(),
        behaviour: B,
    ) -> impl Future<Output = Self::Ref<B>> + Send {
        std::future::ready(xtra::spawn_tokio(Cell(behaviour), Mailbox::unbounded()))
    }

    fn tell<B: Behaviour<Self>>(to: &Self::Ref<B>, msg: B::Msg) {
        let _ = at_once(to.send(msg).detach());
    }

    async fn ask(asks: u64) -> Duration {
        let echoer = xtra::spawn_tokio(Echoer, Mailbox::unbounded());
        let start = Instant::now();
        let mut sum = 0_u64;
        for n in 0..asks {
            sum = sum.wrapping_add(echoer.send(Echo(n)).await.expect("an answer"));
        }
        let elapsed = start.elapsed();
        std::hint::black_box(sum);
        elapsed
    }

    async fn skynet(leaves: u64) -> Duration {
        let (report, mut sum) = tokio::sync::mpsc::unbounded_channel();
        let start = Instant::now();
        let root = SkynetNode::new(0, leaves, Report::Root(report)).spawn();
        let sum = sum.recv().await;
        let elapsed = start.elapsed();
        assert_eq!(sum, Some(leaves * (leaves - 1) / 2));
        drop(root);
        elapsed
    }
}

/// A request answered with its number.
pub struct Echo(u64);

#[derive(xtra::Actor)]
struct Echoer;

impl Handler<Echo> for Echoer {
    type Return = u64;

    async fn handle(&mut self, Echo(n): Echo, _: &mut Context<Self>) -> u64 {
        n
    }
}

/// Where a skynet node reports its sum: its parent, or the benchmark for the root.
pub enum Report {
    Parent(Address<SkynetNode>),
    Root(tokio::sync::mpsc::UnboundedSender<u64>),
}

impl Report {
    async fn send(&self, n: u64) {
        match self {
            Report::Parent(parent) => {
                let _ = parent.send(Sum(n)).detach().await;
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
    /// Its own address: an xtra actor stops when its last strong address is
    /// dropped, and its children drop theirs as they end, before it has handled
    /// their sums. It stops itself after the tenth, which drops this one.
    me: Option<Address<SkynetNode>>,
}

impl SkynetNode {
    fn new(num: u64, size: u64, report: Report) -> Self {
        Self {
            num,
            size,
            report,
            sum: 0,
            seen: 0,
            me: None,
        }
    }

    /// Spawn it, holding its own address (see `me`).
    fn spawn(mut self) -> Address<SkynetNode> {
        let (address, mailbox) = Mailbox::unbounded();
        self.me = Some(address.clone());
        xtra::spawn_tokio(self, (address.clone(), mailbox))
    }
}

impl xtra::Actor for SkynetNode {
    type Stop = ();

    async fn started(&mut self, _: &Mailbox<Self>) -> Result<(), ()> {
        if self.size == 1 {
            self.report.send(self.num).await;
            // A leaf is done: an `Err` from `started` stops it.
            return Err(());
        }
        let me = self.me.clone().expect("spawned with its address");
        let step = self.size / 10;
        for i in 0..10 {
            SkynetNode::new(self.num + i * step, step, Report::Parent(me.clone())).spawn();
        }
        Ok(())
    }

    async fn stopped(self) {}
}

impl Handler<Sum> for SkynetNode {
    type Return = ();

    async fn handle(&mut self, Sum(n): Sum, ctx: &mut Context<Self>) {
        self.sum += n;
        self.seen += 1;
        if self.seen == 10 {
            self.report.send(self.sum).await;
            ctx.stop_self();
        }
    }
}
