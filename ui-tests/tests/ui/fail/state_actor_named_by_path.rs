// `#[state]` names its actor by a single name in scope: a path is refused with an
// error that says how to bring the name in (the state then has no block, which is
// said too).
mod door {
    use tapio::prelude::*;

    #[message]
    pub struct Push;

    pub struct Door;

    #[actor(messages(Push), states(Closed))]
    impl Door {}

    pub struct Closed;
}

mod states {
    use super::door::{Closed, Push};
    use tapio::prelude::*;

    #[state(super::door::Door)]
    impl Closed {
        fn push(&mut self, _: Push) {}
    }
}

fn main() {}
