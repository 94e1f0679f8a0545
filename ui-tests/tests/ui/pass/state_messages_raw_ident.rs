// A raw identifier in `messages(..)` (`r#type`) names its helper `r#type`; the macro
// once panicked on it.
use tapio::prelude::*;

#[allow(non_camel_case_types)]
#[message]
pub struct r#type;

pub struct Conn;
pub struct Idle;

#[actor(messages(r#type), states(Idle))]
impl Conn {}

#[state(Conn)]
impl Idle {
    fn ty(&mut self, _: r#type) {}
}

fn main() {}
