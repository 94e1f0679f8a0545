// A struct actor spawned by value must be `Clone` (a restart starts again from it).
use tapio::prelude::*;

#[message]
pub struct Ping;

pub struct Pinger;

#[actor]
impl Pinger {
    fn ping(&mut self, _: Ping) {}
}

async fn start(system: ActorSystem) {
    let _ = system.spawn(Pinger, "pinger");
}

fn main() {
    let _ = start;
}
