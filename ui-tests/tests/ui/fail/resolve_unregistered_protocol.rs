// S35, its compile-time clause: a protocol that is not registered cannot be resolved
// as a remote ref. `resolve::<P>`, on the system or in an actor's context, needs
// every message of `P` registered for the wire, and the error names the message
// that is not and says how to register it.
use tapio::prelude::*;

#[message(remote = "shop.add.v1")]
pub struct Add(pub u64);

/// Not registered.
#[message]
pub struct Reset;

pub struct Counter;

#[actor]
impl Counter {
    fn add(&mut self, _: Add) {}
    fn reset(&mut self, _: Reset) {}
}

#[message]
pub struct Open;

pub struct Till;

#[actor]
impl Till {
    fn open(&mut self, ctx: &mut Ctx<Self>, _: Open) {
        let _counter = ctx.resolve::<CounterMsg>("tapio://shop@127.0.0.1:2552/user/counter");
    }
}

fn find(system: &ActorSystem) {
    let _counter = system.resolve::<CounterMsg>("tapio://shop@127.0.0.1:2552/user/counter");
}

fn main() {
    let _ = find;
}
