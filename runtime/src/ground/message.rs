//! What can be sent to an actor, and what an actor accepts.
//!
//! Three traits carry the whole static protocol check:
//!
//! - [`Message`]: a value that can travel to an actor. `#[message]` implements it.
//! - [`Accepts<M>`]: "a mailbox of this protocol can take an `M`". Every message
//!   accepts itself; the protocol enum that `#[actor]` generates accepts each message
//!   it has a handler for. [`ActorRef::tell`](crate::ActorRef::tell) asks for this
//!   bound, so sending something the recipient does not handle fails to compile.
//! - [`Request`](crate::Request): a message that is answered, with its reply type.
//!
//! # Examples
//!
//! ```
//! use tapio::prelude::*;
//!
//! #[message]
//! pub struct Ping;
//!
//! #[message(reply = u64)]
//! pub struct HowMany;
//!
//! fn assert_message<M: Message>() {}
//! assert_message::<Ping>();
//! assert_message::<u64>();
//! // A request knows what it is answered with.
//! fn reply_of<R: Request>(_: R) -> std::any::TypeId { std::any::TypeId::of::<R::Reply>() }
//! assert_eq!(reply_of(HowMany), std::any::TypeId::of::<u64>());
//! // Every message is a protocol that accepts exactly itself.
//! fn assert_accepts<P: Accepts<M>, M: Message>() {}
//! assert_accepts::<Ping, Ping>();
//! ```
//!
//! # Messages the runtime declares
//!
//! `Message` is implemented here for the standard types a quick protocol uses:
//! primitives, `String`, `&'static str`, `()`, tuples up to four, `Vec`, `VecDeque`,
//! `Option`, `Result`, the std maps and sets, arrays, `Duration`, `SystemTime` and
//! `Box<T: ?Sized>`. The macros know them by name when they write typed helpers
//! (`macros/src/expand/helpers.rs`: a generic one only with its arguments, so a user's
//! own `jobs::Result` keeps its helper).
//!
//! Ask's bounds are `M: Request + AnsweredBy<P>`. `Request` has
//! `Message<ReplySlot = ReplyTo<Reply>>` as a supertrait, so a plain message fails once
//! ("not a request"). `AnsweredBy<P>` is `P: Answers<M>` turned around: with the request
//! as `Self`, rustc waits for the argument instead of inferring `M` from the only
//! `Answers` impl of a one-handler protocol, so the error names the request
//! ("`PingerMsg` does not answer `GetCount`").
//!
//! Layer: ground. Imports only ground (`codec`, `events`).

use std::any::Any;
use std::fmt;

/// A value that can be sent to an actor.
///
/// Implement it with `#[message]`; the runtime implements it for the primitive types
/// and `String`, so a protocol can be as small as `ActorRef<u64>`.
///
/// `into_payload` is what a message becomes when it cannot be delivered: a protocol
/// enum hands over the message inside its variant, so a dead letter names `Shelf`
/// rather than the enum that carried it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a message",
    label = "this type cannot be sent to an actor",
    note = "put `#[tapio::message]` on the declaration of `{Self}` (standard types such as `u64`, `String`, and a `Vec<T>` or `Option<T>` of anything `Send`, are messages already); a message is also `Send + 'static`, which a type holding an `Rc` or a reference is not"
)]
pub trait Message: Send + 'static {
    /// Where an answer to this message goes: [`NoReply`](NoReply) for a plain
    /// message, [`ReplyTo<T>`](crate::ReplyTo) for a request answered with `T`.
    /// `#[message]` sets it; the protocol enum carries one next to each message.
    type ReplySlot: ReplySlot;

    /// Turn the message into a type-erased payload, for a dead letter.
    fn into_payload(self) -> Payload
    where
        Self: Sized,
    {
        Payload::new(self)
    }

    /// A mailbox dropped this message unhandled, for `why`: the reply slot it
    /// carries, if any, is refused (an ask fails at once, S54, S23) and the rest
    /// comes back, for its dead letter. A protocol enum, which carries a slot beside
    /// each message, implements it; anything else carries no slot.
    #[doc(hidden)]
    fn refuse_dropped(self, why: Dropped) -> Self
    where
        Self: Sized,
    {
        let _ = why;
        self
    }

    /// This message as it crosses a link: its key, its payload, and where its
    /// answer goes; `None` when its type is not registered for the wire.
    #[doc(hidden)]
    fn encode_wire(&self) -> Option<Result<crate::ground::codec::Encoded, String>> {
        None
    }

    /// The key this type is registered under for the wire, if it is: set by
    /// `#[message(remote = "key")]`.
    #[doc(hidden)]
    const WIRE_KEY: Option<&'static str> = None;

    /// Decode a payload that arrived under wire key `key` into this protocol: a
    /// `#[message(remote)]` type decodes its own key, a protocol enum each key of its
    /// registered messages. Anything else is not accepted.
    #[doc(hidden)]
    fn decode_wire(
        key: &str,
        bytes: &[u8],
        ctx: &crate::ground::codec::WireContext<'_>,
    ) -> Result<Self, crate::ground::codec::WireProblem>
    where
        Self: Sized,
    {
        let _ = (bytes, ctx);
        Err(crate::ground::codec::WireProblem::NotAccepted(
            key.to_owned(),
        ))
    }
}

/// The protocol of a context, an actor type or a message: what its mailbox holds.
///
/// It exists so that a handler can write `&mut Ctx<Self>` inside an `#[actor]`
/// block, without naming the generated protocol enum.
pub trait Protocol {
    /// The message type the mailbox holds.
    type Msg: Message;
}

impl<M: Message> Protocol for M {
    type Msg = M;
}

/// A mailbox of protocol `Self` accepts a message of type `M`.
///
/// Every message accepts itself. `#[actor]` implements `Accepts<M>` on the generated
/// protocol enum once for every message type the actor has a handler for.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not accept `{M}`",
    label = "`{M}` is not part of the protocol `{Self}`",
    note = "an actor's protocol is the set of messages it has handlers for: add a handler that takes `{M}` to that actor, or send one of the messages `{Self}` accepts"
)]
pub trait Accepts<M: Message>: Message + Sized {
    /// Wrap the message into this protocol, with where its answer goes.
    fn wrap_with(message: M, reply: M::ReplySlot) -> Self;

    /// Wrap the message into this protocol, with nobody awaiting an answer: what
    /// `tell` does with a message of the protocol. The protocol enum `#[actor]`
    /// generates also has `From` for each of its messages, so `message.into()`
    /// does the same where the enum is named.
    ///
    /// ```
    /// # #![allow(dead_code)]
    /// use tapio::prelude::*;
    ///
    /// #[message]
    /// pub struct Deposit(pub u64);
    ///
    /// #[derive(Clone, Default)]
    /// pub struct Account(u64);
    ///
    /// #[actor]
    /// impl Account {
    ///     fn deposit(&mut self, Deposit(n): Deposit) {
    ///         self.0 += n;
    ///     }
    /// }
    ///
    /// // A batch of protocol values, built before anyone tells them.
    /// let batch: Vec<AccountMsg> = vec![AccountMsg::wrap(Deposit(1)), Deposit(2).into()];
    /// assert!(matches!(batch[1], AccountMsg::Deposit(Deposit(2), _)));
    /// ```
    #[inline(always)]
    fn wrap(message: M) -> Self {
        Self::wrap_with(message, M::ReplySlot::default())
    }
}

/// The message and its reply slot out of a protocol value that carries an `M`, or
/// the value back: what a state machine's generated dispatch matches with. Not in
/// the prelude, so its method never competes with a user's `take`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not accept `{M}`, so no state can handle it",
    label = "`{M}` is not in this state machine's protocol",
    note = "a state handles only the messages its actor's `#[actor(messages(..))]` lists: add `{M}` there, or remove this handler"
)]
pub trait Extract<M: Message>: Accepts<M> {
    /// The `M` inside, with where its answer goes; otherwise the value back.
    fn extract(self) -> Result<(M, M::ReplySlot), Self>;
}

impl<M: Message> Extract<M> for M {
    #[inline(always)]
    fn extract(self) -> Result<(M, M::ReplySlot), Self> {
        Ok((self, M::ReplySlot::default()))
    }
}

impl<M: Message> Accepts<M> for M {
    #[inline(always)]
    fn wrap_with(message: M, _reply: M::ReplySlot) -> Self {
        message
    }
}

/// A mailbox of protocol `Self` delivers the reply slot of an `M` to the handler that
/// answers it, so an `M` can be asked. `#[actor]` implements it for every message type
/// it has a handler for; a message that is its own protocol (`ActorRef<M>`) has no
/// handler that could receive the reply ref, so it cannot be asked.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not answer `{M}`: no handler of this protocol takes it and returns its reply",
    label = "asked here",
    note = "an actor answers the requests its `#[actor]` block has handlers for: add a handler that takes `{M}` and returns its reply, or ask an actor that has one (a message that is its own protocol, as in `ActorRef<{M}>`, has no handler to receive the reply ref: give it a `reply_to: ActorRef<_>` field and use `ask_with`)"
)]
pub trait Answers<M: Message>: Accepts<M> {}

/// `Self` can be asked of an actor of protocol `P`: `P: Answers<Self>`, turned
/// around for [`ActorRef::ask`](crate::ActorRef::ask). With the request as `Self`,
/// rustc waits for the argument to know it; as the parameter of `P: Answers<M>` it
/// would take it from the only impl when the protocol answers one request, and
/// report a type mismatch instead of the protocol that does not answer it.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{P}` does not answer `{Self}`: no handler of this protocol takes it and returns its reply",
    label = "asked here",
    note = "an actor answers the requests its `#[actor]` block has handlers for: add a handler that takes `{Self}` and returns its reply, or ask an actor that has one (a message that is its own protocol, as in `ActorRef<{Self}>`, has no handler to receive the reply ref: give it a `reply_to: ActorRef<_>` field and use `ask_with`)"
)]
pub trait AnsweredBy<P: Message>: Message {
    /// Wrap the request into the protocol `P`, with where its answer goes.
    fn wrap_into(self, reply: Self::ReplySlot) -> P;
}

impl<M: Message, P: Answers<M>> AnsweredBy<P> for M {
    #[inline(always)]
    fn wrap_into(self, reply: M::ReplySlot) -> P {
        P::wrap_with(self, reply)
    }
}

/// Where an answer goes: implemented by [`NoReply`](NoReply) and
/// [`ReplyTo<T>`](crate::ReplyTo) only.
pub trait ReplySlot: Default + Send + 'static {
    /// The state `state` of a state machine does not handle the request: an ask
    /// awaiting its answer fails at once, naming the state. Nothing for a message
    /// that is not a request.
    #[doc(hidden)]
    fn refuse(self, state: &'static str) {
        let _ = state;
    }

    /// A mailbox dropped the request unhandled, for `why`: an ask awaiting its
    /// answer fails at once (S54, S23). Nothing for a message that is not a request.
    #[doc(hidden)]
    fn refuse_dropped(self, why: Dropped) {
        let _ = why;
    }

    /// The URI a request's answer goes to, for a frame's header; exports an ask's
    /// promise so the answer can find it. `None` for a message that is not a
    /// request, or a request nobody awaits.
    #[doc(hidden)]
    fn to_wire(&self) -> Option<String> {
        None
    }

    /// The slot for a request that came over the wire, whose answer goes to the URI
    /// `reply_to` from the frame's header (decoded in the current decode context).
    /// Nothing for a message that is not a request.
    #[doc(hidden)]
    fn from_wire(reply_to: Option<&str>) -> Self {
        let _ = reply_to;
        Self::default()
    }
}

/// Why a mailbox dropped a request unhandled (see `Message::refuse_dropped`).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    /// A full drop-oldest mailbox pushed it out for a newer message.
    PushedOut,
    /// The actor holding it stopped: a request forwarded to it (S52) fails its ask
    /// at once, as one asked of it does.
    HolderStopped,
}

/// The reply slot of a message that is not a request: there is no answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoReply;

impl ReplySlot for NoReply {}

macro_rules! primitive_messages {
    ($($ty:ty),* $(,)?) => {
        $( impl Message for $ty { type ReplySlot = NoReply; } )*
    };
}

primitive_messages!(
    (),
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    String,
    &'static str,
);

/// Containers of values that can cross to another task are messages too, so a quick
/// protocol needs no declaration: `ActorRef<Vec<String>>`, `ActorRef<(u64, bool)>`.
macro_rules! container_messages {
    ($( ($($param:ident),+) => $ty:ty ),* $(,)?) => {
        $( impl<$($param: Send + 'static),+> Message for $ty { type ReplySlot = NoReply; } )*
    };
}

container_messages!(
    (T) => Vec<T>,
    (T) => std::collections::VecDeque<T>,
    (T) => Option<T>,
    (T, E) => Result<T, E>,
    (K, V, S) => std::collections::HashMap<K, V, S>,
    (T, S) => std::collections::HashSet<T, S>,
    (K, V) => std::collections::BTreeMap<K, V>,
    (T) => std::collections::BTreeSet<T>,
    (A, B) => (A, B),
    (A, B, C) => (A, B, C),
    (A, B, C, D) => (A, B, C, D),
);

primitive_messages!(std::time::Duration, std::time::SystemTime);

/// A box of anything that can cross to another task, unsized too: `Box<str>`,
/// `Box<[u8]>`, `Box<dyn FnOnce() + Send>`.
impl<T: ?Sized + Send + 'static> Message for Box<T> {
    type ReplySlot = NoReply;
}

/// An array of values that can cross to another task.
impl<T: Send + 'static, const N: usize> Message for [T; N] {
    type ReplySlot = NoReply;
}

/// A message that could not be delivered, with its type erased.
///
/// Downcast it with [`Payload::downcast_ref`] or [`Payload::downcast`] to look
/// inside; [`Payload::type_name`] names the type either way.
pub struct Payload {
    value: Box<dyn Any + Send>,
    type_name: &'static str,
}

impl Payload {
    /// Erase the type of `value`.
    pub fn new<M: Send + 'static>(value: M) -> Self {
        Self {
            value: Box::new(value),
            type_name: std::any::type_name::<M>(),
        }
    }

    /// The full type name of the message, for example `my_app::Shelf`.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The last segment of the type name, for example `Shelf`.
    pub fn short_type_name(&self) -> &'static str {
        short_name(self.type_name)
    }

    /// Whether the message is an `M`.
    pub fn is<M: 'static>(&self) -> bool {
        self.value.is::<M>()
    }

    /// Borrow the message as an `M`, if it is one.
    pub fn downcast_ref<M: 'static>(&self) -> Option<&M> {
        self.value.downcast_ref()
    }

    /// Take the message out as an `M`; gives the payload back if it is something else.
    pub fn downcast<M: 'static>(self) -> Result<M, Self> {
        let type_name = self.type_name;
        match self.value.downcast::<M>() {
            Ok(value) => Ok(*value),
            Err(value) => Err(Self { value, type_name }),
        }
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Payload")
            .field("type", &self.type_name)
            .finish_non_exhaustive()
    }
}

/// `a::b::Shelf<c::D>` becomes `Shelf<c::D>`: the last path segment before generics.
pub(crate) fn short_name(type_name: &'static str) -> &'static str {
    let generics = type_name.find('<').unwrap_or(type_name.len());
    match type_name[..generics].rfind("::") {
        Some(at) => &type_name[at + 2..],
        None => type_name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_drop_the_module_path() {
        assert_eq!(short_name("a::b::Shelf"), "Shelf");
        assert_eq!(short_name("Shelf"), "Shelf");
        assert_eq!(short_name("a::Wrap<b::C>"), "Wrap<b::C>");
    }

    #[test]
    fn a_payload_downcasts_to_its_own_type_only() {
        let payload = Payload::new(7_u64);
        assert!(payload.is::<u64>());
        assert_eq!(payload.downcast_ref::<u64>(), Some(&7));
        let payload = payload
            .downcast::<String>()
            .err()
            .map(|p| p.short_type_name());
        assert_eq!(payload, Some("u64"));
    }
}
