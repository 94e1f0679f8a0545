//! What the macros understood of their input. Every part keeps a reference to the
//! syntax it came from, so an error can point at the exact tokens.

use syn::{
    Attribute, Field, Generics, Ident, ImplItemFn, ItemFn, ItemImpl, LitInt, Type, Visibility,
};

/// A `#[message]` item.
pub(crate) struct MessageModel<'a> {
    /// The type's name.
    pub(crate) ident: &'a Ident,
    /// The type's visibility, which the helper macro's re-export copies.
    pub(crate) vis: &'a Visibility,
    /// What the typed helpers of an actor take to build this message.
    pub(crate) shape: MessageShape<'a>,
    /// Its generic parameters (lifetimes are refused by the parser).
    pub(crate) generics: &'a Generics,
    /// `reply = T`, when it is a request.
    pub(crate) reply: Option<Type>,
    /// `remote = "key"`, when it is registered for the wire.
    pub(crate) remote: Option<syn::LitStr>,
}

/// How a typed helper (see `expand::helpers`) builds a message.
pub(crate) enum MessageShape<'a> {
    /// A struct whose fields all have a visibility: they are the helper's
    /// parameters, by name (`named`) or by position.
    Fields {
        /// Whether the fields have names.
        named: bool,
        /// The fields, in order; none for a unit struct.
        fields: Vec<&'a Field>,
    },
    /// An enum, or a struct with a private or `cfg`-dependent field: the helper takes
    /// the message whole.
    Whole,
}

/// An `#[actor]` impl block.
pub(crate) struct ActorModel<'a> {
    /// The block as written.
    pub(crate) item: &'a ItemImpl,
    /// The actor type, `Counter` in `impl Counter`.
    pub(crate) self_ty: &'a Type,
    /// The last segment of its path, `Counter` in `impl crate::Counter`.
    pub(crate) type_name: &'a Ident,
    /// The generated protocol enum, `CounterMsg` unless `protocol = ..` says otherwise.
    pub(crate) protocol: Ident,
    /// The visibility of the protocol enum and of the helper trait.
    pub(crate) vis: Visibility,
    /// The generated helper trait, when `#[actor(helpers)]` asks for one: `CounterRef`
    /// unless `helpers = ..` names it.
    pub(crate) helpers: Option<Ident>,
    /// One per message type, in the order written.
    pub(crate) handlers: Vec<Handler<'a>>,
    /// The `#[signal]` method, if any.
    pub(crate) signal: Option<SignalHandler<'a>>,
    /// `sub_protocols(..)`: enums of some of its messages.
    pub(crate) sub_protocols: Vec<SubProtocol>,
}

/// A sub-protocol of an actor: an enum of some of its messages, which its protocol
/// accepts, so its ref narrows to it.
pub(crate) struct SubProtocol {
    /// The enum's name, as written.
    pub(crate) name: Ident,
    /// Its messages, each one the actor handles.
    pub(crate) messages: Vec<Type>,
}

/// A variant of a protocol enum: the message it carries.
#[derive(Clone)]
pub(crate) struct Variant<'a> {
    /// Its name.
    pub(crate) variant: Ident,
    /// The message type.
    pub(crate) message: &'a Type,
    /// The `cfg`s it is compiled under.
    pub(crate) cfgs: Vec<Attribute>,
}

impl<'a> ActorModel<'a> {
    /// The protocol's variants: one per handler.
    pub(crate) fn variants(&self) -> Vec<Variant<'a>> {
        self.handlers
            .iter()
            .map(|handler| Variant {
                variant: handler.variant.clone(),
                message: handler.message,
                cfgs: handler.cfgs.clone(),
            })
            .collect()
    }
}

/// A message handler: a method that takes one message type.
pub(crate) struct Handler<'a> {
    /// The method as written.
    pub(crate) method: &'a ImplItemFn,
    /// Whether it is `async`.
    pub(crate) is_async: bool,
    /// Whether it takes the context before the message.
    pub(crate) takes_ctx: bool,
    /// The message type.
    pub(crate) message: &'a Type,
    /// The variant of the protocol enum that carries it.
    pub(crate) variant: Ident,
    /// The name of its typed helper on the ref, unless `#[handler(no_helper)]`.
    pub(crate) helper: Option<Ident>,
    /// Its `cfg` attributes, and the `cfg` parts of its `cfg_attr`s: everything
    /// generated for it (variant, dispatch arm, impls, helper) copies them, so a
    /// handler compiled out leaves nothing behind.
    pub(crate) cfgs: Vec<Attribute>,
}

/// The signal handler.
pub(crate) struct SignalHandler<'a> {
    /// The method as written.
    pub(crate) method: &'a ImplItemFn,
    /// Whether it is `async`.
    pub(crate) is_async: bool,
    /// Whether it takes the context before the signal.
    pub(crate) takes_ctx: bool,
}

/// A `#[tapio::test]` function.
pub(crate) struct TestModel<'a> {
    /// The function as written.
    pub(crate) function: &'a ItemFn,
    /// Whether it takes the `ActorSystem`.
    pub(crate) takes_system: bool,
    /// `start_paused = true`.
    pub(crate) start_paused: bool,
    /// `worker_threads = N`: a multi-thread runtime.
    pub(crate) worker_threads: Option<LitInt>,
    /// `shutdown_timeout_ms = N`.
    pub(crate) shutdown_timeout_ms: Option<LitInt>,
}
