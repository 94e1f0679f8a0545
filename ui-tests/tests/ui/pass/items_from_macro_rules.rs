// Items a user's `macro_rules!` writes: a type it passes on as `$t:ty` reaches the
// attribute wrapped in an invisible group, and is read as the type inside (the
// actor's type, a handler's message and context, a signal, a state machine's
// messages, a state's data).
#![deny(warnings)]

use tapio::prelude::*;

#[message(reply = u64)]
pub struct Get;

#[message]
pub struct Add(pub u64);

#[derive(Clone, Default)]
pub struct Counter {
    n: u64,
}

macro_rules! counter_actor {
    ($actor:ty, $ctx:ty, $add:ty, $get:ty, $signal:ty) => {
        #[actor(helpers)]
        impl $actor {
            fn add(&mut self, _: $ctx, Add(by): $add) {
                self.n += by;
            }
            fn get(&self, _: $get) -> u64 {
                self.n
            }
            #[signal]
            fn on_signal(&mut self, _: $signal) {}
        }
    };
}

counter_actor!(Counter, &mut Ctx<Self>, Add, Get, &Signal);

pub struct Door;

macro_rules! door_machine {
    ($door:ty, $add:ty, $data:ty) => {
        #[actor(messages($add), states(Open => Shut, Shut))]
        impl $door {}

        pub struct Open;

        #[state(Door)]
        impl Open {
            fn add(self, _: $data, _: $add) -> Next<Self> {
                Next::to(Shut)
            }
        }

        pub struct Shut;

        #[state(Door)]
        impl Shut {}
    };
}

door_machine!(Door, Add, &mut Door);

fn main() {
    fn helpers(counter: ActorRef<CounterMsg>) {
        counter.add(1);
        let _ = counter.get();
    }
    let _ = helpers;
    let _: Option<ActorRef<DoorMsg>> = None;
}
