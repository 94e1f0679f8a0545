// An `#[actor]` handler's context, `Ctx<Self>`, copied into a state: there `Self` is
// the state, and one error says to name the actor.
use tapio::prelude::*;

#[message]
pub struct Go;

pub struct Walker;

#[actor(messages(Go), states(Idle))]
impl Walker {}

pub struct Idle;

#[state(Walker)]
impl Idle {
    fn go(&mut self, _ctx: &mut Ctx<Self>, _: Go) {}
}

fn main() {}
