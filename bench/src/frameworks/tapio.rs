//! tapio: a behaviour runs in an actor value spawned under the system's `/user`
//! guardian with an unbounded mailbox (the default); ask is `ActorRef::ask` on an
//! `#[actor]` with a `#[message(reply = u64)]` request; skynet's nodes spawn their
//! children with `ctx.spawn_anonymous`, so the tree is a supervision tree.

use std::time::Duration;

use tapio::{Actor, ActorContext, ActorRef, ActorSystem, Behaviors, Handled, NoReply, Protocol};

use super::{Behaviour, Flow, Framework};

/// The framework, for `F: Framework`.
#[derive(Clone)]
pub struct Tapio;

/// What a behaviour's message travels in: a tapio `Message` with no reply.
pub struct Envelope<M>(M);

impl<M: Send + 'static> tapio::Message for Envelope<M> {
    type ReplySlot = NoReply;
}

/// The actor that runs a behaviour.
#[derive(Clone)]
pub struct Cell<B>(B);

impl<B: Behaviour<Tapio>> Protocol for Cell<B> {
    type Msg = Envelope<B::Msg>;
}

impl<B: Behaviour<Tapio>> Actor for Cell<B> {
    fn handle<'a>(
        &'a mut self,
        ctx: &'a mut ActorContext<Envelope<B::Msg>>,
        Envelope(msg): Envelope<B::Msg>,
    ) -> Handled<'a, Envelope<B::Msg>> {
        if self.0.handle(msg, &|| ctx.self_ref().clone()) == Flow::Stop {
            return Handled::ready(Behaviors::stopped());
        }
        Handled::ready(())
    }
}

impl Framework for Tapio {
    const NAME: &'static str = "tapio";
    type Ref<B: Behaviour<Self>> = ActorRef<Envelope<B::Msg>>;
    type System = ActorSystem;

    fn system() -> ActorSystem {
        ActorSystem::new("bench").expect("a system")
    }

    async fn shutdown(system: ActorSystem) {
        system.terminate().await;
    }

    fn spawn<B: Behaviour<Self>>(
        system: &ActorSystem,
        behaviour: B,
    ) -> impl Future<Output = Self::Ref<B>> + Send {
        // `started` runs in the setup, as the actor starts; the setup is `Fn`, for
        // restarts, so it starts from a clone.
        let actor = system
            .spawn_anonymous(Behaviors::setup(move |_| {
                let mut behaviour = behaviour.clone();
                behaviour.started();
                Cell(behaviour)
            }))
            .expect("spawned");
        std::future::ready(actor)
    }

    fn tell<B: Behaviour<Self>>(to: &Self::Ref<B>, msg: B::Msg) {
        to.tell(Envelope(msg));
    }

    fn ask(asks: u64) -> impl Future<Output = Duration> + Send {
        crate::core_table::ask_tapio(asks)
    }

    fn skynet(leaves: u64) -> impl Future<Output = Duration> + Send {
        crate::core_table::skynet_tapio(leaves)
    }
}
