// Asking an actor for a request it has no handler for. With exactly one handler,
// rustc would infer the request from the lone `Answers` impl and complain about the
// wrong type; the message must say that the protocol does not accept it.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[message(reply = u64)]
pub struct GetCount;

#[derive(Clone)]
pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: Ping) {}
}

async fn ask(pinger: ActorRef<PingerMsg>) {
    let _ = pinger.ask(GetCount).await;
}

fn main() {
    let _ = ask;
}
