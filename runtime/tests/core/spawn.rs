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
use tapio::{ActorPath, InvalidName, InvalidNameReason, SpawnError};

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

/// Why `system.spawn` refuses `name`, failing the test if it does not refuse it as
/// invalid or names another name in the error.
fn refusal(system: &ActorSystem, name: &str) -> InvalidName {
    match system.spawn(Behaviors::ignore::<u64>(), name) {
        Err(SpawnError::InvalidName(invalid)) => {
            assert_eq!(invalid.name, name);
            invalid
        }
        other => panic!("{name:?} was not refused as invalid: {other:?}"),
    }
}

// S2: every name that cannot stand as one segment of an actor URI is refused, with
// the rule it breaks, before anything is spawned.
#[tapio::test]
async fn s2_names_that_cannot_be_one_uri_segment_are_refused(system: ActorSystem) {
    use InvalidNameReason::*;
    let before = system.live_actors();
    let too_long = "a".repeat(ActorPath::MAX_NAME_LEN + 1);
    assert_eq!(refusal(&system, "").reason, Empty);
    assert_eq!(refusal(&system, ".").reason, DotSegment);
    assert_eq!(refusal(&system, "..").reason, DotSegment);
    assert_eq!(refusal(&system, "a/b").reason, Delimiter('/'));
    assert_eq!(refusal(&system, "x#1").reason, Delimiter('#'));
    assert_eq!(refusal(&system, "what?").reason, Delimiter('?'));
    assert_eq!(refusal(&system, "has space").reason, Whitespace(' '));
    assert_eq!(refusal(&system, "tab\there").reason, Whitespace('\t'));
    assert_eq!(refusal(&system, "bell\u{7}").reason, Control('\u{7}'));
    assert_eq!(refusal(&system, "$mine").reason, Reserved);
    assert_eq!(refusal(&system, &too_long).reason, TooLong { len: 256 });
    assert_eq!(refusal(&system, "ümlaut").reason, Character('ü'));
    assert_eq!(system.live_actors(), before, "nothing was spawned");
}

// S2: names at the edges of the rule are fine: dots beside other characters, `$`
// after the first character, and the longest name allowed.
#[tapio::test]
async fn s2_names_at_the_edges_of_the_rule_are_accepted(system: ActorSystem) {
    let longest = "a".repeat(ActorPath::MAX_NAME_LEN);
    for name in [
        ".a",
        "a.",
        "...",
        "a..b",
        "a$b",
        "x-_.*+:@&=,!~;'",
        &longest,
    ] {
        let actor = system
            .spawn(Behaviors::ignore::<u64>(), name)
            .unwrap_or_else(|e| panic!("{name:?} was refused: {e}"));
        assert_eq!(actor.path().name(), name);
    }
}

// S2: the error names the refused name, says what is wrong and what to do, and
// states the whole rule.
#[tapio::test]
async fn s2_an_invalid_name_error_states_the_rule(system: ActorSystem) {
    let error = system
        .spawn(Behaviors::ignore::<u64>(), "..")
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "invalid actor name \"..\": `.` and `..` mean \"here\" and \"one level up\" in a \
         path, so they cannot name an actor; pick a name with a letter or digit in it. An \
         actor name is one segment of its URI: 1 to 255 bytes of ASCII letters, digits \
         and `-_.*+:@&=,!~;'$`, neither `.` nor `..`, and not starting with `$`"
    );
    let too_long = refusal(&system, &"a".repeat(300)).to_string();
    assert!(
        too_long.contains("it is 300 bytes long, over the limit of 255 bytes"),
        "{too_long}"
    );
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
    // A child's name follows the same rule (S2).
    boss.tell(Hire("..".into(), reply.clone()));
    let refused = probe.expect_message(SECOND).await;
    assert!(
        matches!(&refused, Err(SpawnError::InvalidName(InvalidName { name, reason }))
        if name == ".." && *reason == InvalidNameReason::DotSegment),
        "{refused:?}"
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
