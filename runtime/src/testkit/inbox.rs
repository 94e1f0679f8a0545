//! `TestInbox`: a ref that collects what is sent to it, for a `BehaviorTestKit` test.
//!
//! A `TestInbox` is a detached cell at `/user/{name}` of a detached system, with no
//! actor behind it: what is sent to it waits in its `DetachedMailbox` for the test.

use std::fmt;

use crate::actor::ActorSystem;
use crate::actor::system::{Outer, SystemShared};
use crate::actor::{ActorPath, ActorRef, Address, Parent, validate_name};
use crate::ground::message::Message;
use crate::ground::path::InvalidName;
use crate::net::remote::links::Links;
use crate::testkit::kit::DetachedMailbox;
use crate::testkit::recorder::detached_cell;

/// A ref with no actor behind it: what is sent to it waits here for the test to read.
///
/// Hand [`TestInbox::actor_ref`] to a behavior under a
/// [`BehaviorTestKit`](crate::testkit::BehaviorTestKit), then read what it sent.
/// Needs no runtime.
///
/// # Examples
///
/// ```
/// use tapio::prelude::*;
/// use tapio::testkit::{BehaviorTestKit, TestInbox};
///
/// #[message]
/// pub struct Greet { pub whom: String, pub reply_to: ActorRef<String> }
///
/// let mut replies = TestInbox::<String>::new();
/// let mut kit = BehaviorTestKit::new(Behaviors::receive_message(|m: Greet| {
///     m.reply_to.tell(format!("hello, {}!", m.whom));
/// }));
/// kit.run(Greet { whom: "world".into(), reply_to: replies.actor_ref().clone() }).unwrap();
/// replies.expect_message("hello, world!".to_string());
/// assert!(!replies.has_messages());
/// ```
pub struct TestInbox<M: Message> {
    actor: ActorRef<M>,
    mailbox: DetachedMailbox<M>,
}

impl<M: Message> TestInbox<M> {
    /// An inbox at `/user/inbox`.
    pub fn new() -> Self {
        Self::at("inbox")
    }

    /// An inbox at `/user/{name}`, for a test that reads paths.
    ///
    /// # Errors
    ///
    /// [`InvalidName`] for a name an actor could not have.
    pub fn named(name: &str) -> Result<Self, InvalidName> {
        validate_name(name)?;
        Ok(Self::at(name))
    }

    fn at(name: &str) -> Self {
        let system = ActorSystem::detached(
            "testkit",
            Outer {
                remote: Box::new(Links::default()),
                terminate: SystemShared::begin_termination,
            },
        );
        let path = ActorPath::root(Address::local("testkit"))
            .child("user")
            .child(name);
        let cell = detached_cell::<M>(&system, path, Parent::System);
        Self {
            actor: ActorRef::local(cell.clone()),
            mailbox: DetachedMailbox::new(cell),
        }
    }

    /// The ref to hand out.
    pub fn actor_ref(&self) -> &ActorRef<M> {
        &self.actor
    }

    /// The oldest message not read yet.
    pub fn receive_message(&mut self) -> Option<M> {
        self.mailbox.next_queued()
    }

    /// Every message not read yet, oldest first.
    pub fn messages(&mut self) -> Vec<M> {
        std::iter::from_fn(|| self.mailbox.next_queued()).collect()
    }

    /// Whether a message is waiting. Looking does not read it.
    pub fn has_messages(&mut self) -> bool {
        match self.mailbox.next_queued() {
            Some(message) => {
                self.mailbox.put_front(message);
                true
            }
            None => false,
        }
    }

    /// Read the oldest message and check it equals `expected`.
    ///
    /// # Panics
    ///
    /// If it does not, or nothing was sent.
    pub fn expect_message(&mut self, expected: M)
    where
        M: PartialEq + fmt::Debug,
    {
        match self.mailbox.next_queued() {
            Some(message) if message == expected => {}
            Some(other) => panic!(
                "{}: expected {expected:?}, but the next message was {other:?}",
                self.actor.path()
            ),
            None => panic!(
                "{}: expected {expected:?}, but nothing was sent",
                self.actor.path()
            ),
        }
    }
}

impl<M: Message> Default for TestInbox<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: Message> fmt::Debug for TestInbox<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestInbox")
            .field("actor", &self.actor)
            .finish_non_exhaustive()
    }
}
