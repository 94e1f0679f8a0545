//! Message adapters (S28): a ref of a foreign protocol whose messages are translated
//! inside the owner, on its user lane, in order with its other messages; a failed
//! translation is the owner's failure; the adapter stops with its owner, cannot be
//! watched or asked, and works as the reply ref of a request to another actor.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::outside::recv_within;
use std::time::Duration;

use tapio::prelude::*;
use tapio::testkit::{BehaviorTestKit, TestProbe};
use tapio::{AskError, DeadLetter, DeadLetterReason, MailboxConfig, OverflowStrategy};
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(10);

/// The foreign protocol: what a token service answers with.
#[message]
#[derive(Debug, Clone, PartialEq)]
pub struct Token(pub String);

/// What the token service accepts.
#[message]
pub struct Issue {
    pub for_whom: String,
    pub reply_to: ActorRef<Token>,
}

/// The owner's own protocol.
#[message]
#[derive(Debug, Clone, PartialEq)]
pub enum Session {
    Said(String),
    Authenticated(String),
    Login(ActorRef<Issue>),
}

#[derive(Debug, thiserror::Error)]
#[error("a token must not be empty")]
pub struct EmptyToken;

/// An owner that hands its adapter out on `adapters`, and reports what it handles.
fn owner(
    adapters: mpsc::UnboundedSender<ActorRef<Token>>,
    seen: mpsc::UnboundedSender<Session>,
) -> Behavior<Session> {
    Behaviors::setup(move |ctx| {
        let tokens = ctx.try_message_adapter(|Token(value)| {
            if value == "panic" {
                panic!("cannot translate this token");
            }
            if value.is_empty() {
                Err(EmptyToken)
            } else {
                Ok(Session::Authenticated(value))
            }
        });
        let _ = adapters.send(tokens.clone());
        let seen = seen.clone();
        Behaviors::receive_message(move |message: Session| {
            if let Session::Login(service) = &message {
                service.tell(Issue {
                    for_whom: "ada".into(),
                    reply_to: tokens.clone(),
                });
            }
            let _ = seen.send(message);
        })
    })
}

fn spawn_owner(system: &ActorSystem, name: &str, behavior: Behavior<Session>) -> ActorRef<Session> {
    system.spawn(behavior, name).unwrap()
}

// S28: what is told to the adapter is translated inside the owner and handled in the
// order it arrived among the owner's own messages.
#[tapio::test]
async fn s28_an_adapter_s_messages_keep_their_place_among_the_owner_s(system: ActorSystem) {
    let (adapters_tx, mut adapters) = mpsc::unbounded_channel();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let session = spawn_owner(&system, "session", owner(adapters_tx, seen_tx));
    let tokens = recv_within(&mut adapters, WAIT).await;
    assert!(
        tokens
            .path()
            .to_string()
            .starts_with("/user/session/$adapter-")
    );
    session.tell(Session::Said("a".into()));
    tokens.tell(Token("t-1".into()));
    session.tell(Session::Said("b".into()));
    tokens.tell(Token("t-2".into()));
    for expected in [
        Session::Said("a".into()),
        Session::Authenticated("t-1".into()),
        Session::Said("b".into()),
        Session::Authenticated("t-2".into()),
    ] {
        assert_eq!(recv_within(&mut seen, WAIT).await, expected);
    }
}

// S28: a translation that fails, or panics, is the owner's failure, under the
// owner's supervision: here a restart, after which the adapter works again.
#[tapio::test]
async fn s28_a_failed_translation_is_the_owner_s_failure(system: ActorSystem) {
    let (adapters_tx, mut adapters) = mpsc::unbounded_channel();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let supervised = Behaviors::supervise(owner(adapters_tx, seen_tx))
        .on_failure::<EmptyToken>(SupervisorStrategy::restart())
        .on_failure::<Panicked>(SupervisorStrategy::restart());
    let _session: ActorRef<Session> = system.spawn(supervised, "session").unwrap();
    let first = recv_within(&mut adapters, WAIT).await;
    first.tell(Token(String::new()));
    // The restart ran the setup again: a new adapter was handed out.
    let second = recv_within(&mut adapters, WAIT).await;
    second.tell(Token("panic".into()));
    let third = recv_within(&mut adapters, WAIT).await;
    // Every adapter of the type uses the current translation; the first still works.
    first.tell(Token("t-3".into()));
    third.tell(Token("t-4".into()));
    assert_eq!(
        recv_within(&mut seen, WAIT).await,
        Session::Authenticated("t-3".into())
    );
    assert_eq!(
        recv_within(&mut seen, WAIT).await,
        Session::Authenticated("t-4".into())
    );
}

// S28: the adapter stops with its owner: a message told to it afterwards is a dead
// letter naming the adapter.
#[tapio::test]
async fn s28_an_adapter_stops_with_its_owner(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let mut probe = TestProbe::<Session>::new(&system);
    let (adapters_tx, mut adapters) = mpsc::unbounded_channel();
    let (seen_tx, _seen) = mpsc::unbounded_channel();
    let session = spawn_owner(&system, "session", owner(adapters_tx, seen_tx));
    let tokens = recv_within(&mut adapters, WAIT).await;
    probe.watch(&session);
    system.stop(&session).unwrap();
    probe.expect_terminated(&session, WAIT).await;
    tokens.tell(Token("late".into()));
    let letter = tokio::time::timeout(WAIT, letters.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(letter.recipient(), tokens.path());
    assert_eq!(letter.reason(), &DeadLetterReason::RecipientStopped);
    assert_eq!(letter.take_message::<Token>(), Some(Token("late".into())));
}

// S28 + S51: an adapter cannot be asked, and watching it watches its owner: when
// the owner stops, the watcher hears `Terminated` naming the adapter it watched.
#[tapio::test]
async fn s28_s51_watching_an_adapter_watches_its_owner_and_asking_it_fails(system: ActorSystem) {
    #[message]
    pub struct HowMany {
        pub reply_to: ActorRef<u64>,
    }
    let (refs_tx, mut refs) = mpsc::unbounded_channel();
    let owner: ActorRef<u64> = system
        .spawn(
            Behaviors::setup(move |ctx| {
                let adapter: ActorRef<HowMany> =
                    ctx.message_adapter(|query: HowMany| query.reply_to.uid());
                let _ = refs_tx.send(adapter);
                Behaviors::receive_message(|_: u64| {})
            }),
            "owner",
        )
        .unwrap();
    let adapter = recv_within(&mut refs, WAIT).await;
    match adapter.ask_with(|reply_to| HowMany { reply_to }).await {
        Err(AskError::Adapter { target }) => assert_eq!(&target, adapter.path()),
        other => panic!("expected AskError::Adapter, got {other:?}"),
    }
    let (ended_tx, mut ended) = mpsc::unbounded_channel();
    let (watching_tx, mut watching) = mpsc::unbounded_channel();
    let watched = adapter.clone();
    let _watcher: ActorRef<u64> = system
        .spawn(
            Behaviors::setup(move |ctx| {
                ctx.watch(&watched);
                let _ = watching_tx.send(());
                let ended_tx = ended_tx.clone();
                Behaviors::receive_message(|_: u64| {}).on_signal(move |_, signal| {
                    if let Signal::Terminated(end) = signal {
                        let _ = ended_tx.send(end.actor().path().clone());
                    }
                })
            }),
            "watcher",
        )
        .unwrap();
    recv_within(&mut watching, WAIT).await;
    system.stop(&owner).unwrap();
    assert_eq!(&recv_within(&mut ended, WAIT).await, adapter.path());
}

// S28: an adapter is the reply ref of a request to another actor, which answers in
// its own protocol; the answer arrives translated.
#[tapio::test]
async fn s28_an_adapter_takes_the_reply_of_another_actor(system: ActorSystem) {
    let service: ActorRef<Issue> = system
        .spawn(
            Behaviors::receive_message(|issue: Issue| {
                issue
                    .reply_to
                    .tell(Token(format!("token-for-{}", issue.for_whom)));
            }),
            "tokens",
        )
        .unwrap();
    let (adapters_tx, _adapters) = mpsc::unbounded_channel();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let session = spawn_owner(&system, "session", owner(adapters_tx, seen_tx));
    session.tell(Session::Login(service));
    assert!(matches!(
        recv_within(&mut seen, WAIT).await,
        Session::Login(_)
    ));
    assert_eq!(
        recv_within(&mut seen, WAIT).await,
        Session::Authenticated("token-for-ada".into())
    );
}

// S28 with S29: what an adapter hands its owner is never refused by the owner's bound.
#[tapio::test]
async fn s28_a_full_mailbox_still_takes_what_an_adapter_hands_it(system: ActorSystem) {
    let mut letters = system.events().subscribe::<DeadLetter>();
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let (adapters_tx, mut adapters) = mpsc::unbounded_channel();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let behavior = {
        let gate = gate.clone();
        Behaviors::setup(move |ctx| {
            let _ =
                adapters_tx.send(ctx.message_adapter(|Token(value)| Session::Authenticated(value)));
            let gate = gate.clone();
            let seen = seen_tx.clone();
            let started = started_tx.clone();
            Behaviors::receive_message_async(async move |message: Session| {
                let _ = started.send(());
                let _ = gate.acquire().await;
                let _ = seen.send(message);
            })
        })
    };
    let mailbox = MailboxConfig::bounded(1, OverflowStrategy::DropNew).unwrap();
    let session: ActorRef<Session> = system.spawn_with(behavior, "full", mailbox).unwrap();
    let tokens = recv_within(&mut adapters, WAIT).await;
    session.tell(Session::Said("first".into()));
    recv_within(&mut started, WAIT).await;
    session.tell(Session::Said("queued".into())); // the mailbox is full from here on
    tokens.tell(Token("adapted".into()));
    session.tell(Session::Said("refused".into()));
    let letter = tokio::time::timeout(WAIT, letters.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(letter.reason(), &DeadLetterReason::MailboxFull);
    gate.add_permits(100);
    for expected in ["first", "queued"] {
        assert_eq!(
            recv_within(&mut seen, WAIT).await,
            Session::Said(expected.into())
        );
    }
    assert_eq!(
        recv_within(&mut seen, WAIT).await,
        Session::Authenticated("adapted".into())
    );
}

// S28: the `BehaviorTestKit` runs adapters as a live actor does, with no code of its
// own for them: what is told to the adapter is translated on the kit's next run.
#[test]
fn s28_the_behavior_test_kit_translates_what_its_adapters_get() {
    let (adapters_tx, mut adapters) = mpsc::unbounded_channel();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let mut kit = BehaviorTestKit::new(owner(adapters_tx, seen_tx));
    let tokens = adapters.try_recv().unwrap();
    tokens.tell(Token("t-9".into()));
    assert_eq!(kit.run_queued().unwrap(), 1);
    assert_eq!(
        seen.try_recv().unwrap(),
        Session::Authenticated("t-9".into())
    );
    tokens.tell(Token(String::new()));
    let failure = kit.run_queued().unwrap_err();
    assert!(failure.is::<EmptyToken>());
}
