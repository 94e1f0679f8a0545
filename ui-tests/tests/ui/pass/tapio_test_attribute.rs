// `#[tapio::test]` accepts a body with or without the system, returning `()` or a
// `Result`.
// Paths in full: a `#[test]` body is compiled only under `cfg(test)`, so an import
// used only there would be unused in this pass test's own build.

#[tapio::test]
async fn with_the_system(system: tapio::ActorSystem) {
    let _ = system.spawn(tapio::Behaviors::ignore::<u64>(), "idle");
}

#[tapio::test]
async fn without_it() {}

#[tapio::test(worker_threads = 2, shutdown_timeout_ms = 500)]
async fn returning_a_result(system: tapio::ActorSystem) -> Result<(), tapio::SpawnError> {
    system.spawn(tapio::Behaviors::ignore::<u64>(), "idle")?;
    Ok(())
}

fn main() {}
