// The runtime's own messages `&'static str`, `()` and tuples have handlers, in an
// `#[actor]` block and in a state machine: their variants are `str`, `Unit` and
// `Tuple`, and their helpers take them whole (the unit's takes nothing).
#![deny(warnings)]

use tapio::prelude::*;

#[derive(Clone)]
pub struct Log;

#[actor(helpers)]
impl Log {
    fn line(&mut self, _: &'static str) {}
    fn tick(&mut self, (): ()) {}
    fn pair(&mut self, (_, _): (u64, bool)) {}
}

pub struct Door;

#[actor(helpers, messages(&'static str, (), (u8, u8)), states(Open))]
impl Door {}

pub struct Open;

#[state(Door)]
impl Open {
    fn line(&mut self, _: &'static str) {}
    fn tick(&mut self, _: ()) {}
    fn pair(&mut self, _: (u8, u8)) {}
}

fn main() {
    fn send(log: ActorRef<LogMsg>, door: ActorRef<DoorMsg>) {
        log.tell("text");
        log.tell(());
        log.tell((1_u64, true));
        log.line("text");
        log.tick();
        log.pair((1, true));
        door.str("text");
        door.unit();
        door.tuple((1, 2));
    }
    let _ = send;
    let _ = [
        LogMsg::str("text", Default::default()),
        LogMsg::Unit((), Default::default()),
        LogMsg::Tuple((1, true), Default::default()),
    ];
}
