// A factory's arguments cross the wire: a type serde cannot encode is refused
// where it is written.
use tapio::prelude::*;
use tapio::remote_behavior;

#[message(remote = "shop.job.v1")]
pub struct Job;

/// Neither `Serialize` nor `Deserialize`.
pub struct WorkerArgs {
    pub threads: u32,
}

#[remote_behavior("shop.worker.v1")]
pub fn worker(args: WorkerArgs) -> Behavior<Job> {
    let _ = args.threads;
    Behaviors::ignore()
}

fn main() {}
