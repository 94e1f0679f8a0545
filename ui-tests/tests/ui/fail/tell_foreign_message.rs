// S3 (C): telling an actor a message its protocol does not contain does not compile,
// and the error names the protocol and the message.
use tapio::prelude::*;

#[message]
pub struct Increment;

#[message]
pub struct Shelf;

#[derive(Clone, Default)]
pub struct Counter;

#[actor]
impl Counter {
    fn increment(&mut self, _: Increment) {}
}

fn main() {
    fn send(counter: ActorRef<CounterMsg>) {
        counter.tell(Shelf);
    }
    let _ = send;
}
