// `#[tapio::test]` accepts a body with or without the system, returning `()` or a
// `Result`.
use tapio::prelude::*;

#[tapio::test]
async fn with_the_system(system: ActorSystem) {
    let _ = system.spawn(Behaviors::ignore::<u64>(), "idle");
}

#[tapio::test]
async fn without_it() {}

#[tapio::test(worker_threads = 2, shutdown_timeout_ms = 500)]
async fn returning_a_result(system: ActorSystem) -> Result<(), tapio::SpawnError> {
    system.spawn(Behaviors::ignore::<u64>(), "idle")?;
    Ok(())
}

fn main() {}
