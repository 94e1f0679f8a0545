// One mistake in a block, one error: the other handlers are still generated, so the
// code that uses them compiles and adds no errors of its own.
use tapio::prelude::*;

#[message]
pub struct Ping;

#[message]
pub struct Pong;

#[derive(Clone)]
pub struct Player;

#[actor]
impl Player {
    fn ping(&mut self, _: Ping) {}

    fn pong(self, _: Pong) {}
}

fn serve(player: ActorRef<PlayerMsg>) {
    player.tell(Ping);
}

fn main() {
    let _ = serve;
}
