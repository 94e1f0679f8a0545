// S21 (C): an ask resolves to the reply type its request declares; a caller that
// expects another type does not compile.
use tapio::prelude::*;

#[message]
pub struct Count(pub u64);

#[message(reply = Count)]
pub struct GetCount;

#[derive(Clone)]
pub struct Counter;

#[actor]
impl Counter {
    fn get(&mut self, _: GetCount) -> Count {
        Count(0)
    }
}

async fn read(counter: ActorRef<CounterMsg>) {
    let n: u64 = counter.ask(GetCount).await.unwrap();
    let _ = n;
}

fn main() {
    let _ = read;
}
