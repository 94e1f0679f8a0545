// Only a request can be asked: a plain message declares no reply type.
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

    fn get_count(&mut self, _: GetCount) -> u64 {
        0
    }
}

async fn ask(pinger: ActorRef<PingerMsg>) {
    let _ = pinger.ask(Ping).await;
}

fn main() {
    let _ = ask;
}
