// `spawn_remote::<doubler>` given another factory's arguments.
use tapio::prelude::*;
use tapio::remote_behavior;

#[message(remote = "dsl2.ui.doubler.args.v1")]
pub struct DoublerArgs {
    pub factor: u64,
}

#[message(remote = "dsl2.ui.other.args.v1")]
pub struct OtherArgs {
    pub name: String,
}

#[message(remote = "dsl2.ui.n.v1")]
pub struct N(pub u64);

#[remote_behavior("dsl2.ui.doubler.v1")]
pub fn doubler(args: DoublerArgs) -> Behavior<N> {
    let factor = args.factor;
    Behaviors::receive_message(move |N(n): N| tracing::info!(n = n * factor)).into()
}

async fn start(spawner: ActorRef<tapio::remote::spawn::SpawnerMsg>) {
    let _ = spawner.spawn_remote::<doubler>(OtherArgs { name: "x".into() }, "d1").await;
}

fn main() {}
