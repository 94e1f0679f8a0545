// An async handler runs on the actor's task, which may move between threads: a
// value that is not `Send` held across an `.await` is refused on the handler.
use std::rc::Rc;

use tapio::prelude::*;

#[message]
pub struct Tick;

pub struct Clock {
    ticks: u64,
}

#[actor]
impl Clock {
    async fn tick(&mut self, _: Tick) {
        let shared = Rc::new(self.ticks);
        tokio::task::yield_now().await;
        self.ticks = *shared + 1;
    }
}

fn main() {}
