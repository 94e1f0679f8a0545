//! Spawning: names unique among live siblings, invalid names refused, anonymous
//! names, and a name freed when its actor has stopped (S2).

// Test crates declare `pub` messages for `#[actor]`'s public protocol enums; the
// library's documentation lints do not apply to them, nor does its ban on unwrapping.
#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::TestProbe;
use tapio::{InvalidName, SpawnError};

const SECOND: Duration = Duration::from_secs(1);

// S2: a second live sibling with the same name is a typed error naming the problem,
// and nothing is spawned.
#[tapio::test]
async fn a_duplicate_live_sibling_name_is_refused(system: ActorSystem) {
    let first = system.spawn(Behaviors::ignore::<u64>(), "worker").unwrap();
    let second = system.spawn(Behaviors::ignore::<u64>(), "worker");
    let error = second.err().unwrap();
    assert!(matches!(&error, SpawnError::NameTaken { name, parent }
        if name == "worker" && parent.to_string() == "/user"));
    assert_eq!(
        error.to_string(),
        "an actor named \"worker\" is already running under /user: pick another name, \
         or wait for the running one's `Terminated` before reusing it"
    );
    // Only the first exists: the system still has one actor named worker plus guardians.
    assert_eq!(system.live_actors(), 3);
    let _ = first;
}

// S2: invalid names are refused before anything is spawned, each with its reason.
#[tapio::test]
async fn invalid_names_are_refused_with_their_reason(system: ActorSystem) {
    let cases = [
        ("", "cannot be empty"),
        ("a/b", "`/` separates the elements of a path"),
        ("x#1", "`#` separates the incarnation uid"),
        ("$mine", "reserved for anonymous actors"),
        ("has space", "cannot contain whitespace"),
        ("tab\there", "cannot contain whitespace"),
        ("ümlaut", "only ASCII letters, digits"),
    ];
    let before = system.live_actors();
    for (name, reason) in cases {
        let error = system.spawn(Behaviors::ignore::<u64>(), name).err();
        match error {
            Some(SpawnError::InvalidName(InvalidName {
                name: refused,
                reason: why,
            })) => {
                assert_eq!(refused, name);
                assert!(why.contains(reason), "{name:?}: {why}");
            }
            other => panic!("{name:?} was not refused as invalid: {other:?}"),
        }
    }
    assert_eq!(system.live_actors(), before, "nothing was spawned");
}

// S2: `spawn_anonymous` picks a name, distinct among siblings and reserved (`$`).
#[tapio::test]
async fn anonymous_actors_get_distinct_reserved_names(system: ActorSystem) {
    let names: HashSet<String> = (0..100)
        .map(|_| {
            let actor = system.spawn_anonymous(Behaviors::ignore::<u64>()).unwrap();
            actor.path().name().to_owned()
        })
        .collect();
    assert_eq!(names.len(), 100);
    assert!(names.iter().all(|name| name.starts_with('$')));
}

// S2: the name frees up when the actor has stopped; the new actor is a new
// incarnation (another uid), and refs to the old one do not reach the new one.
#[tapio::test(start_paused = true)]
async fn a_name_frees_up_when_its_actor_has_stopped(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    let old = system
        .spawn(
            Behaviors::receive_message(|_: u64| Behaviors::stopped()),
            "session",
        )
        .unwrap();
    probe.watch(&old);
    old.tell(0_u64);
    probe.expect_terminated(&old, SECOND).await;

    let to = probe.actor_ref().clone();
    let new = system
        .spawn(
            Behaviors::receive_message(move |n: u64| to.tell(n)),
            "session",
        )
        .unwrap();
    assert_eq!(new.path(), old.path());
    assert_ne!(new.uid(), old.uid());
    assert_ne!(new, old);
    old.tell(1_u64);
    new.tell(2_u64);
    assert_eq!(probe.expect_message(SECOND).await, 2);
    probe.expect_no_message(Duration::from_millis(50)).await;
}

// Children: unique among their own siblings, and listed by their parent.
#[tapio::test]
async fn children_have_names_of_their_own(system: ActorSystem) {
    #[message]
    pub struct Hire(String, ActorRef<Result<String, SpawnError>>);

    let mut probe = TestProbe::<Result<String, SpawnError>>::new(&system);
    let boss = system
        .spawn(
            Behaviors::receive(|ctx, Hire(name, reply): Hire| {
                let hired = ctx
                    .spawn(Behaviors::ignore::<u64>(), &name)
                    .map(|child| child.path().to_string());
                reply.tell(hired);
            }),
            "boss",
        )
        .unwrap();
    let reply = probe.actor_ref().clone();
    boss.tell(Hire("ada".into(), reply.clone()));
    assert_eq!(
        probe.expect_message(SECOND).await,
        Ok("/user/boss/ada".into())
    );
    boss.tell(Hire("ada".into(), reply.clone()));
    let refused = probe.expect_message(SECOND).await;
    assert!(
        matches!(refused, Err(SpawnError::NameTaken { ref name, ref parent })
        if name == "ada" && parent.to_string() == "/user/boss")
    );
    // The same name is free under another parent.
    assert!(system.spawn(Behaviors::ignore::<u64>(), "ada").is_ok());
}
