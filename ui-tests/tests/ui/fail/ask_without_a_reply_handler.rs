// A message that is its own protocol cannot be asked: no handler would receive the
// reply ref, so the ask could only ever fail.
use tapio::prelude::*;

#[message]
pub struct Count(pub u64);

#[message(reply = Count)]
pub struct GetCount;

async fn read(counter: ActorRef<GetCount>) {
    let _ = counter.ask(GetCount).await;
}

fn main() {
    let _ = read;
}
