// The future of an async functional handler must be `Send`: the actor's task may
// move to another worker at any `.await`. Holding an `Rc` across one is refused.
use std::rc::Rc;
use tapio::prelude::*;

fn main() {
    let _ = Behaviors::receive_async(async |_ctx, n: u64| {
        let shared = Rc::new(n);
        tokio::task::yield_now().await;
        let _ = *shared;
    });
}
