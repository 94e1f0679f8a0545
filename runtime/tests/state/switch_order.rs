//! An ask queued behind a switch meets the next state, and a backlog stashed by two
//! states in a row is taken in arrival order (S23, S27, S34).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::T;
use std::time::Duration;
use tapio::AskError;
use tapio::prelude::*;
use tokio::time::Instant;

mod door {
    use tapio::prelude::*;

    #[message]
    pub struct Lock;

    #[message]
    pub struct Unlock;

    #[message(reply = u64)]
    pub struct Peek;

    #[derive(Clone, Default)]
    pub struct Door {
        pub peeks: u64,
    }

    #[actor(helpers, messages(Lock, Unlock, Peek), states(Open => Locked, Locked => Open))]
    impl Door {}

    #[derive(Clone)]
    pub struct Open;

    #[state(Door)]
    impl Open {
        fn lock(self, _: Lock) -> Next<Self> {
            Next::to(Locked)
        }

        fn peek(&mut self, door: &mut Door, _: Peek) -> u64 {
            door.peeks += 1;
            door.peeks
        }
    }

    #[derive(Clone)]
    pub struct Locked;

    #[state(Door)]
    impl Locked {
        fn unlock(self, _: Unlock) -> Next<Self> {
            Next::to(Open)
        }
    }
}

/// S34, S23: an ask queued behind a switch meets the state switched to: refused at
/// once (`NotHandled`, naming that state) although the state it was sent in handles
/// it; after switching back, the same helper is answered.
#[tapio::test]
async fn s34_s23_an_ask_queued_behind_a_switch_is_refused_by_the_state_it_meets(
    system: ActorSystem,
) {
    use door::*;
    let door = system
        .spawn(Machine::new(Door::default(), Open), "door")
        .unwrap();
    assert_eq!(door.peek().timeout(T).await.unwrap(), 1);
    door.lock();
    let started = Instant::now();
    let refused = door.peek().timeout(Duration::from_secs(20)).await;
    match refused {
        Err(AskError::NotHandled { target, state }) => {
            assert_eq!(&target, door.path());
            assert_eq!(state, "Locked");
        }
        other => panic!("expected NotHandled, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    door.unlock();
    assert_eq!(door.peek().timeout(T).await.unwrap(), 2);
}

mod relay {
    use tapio::prelude::*;

    #[message]
    pub struct Step;

    #[message]
    pub struct Finish;

    #[message(reply = Vec<String>)]
    pub struct Seen;

    #[message]
    pub struct Note(pub String);

    #[derive(Clone, Default)]
    pub struct Relay {
        pub seen: Vec<String>,
    }

    #[actor(
        messages(Step, Finish, Seen, Note),
        states(First => Second, Second => Third, Third)
    )]
    impl Relay {}

    #[derive(Clone)]
    pub struct First;

    #[state(Relay, unhandled = stash)]
    impl First {
        fn step(self, relay: &mut Relay, _: Step) -> Next<Self> {
            relay.seen.push("to second".into());
            Next::to(Second)
        }
    }

    #[derive(Clone)]
    pub struct Second;

    #[state(Relay, unhandled = stash)]
    impl Second {
        fn finish(self, relay: &mut Relay, _: Finish) -> Next<Self> {
            relay.seen.push("to third".into());
            Next::to(Third)
        }
    }

    #[derive(Clone)]
    pub struct Third;

    #[state(Relay)]
    impl Third {
        fn seen(&mut self, relay: &mut Relay, _: Seen) -> Vec<String> {
            relay.seen.clone()
        }

        fn note(&mut self, relay: &mut Relay, Note(text): Note) {
            relay.seen.push(text);
        }
    }
}

/// S34, S27, S21: what a stashing state holds is replayed into the next state, which
/// stashes it again; the state after that takes it all in arrival order, the ask
/// among it is answered, and what came after the switches follows.
#[tapio::test]
async fn s34_s27_a_backlog_stashed_by_two_states_in_a_row_is_taken_in_arrival_order(
    system: ActorSystem,
) {
    use relay::*;
    let relay = system
        .spawn(Machine::new(Relay::default(), First), "relay")
        .unwrap();
    relay.tell(Note("a".into()));
    let asked = relay.ask(Seen).timeout(T);
    relay.tell(Note("b".into()));
    relay.tell(Step);
    relay.tell(Note("c".into()));
    relay.tell(Finish);
    relay.tell(Note("d".into()));
    let seen = asked.await.unwrap();
    assert_eq!(seen, ["to second", "to third", "a"]);
    let all = relay.ask(Seen).timeout(T).await.unwrap();
    assert_eq!(all, ["to second", "to third", "a", "b", "c", "d"]);
}
