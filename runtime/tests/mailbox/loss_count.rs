//! Concurrent publishers never miscount what a slow subscriber lost (S49).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::guide_claims::*;
use std::time::Duration;
use tapio::events::Received;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

// S48: `with_max_wait` caps every bound; the failure says both the bound asked for
// and how long it really waited.
#[tapio::test(start_paused = true)]
#[should_panic(expected = "expected a message within 3600s, but nothing arrived within 100ms")]
async fn s48_max_wait_caps_an_absurd_bound(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system).with_max_wait(Duration::from_millis(100));
    probe.expect_message(Duration::from_secs(3600)).await;
}

// S49: with publishers on several threads and nobody reading, a bounded subscription
// keeps exactly its capacity, counts every other event as lost, and reports all of
// that loss through `recv_with_loss`: never counted twice, never missed.
#[tokio::test(start_paused = true)]
async fn s49_concurrent_publishers_never_miscount_the_loss() {
    let stream = tapio::EventStream::default();
    let mut readings = stream.subscribe_with_capacity::<Weather>(16).unwrap();
    let threads: Vec<_> = (0..4_u32)
        .map(|t| {
            let stream = stream.clone();
            std::thread::spawn(move || {
                for i in 0..1000_u32 {
                    stream.publish(Weather(t * 1000 + i));
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(readings.lost(), 4000 - 16);
    assert_eq!(readings.buffered(), 16);
    let (mut events, mut lost) = (0_u64, 0_u64);
    while events + lost < 4000 {
        match tokio::time::timeout(WAIT, readings.recv_with_loss()).await {
            Ok(Some(Received::Event(_))) => events += 1,
            Ok(Some(Received::Lost(n))) => lost += n,
            other => panic!("after {events} events and {lost} lost: {other:?}"),
        }
    }
    assert_eq!((events, lost), (16, 3984));
    assert_eq!(readings.try_recv(), None);
}
