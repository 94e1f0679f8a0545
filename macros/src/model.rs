//! What the macros understood of their input. Every part keeps a reference to the
//! syntax it came from, so an error can point at the exact tokens.

use syn::{Generics, Ident, ImplItemFn, ItemFn, ItemImpl, LitInt, Type, Visibility};

/// A `#[message]` item.
pub(crate) struct MessageModel<'a> {
    /// The type's name.
    pub(crate) ident: &'a Ident,
    /// Its generic parameters (lifetimes are refused by the parser).
    pub(crate) generics: &'a Generics,
    /// `reply = T`, when it is a request.
    pub(crate) reply: Option<Type>,
}

/// An `#[actor]` impl block.
pub(crate) struct ActorModel<'a> {
    /// The block as written.
    pub(crate) item: &'a ItemImpl,
    /// The actor type, `Counter` in `impl Counter`.
    pub(crate) self_ty: &'a Type,
    /// The generated protocol enum, `CounterMsg` unless `protocol = ..` says otherwise.
    pub(crate) protocol: Ident,
    /// The visibility of the protocol enum.
    pub(crate) vis: Visibility,
    /// One per message type, in the order written.
    pub(crate) handlers: Vec<Handler<'a>>,
    /// The `#[signal]` method, if any.
    pub(crate) signal: Option<SignalHandler<'a>>,
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
