// The protocol enum is `pub` unless `#[actor(vis = ..)]` says otherwise: rustc refuses
// a protocol less visible than a `pub` actor (E0446), and the macro cannot see the
// actor's visibility. Crate-private messages in it (an actor's internal ticks) are
// fine and raise no `private_interfaces` warning: outside the crate nobody can name
// them, so nobody can send them. The same holds for the typed helpers' trait.
#![deny(warnings)]

mod ticker {
    use tapio::prelude::*;

    #[message]
    pub struct Start;

    #[message]
    pub(crate) struct Tick;

    #[message]
    struct Internal(u64);

    #[derive(Clone, Default)]
    pub struct Ticker {
        ticks: u64,
    }

    #[actor(helpers)]
    impl Ticker {
        fn start(&mut self, _: Start) {}

        fn tick(&mut self, _: Tick) {
            self.ticks += 1;
        }

        fn internal(&mut self, _: Internal) {}
    }

    pub(crate) fn poke(ticker: &ActorRef<TickerMsg>) {
        ticker.tell(Tick);
        ticker.tell(Internal(1));
        ticker.tick();
        ticker.internal(Internal(2));
    }
}

fn main() {
    let _ = ticker::poke;
    let _ = ticker::Start;
    let _: Option<tapio::ActorRef<ticker::TickerMsg>> = None;
}
