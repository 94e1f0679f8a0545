// The table is checked as a whole: a successor that is not a state, a state
// nothing switches to, and a state reachable only from states that cannot be
// reached; all at once, each on its name.
use tapio::prelude::*;

#[message]
pub struct Go;
#[message]
pub struct Stop;

pub struct Light;

#[actor(
    messages(Go),
    states(Red => Green | Purple, Green => Red, Lonely, Island => Shore, Shore => Island)
)]
impl Light {}

pub struct Red;
pub struct Green;
pub struct Lonely;
pub struct Island;
pub struct Shore;

// Every state of the table has its block, so only the table's errors show.
#[state(Light)]
impl Red {}
#[state(Light)]
impl Green {}
#[state(Light)]
impl Lonely {}
#[state(Light)]
impl Island {}
#[state(Light)]
impl Shore {}

fn main() {}
