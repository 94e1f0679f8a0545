// A request's reply is sent back as a message: its type must be one.
use tapio::prelude::*;

pub struct Total(pub u64);

#[message(reply = Total)]
pub struct GetTotal;

fn main() {}
