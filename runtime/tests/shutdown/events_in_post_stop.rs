//! Events published in `PostStop` are read before the subscription ends (S19, S49).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::T;
use tapio::prelude::*;
use tokio::time::timeout;

/// S49, S19, S15: events published from `PostStop` while the system terminates
/// are all read by a subscription made before, and only then does it end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s49_s19_events_published_in_post_stop_are_read_before_the_subscription_ends() {
    #[derive(Clone, Debug, PartialEq)]
    struct Bye(u64);
    let system = ActorSystem::new("byes").unwrap();
    let mut byes = system.events().subscribe::<Bye>();
    for n in 0..10_u64 {
        system
            .spawn(
                Behaviors::receive_message(|_: u64| ()).on_signal(move |ctx, signal| {
                    if *signal == Signal::PostStop {
                        ctx.system().events().publish(Bye(n));
                    }
                }),
                &format!("leaver-{n}"),
            )
            .unwrap();
    }
    timeout(T, system.terminate()).await.unwrap();
    let mut got = Vec::new();
    for _ in 0..10 {
        let bye = timeout(T, byes.recv())
            .await
            .expect("within the bound")
            .expect("all ten before the end");
        got.push(bye.0);
    }
    got.sort_unstable();
    assert_eq!(got, (0..10).collect::<Vec<_>>());
    assert!(byes.try_recv().is_none());
}
