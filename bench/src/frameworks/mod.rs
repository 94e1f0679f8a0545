//! One module per framework, each implementing [`Framework`]: how it spawns an actor
//! that runs a [`Behaviour`], how a message is told to one, on which runtime its work
//! runs, and the workloads that need more than telling (ask, skynet).
//!
//! A workload in `workloads` is written once, over `F: Framework`, so every framework
//! does the same work: the same actors, the same messages in the same order, the
//! same state. What differs is only what each framework does to deliver a message,
//! start an actor and stop it, through its own public API: raw tokio is a task per
//! actor that loops on an unbounded `mpsc` receiver; tapio, actix, ractor, kameo and
//! xtra wrap the behaviour in an actor type of their own.
//!
//! Every mailbox is unbounded where the framework has the choice (tapio's default,
//! ractor's only kind, `kameo::mailbox::unbounded`, `xtra::Mailbox::unbounded`,
//! actix's `do_send`), so that no framework waits on a full mailbox where another
//! does not.

use std::time::Duration;

use crate::harness::{Flavor, in_task};

pub mod actix;
pub mod kameo;
pub mod ractor;
pub mod raw;
pub mod tapio;
pub mod xtra;

/// What a handler tells its framework to do next.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Flow {
    Continue,
    /// Stop this actor, by the framework's own way of stopping from a handler.
    Stop,
}

/// An actor's state and what it does with a message, the same on every framework.
///
/// `Clone` and `Sync` because tapio spawns an actor value it can clone for a
/// restart; every behaviour here is a few refs, counters and `Arc`s.
pub trait Behaviour<F: Framework>: Clone + Send + Sync + Unpin + 'static {
    type Msg: Send + 'static;

    /// Called once, when the actor starts, before its first message.
    fn started(&mut self) {}

    /// Handle one message. `me` gives this actor's own ref when it needs one (a
    /// sender carried in a message), so that only the workloads that use it pay for it.
    fn handle(&mut self, msg: Self::Msg, me: &dyn Fn() -> F::Ref<Self>) -> Flow;
}

/// A framework, through its ordinary public API.
pub trait Framework: Clone + Sized + 'static {
    /// How the table names it.
    const NAME: &'static str;

    /// A ref to an actor running `B`.
    type Ref<B: Behaviour<Self>>: Clone + Send + Sync + Unpin + 'static;

    /// What spawning needs (tapio's `ActorSystem`; `()` elsewhere).
    type System: Send + Sync + 'static;

    /// A new system, inside the runtime of [`Framework::run`].
    fn system() -> Self::System;

    /// Stop whatever is left, once a workload is measured.
    fn shutdown(system: Self::System) -> impl Future<Output = ()> + Send;

    /// Spawn an actor running `behaviour`, from a task (not from inside an actor).
    fn spawn<B: Behaviour<Self>>(
        system: &Self::System,
        behaviour: B,
    ) -> impl Future<Output = Self::Ref<B>> + Send;

    /// Tell `msg` to the actor behind `to`, without waiting for it to be handled.
    fn tell<B: Behaviour<Self>>(to: &Self::Ref<B>, msg: B::Msg);

    /// Run `work` to completion on this framework's runtime: a fresh tokio runtime of
    /// `flavor`, `work` in a task of its own; actix overrides it with its `System`.
    fn run<W>(flavor: Flavor, work: W) -> W::Output
    where
        W: Future + Send + 'static,
        W::Output: Send + 'static,
    {
        let runtime = flavor.runtime();
        in_task(&runtime, work)
    }

    /// `asks` sequential request/reply round trips from a plain task, outside any
    /// actor, to an actor that answers each with its number.
    fn ask(asks: u64) -> impl Future<Output = Duration> + Send;

    /// A skynet tree: every actor of `size` > 1 spawns ten children and sums what
    /// they report; the leaves report their number. The time until the root's sum.
    fn skynet(leaves: u64) -> impl Future<Output = Duration> + Send;
}

/// The frameworks of the table, raw tokio first.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fw {
    Raw,
    Tapio,
    Actix,
    Ractor,
    Kameo,
    Xtra,
}

impl Fw {
    pub const ALL: [Fw; 6] = [
        Fw::Raw,
        Fw::Tapio,
        Fw::Actix,
        Fw::Ractor,
        Fw::Kameo,
        Fw::Xtra,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fw::Raw => raw::Raw::NAME,
            Fw::Tapio => tapio::Tapio::NAME,
            Fw::Actix => actix::Actix::NAME,
            Fw::Ractor => ractor::Ractor::NAME,
            Fw::Kameo => kameo::Kameo::NAME,
            Fw::Xtra => xtra::Xtra::NAME,
        }
    }

    /// The name a child process is given on its command line.
    pub fn arg(self) -> &'static str {
        match self {
            Fw::Raw => "raw",
            Fw::Tapio => "tapio",
            Fw::Actix => "actix",
            Fw::Ractor => "ractor",
            Fw::Kameo => "kameo",
            Fw::Xtra => "xtra",
        }
    }

    pub fn parse(arg: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|fw| fw.arg() == arg)
    }
}

/// `$body` with `$F` the type of framework `$fw`.
macro_rules! with_framework {
    ($fw:expr, $F:ident => $body:expr) => {
        match $fw {
            $crate::frameworks::Fw::Raw => {
                type $F = $crate::frameworks::raw::Raw;
                $body
            }
            $crate::frameworks::Fw::Tapio => {
                type $F = $crate::frameworks::tapio::Tapio;
                $body
            }
            $crate::frameworks::Fw::Actix => {
                type $F = $crate::frameworks::actix::Actix;
                $body
            }
            $crate::frameworks::Fw::Ractor => {
                type $F = $crate::frameworks::ractor::Ractor;
                $body
            }
            $crate::frameworks::Fw::Kameo => {
                type $F = $crate::frameworks::kameo::Kameo;
                $body
            }
            $crate::frameworks::Fw::Xtra => {
                type $F = $crate::frameworks::xtra::Xtra;
                $body
            }
        }
    };
}
pub(crate) use with_framework;
