//! Terminate called twice and from inside an actor, after which spawning is refused
//! (S1, S19).
//!
//! Every wait is bounded.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside;
use outside::{T, entries, ms, new_log as log, push};
use tapio::SpawnError;
use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tokio::time::timeout;

// S19 + S1: `terminate()` called twice from outside and once from inside a handler,
// with `when_terminated` awaited alongside: all end; each actor sees `PostStop` once,
// children first; then spawning anything (actor, anonymous actor, probe) is refused
// with `SystemTerminated`, stopping a stopped top-level actor does nothing, and a
// further `terminate` returns at once.
#[tapio::test(start_paused = true)]
async fn s19_s1_terminate_twice_and_from_inside_then_spawn_is_refused(system: ActorSystem) {
    let seen = log();
    let s = seen.clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let sk = s.clone();
                let _kid: ActorRef<u64> = ctx
                    .spawn(
                        Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                            if *signal == Signal::PostStop {
                                push(&sk, "kid post-stop");
                            }
                        }),
                        "kid",
                    )
                    .unwrap();
                let s = s.clone();
                Behaviors::receive_message(|_: u64| ()).on_signal(move |_, signal| {
                    if *signal == Signal::PostStop {
                        push(&s, "parent post-stop");
                    }
                })
            }),
            "parent",
        )
        .unwrap();
    let terminator = system
        .spawn(
            Behaviors::receive(|ctx, _: u64| {
                drop(ctx.system().terminate());
            }),
            "terminator",
        )
        .unwrap();
    terminator.tell(1_u64);
    let first = system.terminate();
    let second = system.terminate();
    let ended = timeout(T, async {
        tokio::join!(first, second, system.when_terminated())
    })
    .await
    .expect("every wait for the end ends");
    assert_eq!(ended.2, Ok(()));
    assert!(system.is_terminating());
    assert_eq!(system.live_actors(), 0);
    assert_eq!(entries(&seen), ["kid post-stop", "parent post-stop"]);
    let name = system.name().to_owned();
    assert_eq!(
        system
            .spawn(Behaviors::ignore::<u64>(), "late")
            .unwrap_err(),
        SpawnError::SystemTerminated {
            system: name.clone()
        }
    );
    assert_eq!(
        system
            .spawn_anonymous(Behaviors::ignore::<u64>())
            .unwrap_err(),
        SpawnError::SystemTerminated {
            system: name.clone()
        }
    );
    assert_eq!(
        TestProbe::<u64>::try_new(&system).err(),
        Some(SpawnError::SystemTerminated { system: name })
    );
    assert_eq!(system.stop(&parent), Ok(()));
    timeout(ms(10), system.terminate())
        .await
        .expect("a further terminate waits for the same, past end");
    assert_eq!(entries(&seen).len(), 2);
}
