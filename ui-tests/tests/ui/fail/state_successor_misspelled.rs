// A misspelled successor in the table is one error, which names the state it was
// meant to be; that state is not also reported as never entered.
use tapio::prelude::*;

#[message]
pub struct Go;

pub struct Light;

#[actor(messages(Go), states(Red => Gren, Green => Red))]
impl Light {}

pub struct Red;
pub struct Green;

#[state(Light)]
impl Red {}

#[state(Light)]
impl Green {}

fn main() {}
