// `unhandled = stach`: the only value is `stash`.
use tapio::prelude::*;

#[message]
pub struct Go;

#[derive(Clone)]
pub struct Walker;

#[actor(messages(Go), states(Idle))]
impl Walker {}

#[derive(Clone)]
pub struct Idle;

#[state(Walker, unhandled = stach)]
impl Idle {}

fn main() {}
