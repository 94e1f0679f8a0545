//! User events reach only subscribers of their type, and unsubscribing is counted
//! (S49).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::T;
use tapio::prelude::*;
use tokio::time::timeout;

#[derive(Clone, Debug, PartialEq)]
pub struct Weather(pub u32);

#[derive(Clone, Debug, PartialEq)]
pub struct Noise(pub u32);

/// S49: the event stream carries events of the user's own types, typed: a publish
/// reaches only the subscribers of its type, says how many, and an unsubscribe
/// takes one out; an actor publishes from its handler.
#[tapio::test]
async fn s49_user_events_reach_only_their_type_and_unsubscribe_counts(system: ActorSystem) {
    let events = system.events();
    let mut w1 = events.subscribe::<Weather>();
    let w2 = events.subscribe::<Weather>();
    let mut noise = events.subscribe::<Noise>();
    assert_eq!(events.subscriber_count::<Weather>(), 2);
    assert_eq!(events.subscriber_count::<Noise>(), 1);
    assert_eq!(events.publish(Weather(1)), 2);
    w2.unsubscribe();
    assert_eq!(events.subscriber_count::<Weather>(), 1);
    let reporter = system
        .spawn(
            Behaviors::receive(|ctx, n: u32| {
                ctx.system().events().publish(Weather(n));
            }),
            "reporter",
        )
        .unwrap();
    reporter.tell(2_u32);
    assert_eq!(timeout(T, w1.recv()).await.unwrap(), Some(Weather(1)));
    assert_eq!(timeout(T, w1.recv()).await.unwrap(), Some(Weather(2)));
    assert_eq!(noise.try_recv(), None);
    assert_eq!(events.publish(Noise(3)), 1);
    assert_eq!(timeout(T, noise.recv()).await.unwrap(), Some(Noise(3)));
    assert_eq!(w1.try_recv(), None);
}
