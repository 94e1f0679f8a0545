//! A tell after a stop is a dead letter that carries its value (S3, S31).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::edge_cases::*;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason};

// S3 + S31: a tell to an actor that has stopped returns normally, and the message is
// a dead letter with its value, its recipient and the reason.
#[tapio::test(start_paused = true)]
async fn s3_tell_after_stop_is_a_dead_letter_with_its_value(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<u64>::new(&system);
    let target = system.spawn(Behaviors::ignore::<u64>(), "gone").unwrap();
    probe.watch(&target);
    system.stop(&target).unwrap();
    probe.expect_terminated(&target, T).await;
    target.tell(42_u64);
    expect_dead_letter(
        &mut letters,
        target.path(),
        DeadLetterReason::RecipientStopped,
        42_u64,
    )
    .await;
}
