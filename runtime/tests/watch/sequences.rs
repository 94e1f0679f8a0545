//! Watch sequences on a dead actor, an actor watching itself, a stop before the first
//! message, and a probe watching twice (S18, S31, S48).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::lifecycle_corners::*;
use crate::support::outside;
use outside::{T, entries, ms, new_log as log, push};
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{DeadLetter, DeadLetterReason};

#[message]
enum W {
    Watch(ActorRef<u64>),
    WatchUnwatch(ActorRef<u64>),
    WatchUnwatchWatch(ActorRef<u64>),
    WatchTwice(ActorRef<u64>),
}

// S18 + ctx.watch/unwatch docs on an actor that has already stopped: watch then
// unwatch hears nothing ("no `Terminated` for it arrives after this call, even one
// already on its way"); watch, unwatch, watch hears exactly one; watching twice is
// watching once; once delivered, watching again is a new watch that hears it again.
#[tapio::test(start_paused = true)]
async fn s18_watch_sequences_on_a_dead_actor_hear_exactly_what_the_docs_say(system: ActorSystem) {
    let mut reports = TestProbe::<String>::new(&system);
    let report = reports.actor_ref().clone();
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&target);
    system.stop(&target).unwrap();
    probe.expect_terminated(&target, T).await;

    let r = report.clone();
    let watcher = system
        .spawn(
            Behaviors::receive(move |ctx, w: W| {
                let label = match w {
                    W::Watch(t) => {
                        ctx.watch(&t);
                        "w"
                    }
                    W::WatchUnwatch(t) => {
                        ctx.watch(&t);
                        ctx.unwatch(&t);
                        "wu"
                    }
                    W::WatchUnwatchWatch(t) => {
                        ctx.watch(&t);
                        ctx.unwatch(&t);
                        ctx.watch(&t);
                        "wuw"
                    }
                    W::WatchTwice(t) => {
                        ctx.watch(&t);
                        ctx.watch(&t);
                        "ww"
                    }
                };
                r.tell(format!("done {label}"));
            })
            .on_signal(move |_, signal| {
                if let Signal::Terminated(ended) = signal {
                    report.tell(format!("terminated {}", ended.actor().path().name()));
                }
            }),
            "watcher",
        )
        .unwrap();

    watcher.tell(W::WatchUnwatch(target.clone()));
    assert_eq!(reports.expect_message(T).await, "done wu");
    reports.expect_no_message(ms(200)).await;

    watcher.tell(W::WatchUnwatchWatch(target.clone()));
    assert_eq!(reports.expect_message(T).await, "done wuw");
    assert_eq!(reports.expect_message(T).await, "terminated target");
    reports.expect_no_message(ms(200)).await;

    watcher.tell(W::WatchTwice(target.clone()));
    assert_eq!(reports.expect_message(T).await, "done ww");
    assert_eq!(reports.expect_message(T).await, "terminated target");
    reports.expect_no_message(ms(200)).await;

    watcher.tell(W::Watch(target.clone()));
    assert_eq!(reports.expect_message(T).await, "done w");
    assert_eq!(reports.expect_message(T).await, "terminated target");
    reports.expect_no_message(ms(200)).await;
}

// S18 + S15: an actor that watches itself and then stops: it sees `PostStop` once and
// cannot hear its own `Terminated` afterwards (`PostStop` is "the last thing the actor
// sees"); others watching it hear its end; nothing hangs.
#[tapio::test(start_paused = true)]
async fn s18_an_actor_watching_itself_stops_cleanly(system: ActorSystem) {
    let mut reports = TestProbe::<String>::new(&system);
    let report = reports.actor_ref().clone();
    let me = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let me = ctx.self_ref().clone();
                ctx.watch(&me);
                let report = report.clone();
                Behaviors::receive_message(|_: u64| Behaviors::stopped()).on_signal(
                    move |_, signal| match signal {
                        Signal::Terminated(_) => report.tell("self-terminated".to_string()),
                        Signal::PostStop => report.tell("post-stop".to_string()),
                        _ => {}
                    },
                )
            }),
            "narcissus",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&me);
    me.tell(1_u64);
    assert_eq!(reports.expect_message(T).await, "post-stop");
    probe.expect_terminated(&me, T).await;
    reports.expect_no_message(ms(200)).await;
}

// S31 + S18: a top-level actor stopped right after it was spawned, with a message
// already queued: it ends (its watcher hears it once), the message is accounted for
// exactly once (handled, or a `RecipientStopped` letter), and if its setup ran, it
// saw `PostStop` exactly once.
#[tapio::test(start_paused = true)]
async fn s31_s18_a_stop_before_the_first_message_accounts_for_it_once(system: ActorSystem) {
    let seen = log();
    let s = seen.clone();
    let mut letters = system.events().subscribe::<DeadLetter>();
    let early = system
        .spawn(
            Behaviors::setup(move |_| {
                push(&s, "setup");
                let (s1, s2) = (s.clone(), s.clone());
                Behaviors::receive_message(move |n: u64| push(&s1, format!("handled {n}")))
                    .on_signal(move |_, signal| {
                        if *signal == Signal::PostStop {
                            push(&s2, "post-stop");
                        }
                    })
            }),
            "early",
        )
        .unwrap();
    let mut probe = TestProbe::<u64>::new(&system);
    probe.watch(&early);
    early.tell(1_u64);
    system.stop(&early).unwrap();
    probe.expect_terminated(&early, T).await;
    probe.expect_no_termination(ms(100)).await;
    let found = letters_for(&mut letters, early.path(), ms(200)).await;
    let log = entries(&seen);
    let handled = log.iter().filter(|e| e.starts_with("handled")).count();
    assert_eq!(handled + found.len(), 1, "log {log:?}, letters {found:?}");
    if let Some(letter) = found.first() {
        assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
        assert_eq!(letter.take_message::<u64>(), Some(1));
    }
    if log.contains(&"setup".to_string()) {
        assert_eq!(
            log.iter().filter(|e| *e == "post-stop").count(),
            1,
            "{log:?}"
        );
        assert_eq!(log.last().map(String::as_str), Some("post-stop"), "{log:?}");
    } else {
        assert!(log.is_empty(), "{log:?}");
    }
}

// S48 + S18: a probe that watches the same actor twice is told of its end once.
#[tapio::test(start_paused = true)]
async fn s48_a_probe_watching_twice_hears_one_end(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let target = system.spawn(Behaviors::ignore::<u64>(), "target").unwrap();
    probe.watch(&target);
    probe.watch(&target);
    system.stop(&target).unwrap();
    probe.expect_terminated(&target, T).await;
    probe.expect_no_termination(ms(500)).await;
}
