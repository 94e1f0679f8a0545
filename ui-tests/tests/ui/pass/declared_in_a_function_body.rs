// A message and an actor declared inside a function body compile, with helpers.
use tapio::prelude::*;
fn main() {
    #[message]
    struct Local {
        pub n: u64,
    }
    struct Holder;
    #[actor(helpers)]
    impl Holder {
        fn local(&mut self, m: Local) {
            let _ = m.n;
        }
    }
    let _ = |r: ActorRef<HolderMsg>| r.local(3);
}
