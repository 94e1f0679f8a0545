// A `macro_rules!` that writes `#[message]` and `#[actor]` items, expanded more than
// once: every hidden name the attributes generate is unique to one expansion, so
// two messages or two actors written at one spot of its body do not clash, in one
// module or in several, with the name given to the macro or spelled in its body.
#![deny(warnings)]

use tapio::prelude::*;

// Two messages from one spot of the body, one module.
macro_rules! messages {
    ($($name:ident),*) => { $( #[message] pub struct $name; )* };
}
messages!(Ping, Pong);

// The same message name, spelled in the body, in two modules.
macro_rules! tick_message {
    () => {
        #[message(reply = u64)]
        pub struct Tick;
    };
}
mod a {
    use tapio::prelude::*;
    tick_message!();
}
mod b {
    use tapio::prelude::*;
    tick_message!();
}

// The same message name, given to the macro, in two modules.
mod c {
    use tapio::prelude::*;
    messages!(Tock);
}
mod d {
    use tapio::prelude::*;
    messages!(Tock);
}

// Two actors from one spot of the body, one module, with typed helpers.
macro_rules! actors {
    ($($name:ident handles $msg:ty),*) => {
        $(
            #[derive(Clone)]
            pub struct $name;

            #[actor(helpers)]
            impl $name {
                fn handle(&mut self, _: $msg) {}
            }
        )*
    };
}
actors!(Pinger handles Ping, Ponger handles Pong);

// The same actor name, given to the macro, in a module and one nested in it.
mod e {
    use tapio::prelude::*;
    actors!(Pinger handles super::Ping);
    pub mod f {
        use tapio::prelude::*;
        actors!(Pinger handles super::super::Ping);
    }
}

// An actor whose name is spelled in the body, in two modules and in one nested in
// the first (whose textual scope sees what the first expansion left behind).
macro_rules! ticker {
    () => {
        #[derive(Clone)]
        pub struct Ticker;

        #[actor]
        impl Ticker {
            fn tick(&mut self, _: Tick) -> u64 {
                1
            }
        }
    };
}
mod g {
    use super::a::Tick;
    use tapio::prelude::*;
    ticker!();
    pub mod nested {
        use crate::a::Tick;
        use tapio::prelude::*;
        ticker!();
    }
}
mod h {
    use super::b::Tick;
    use tapio::prelude::*;
    ticker!();
}

fn main() {
    fn helpers(
        pinger: ActorRef<PingerMsg>,
        ponger: ActorRef<PongerMsg>,
        nested: ActorRef<e::PingerMsg>,
        deeper: ActorRef<e::f::PingerMsg>,
    ) {
        use e::PingerRef as _;
        use e::f::PingerRef as _;
        pinger.handle();
        ponger.handle();
        nested.handle();
        deeper.handle();
    }
    let _ = helpers;
    let _: Option<(ActorRef<g::TickerMsg>, ActorRef<g::nested::TickerMsg>, ActorRef<h::TickerMsg>)> = None;
    let _ = (a::Tick, b::Tick, c::Tock, d::Tock);
}
