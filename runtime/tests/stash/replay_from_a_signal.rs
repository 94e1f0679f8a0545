//! Stash: an unstash from a signal handler replays in arrival order (S27, S18).

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::with_other_features::*;
use tapio::prelude::*;
use tapio::testkit::TestProbe;

// S27 + S18: `unstash_all` returned from a signal handler (the docs allow it): an
// actor that holds its work until a dependency it watches stops replays it when the
// `Terminated` comes, in arrival order, then handles what comes next.
#[tapio::test]
async fn s27_s18_an_unstash_from_a_terminated_signal_replays_in_order(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let report = probe.actor_ref().clone();
    let (dependency, _rx) = note_sink(&system, "dependency");
    let watched = dependency.clone();
    let waiter = system
        .spawn(
            Behaviors::with_stash(10, move |stash| {
                let (report, watched) = (report.clone(), watched.clone());
                Behaviors::setup(move |ctx: &mut ActorContext<Held>| {
                    ctx.watch(&watched);
                    let (holding, replaying, report) =
                        (stash.clone(), stash.clone(), report.clone());
                    Behaviors::receive_message(move |held: Held| {
                        holding.stash(held).map(|()| Behaviors::same())
                    })
                    .on_signal(move |_, signal: &Signal| match signal {
                        Signal::Terminated(_) => replaying.unstash_all(reporting(report.clone())),
                        _ => Behaviors::same(),
                    })
                })
            })
            .unwrap(),
            "waiter",
        )
        .unwrap();
    for n in 1..=3 {
        waiter.tell(Held::Item(n));
    }
    probe.expect_no_message(ms(50)).await;
    system.stop(&dependency).unwrap();
    waiter.tell(Held::Item(4));
    assert_eq!(probe.receive_messages(4, BOUND).await, [1, 2, 3, 4]);
    waiter.tell(Held::Item(5));
    assert_eq!(probe.expect_message(BOUND).await, 5);
}
