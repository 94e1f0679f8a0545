//! `impl Protocol` and `impl Actor` for the actor type: the dispatch from protocol
//! variant to handler method.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ImplItemFn, ReturnType};

use crate::model::{ActorModel, Handler, SignalHandler};

/// The span errors about a handler's answer point at: its return type, or its name
/// when it declares none.
pub(crate) fn output_span(method: &ImplItemFn) -> Span {
    match &method.sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => method.sig.ident.span(),
    }
}

/// A local the macro names itself. Mixed-site, so the user's code cannot see it; and
/// prefixed, because a binding is first looked up as a unit struct or constant at the
/// call site whatever its span: a `struct output;` in scope would turn `let output`
/// into a pattern that does not match.
pub(crate) fn local(name: &str) -> Ident {
    Ident::new(&format!("__tapio_{name}"), Span::mixed_site())
}

fn arm(model: &ActorModel<'_>, handler: &Handler<'_>) -> TokenStream {
    let (message, reply, output, ctx) = (
        local("message"),
        local("reply"),
        local("output"),
        local("ctx"),
    );
    let protocol = &model.protocol;
    let variant = &handler.variant;
    let method = &handler.method.sig.ident;
    let call = if handler.takes_ctx {
        quote!(self.#method(#ctx, #message))
    } else {
        quote!(self.#method(#message))
    };
    let message_ty = handler.message;
    let cfgs = &handler.cfgs;
    let finish = finish(
        handler.method,
        message_ty,
        &quote!(#protocol),
        &output,
        &reply,
        &ctx,
    );
    if handler.is_async {
        // The future is checked for `Send` where it is built: spanned on the
        // method's name, so an error points at the handler, not at the attribute.
        let pending = quote_spanned! {handler.method.sig.ident.span()=>
            ::tapio::__private::Handled::pending(async move {
                let #output = #call.await;
                #finish
            })
        };
        quote! {
            #(#cfgs)*
            #protocol::#variant(#message, #reply) => #pending,
        }
    } else {
        quote! {
            #(#cfgs)*
            #protocol::#variant(#message, #reply) => {
                let #output = #call;
                ::tapio::__private::Handled::ready(#finish)
            }
        }
    }
}

/// What finishes a handler that stays: `output`, the method's answer, sent to
/// `reply` when the message is a request, and turned into the next behavior.
pub(crate) fn finish(
    method: &ImplItemFn,
    message_ty: &syn::Type,
    protocol: &TokenStream,
    output: &Ident,
    reply: &Ident,
    ctx: &Ident,
) -> TokenStream {
    finish_in(
        method,
        message_ty,
        protocol,
        Locals { output, reply, ctx },
        false,
    )
}

/// The locals a handler's output is finished with.
pub(crate) struct Locals<'a> {
    pub(crate) output: &'a Ident,
    pub(crate) reply: &'a Ident,
    pub(crate) ctx: &'a Ident,
}

/// [`finish`], or, for a handler that stays in a state, through the `Staying` slot,
/// which allows only the answers that keep the state (`()`, the reply, a `Result`).
pub(crate) fn finish_in(
    method: &ImplItemFn,
    message_ty: &syn::Type,
    protocol: &TokenStream,
    locals: Locals<'_>,
    staying: bool,
) -> TokenStream {
    let Locals { output, reply, ctx } = locals;
    let span = output_span(method);
    let slot = quote!(<#message_ty as ::tapio::__private::Message>::ReplySlot);
    let (slot, reply) = if staying {
        (
            quote!(::tapio::__private::Staying<#slot>),
            quote!(::tapio::__private::Staying(#reply)),
        )
    } else {
        (slot, quote!(#reply))
    };
    // `OutputCheck` picks how to finish by autoref, so each wrong output gets one
    // message of its own (see the runtime's `reply.rs`). The arguments go in through
    // `identity`, so an error points at the return type (the call's span), not at
    // the attribute (the hygienic locals').
    quote_spanned! {span=>
        {
            #[allow(unused_imports)]
            use ::tapio::__private::{
                ErrorCannotFail as _, KnownSlotOutput as _, OutputFinishes as _,
                ResultWithError as _, UnknownSlot as _,
            };
            (&&&&&::tapio::__private::OutputCheck::<
                #slot,
                #protocol,
                _,
            >::of(&#output))
                .finish::<#message_ty>(
                    ::core::convert::identity(#reply),
                    ::core::convert::identity(#ctx),
                    ::core::convert::identity(#output),
                )
        }
    }
}

fn signal(model: &ActorModel<'_>, handler: &SignalHandler<'_>) -> TokenStream {
    let (signal, output, ctx) = (local("signal"), local("output"), local("ctx"));
    let protocol = &model.protocol;
    let method = &handler.method.sig.ident;
    let call = if handler.takes_ctx {
        quote!(self.#method(#ctx, #signal))
    } else {
        quote!(self.#method(#signal))
    };
    // The answer is checked (`IntoNext`) on the user's return type, so that is where
    // an error points (through `identity`: a hygienic local would point at the
    // attribute). The protocol is named, or the message would print it as `_`.
    let span = output_span(handler.method);
    let body = if handler.is_async {
        quote_spanned! {span=>
            ::tapio::__private::Handled::<'_, #protocol>::pending(async move { #call.await })
        }
    } else {
        let ready = quote_spanned! {span=>
            ::tapio::__private::Handled::<'_, #protocol>::ready(::core::convert::identity(#output))
        };
        quote! {
            let #output = #call;
            #ready
        }
    };
    quote! {
        // `identity(output)` is there for the span, also when the output is `()`.
        #[allow(clippy::unit_arg)]
        fn signal<'a>(
            &'a mut self,
            #ctx: &'a mut ::tapio::__private::ActorContext<Self::Msg>,
            #signal: &'a ::tapio::Signal,
        ) -> ::tapio::__private::Handled<'a, Self::Msg> {
            let _ = &#ctx;
            #body
        }
    }
}

/// `impl Protocol` and `impl Actor`.
pub(crate) fn expand(model: &ActorModel<'_>) -> TokenStream {
    let (message, ctx) = (local("message"), local("ctx"));
    let self_ty = model.self_ty;
    let protocol = &model.protocol;
    let arms = model.handlers.iter().map(|handler| arm(model, handler));
    let signal = model.signal.as_ref().map(|handler| signal(model, handler));
    let bounds = crate::expand::protocol::message_bounds(&model.variants());
    quote! {
        impl ::tapio::__private::Protocol for #self_ty #bounds {
            type Msg = #protocol;
        }

        impl ::tapio::__private::Actor for #self_ty #bounds {
            // `identity(output)` is there for the span, also when the output is `()`;
            // a `#[deprecated]` handler is the user's to call, not the dispatch's.
            #[allow(clippy::unit_arg, deprecated)]
            fn handle<'a>(
                &'a mut self,
                #ctx: &'a mut ::tapio::__private::ActorContext<#protocol>,
                #message: #protocol,
            ) -> ::tapio::__private::Handled<'a, #protocol> {
                let _ = &#ctx;
                match #message {
                    #(#arms)*
                }
            }

            #signal
        }
    }
}
