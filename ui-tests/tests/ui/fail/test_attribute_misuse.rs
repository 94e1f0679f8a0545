// `#[tapio::test]` needs an `async fn` taking at most the system.
use tapio::prelude::*;

#[tapio::test]
fn not_async(system: ActorSystem) {
    let _ = system;
}

#[tapio::test]
async fn too_many(system: ActorSystem, extra: u32) {
    let _ = (system, extra);
}

#[tapio::test(start_paused = true, worker_threads = 2)]
async fn paused_on_many_threads(system: ActorSystem) {
    let _ = system;
}

fn main() {}
