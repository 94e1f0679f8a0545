//! # tapio: statically typed actors on tokio
//!
//! An actor is a task that owns its state and handles one message at a time; the only
//! way to reach it is an [`ActorRef<P>`] typed by its protocol `P`, so sending a message
//! the actor does not handle is a compile error rather than a surprise at run time.
//!
//! ```
//! use tapio::prelude::*;
//!
//! #[message]
//! pub struct Increment { pub by: u64 }
//!
//! #[message]
//! pub struct GetCount { pub reply_to: ActorRef<u64> }
//!
//! #[derive(Default, Clone)]
//! pub struct Counter { count: u64 }
//!
//! #[actor]
//! impl Counter {
//!     fn increment(&mut self, message: Increment) {
//!         self.count += message.by;
//!     }
//!     fn get_count(&mut self, message: GetCount) {
//!         message.reply_to.tell(self.count);
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let system = ActorSystem::new("counter")?;
//! let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
//! let readout = system.spawn(Behaviors::receive_message(move |n: u64| { let _ = tx.send(n); }), "readout")?;
//! let counter = system.spawn(Counter::default(), "counter")?; // ActorRef<CounterMsg>
//! counter.tell(Increment { by: 1 });
//! counter.tell(Increment { by: 2 });
//! counter.tell(GetCount { reply_to: readout });
//! assert_eq!(rx.recv().await, Some(3));
//! system.terminate().await;
//! # Ok(())
//! # }
//! ```
//!
//! ## Where things are
//!
//! - [`ActorSystem`]: the root of the tree; [`ActorSystem::spawn`],
//!   [`ActorSystem::terminate`], [`ActorSystem::scope`] (a system that ends with its
//!   block), [`ActorSystem::events`].
//! - [`Signal`]: `PreRestart`, `PostStop`, `Terminated` of a watched actor, and
//!   `ChildFailed` of a child that escalated.
//! - [`ActorRef`]: [`ActorRef::tell`] never blocks and never fails to the caller;
//!   [`ActorRef::offer`] waits for room in a bounded mailbox.
//! - [`MailboxConfig`]: unbounded (the default), or bounded with an
//!   [`OverflowStrategy`], chosen at spawn with [`ActorSystem::spawn_with`] or
//!   [`ActorContext::spawn_with`].
//! - [`Behaviors`]: `receive`, `receive_message` (and their `_async` forms),
//!   `setup`, `setup_once`, `with_timers`, `with_stash`, `same`, `stopped`,
//!   `unhandled`, `supervise`; [`Actor`] and `#[actor]` for actors with fields.
//! - [`ActorContext`] (`Ctx<Self>` in an `#[actor]` block): spawn, stop, watch, timers,
//!   and message adapters ([`ActorContext::message_adapter`]).
//! - [`blocking`]: [`ActorContext::run_blocking`], a blocking call kept off the
//!   threads that run actors.
//! - [`supervision`]: resume, restart with backoff, stop, escalate.
//! - [`ask`]: [`ActorRef::ask`] and [`ActorRef::ask_with`], typed by the request.
//! - [`timer`]: single, fixed-delay and fixed-rate timers, keyed and cell-owned.
//! - [`stash`]: [`Behaviors::with_stash`], a bounded [`StashBuffer`] for what an actor
//!   cannot handle yet, replayed at the front of its mailbox by
//!   [`StashBuffer::unstash_all`].
//! - [`shutdown`]: SIGINT and SIGTERM wired to [`ActorSystem::terminate`].
//! - [`events`]: the typed event stream and [`DeadLetter`]s.
//! - [`router`]: [`Routers`], one address in front of several actors (pools and
//!   groups; round-robin, broadcast, consistent hashing).
//! - `testkit` (with the cargo feature `testkit`): probes, a synchronous behavior
//!   test kit, two linked systems, and leak-checked tests.
//!
//! ## The macros
//!
//! - `#[message]` makes a struct or enum a [`Message`]; `#[message(reply = T)]` also
//!   declares it a [`Request`] answered with a `T`.
//! - `#[actor]` on an `impl` block turns each method into the handler of its message
//!   type, generates the protocol enum `{Type}Msg` (one variant per handler, named
//!   after the message type's last segment, or `#[handler(variant = Name)]`; the
//!   runtime's `&'static str`, `()` and tuples give `str`, `Unit` and `Tuple`) and
//!   the dispatch. Every method of the block is a handler: helpers go in another
//!   `impl` block. The block is for one concrete type: `impl Cache<String, u64>` is
//!   fine, `impl<K, V> Cache<K, V>` is refused (write a block per concrete type, or
//!   a type alias); a lifetime parameter must be `'static`. A handler under `cfg`
//!   takes its variant with it (two handlers of one message under exclusive `cfg`s
//!   are refused as two: merge them and branch inside). The enum is
//!   `pub` unless `#[actor(vis = pub(crate))]` says otherwise: the macro cannot see
//!   the actor type's visibility, and rustc refuses a protocol less visible than a
//!   `pub` actor; it may hold crate-private messages (an actor's own ticks) without
//!   a `private_interfaces` warning. A handler of a
//!   request returns the reply, or a [`ReplyThen`] to answer and then stop or switch
//!   (either in a `Result`); `#[signal]` marks the signal handler. With
//!   `#[actor(helpers)]` it also generates typed helpers: a trait `{Type}Ref`
//!   (`helpers = Name` names it), implemented for the actor's ref, with one
//!   method per handler (a request's helper asks, any other tells; the parameters
//!   are the message's fields), renamed with `#[handler(helper = name)]` or left out
//!   with `#[handler(no_helper)]`:
//!
//! ```
//! use std::time::Duration;
//! use tapio::prelude::*;
//!
//! #[message]
//! pub struct Add { pub by: u64 }
//!
//! #[message]
//! pub struct Scale(pub u64, pub u64);
//!
//! #[message(reply = u64)]
//! pub struct Total;
//!
//! #[derive(Clone, Default)]
//! pub struct Sum(u64);
//!
//! #[actor(helpers)] // also generates the trait `SumRef`
//! impl Sum {
//!     fn add(&mut self, message: Add) { self.0 += message.by; }
//!     #[handler(helper = scale_by)]
//!     fn scale(&mut self, Scale(num, den): Scale) { self.0 = self.0 * num / den; }
//!     fn total(&mut self, _: Total) -> u64 { self.0 }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let system = ActorSystem::new("sums")?;
//! let sum = system.spawn(Sum::default(), "sum")?;
//! sum.add(6);          // tells `Add { by: 6 }`
//! sum.scale_by(1, 2);  // tells `Scale(1, 2)`
//! let total = sum.total().timeout(Duration::from_millis(100)).await?; // asks `Total`
//! assert_eq!(total, 3);
//! system.terminate().await;
//! # Ok(())
//! # }
//! ```
//!
//! A helper named like a method of [`ActorRef`] does not compile:
//!
//! ```compile_fail
//! use tapio::prelude::*;
//!
//! #[message]
//! pub struct Note(pub String);
//!
//! #[derive(Clone)]
//! pub struct Journal;
//!
//! #[actor]
//! impl Journal {
//!     fn tell(&mut self, _: Note) {} // error: `tell` is already a method of `ActorRef`
//! }
//! ```
//! - `#[tapio::test]` runs an `async fn` test with a fresh system and fails it on leaks.
//!
//! ## Runtime
//!
//! A system runs on the tokio runtime it is built in (multi-threaded or
//! current-thread): one task per actor. Handlers may be `async` (`async fn` in an
//! `#[actor]` block, [`Behaviors::receive_async`] for a functional behavior); while
//! one awaits, its actor takes no other message, but still reads its system lane.
//! Futures of `async` handlers must be `Send`. A handler must not block its thread,
//! which other actors share: an `async` handler hands a blocking call to tokio's
//! blocking pool with [`ActorContext::run_blocking`] and awaits its result.
//!
//! ## Cancel safety of handlers
//!
//! An `async` handler can be stopped where it awaits. A stop (`ctx.stop` from the
//! parent, the parent stopping or restarting, [`ActorSystem::stop`], termination)
//! or an escalation from one of the actor's children drops the handler's future at
//! its current `.await`: the rest of the handler never runs, its locals are dropped
//! (a drop guard runs), and the message it was handling is not handled again. Then
//! the actor stops (and sees `PostStop`) or its supervision decides on the
//! escalation. Write an `async` handler so that being dropped at any `.await` leaves
//! the actor's state usable, as with any future tokio may cancel: keep a change that
//! spans an `.await` in a local until it is complete. A watch, or a watched actor's
//! `Terminated`, waits until the handler is done.
//!
//! A synchronous handler cannot be interrupted: a stop that comes while it runs
//! takes effect when it returns. `PreRestart` and `PostStop` handlers run to their
//! end; only the shutdown deadline cuts them short.

#![doc(test(attr(deny(warnings))))]

// Lets the crate's own tests use the macros, whose expansion names `::tapio`.
#[allow(unused_extern_crates)]
extern crate self as tapio;

// One folder a layer, each importing only the layers above it in this list and
// its own folder (ARCHITECTURE.md; `.ci/layers.py` checks it).
mod actor;
mod features;
mod ground;
mod mailbox;
mod net;
mod system;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use crate::actor::{blocking, stash, supervision, timer};
pub use crate::features::{ask, router, state};
pub use crate::ground::events;
pub use crate::net::{remote, wire};
pub use crate::system::shutdown;

pub use crate::actor::behavior::{
    Actor, AsyncHandler, Behavior, Behaviors, Handled, IntoBehavior, IntoNext, Receive, SetupOutput,
};
pub use crate::actor::blocking::{Blocking, BlockingError};
pub use crate::actor::context::{ActorContext, Ctx};
pub use crate::actor::reply::{Forward, IntoReply, ReplyThen, ReplyTo, Request};
pub use crate::actor::signal::{ChildFailed, DeathPact, Signal, Terminated};
pub use crate::actor::stash::{InvalidStash, StashBuffer, StashOverflow};
pub use crate::actor::supervision::{
    Backoff, InvalidStrategy, Restart, Supervise, SupervisorStrategy,
};
pub use crate::actor::timer::{TimerKey, TimerMode, TimerScheduler, ZeroInterval};
pub use crate::actor::{ActorRef, ActorSystem, AnyActorRef, Offer, Settings};
pub use crate::features::ask::{Ask, AskError};
pub use crate::features::router::{RouterError, Routers};
pub use crate::ground::error::{NotAChild, NotTopLevel, SpawnError};
pub use crate::ground::events::{DeadLetter, DeadLetterReason, EventStream, Subscription};
pub use crate::ground::failure::{
    BoxError, Failure, IntoFailure, InvalidBehavior, Panicked, RestartWithoutFactory,
};
pub use crate::ground::message::{
    Accepts, Answers, Message, NoReply, Payload, Protocol, ReplySlot,
};
pub use crate::ground::path::{ActorPath, Address, InvalidName, InvalidNameReason};
pub use crate::mailbox::{InvalidMailbox, MailboxConfig, MailboxOverflow, OverflowStrategy};
pub use crate::system::shutdown::{ShutdownSignal, ShutdownSignals};
pub use crate::system::{ActorSystemBuilder, SystemError};

pub use crate::features::state::{Machine, Next, StateLost};
pub use tapio_macros::{actor, message, remote_behavior, state, test};

/// The names most programs need: `use tapio::prelude::*;`.
pub mod prelude {
    pub use crate::{Accepts, Request};
    pub use crate::{
        Actor, ActorContext, ActorRef, ActorSystem, AnyActorRef, Backoff, Behavior, Behaviors, Ctx,
        Machine, Message, Next, Panicked, Routers, Signal, SupervisorStrategy, Terminated, actor,
        message, remote_behavior, state,
    };
}

/// Items the macros expand to. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::actor::behavior::{Handled, IntoNext};
    pub use crate::actor::reply::{
        ErrorCannotFail, Finish, IntoReply, KnownSlotOutput, OutputCheck, OutputFinishes, ReplyTo,
        Request, ResultWithError, SlotFor, UnknownSlot,
    };
    pub use crate::features::state::{
        Declared, DeclaredTable, HasState, NoSuccessors, Parts, StateHandlers, StateMachine,
        StateOf, StateProtocol, Staying, Transition, lost, next_unreachable as Unreachable, refuse,
        stash, stay_next, switched, vacant,
    };
    pub use crate::ground::message::{
        Accepts, Answers, Dropped, Extract, Message, NoReply, Payload, Protocol, ReplySlot,
    };
    pub use crate::net::remote::spawn::SpawnArgs;
    pub use crate::{Actor, ActorContext, ActorRef, Ask, Behavior};
    pub use inventory;
    pub use serde;
    pub use std::boxed::Box;
    pub use std::result::Result;

    /// The reply type of a request registered for the wire: it crosses back as a
    /// frame, so it must be registered too. `#[message(remote = .., reply = T)]`
    /// asks for it, so an answer that could never cross is a compile error instead
    /// of an ask that times out.
    #[diagnostic::on_unimplemented(
        message = "the reply of a request registered for the wire must be registered too: `{Self}` is not",
        label = "an answer to a remote ask crosses back as a frame",
        note = "answer with a type declared `#[message(remote = \"a.stable.key\")]` (wrap a `{Self}` in a struct of your own), or leave the request off the wire"
    )]
    pub trait RemoteReply {}

    impl<T: crate::net::wire::WireMessage> RemoteReply for T {}

    /// The check behind `RemoteReply`: compiled, never called.
    pub fn remote_reply<T: RemoteReply>() {}

    /// A `#[message]` struct built from its fields, in order, as a tuple: what the
    /// typed helpers `#[actor]` generates call to build the message they send.
    pub trait FromFields {
        /// The fields' types, in order: `()` for a unit struct.
        type Fields;
        /// Build the message.
        fn from_fields(fields: Self::Fields) -> Self;
    }

    /// What an `#[actor]` block expands through when it is the first for its type
    /// in its scope: everything it generated. A later block for the same type finds
    /// the first one's own `macro_rules!` of the same name instead (textual scope
    /// comes before this import), which keeps only the error: see `expand::actor` in
    /// the macros.
    pub use crate::__tapio_actor_first as actor_first;

    /// A message declared with `#[message]`, whose expansion writes the typed helper
    /// `#[actor(helpers)]` asks it for (a hand-written `impl Message` has none).
    #[diagnostic::on_unimplemented(
        message = "`#[actor(helpers)]` cannot write a typed helper for `{Self}`: it is not declared with `#[message]`",
        label = "a helper is written from the message's `#[message]` expansion",
        note = "declare `{Self}` with `#[message]` instead of implementing `Message` by hand, or leave its helper out: `#[handler(no_helper)]` on its handler (a state machine's helpers go together: drop `helpers` from its `#[actor(..)]`)"
    )]
    pub trait TypedHelper {}

    /// The check behind `TypedHelper`: compiled, never called.
    pub fn typed_helper<T: TypedHelper>() {}

    /// A field of a message registered for the wire: serde's `Serialize` and
    /// `Deserialize`, asked for once, on the field's type, by the check
    /// `#[message(remote = ..)]` writes for each field ([`wire_field`]), while its
    /// serde derive asks for them only under a higher-ranked bound that leaves it
    /// without effect. A field type without serde's traits is then one error naming
    /// it, not one per place serde's derive uses the field. (Two impls, the second
    /// never met, so the compiler weighs both and reports this trait, not serde's.)
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot cross the wire: it does not implement serde's `Serialize` and `Deserialize`",
        label = "a field of a message registered for the wire",
        note = "derive them with serde 1 on `{Self}`, or on your own types inside it (`#[derive(serde::Serialize, serde::Deserialize)]`), or declare it `#[message(remote = \"a.stable.key\")]`, which derives them through tapio; or mark the field `#[serde(skip)]` if it need not cross"
    )]
    pub trait WireField<Impl>: serde::Serialize + serde::de::DeserializeOwned {}

    /// The `Impl` of every [`WireField`] that holds.
    #[derive(Debug)]
    pub enum SerdeImpl {}

    /// The `Impl` of the [`WireField`] impl never met.
    #[derive(Debug)]
    pub enum NeverImpl {}

    /// Implemented by nothing: the second impl of [`WireField`].
    pub trait Never: serde::Serialize + serde::de::DeserializeOwned {}

    impl<T: serde::Serialize + serde::de::DeserializeOwned> WireField<SerdeImpl> for T {}
    impl<T: Never> WireField<NeverImpl> for T {}

    /// What the functions `#[message(remote = ..)]` writes for each field (de)serialize
    /// through, called as `(&probe).wire_serialize(..)`: serde's impls of `T` when it
    /// has them (the impl on the probe itself, which method lookup tries first), else
    /// the impl on a reference to it, which fails with an error. The second is never run: the
    /// field's check ([`wire_field`]) refuses to compile a message whose field type
    /// lacks serde's traits; it only keeps serde's derive from reporting that again.
    #[derive(Debug)]
    pub struct WireProbe<T>(core::marker::PhantomData<fn() -> T>);

    impl<T> WireProbe<T> {
        /// The probe of `T`.
        #[inline]
        #[must_use]
        pub const fn new() -> Self {
            Self(core::marker::PhantomData)
        }
    }

    impl<T> Default for WireProbe<T> {
        fn default() -> Self {
            Self::new()
        }
    }

    /// A field type with serde's traits: (de)serialized by them.
    pub trait SerdeWire<T> {
        /// `value`, as `T`'s `Serialize` writes it.
        ///
        /// # Errors
        ///
        /// The serializer's.
        fn wire_serialize<S: serde::Serializer>(
            &self,
            value: &T,
            serializer: S,
        ) -> Result<S::Ok, S::Error>;

        /// A `T`, as its `Deserialize` reads it.
        ///
        /// # Errors
        ///
        /// The deserializer's.
        fn wire_deserialize<'de, D: serde::Deserializer<'de>>(
            &self,
            deserializer: D,
        ) -> Result<T, D::Error>;
    }

    impl<T: serde::Serialize + serde::de::DeserializeOwned> SerdeWire<T> for WireProbe<T> {
        #[inline]
        fn wire_serialize<S: serde::Serializer>(
            &self,
            value: &T,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            value.serialize(serializer)
        }

        #[inline]
        fn wire_deserialize<'de, D: serde::Deserializer<'de>>(
            &self,
            deserializer: D,
        ) -> Result<T, D::Error> {
            T::deserialize(deserializer)
        }
    }

    /// A field type without serde's traits: a program with one does not compile
    /// (its field's check fails), so these are never run.
    pub trait NoSerdeWire<T> {
        /// An error: `T` cannot be serialized.
        ///
        /// # Errors
        ///
        /// Always.
        fn wire_serialize<S: serde::Serializer>(
            &self,
            value: &T,
            serializer: S,
        ) -> Result<S::Ok, S::Error>;

        /// An error: `T` cannot be deserialized.
        ///
        /// # Errors
        ///
        /// Always.
        fn wire_deserialize<'de, D: serde::Deserializer<'de>>(
            &self,
            deserializer: D,
        ) -> Result<T, D::Error>;
    }

    impl<T> NoSerdeWire<T> for &WireProbe<T> {
        fn wire_serialize<S: serde::Serializer>(&self, _: &T, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom(core::any::type_name::<T>()))
        }

        fn wire_deserialize<'de, D: serde::Deserializer<'de>>(&self, _: D) -> Result<T, D::Error> {
            Err(serde::de::Error::custom(core::any::type_name::<T>()))
        }
    }

    /// The check of a wire message's field: compiled, never called.
    pub fn wire_field<T: WireField<I>, I>() {}

    /// The check of a wire message's field that holds an `ActorRef`: `Serialize`
    /// alone, whose error names the message of the ref's protocol that is not
    /// registered. Compiled, never called.
    pub fn wire_ref_field<T: serde::Serialize>() {}

    /// The type of field `N` of a `#[message]` struct, named where the struct is
    /// declared, so a helper generated elsewhere need not have it in scope.
    pub trait FieldType<const N: usize> {
        /// The field's type.
        type Type;
    }
}

/// See `__private::actor_first`.
#[doc(hidden)]
#[macro_export]
macro_rules! __tapio_actor_first {
    ({$($error:tt)*} {$($generated:tt)*}) => {
        $($generated)*
    };
}

/// The README's examples, compiled and run as doc tests so the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The snippets of `docs/coming-from.md`, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/coming-from.md")]
pub struct ComingFromDoctests;
