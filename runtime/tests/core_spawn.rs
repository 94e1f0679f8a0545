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

// S2: whoever hears `Terminated` can reuse the name at once, on any worker: the
// name is freed before the end is announced.
#[tapio::test(worker_threads = 2)]
async fn the_name_is_free_by_the_time_terminated_arrives(system: ActorSystem) {
    let mut probe = TestProbe::<u64>::new(&system);
    for round in 0..200_u64 {
        let session = system
            .spawn(
                Behaviors::receive_message(|_: u64| Behaviors::stopped()),
                "session",
            )
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        probe.watch(&session);
        session.tell(round);
        probe.expect_terminated(&session, SECOND).await;
    }
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

// S2: a parent finds each live child by name, anonymous or not, lists them in spawn
// order, and a stopped child is no longer found under its name.
#[tapio::test(start_paused = true)]
async fn a_parent_finds_its_children_by_name(system: ActorSystem) {
    let mut report = TestProbe::<Vec<String>>::new(&system);
    let mut refs = TestProbe::<Vec<ActorRef<u64>>>::new(&system);
    let to = report.actor_ref().clone();
    let first_to = refs.actor_ref().clone();
    let parent = system
        .spawn(
            Behaviors::setup(move |ctx: &mut ActorContext<String>| {
                let named = ctx.spawn(Behaviors::ignore::<u64>(), "named")?;
                let first = ctx.spawn_anonymous(Behaviors::ignore::<u64>())?;
                let second = ctx.spawn_anonymous(Behaviors::ignore::<u64>())?;
                first_to.tell(vec![first.clone()]);
                let to = to.clone();
                Ok::<_, SpawnError>(Behaviors::receive(
                    move |ctx: &mut ActorContext<String>, name: String| {
                        if name == "stop-first" {
                            ctx.stop(&first).unwrap();
                            return Behaviors::same();
                        }
                        let found = ctx.child(&name).map(|c| c.path().name().to_owned());
                        let listed = ctx.children();
                        let mut line: Vec<String> =
                            listed.iter().map(|c| c.path().name().to_owned()).collect();
                        line.push(found.unwrap_or_else(|| "none".to_owned()));
                        assert_eq!(listed[0], named.erase());
                        let _ = &second;
                        to.tell(line);
                        Behaviors::same()
                    },
                ))
            }),
            "parent",
        )
        .unwrap();
    parent.tell("named".to_owned());
    let line = report.expect_message(SECOND).await;
    let (first, second) = (line[1].clone(), line[2].clone());
    assert!(first.starts_with('$') && second.starts_with('$') && first != second);
    assert_eq!(line, ["named", &first, &second, "named"]);
    parent.tell(second.clone());
    assert_eq!(report.expect_message(SECOND).await[3], second);
    for absent in ["nobody", "$", "$zzzzzz", "$a!"] {
        parent.tell(absent.to_owned());
        assert_eq!(report.expect_message(SECOND).await[3], "none", "{absent}");
    }
    // Its end frees the name before any watcher hears of it.
    let mut watcher = TestProbe::<u64>::new(&system);
    parent.tell("stop-first".to_owned());
    let stopped = refs.expect_message(SECOND).await.remove(0);
    watcher.watch(&stopped);
    watcher.expect_terminated(&stopped, SECOND).await;
    parent.tell(first.clone());
    assert_eq!(
        report.expect_message(SECOND).await,
        ["named", &second, "none"]
    );
}
