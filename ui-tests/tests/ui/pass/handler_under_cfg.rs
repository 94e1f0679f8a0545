// `cfg` and `cfg_attr` on a handler apply to everything generated for it: its variant,
// its dispatch arm, its `Accepts` impls and its typed helper. A handler compiled out
// leaves no trace; one compiled in works as any other.
#![deny(warnings)]

use tapio::prelude::*;

#[message]
pub struct Ping;

#[message(reply = u64)]
pub struct GetCount;

#[message]
pub struct Debugging;

#[message]
pub struct Tracing;

#[derive(Clone, Default)]
pub struct Counter {
    count: u64,
}

#[actor(helpers)]
impl Counter {
    fn ping(&mut self, _: Ping) {
        self.count += 1;
    }

    #[cfg(any())]
    fn debugging(&mut self, _: Debugging) {}

    // Only the `cfg` of a `cfg_attr` is copied: `inline` is the method's alone.
    #[cfg_attr(all(), inline, cfg(any()))]
    fn tracing(&mut self, _: Tracing) {}

    #[cfg(all())]
    #[cfg_attr(any(), allow(dead_code))]
    fn get_count(&self, _: GetCount) -> u64 {
        self.count
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let system = ActorSystem::new("cfg").unwrap();
        let counter = system.spawn(Counter::default(), "counter").unwrap();
        counter.ping();
        counter.tell(Ping);
        assert_eq!(counter.get_count().await.unwrap(), 2);
        system.terminate().await;
    });
}
