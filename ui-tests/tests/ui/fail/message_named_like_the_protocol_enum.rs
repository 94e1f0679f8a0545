// `#[actor]` generates the protocol enum `{Actor}Msg` (and, with `helpers`, the trait
// `{Actor}Ref`) beside the block: a message of that name is refused once, on its
// name, with how to rename either; the generated item steps aside, so nothing
// cascades (before: "defined multiple times", and conflicting impls of `Message`,
// `Accepts` and `Extract`, on the attribute).
use tapio::prelude::*;

#[message]
pub struct CounterMsg {
    pub by: u64,
}

#[derive(Clone)]
pub struct Counter;

#[actor]
impl Counter {
    fn add(&mut self, _: CounterMsg) {}
}

#[message]
pub struct PingerRef;

#[derive(Clone)]
pub struct Pinger;

#[actor(helpers)]
impl Pinger {
    fn ping(&mut self, _: PingerRef) {}
}

#[message]
pub struct DoorMsg;

pub struct Door;

#[actor(messages(DoorMsg), states(Open))]
impl Door {}

pub struct Open;

#[state(Door)]
impl Open {
    fn knock(&mut self, _: DoorMsg) {}
}

fn main() {
    let _: Option<ActorRef<CounterMsg>> = None;
}
