// The typed helpers `#[actor]` generates on the ref, for every shape of message,
// compile with warnings denied and are called from another module by importing the
// helper trait by name.
#![deny(warnings, unused_qualifications, deprecated, missing_docs, unreachable_pub)]
//! Typed helpers.

use std::time::Duration;

/// Messages in a module of their own; their field types are not imported where the
/// actor is.
pub mod messages {
    use std::collections::BTreeMap;

    use tapio::prelude::*;

    /// Named fields: the helper takes `by`.
    #[message]
    pub struct Increment {
        /// How much.
        pub by: u64,
    }

    /// A request with no fields: the helper takes nothing and asks.
    #[message(reply = u64)]
    pub struct GetCount;

    /// Positional fields, one of a type the actor's module does not import.
    #[message(reply = String)]
    pub struct Describe(pub String, pub BTreeMap<u8, u8>);

    /// A generic message.
    #[message]
    pub struct Wrapped<T>(pub T);

    /// An enum: the helper takes it whole.
    #[message]
    pub enum Mode {
        /// Fast.
        Fast,
        /// Slow.
        Slow,
    }

    /// A private field: the helper takes the message whole.
    #[message]
    pub struct Token {
        secret: u64,
    }

    impl Token {
        /// A token.
        pub fn new(secret: u64) -> Self {
            Self { secret }
        }

        /// Its secret.
        pub fn secret(&self) -> u64 {
            self.secret
        }
    }
}

/// The actor.
pub mod counter {
    use tapio::prelude::*;

    use crate::messages::{Describe, GetCount, Increment, Mode, Token, Wrapped};

    /// Counts.
    #[derive(Clone, Debug, Default)]
    pub struct Counter {
        count: u64,
    }

    #[actor(helpers)]
    impl Counter {
        fn increment(&mut self, message: Increment) {
            self.count += message.by;
        }

        fn get_count(&mut self, _: GetCount) -> u64 {
            self.count
        }

        fn describe(&mut self, Describe(name, map): Describe) -> String {
            format!("{name}: {} {}", self.count, map.len())
        }

        fn wrapped(&mut self, Wrapped(by): Wrapped<u64>) {
            self.count += by;
        }

        fn mode(&mut self, _: Mode) {}

        fn token(&mut self, token: Token) {
            self.count += token.secret();
        }

        fn raw(&mut self, by: u64) {
            self.count += by;
        }

        #[handler(helper = reset_to)]
        fn set(&mut self, to: u32) {
            self.count = u64::from(to);
        }

        #[handler(no_helper)]
        fn quiet(&mut self, _: bool) {}
    }
}

use counter::{Counter, CounterRef};
use messages::{Mode, Token};
use tapio::prelude::*;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let system = ActorSystem::new("helpers")?;
    let counter = system.spawn(Counter::default(), "counter")?;
    counter.increment(1);
    counter.wrapped(2);
    counter.mode(Mode::Fast);
    counter.token(Token::new(3));
    counter.raw(4);
    counter.tell(true);
    let count = counter.get_count().timeout(Duration::from_secs(1)).await?;
    assert_eq!(count, 10);
    counter.reset_to(1);
    let text = counter.describe("count".to_owned(), Default::default()).await?;
    assert_eq!(text, "count: 1 0");
    system.terminate().await;
    Ok(())
}
