//! S8 under a subscriber set for one thread (`set_default`, as tests often do),
//! while another test of the same binary spawns actors where no subscriber listens.
//!
//! tracing-core 0.1 keeps each callsite's interest from the first time any thread
//! reaches it, and while exactly one subscriber exists it asks the thread that got
//! there first (tokio-rs/tracing#3611): the thread with none cached "never" for the
//! actor span's callsite, and the scoped test's actor logged without its path (7 to
//! 11 of 40 runs of this binary). An actor whose span comes out disabled where a
//! subscriber is set now has tracing look at its callsites again, once a system.

#![allow(missing_docs, unreachable_pub, clippy::unwrap_used)]

#[path = "../support/mod.rs"]
mod support;

use crate::support::common;

use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{TestConfig, TestProbe};

const T: Duration = Duration::from_secs(5);

/// Spawns, tells and stops actors on a multi-thread runtime with no subscriber at all:
/// the thread that reaches the actor span's callsite with nobody listening. Every
/// actor ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s8_actors_spawned_where_nobody_listens() {
    let system = ActorSystem::new("unobserved").unwrap();
    for round in 0..3_000 {
        let actor = system
            .spawn(
                Behaviors::receive_message(|_: u64| tracing::info!("an unobserved actor logs")),
                &format!("q{round}"),
            )
            .unwrap();
        actor.tell(1_u64);
        system.stop(&actor).unwrap();
        if round % 100 == 0 {
            tokio::task::yield_now().await;
        }
    }
    system.terminate().await;
    assert_eq!(system.live_actors(), 0);
}

/// S8: 300 rounds, each with a fresh scoped subscriber installed before its system is
/// built and its actor spawned (as README.md asks), on a current-thread runtime:
/// every record the actor logs must carry `path=/user/loud`.
#[test]
fn s8_a_scoped_subscriber_sees_every_actor_record_tagged() {
    let mut untagged = Vec::new();
    for round in 0..300 {
        let (captured, subscriber) = common::capturing(tracing::Level::INFO);
        let _default = tracing::subscriber::set_default(subscriber);
        TestConfig::new("scoped").run(|system: ActorSystem| async move {
            let mut probe = TestProbe::<String>::new(&system);
            let to = probe.actor_ref().clone();
            let actor = system
                .spawn(
                    Behaviors::receive_message(move |_: u64| {
                        tracing::info!("s8x-mark said");
                        to.tell("ok".to_string());
                    }),
                    "loud",
                )
                .unwrap();
            actor.tell(1_u64);
            probe.expect_message(T).await;
        });
        let text = captured.text();
        let line = text
            .lines()
            .find(|l| l.ends_with("s8x-mark said"))
            .unwrap_or_else(|| panic!("round {round}: no record in:\n{text}"))
            .to_string();
        if !line.contains("path=/user/loud") {
            untagged.push(format!("round {round}: {line}"));
        }
    }
    assert!(untagged.is_empty(), "untagged records: {untagged:#?}");
}
