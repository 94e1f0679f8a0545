//! What a `#[state(Actor)]` block generates: `StateHandlers` for the state, whose
//! `handle` tries the state's handlers one message type at a time and ends with the
//! state's policy for the rest.
//!
//! The `StateHandlers` impl has higher-ranked bounds (the actor is a state machine, the
//! state is one of its states, its protocol accepts each handled message), so a wrong
//! actor or an unlisted state does not turn every generated line into an error: one
//! explicit check beside it reports those facts once, the second only if the first
//! holds. `check` refuses two handlers for
//! one message in one state; a second `#[state]` block for one state goes through
//! `once_per_scope` and is one error. `#[on_entry]`/`#[on_exit]` belong to `#[state]`
//! blocks only (`parse::actor::state_hook` refuses them on an `#[actor]` method, and
//! `user_block` strips them). A state handler written with `&mut Ctx<Self>` is
//! rewritten to `Ctx<Actor>` before parsing (`parse::states::name_the_actor_in_contexts`),
//! and a switching handler calls its message's reply slot (`switched`), so a
//! wrong answer is `TellSwitch`'s or `RequestSwitch`'s error on the return type.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl};

use crate::check::type_text;
use crate::errors::Errors;
use crate::expand::dispatch::{Locals, finish_in, local, output_span};
use crate::parse::states::{Param, StateHandler, StateModel, Unhandled};
use crate::symbol::{ON_ENTRY, ON_EXIT, OTHERWISE};

/// The block as written, minus the hook markers the compiler does not know.
pub(crate) fn user_block(block: &ItemImpl) -> ItemImpl {
    let mut block = block.clone();
    for item in &mut block.items {
        if let ImplItem::Fn(method) = item {
            method.attrs.retain(|attr| {
                !attr.path().is_ident(ON_ENTRY)
                    && !attr.path().is_ident(ON_EXIT)
                    && !attr.path().is_ident(OTHERWISE)
            });
        }
    }
    block
}

/// A second handler for one message type in one state is refused (at both).
pub(crate) fn check(model: &mut StateModel<'_>, errors: &mut Errors) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut refused = Vec::new();
    for (index, handler) in model.handlers.iter().enumerate() {
        let Some(message) = handler.message else {
            continue;
        };
        let text = type_text(message);
        if let Some(&first) = seen.get(&text) {
            let first_name = &model.handlers[first].method.sig.ident;
            errors.error(
                &handler.method.sig.ident,
                format!(
                    "a second handler for `{text}` in state `{}`: `{first_name}` handles it already; a state has one handler per message type",
                    model.name
                ),
            );
            refused.push(index);
        } else {
            seen.insert(text, index);
        }
    }
    for index in refused.into_iter().rev() {
        model.handlers.remove(index);
    }
}

/// The arguments a method takes before its message, from the parts.
fn arguments(handler: &StateHandler<'_>) -> Vec<TokenStream> {
    let (data, ctx) = (local("data"), local("ctx"));
    handler
        .params
        .iter()
        .map(|param| match param {
            Param::Data => quote!(&mut *#data),
            Param::Ctx => quote!(&mut *#ctx),
        })
        .collect()
}

/// The parts, taken apart into locals.
fn take_apart() -> TokenStream {
    let (parts, data, states, ctx, stash) = (
        local("parts"),
        local("data"),
        local("states"),
        local("ctx"),
        local("stash"),
    );
    quote! {
        let ::tapio::__private::Parts {
            data: #data,
            states: #states,
            ctx: #ctx,
            stash: #stash,
        } = #parts;
        let _ = (&#data, &#ctx, &#stash);
    }
}

/// The parts, put back together.
fn put_together() -> TokenStream {
    let (data, states, ctx, stash) = (local("data"), local("states"), local("ctx"), local("stash"));
    quote! {
        ::tapio::__private::Parts { data: #data, states: #states, ctx: #ctx, stash: #stash }
    }
}

fn arm(
    model: &StateModel<'_>,
    handler: &StateHandler<'_>,
    protocol: &TokenStream,
) -> Option<TokenStream> {
    let message_ty = handler.message?;
    let (message, value, reply, output, this, states, ctx) = (
        local("message"),
        local("value"),
        local("reply"),
        local("output"),
        local("this"),
        local("states"),
        local("ctx"),
    );
    let state = model.self_ty;
    let actor = &model.actor;
    let method = &handler.method.sig.ident;
    let args = arguments(handler);
    let call = quote!(#this.#method(#(#args,)* #value));
    let take_apart = take_apart();
    let span = handler.method.sig.ident.span();
    // A handler that may switch takes the state out; one that stays borrows it.
    let (then, access) = if handler.switches {
        let parts = put_together();
        // The reply slot is the message's, named: its own `switched` asks for
        // `TellSwitch` (a message that is not a request) or `RequestSwitch`, so an
        // answer of the wrong shape is refused by the trait whose message says what
        // this kind of message answers, on the handler's return type.
        let answer_span = match &handler.method.sig.output {
            syn::ReturnType::Type(_, ty) => syn::spanned::Spanned::span(&**ty),
            syn::ReturnType::Default => span,
        };
        (
            quote_spanned! {answer_span=>
                <#message_ty as ::tapio::Message>::ReplySlot::switched::<#actor, #state, _>(#reply, #parts, #output)
            },
            quote!(take(&mut *#states)),
        )
    } else {
        (
            finish_in(
                handler.method,
                message_ty,
                protocol,
                Locals {
                    output: &output,
                    reply: &reply,
                    ctx: &ctx,
                },
                true,
            ),
            quote!(get(#states)),
        )
    };
    let handled = if handler.is_async {
        quote_spanned! {span=>
            ::tapio::__private::Handled::pending(async move {
                let #output = #call.await;
                #then
            })
        }
    } else {
        quote! {
            let #output = #call;
            ::tapio::__private::Handled::ready(#then)
        }
    };
    let body = quote! {
        #take_apart
        let ::core::option::Option::Some(#this) =
            <#state as ::tapio::__private::StateOf>::#access
        else {
            return ::tapio::__private::lost::<#actor>();
        };
        #handled
    };
    Some(quote_spanned! {message_ty.span()=>
        let #message = match <#protocol as ::tapio::__private::Extract<#message_ty>>::extract(#message) {
            ::core::result::Result::Ok((#value, #reply)) => {
                let _ = &#reply;
                #[allow(clippy::unit_arg)]
                return { #body };
            }
            ::core::result::Result::Err(#message) => #message,
        };
    })
}

/// A hook's call: `#[on_entry]` on the current state, `#[on_exit]` without one.
fn hook(model: &StateModel<'_>, handler: &StateHandler<'_>, protocol: &TokenStream) -> TokenStream {
    let (this, states) = (local("this"), local("states"));
    let state = model.self_ty;
    let method = &handler.method.sig.ident;
    let args = arguments(handler);
    let take_apart = take_apart();
    let span = handler.method.sig.ident.span();
    // A hook stays in its state too: its answer is checked on its return type.
    let answer_span = output_span(handler.method);
    let convert = |call: TokenStream| {
        let checked = quote_spanned! {answer_span=>
            ::tapio::__private::stay_next::<#protocol, _>(#call)
        };
        quote_spanned! {span=>
            ::core::result::Result::map(
                <_ as ::tapio::__private::IntoNext<#protocol>>::into_next(#checked),
                ::core::mem::drop,
            )
        }
    };
    if handler.has_self {
        let call = convert(quote!(#this.#method(#(#args),*)));
        quote! {
            #take_apart
            match <#state as ::tapio::__private::StateOf>::get(#states) {
                ::core::option::Option::Some(#this) => #call,
                ::core::option::Option::None => ::core::result::Result::Ok(()),
            }
        }
    } else {
        let call = convert(quote!(<#state>::#method(#(#args),*)));
        quote! {
            #take_apart
            let _ = &#states;
            #call
        }
    }
}

/// What a refused `#[state]` block still declares, beside its error: the state's
/// handlers, refusing every message, so the machine's table finds a block for the
/// state and the refusal is the only error. Its bound is higher-ranked, so a type
/// that is no state at all gets nothing more from it. Nothing for a generic block.
pub(crate) fn refused(block: &syn::ItemImpl) -> TokenStream {
    if !block.generics.params.is_empty() {
        return TokenStream::new();
    }
    let ty = &block.self_ty;
    let machine = quote!(<#ty as ::tapio::__private::StateOf>::Machine);
    let msg = quote!(<#machine as ::tapio::__private::Protocol>::Msg);
    quote_spanned! {ty.span()=>
        impl ::tapio::__private::StateHandlers for #ty
        where
            for<'__tapio> #ty: ::tapio::__private::StateOf,
        {
            fn handle<'a>(
                parts: ::tapio::__private::Parts<'a, #machine>,
                message: #msg,
            ) -> ::tapio::__private::Handled<'a, #msg> {
                ::tapio::__private::refuse::<#machine, #ty>(parts, message)
            }
        }
    }
}

/// `StateHandlers` for the state.
pub(crate) fn expand(model: &StateModel<'_>, site: super::Site) -> TokenStream {
    let block = user_block(model.item);
    let state = model.self_ty;
    let actor = &model.actor;
    let protocol = quote!(<#actor as ::tapio::__private::Protocol>::Msg);
    let (parts, message, this, states) = (
        local("parts"),
        local("message"),
        local("this"),
        local("states"),
    );
    let arms = model
        .handlers
        .iter()
        .filter_map(|handler| arm(model, handler, &protocol));
    let fallback = match (&model.otherwise, model.unhandled) {
        (Some(handler), _) => {
            let method = &handler.method.sig.ident;
            let args = arguments(handler);
            let take_apart = take_apart();
            let span = handler.method.sig.ident.span();
            // Checked on the return type: an `#[otherwise]` method stays in its state.
            let checked = quote_spanned! {output_span(handler.method)=>
                ::tapio::__private::stay_next::<#protocol, _>(#this.#method(#(#args,)* #message))
            };
            let call = quote_spanned! {span=>
                ::tapio::__private::Handled::<'_, #protocol>::ready(#checked)
            };
            quote! {
                #take_apart
                let ::core::option::Option::Some(#this) =
                    <#state as ::tapio::__private::StateOf>::get(#states)
                else {
                    return ::tapio::__private::lost::<#actor>();
                };
                #call
            }
        }
        (None, Unhandled::Stash) => quote!(::tapio::__private::stash(#parts, #message)),
        (None, Unhandled::Refuse) => {
            quote!(::tapio::__private::refuse::<#actor, #state>(#parts, #message))
        }
    };
    let enter = model.on_entry.as_ref().map(|handler| {
        let body = hook(model, handler, &protocol);
        quote! {
            #[allow(clippy::unit_arg)]
            fn enter(#parts: ::tapio::__private::Parts<'_, #actor>) -> ::core::result::Result<(), ::tapio::Failure> {
                #body
            }
        }
    });
    let exit = model.on_exit.as_ref().map(|handler| {
        let body = hook(model, handler, &protocol);
        quote! {
            #[allow(clippy::unit_arg)]
            fn exit(#parts: ::tapio::__private::Parts<'_, #actor>) -> ::core::result::Result<(), ::tapio::Failure> {
                #body
            }
        }
    });
    let messages: Vec<&syn::Type> = model.handlers.iter().filter_map(|h| h.message).collect();
    // The two facts the impl below assumes (its bounds are higher-ranked, so that a
    // wrong actor gives this error alone, not one per generated line): the actor is a
    // state machine, and this state is one of its states. One check, the second fact
    // asked through the first (`HasState` on the machine's own type), so an actor
    // that is no state machine is one error, not a second about its state. A message
    // outside the protocol leaves the impl without effect, and the actor's dispatch
    // names the message.
    // rustc reports a failing `A: StateMachine` at the call, and a state missing
    // from the table at the generic argument `A` (the bound goes through it): the
    // call carries the actor's span and that argument the state's.
    let mut actor_at_state = actor.clone();
    actor_at_state.set_span(model.name.span());
    let machine_check = quote_spanned! {actor.span()=>
        const _: fn() = || {
            fn is_a_state_of<A: ::tapio::__private::StateMachine, S>()
            where
                <A as ::tapio::__private::StateMachine>::Initial: ::tapio::__private::StateOf,
                <<A as ::tapio::__private::StateMachine>::Initial as ::tapio::__private::StateOf>::Machine:
                    ::tapio::__private::HasState<S>,
            {
            }
            is_a_state_of::<#actor_at_state, #state>();
        };
    };
    let name = model.name;
    let error = syn::Error::new_spanned(
        state,
        format!(
            "a second `#[state]` block for `{name}`: one block generates a state's dispatch, so all its handlers and hooks go in one `#[state({actor})] impl {name} {{ .. }}`; move these methods into the first block (methods that are not handlers go in a plain `impl {name}` block)"
        ),
    )
    .to_compile_error();
    let generated = quote! {
        #machine_check

        impl ::tapio::__private::StateHandlers for #state
        where
            for<'__tapio> #actor: ::tapio::__private::StateMachine,
            for<'__tapio> #state: ::tapio::__private::StateOf<Machine = #actor>,
            #(for<'__tapio> <#actor as ::tapio::__private::Protocol>::Msg: ::tapio::__private::Extract<#messages>,)*
        {
            #[allow(unreachable_code, clippy::needless_return, clippy::unit_arg, deprecated)]
            fn handle<'a>(
                #parts: ::tapio::__private::Parts<'a, #actor>,
                #message: #protocol,
            ) -> ::tapio::__private::Handled<'a, #protocol> {
                #(#arms)*
                #fallback
            }

            #enter
            #exit
        }
    };
    let once = super::once_per_scope("state", name, site, &error, &generated);
    quote! {
        #block
        #once
    }
}
