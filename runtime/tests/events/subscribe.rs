//! Subscribing to the event stream and unsubscribing, as a new user first tries it
//! (S49).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tapio::prelude::*;

// S49: typed subscribe and unsubscribe: a subscriber sees events of its type only;
// after unsubscribing (or dropping) it sees nothing, and the count follows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s49_subscribe_and_unsubscribe() {
    #[derive(Debug, Clone, PartialEq)]
    struct Alarm(u32);
    #[derive(Debug, Clone, PartialEq)]
    struct Other;
    let system = ActorSystem::new("events").unwrap();
    let stream = system.events();
    assert_eq!(stream.subscriber_count::<Alarm>(), 0);
    let mut first = stream.subscribe::<Alarm>();
    let second = stream.subscribe::<Alarm>();
    let mut others = stream.subscribe::<Other>();
    assert_eq!(stream.subscriber_count::<Alarm>(), 2);
    assert_eq!(stream.publish(Alarm(1)), 2);
    assert_eq!(first.recv().await, Some(Alarm(1)));
    assert!(others.try_recv().is_none());
    second.unsubscribe();
    assert_eq!(stream.subscriber_count::<Alarm>(), 1);
    assert_eq!(stream.publish(Alarm(2)), 1);
    assert_eq!(first.recv().await, Some(Alarm(2)));
    drop(first);
    assert_eq!(stream.subscriber_count::<Alarm>(), 0);
    assert_eq!(stream.publish(Alarm(3)), 0);
    assert_eq!(stream.publish(Other), 1);
    assert_eq!(others.try_recv(), Some(Other));
    system.terminate().await;
}
