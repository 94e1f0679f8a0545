//! The worker of the `worker_pool_remote` example and its credit protocol: what it
//! is built with, what it is sent, what it answers, and its factory.
//!
//! A module of the library only, for the reason `two_nodes_messages` is: the
//! example file is compiled into the library and into its own binary, and a key
//! registered twice (a message's or a factory's) stops every system from starting.

use tapio::prelude::*;

/// What a sink is built with: how many items it will have outstanding at once.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SinkArgs {
    /// The grant: items the producer may send before hearing one is done.
    pub grant: u32,
}

/// A sink telling the producer how many more items it will take, and how many it
/// has finished.
///
/// It carries the sink's own ref, so the producer knows who is speaking and where
/// the next items go. That ref crosses the link towards the producer; the items
/// cross back through it.
#[message(remote = "example.worker-pool-remote.credit.v1")]
pub struct Credit {
    /// The sink granting the credit.
    pub worker: ActorRef<SinkMsg>,
    /// How many more items it will take.
    pub n: u32,
    /// How many it has finished so far.
    pub done: u32,
}

/// Introduces the producer to a sink, which answers with its opening grant.
#[message(remote = "example.worker-pool-remote.hello.v1")]
pub struct Hello {
    /// Where the sink's credit goes.
    pub reply_to: ActorRef<Credit>,
}

/// One unit of work, and where to grant the credit it frees.
#[message(remote = "example.worker-pool-remote.item.v1")]
pub struct Item {
    /// Which item.
    pub n: u32,
    /// Where the credit goes once it is done.
    pub reply_to: ActorRef<Credit>,
}

/// A worker that grants credit up front and hands one back per item finished.
#[derive(Debug)]
pub struct Sink {
    grant: u32,
    done: u32,
}

#[actor]
impl Sink {
    fn hello(&mut self, ctx: &mut Ctx<Self>, hello: Hello) {
        // The opening grant. Until it arrives the producer knows of no room here,
        // so it sends nothing.
        hello.reply_to.tell(Credit {
            worker: ctx.self_ref().clone(),
            n: self.grant,
            done: self.done,
        });
    }

    fn item(&mut self, ctx: &mut Ctx<Self>, item: Item) {
        self.done += 1;
        // One item finished, one place free: that is the whole protocol.
        item.reply_to.tell(Credit {
            worker: ctx.self_ref().clone(),
            n: 1,
            done: self.done,
        });
    }
}

/// The factory a spawner offers under the key `"sink"`.
#[remote_behavior("sink")]
pub fn sink(args: SinkArgs) -> Behavior<SinkMsg> {
    let grant = args.grant;
    Behaviors::setup(move |_| Sink { grant, done: 0 })
}
