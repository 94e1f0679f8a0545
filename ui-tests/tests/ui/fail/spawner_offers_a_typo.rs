// A spawner's allowlist names factories by path: a typo does not compile.
use tapio::prelude::*;
use tapio::remote::spawn::Spawner;
use tapio::remote_behavior;

#[message(remote = "shop.job.v1")]
pub struct Job;

#[remote_behavior("shop.worker.v1")]
pub fn worker(_args: ()) -> Behavior<Job> {
    Behaviors::ignore()
}

fn main() {
    let _ = Spawner::offering::<wroker>().build();
}
