// `#[remote_behavior]` takes one string: `key = ".."` and two keys are refused on the
// offending token.
use tapio::prelude::*;
use tapio::remote_behavior;

#[message(remote = "shop.job.v1")]
pub struct Job;

#[remote_behavior(key = "shop.worker.v1")]
pub fn named(_args: ()) -> Behavior<Job> {
    Behaviors::ignore()
}

#[remote_behavior("shop.worker.v1", "shop.worker.v2")]
pub fn two(_args: ()) -> Behavior<Job> {
    Behaviors::ignore()
}

fn main() {}
