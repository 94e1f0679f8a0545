//! actix: a behaviour runs in an actor with a `Context` (its usual kind), started
//! with `Actor::start` on the current arbiter; a tell is `Addr::do_send`, which does
//! not wait for room in the mailbox; ask is `Addr::send(..).await`. Every workload
//! runs inside an `actix::System`, which runs its actors on one thread: actix has
//! no 2-worker configuration of the kind the tokio frameworks have, so its figure is
//! the same on both rows of the table.

use std::time::Duration;

use actix::{Actor as _, ActorContext as _, AsyncContext as _};

use super::{Behaviour, Flow, Framework};
use crate::harness::Flavor;

/// The framework, for `F: Framework`.
#[derive(Clone)]
pub struct Actix;

/// What a behaviour's message travels in: an actix `Message` answered with `()`.
pub struct Envelope<M>(M);

impl<M: 'static> actix::Message for Envelope<M> {
    type Result = ();
}

/// The actor that runs a behaviour.
pub struct Cell<B>(B);

impl<B: Behaviour<Actix>> actix::Actor for Cell<B> {
    type Context = actix::Context<Self>;

    fn started(&mut self, _: &mut Self::Context) {
        self.0.started();
    }
}

impl<B: Behaviour<Actix>> actix::Handler<Envelope<B::Msg>> for Cell<B> {
    type Result = ();

    fn handle(&mut self, Envelope(msg): Envelope<B::Msg>, ctx: &mut Self::Context) {
        if self.0.handle(msg, &|| ctx.address()) == Flow::Stop {
            ctx.stop();
        }
    }
}

impl Framework for Actix {
    const NAME: &'static str = "actix";
    type Ref<B: Behaviour<Self>> = actix::Addr<Cell<B>>;
    type System = ();

    fn system() {}

    async fn shutdown(_: ()) {}

    fn spawn<B: Behaviour<Self>>(
        _: &(),
        behaviour: B,
    ) -> impl Future<Output = Self::Ref<B>> + Send {
        std::future::ready(Cell(behaviour).start())
    }

    fn tell<B: Behaviour<Self>>(to: &Self::Ref<B>, msg: B::Msg) {
        to.do_send(Envelope(msg));
    }

    /// On a `System` of its own (current-thread), whatever the flavor.
    fn run<W>(_: Flavor, work: W) -> W::Output
    where
        W: Future + Send + 'static,
        W::Output: Send + 'static,
    {
        let system = actix::System::new();
        system
            .block_on(async { actix::spawn(work).await })
            .expect("the measured task finished")
    }

    fn ask(asks: u64) -> impl Future<Output = Duration> + Send {
        crate::core_table::ask_actix(asks)
    }

    fn skynet(leaves: u64) -> impl Future<Output = Duration> + Send {
        crate::core_table::skynet_actix(leaves)
    }
}
