// `#[remote_behavior]` goes on a factory function with one arguments value and a
// behavior to return, under a valid key; each misuse is named on its own tokens.
use tapio::prelude::*;
use tapio::remote_behavior;

#[message(remote = "shop.job.v1")]
pub struct Job;

#[remote_behavior("not a key!")]
pub fn bad_key(_args: ()) -> Behavior<Job> {
    Behaviors::ignore()
}

#[remote_behavior("shop.two")]
pub fn two_arguments(_first: (), _second: u32) -> Behavior<Job> {
    Behaviors::ignore()
}

#[remote_behavior("shop.nothing")]
pub fn returns_nothing(_args: ()) {}

#[remote_behavior("shop.async")]
pub async fn builds_later(_args: ()) -> Behavior<Job> {
    Behaviors::ignore()
}

#[remote_behavior("shop.struct")]
pub struct NotAFunction;

#[remote_behavior]
pub fn no_key(_args: ()) -> Behavior<Job> {
    Behaviors::ignore()
}

fn main() {}
