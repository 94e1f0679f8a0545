// A factory is found by its key and builds one protocol from one arguments type:
// it cannot be generic.
use tapio::prelude::*;
use tapio::remote_behavior;

#[message(remote = "shop.job.v1")]
pub struct Job;

#[remote_behavior("shop.worker.v1")]
pub fn worker<T: Default>(_args: u32) -> Behavior<Job> {
    let _ = T::default();
    Behaviors::ignore()
}

fn main() {}
