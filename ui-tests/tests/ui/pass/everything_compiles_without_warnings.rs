// Everything the macros generate compiles with warnings denied, including the lints
// a careful crate turns on.
#![deny(warnings, unused_qualifications, deprecated, missing_docs, unreachable_pub)]
//! A crate using every form the macros accept.

use tapio::prelude::*;

/// A plain message.
#[message]
pub struct Increment {
    /// How much.
    pub by: u64,
}

/// A request.
#[message(reply = u64)]
pub struct GetCount;

/// A generic message.
#[message]
pub struct Wrapped<T>(pub T);

/// An enum message.
#[message]
pub enum Mode {
    /// Fast.
    Fast,
    /// Slow.
    Slow,
}

/// A struct actor.
#[derive(Clone, Default)]
pub struct Counter {
    count: u64,
}

#[actor]
impl Counter {
    fn increment(&mut self, message: Increment) {
        self.count += message.by;
    }

    fn get_count(&self, _: GetCount) -> u64 {
        self.count
    }

    async fn wrapped(&mut self, ctx: &mut Ctx<Self>, Wrapped(n): Wrapped<u64>) -> Result<(), std::io::Error> {
        tokio::task::yield_now().await;
        self.count += n;
        let _ = ctx.path();
        Ok(())
    }

    fn mode(&mut self, _: Mode) -> Behavior<CounterMsg> {
        Behaviors::same()
    }

    #[signal]
    fn on_signal(&mut self, _ctx: &mut Ctx<Self>, _signal: &Signal) {}
}

/// An actor whose protocol stays in the crate.
#[derive(Clone)]
struct Quiet;

#[message]
struct Hush;

#[actor(vis = pub(crate), protocol = QuietProtocol)]
impl Quiet {
    fn hush(&mut self, _: Hush) {}
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let system = ActorSystem::new("pass").unwrap();
        let counter: ActorRef<CounterMsg> = system.spawn(Counter::default(), "counter").unwrap();
        counter.tell(Increment { by: 1 });
        counter.tell(GetCount);
        counter.tell(Wrapped(2_u64));
        counter.tell(Mode::Fast);
        let quiet: ActorRef<QuietProtocol> = system.spawn(Quiet, "quiet").unwrap();
        quiet.tell(Hush);
        system.terminate().await;
    });
}
