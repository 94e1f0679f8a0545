//! Every record an actor logs carries its path (S8).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::common;

use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{TestConfig, TestProbe};

use common::capturing;

#[message]
pub struct Say(pub &'static str, pub ActorRef<()>);

// S8: a record logged in a handler, in a child's handler, in a setup and through
// `ctx.log()` all carry the path of the actor that logged it.
#[test]
fn records_logged_by_an_actor_carry_its_path() {
    let (captured, subscriber) = capturing(tracing::Level::INFO);
    // The test runs on a current-thread runtime, so every actor runs on this thread,
    // where this subscriber is the default.
    let _default = tracing::subscriber::set_default(subscriber);
    TestConfig::new("logging").run(|system: ActorSystem| async move {
        let mut done = TestProbe::<()>::new(&system);
        let parent = system
            .spawn(
                Behaviors::setup(|ctx| {
                    tracing::info!("parent is setting up");
                    let child: ActorRef<Say> = ctx
                        .spawn(
                            Behaviors::receive_message(|Say(text, done): Say| {
                                tracing::info!("child says {text}");
                                done.tell(());
                            }),
                            "child",
                        )
                        .unwrap();
                    Behaviors::receive(move |ctx, say: Say| {
                        tracing::info!(parent: &ctx.log(), "parent forwards {}", say.0);
                        child.tell(say);
                    })
                }),
                "parent",
            )
            .unwrap();
        parent.tell(Say("hi", done.actor_ref().clone()));
        done.expect_message(Duration::from_secs(1)).await;
    });
    let text = captured.text();
    for (path, record) in [
        ("/user/parent", "parent is setting up"),
        ("/user/parent", "parent forwards hi"),
        ("/user/parent/child", "child says hi"),
    ] {
        let line = text.lines().find(|line| line.ends_with(record));
        let line = line.unwrap_or_else(|| panic!("no record {record:?} in:\n{text}"));
        assert!(
            line.contains(&format!("actor{{path={path}}}")),
            "{record:?} is not tagged with {path}: {line}"
        );
    }
}

#[message]
pub struct Nap(pub ActorRef<()>);

/// Logs after an `.await`, which may resume it on another worker thread.
#[derive(Clone)]
struct Napper;

#[actor]
impl Napper {
    async fn nap(&mut self, Nap(done): Nap) {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        tracing::info!("awake after the await");
        done.tell(());
    }
}

// S8, on a multi-thread runtime: a record an `async` handler logs after an `.await`
// still carries the path, whichever worker it resumed on. (The binary's global
// subscriber is installed before this system spawns anything, as a program's `main`
// does; an actor spawned while no subscriber is installed runs without its span,
// which is what keeps an unobserved actor small.)
#[test]
fn an_async_handler_on_any_worker_logs_with_its_path() {
    let captured = crate::support::common::global_capture();
    TestConfig::new("logging_on_workers")
        .worker_threads(2)
        .run(|system: ActorSystem| async move {
            let mut done = TestProbe::<()>::new(&system);
            let napper = system.spawn(Napper, "napper").unwrap();
            for _ in 0..20 {
                napper.tell(Nap(done.actor_ref().clone()));
            }
            done.receive_messages(20, Duration::from_secs(5)).await;
        });
    let text = captured.text();
    let records: Vec<&str> = text
        .lines()
        .filter(|line| line.ends_with("awake after the await"))
        .collect();
    assert_eq!(records.len(), 20, "{text}");
    for line in records {
        assert!(line.contains("actor{path=/user/napper}"), "{line}");
    }
}
