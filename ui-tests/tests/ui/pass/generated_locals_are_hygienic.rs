// Items named like the locals the macros generate (`message`, `reply`, `output`,
// `ctx`, `signal`, `f`) neither break nor change the expansion: the macros name their
// locals at the mixed site.
#![deny(warnings)]
#![allow(non_camel_case_types, dead_code)]

use tapio::prelude::*;

struct message;
struct reply;
struct output;
struct ctx;
struct signal;
struct f;
struct field0;

#[message]
pub struct Increment {
    pub by: u64,
}

#[message]
pub struct Pair(pub u64, pub u64);

#[message(reply = u64)]
pub struct GetCount;

#[derive(Clone, Default)]
pub struct Counter(u64);

#[actor(helpers)]
impl Counter {
    fn increment(&mut self, context: &mut Ctx<Self>, m: Increment) {
        let _ = context;
        self.0 += m.by;
    }

    fn pair(&mut self, Pair(a, b): Pair) {
        self.0 += a + b;
    }

    async fn get_count(&mut self, _: GetCount) -> u64 {
        self.0
    }

    #[signal]
    fn on_signal(&mut self, _: &mut Ctx<Self>, _: &Signal) {}
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let system = ActorSystem::new("hygiene")?;
    let counter = system.spawn(Counter::default(), "counter")?;
    counter.increment(1);
    counter.pair(1, 1);
    assert_eq!(counter.get_count().await?, 3);
    system.terminate().await;
    Ok(())
}
