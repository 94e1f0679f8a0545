// The reference library's style: the reply ref travels in the message. Awaiting
// the ask for another type than the ref carries is refused.
use tapio::prelude::*;

#[message]
pub struct Shelf(pub u32);

#[message]
pub struct Lookup {
    pub title: String,
    pub reply_to: ActorRef<Shelf>,
}

pub struct Desk;

#[actor]
impl Desk {
    fn lookup(&mut self, _: Lookup) {}
}

async fn run(desk: ActorRef<DeskMsg>) {
    let _: Result<u64, _> = desk
        .ask_with(|reply_to| Lookup { title: String::new(), reply_to })
        .await;
}

fn main() {
    let _ = run;
}
