// A state machine's default helper named like a keyword (`Move` gives `move`) is
// written raw, `r#move`.
use tapio::prelude::*;

#[message]
pub struct Move;

pub struct Conn;
pub struct Idle;

#[actor(helpers, messages(Move), states(Idle))]
impl Conn {}

#[state(Conn)]
impl Idle {
    fn on_move(&mut self, _: Move) {}
}

fn main() {}
