//! Parsing `#[actor]`: the arguments, the impl block and each handler's signature.

use proc_macro2::{Span, TokenStream};
use quote::format_ident;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Attribute, FnArg, ImplItem, ImplItemFn, Item, ItemImpl, Meta, Token, Type, Visibility};

use crate::errors::Errors;
use crate::model::{ActorModel, Handler, SignalHandler};
use crate::parse::message::item_keyword_span;
use crate::parse::{Form, bare, list_of, peel, value_of};
use crate::symbol::{
    HANDLER, HELPER, HELPERS, HELPERS_SUFFIX, MESSAGES, NO_HELPER, OTHERWISE, PROTOCOL,
    PROTOCOL_SUFFIX, SIGNAL, STASH_CAPACITY, STATE_HOOKS, STATES, SUB_PROTOCOLS, VARIANT, VIS,
};

/// The arguments of `#[actor(..)]`.
#[derive(Default)]
pub(crate) struct ActorArgs {
    protocol: Option<syn::Ident>,
    vis: Option<Visibility>,
    /// `helpers` (`Some(None)`) or `helpers = Name`: typed helpers are generated
    /// only when asked for.
    helpers: Option<Option<syn::Ident>>,
    /// `messages(..)`: a state machine's protocol.
    pub(crate) messages: Option<Vec<crate::parse::states::Listed>>,
    /// `states(..)`: a state machine's transition table.
    pub(crate) states: Option<Vec<crate::parse::states::Row>>,
    /// `stash_capacity = N`.
    pub(crate) stash_capacity: Option<syn::LitInt>,
    /// `sub_protocols(Name(A, B), ..)`.
    sub_protocols: Vec<crate::model::SubProtocol>,
    /// Whether an argument was refused: the ones after it were not read, so a
    /// state machine missing `messages(..)` or `states(..)` is not reported again.
    pub(crate) refused: bool,
}

const PROTOCOL_FORM: Form = Form {
    written: "protocol = CounterProtocol",
    meaning: "the name of the protocol enum",
};
const VIS_FORM: Form = Form {
    written: "vis = pub(crate)",
    meaning: "the visibility of the protocol enum and the helper trait",
};
const HELPERS_FORM: Form = Form {
    written: "helpers` or `helpers = CounterApi",
    meaning: "typed helpers on the ref, and the name of their trait",
};
const SUB_PROTOCOLS_FORM: Form = Form {
    written: "sub_protocols(Customer(Deposit, Balance))",
    meaning: "enums of some of the actor's messages, to narrow its ref to (`ActorRef::narrow`)",
};
const MESSAGES_FORM: Form = Form {
    written: "messages(Connect, Send)",
    meaning: "a state machine's protocol",
};
const STATES_FORM: Form = Form {
    written: "states(First => Second | Third, Second, Third)",
    meaning: "a state machine's transition table; the first row is the initial state",
};
const STASH_CAPACITY_FORM: Form = Form {
    written: "stash_capacity = 100",
    meaning: "how many messages a stashing state holds",
};
const HELPER_FORM: Form = Form {
    written: "helper = name",
    meaning: "the name of this handler's typed helper on the ref",
};
const NO_HELPER_FORM: Form = Form {
    written: "no_helper",
    meaning: "no typed helper for this handler",
};
const VARIANT_FORM: Form = Form {
    written: "variant = Name",
    meaning: "the name of this handler's variant in the protocol enum",
};

const USAGE: &str = "`#[actor]` goes on an inherent `impl` block of the actor type, with one method per message type: `#[actor] impl Counter { fn increment(&mut self, message: Increment) { .. } }`";

/// Parse the attribute's arguments, recording what is wrong with them.
pub(crate) fn parse_args(args: TokenStream, errors: &mut Errors) -> ActorArgs {
    let mut parsed = ActorArgs::default();
    let mut given = std::collections::HashSet::new();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(ToString::to_string);
        if let Some(key) = key
            && [
                PROTOCOL,
                MESSAGES,
                STATES,
                STASH_CAPACITY,
                VIS,
                HELPERS,
                SUB_PROTOCOLS,
            ]
            .contains(&key.as_str())
            && !given.insert(key.clone())
        {
            return Err(meta.error(format!(
                "`{key}` is given twice: give each argument of `#[actor]` once"
            )));
        }
        // A name or a visibility in quotes is a string to syn: say what to write.
        if (meta.path.is_ident(PROTOCOL) || meta.path.is_ident(VIS) || meta.path.is_ident(HELPERS))
            && meta.input.peek(syn::Token![=])
            && meta.input.peek2(syn::LitStr)
        {
            let value = meta.value()?;
            let quoted: syn::LitStr = value.parse()?;
            return Err(syn::Error::new(
                quoted.span(),
                format!(
                    "write it without quotes: `{} = {}`",
                    quote::ToTokens::to_token_stream(&meta.path),
                    quoted.value()
                ),
            ));
        }
        if meta.path.is_ident(PROTOCOL) {
            parsed.protocol = Some(value_of(&meta, PROTOCOL_FORM)?);
            Ok(())
        } else if meta.path.is_ident(MESSAGES) {
            let listed = list_of(&meta, MESSAGES_FORM)?;
            parsed.messages = Some(crate::parse::states::parse_messages(listed)?);
            Ok(())
        } else if meta.path.is_ident(STATES) {
            let table = list_of(&meta, STATES_FORM)?;
            parsed.states = Some(crate::parse::states::parse_table(table)?);
            Ok(())
        } else if meta.path.is_ident(STASH_CAPACITY) {
            let capacity: syn::LitInt = value_of(&meta, STASH_CAPACITY_FORM)?;
            if capacity.base10_parse::<usize>().is_ok_and(|n| n == 0) {
                return Err(syn::Error::new(
                    capacity.span(),
                    "`stash_capacity` must be at least 1: a stash of 0 holds nothing, so the first message a stashing state holds would stop the actor; leave the argument out for the default, or write `stash_capacity = 100`",
                ));
            }
            parsed.stash_capacity = Some(capacity);
            Ok(())
        } else if meta.path.is_ident(SUB_PROTOCOLS) {
            let listed = list_of(&meta, SUB_PROTOCOLS_FORM)?;
            parsed.sub_protocols = parse_sub_protocols(listed)?;
            Ok(())
        } else if meta.path.is_ident(VIS) {
            parsed.vis = Some(value_of(&meta, VIS_FORM)?);
            Ok(())
        } else if meta.path.is_ident(HELPERS) {
            parsed.helpers = Some(if meta.input.peek(syn::Token![=]) {
                Some(value_of(&meta, HELPERS_FORM)?)
            } else {
                bare(&meta, HELPERS_FORM)?;
                None
            });
            Ok(())
        } else {
            Err(meta.error(format!(
                "unknown argument: `#[actor]` takes `{PROTOCOL} = Name` (the protocol enum's name), `{HELPERS}` or `{HELPERS} = Name` (typed helpers on the ref, and their trait's name), `{VIS} = pub(crate)` (their visibility) and `{SUB_PROTOCOLS}(Name(A, B), ..)` (enums of some of its messages, to narrow its ref to); a state machine adds `{MESSAGES}(A, B, ..)` (its protocol), `{STATES}(First => Second | Third, ..)` (its transition table) and `{STASH_CAPACITY} = N`"
            )))
        }
    });
    if let Err(error) = parser.parse2(args) {
        errors.push(error);
        parsed.refused = true;
    }
    parsed
}

/// `Name(A, B), Other(C)`: each sub-protocol's name and its messages.
fn parse_sub_protocols(listed: TokenStream) -> syn::Result<Vec<crate::model::SubProtocol>> {
    struct One(crate::model::SubProtocol);
    impl syn::parse::Parse for One {
        fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
            let name: syn::Ident = input.parse().map_err(|error| {
                SUB_PROTOCOLS_FORM.error(
                    error.span(),
                    "a sub-protocol is a name and its messages in parentheses",
                )
            })?;
            if !input.peek(syn::token::Paren) {
                return Err(SUB_PROTOCOLS_FORM.error(
                    name.span(),
                    &format!("`{name}` lists its messages in parentheses"),
                ));
            }
            let content;
            syn::parenthesized!(content in input);
            let messages =
                content.parse_terminated(<Type as syn::parse::Parse>::parse, syn::Token![,])?;
            if messages.is_empty() {
                return Err(SUB_PROTOCOLS_FORM.error(
                    name.span(),
                    &format!("`{name}` lists no message: a sub-protocol holds at least one of the actor's messages"),
                ));
            }
            Ok(Self(crate::model::SubProtocol {
                name,
                messages: messages.into_iter().collect(),
            }))
        }
    }
    let parser = syn::punctuated::Punctuated::<One, syn::Token![,]>::parse_terminated;
    Ok(syn::parse::Parser::parse2(parser, listed)?
        .into_iter()
        .map(|one| one.0)
        .collect())
}

/// The impl block, if the item is one `#[actor]` can work with.
pub(crate) fn parse_impl<'a>(item: &'a Item, errors: &mut Errors) -> Option<&'a ItemImpl> {
    let Item::Impl(block) = item else {
        errors.push(syn::Error::new(item_keyword_span(item), USAGE));
        return None;
    };
    if let Some((_, path, _)) = &block.trait_ {
        errors.error(
            path,
            "`#[actor]` goes on an inherent impl block such as `impl Counter`, not on a trait impl: it generates the `Actor` impl itself",
        );
        return None;
    }
    if !block.generics.params.is_empty() {
        errors.error(
            &block.generics,
            "`#[actor]` does not support generic actor types yet: write the block for a concrete type",
        );
        return None;
    }
    Some(block)
}

/// Build the model of an `#[actor]` block. Handlers with errors are left out (and
/// reported), so the rest can still be generated and one mistake does not cascade.
pub(crate) fn parse_actor<'a>(
    block: &'a ItemImpl,
    args: ActorArgs,
    errors: &mut Errors,
) -> Option<ActorModel<'a>> {
    let self_ty = peel(&block.self_ty);
    let type_name = match self_ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last().map(|s| &s.ident),
        _ => None,
    };
    let Some(type_name) = type_name else {
        errors.error(
            self_ty,
            "`#[actor]` needs a named type here, such as `impl Counter`",
        );
        return None;
    };
    let protocol = args
        .protocol
        .unwrap_or_else(|| format_ident!("{}{}", type_name, PROTOCOL_SUFFIX));
    let helpers = args
        .helpers
        .map(|name| name.unwrap_or_else(|| format_ident!("{}{}", type_name, HELPERS_SUFFIX)));
    let vis = args
        .vis
        .unwrap_or_else(|| Visibility::Public(syn::token::Pub(Span::call_site())));
    let mut handlers = Vec::new();
    let mut signal: Option<SignalHandler<'a>> = None;
    for item in &block.items {
        let ImplItem::Fn(method) = item else {
            errors.error(
                item,
                "an `#[actor]` block holds only handler methods: move this item to a separate `impl` block",
            );
            continue;
        };
        if let Some(attr) = state_hook(method) {
            let hook = attr
                .path()
                .get_ident()
                .map_or_else(String::new, ToString::to_string);
            let instead = if hook == OTHERWISE {
                "a plain actor refuses a message it has no handler for (a dead letter): give that message a handler of its own"
            } else {
                "a plain actor does what it must at its start in the setup that builds it, and at its end in a `#[signal]` handler"
            };
            errors.error(
                attr,
                format!(
                    "`#[{hook}]` belongs to a state of a state machine, in a `#[state]` block; remove it here: {instead}"
                ),
            );
            continue;
        }
        if is_signal_handler(method) {
            if let Some(attr) = method
                .attrs
                .iter()
                .find(|a| a.path().is_ident(SIGNAL) && !matches!(a.meta, syn::Meta::Path(_)))
            {
                errors.error(
                    attr,
                    "`#[signal]` takes no arguments: write it bare, `#[signal]`",
                );
            }
            if let Some(attr) = method.attrs.iter().find(|a| a.path().is_ident(HANDLER)) {
                errors.error(
                    attr,
                    "`#[handler(..)]` names what is generated for a message handler; a `#[signal]` handler has no helper: remove it",
                );
            }
            if let Some(first) = &signal {
                errors.error(
                    &method.sig.ident,
                    format!(
                        "a second `#[signal]` handler: `{}` already handles this actor's signals; match on the `Signal` there",
                        first.method.sig.ident
                    ),
                );
            } else if let Some(parsed) = parse_signal_handler(method, errors) {
                signal = Some(parsed);
            }
        } else if let Some(handler) = parse_handler(method, helpers.is_some(), errors) {
            handlers.push(handler);
        }
    }
    Some(ActorModel {
        item: block,
        self_ty,
        type_name,
        protocol,
        vis,
        helpers,
        handlers,
        signal,
        sub_protocols: args.sub_protocols,
    })
}

/// What `#[handler(..)]` says: the name of the handler's helper (`None` for no
/// helper), and the name of its variant when it is not the message type's.
fn parse_handler_attrs(
    method: &ImplItemFn,
    helpers: bool,
    errors: &mut Errors,
) -> (Option<syn::Ident>, Option<syn::Ident>) {
    let mut name = Some(method.sig.ident.clone());
    let mut variant = None;
    for attr in method.attrs.iter().filter(|a| a.path().is_ident(HANDLER)) {
        let result = attr.parse_nested_meta(|meta| {
            if !helpers && (meta.path.is_ident(HELPER) || meta.path.is_ident(NO_HELPER)) {
                return Err(meta.error(
                    "this block generates no typed helpers, so there is no helper to name or leave out: add `#[actor(helpers)]`, or remove this",
                ));
            }
            if meta.path.is_ident(HELPER) {
                name = Some(value_of(&meta, HELPER_FORM)?);
                Ok(())
            } else if meta.path.is_ident(NO_HELPER) {
                bare(&meta, NO_HELPER_FORM)?;
                name = None;
                Ok(())
            } else if meta.path.is_ident(VARIANT) {
                variant = Some(value_of(&meta, VARIANT_FORM)?);
                Ok(())
            } else {
                Err(meta.error(format!(
                    "unknown argument: `#[handler]` takes `{HELPER} = name` (the name of this handler's typed helper on the ref), `{NO_HELPER}` (no helper) or `{VARIANT} = Name` (the name of its variant in the protocol enum)"
                )))
            }
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
    (name, variant)
}

/// A hook only a `#[state]` block takes (`#[on_entry]`, `#[on_exit]`, `#[otherwise]`),
/// written on a method of an `#[actor]` block.
pub(crate) fn state_hook(method: &ImplItemFn) -> Option<&syn::Attribute> {
    method
        .attrs
        .iter()
        .find(|attr| STATE_HOOKS.iter().any(|hook| attr.path().is_ident(hook)))
}

fn is_signal_handler(method: &ImplItemFn) -> bool {
    method.attrs.iter().any(|attr| attr.path().is_ident(SIGNAL))
}

/// The typed parameters after the receiver, once the receiver is known to be right.
fn checked_inputs<'a>(
    method: &'a ImplItemFn,
    what: &str,
    errors: &mut Errors,
) -> Option<Vec<&'a syn::PatType>> {
    let sig = &method.sig;
    let name = &sig.ident;
    if let Some(unsafety) = &sig.unsafety {
        errors.error(
            unsafety,
            format!(
                "a {what} cannot be `unsafe`: the runtime calls it, and cannot uphold a contract it does not know; make `{name}` safe, with an `unsafe` block inside it if it needs one"
            ),
        );
        return None;
    }
    if !sig.generics.params.is_empty() {
        errors.error(
            &sig.generics,
            format!("a {what} cannot be generic: the protocol needs one concrete message type per handler"),
        );
        return None;
    }
    match sig.receiver() {
        None => {
            errors.error(
                name,
                format!(
                    "`{name}` has no `self`: every method of an `#[actor]` block is a {what} and takes `&mut self`; if `{name}` is not one, move it to a separate `impl` block"
                ),
            );
            return None;
        }
        Some(receiver) if receiver.reference.is_none() || receiver.colon_token.is_some() => {
            errors.error(
                receiver,
                format!(
                    "a {what} borrows the actor for one message at a time: write `&mut self` (or `&self`)"
                ),
            );
            return None;
        }
        Some(_) => {}
    }
    Some(
        sig.inputs
            .iter()
            .filter_map(|input| match input {
                FnArg::Typed(typed) => Some(typed),
                FnArg::Receiver(_) => None,
            })
            .collect(),
    )
}

/// A message handler; `helpers`: whether the block generates typed helpers.
fn parse_handler<'a>(
    method: &'a ImplItemFn,
    helpers: bool,
    errors: &mut Errors,
) -> Option<Handler<'a>> {
    let inputs = checked_inputs(method, "message handler", errors)?;
    let name = &method.sig.ident;
    let usage = format!(
        "a handler takes the message it handles, and optionally the context before it: `fn {name}(&mut self, ctx: &mut Ctx<Self>, message: SomeMessage)`"
    );
    let (ctx, message) = match inputs.as_slice() {
        [message] => (None, *message),
        [ctx, message] => (Some(*ctx), *message),
        [] => {
            errors.push(syn::Error::new(
                method.sig.paren_token.span.join(),
                format!("`{name}` takes no message: {usage}"),
            ));
            return None;
        }
        [_, _, extra, ..] => {
            errors.error(extra, format!("too many parameters: {usage}"));
            return None;
        }
    };
    if let Some(ctx) = ctx
        && !is_context(&ctx.ty)
    {
        errors.error(
            &ctx.ty,
            "with two parameters, the first is the context: write `ctx: &mut Ctx<Self>` here, and the message after it",
        );
        return None;
    }
    let message_ty = peel(&message.ty);
    if names_self(message_ty) {
        errors.error(
            message_ty,
            "a message type cannot be written with `Self`: in the protocol enum `#[actor]` generates, `Self` would mean that enum, not this actor; write the type by its name",
        );
        return None;
    }
    if let Type::Reference(reference) = message_ty
        && let Some(advice) = crate::parse::refused_reference(reference)
    {
        errors.error(message_ty, advice);
        return None;
    }
    let Some(variant) = crate::parse::default_variant(message_ty) else {
        errors.error(
            message_ty,
            "expected the type of the message this method handles, such as `Increment`",
        );
        return None;
    };
    let (helper, named_variant) = parse_handler_attrs(method, helpers, errors);
    let variant = named_variant.unwrap_or(variant);
    let cfgs = method.attrs.iter().filter_map(conditions).collect();
    Some(Handler {
        method,
        is_async: method.sig.asyncness.is_some(),
        takes_ctx: ctx.is_some(),
        message: message_ty,
        variant,
        helper,
        cfgs,
    })
}

/// What of a handler's attribute decides whether it is compiled: a `cfg` as it is;
/// a `cfg_attr` kept with only the `cfg`s it applies (`#[cfg_attr(unix, inline,
/// cfg(x))]` gives `#[cfg_attr(unix, cfg(x))]`), since its other attributes are the
/// method's own and may not be valid on a variant or an impl; anything else, nothing.
fn conditions(attr: &Attribute) -> Option<Attribute> {
    if attr.path().is_ident("cfg") {
        return Some(attr.clone());
    }
    if !attr.path().is_ident("cfg_attr") {
        return None;
    }
    let metas = attr
        .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
        .ok()?;
    let mut metas = metas.into_iter();
    let predicate = metas.next()?;
    let kept: Vec<Meta> = metas
        .filter_map(|meta| {
            if meta.path().is_ident("cfg") {
                Some(meta)
            } else if meta.path().is_ident("cfg_attr") {
                let nested: Attribute = syn::parse_quote!(#[#meta]);
                conditions(&nested).map(|nested| nested.meta)
            } else {
                None
            }
        })
        .collect();
    if kept.is_empty() {
        return None;
    }
    let span = attr.pound_token.span;
    Some(syn::parse_quote_spanned!(span=> #[cfg_attr(#predicate, #(#kept),*)]))
}

fn parse_signal_handler<'a>(
    method: &'a ImplItemFn,
    errors: &mut Errors,
) -> Option<SignalHandler<'a>> {
    let inputs = checked_inputs(method, "signal handler", errors)?;
    let name = &method.sig.ident;
    let signal = inputs.last().map(|signal| peel(&signal.ty));
    if let Some(signal) = signal
        && !matches!(signal, Type::Reference(_))
    {
        errors.error(
            signal,
            "a signal handler borrows the signal: write `signal: &Signal`",
        );
        return None;
    }
    let takes_ctx = match inputs.as_slice() {
        [_signal] => false,
        [ctx, _signal] => {
            if !is_context(&ctx.ty) {
                errors.error(
                    &ctx.ty,
                    "with two parameters, the first is the context: write `ctx: &mut Ctx<Self>` here, and the signal after it",
                );
                return None;
            }
            true
        }
        _ => {
            errors.push(syn::Error::new(
                method.sig.paren_token.span.join(),
                format!(
                    "a signal handler takes the signal, and optionally the context before it: `fn {name}(&mut self, ctx: &mut Ctx<Self>, signal: &Signal)`"
                ),
            ));
            return None;
        }
    };
    Some(SignalHandler {
        method,
        is_async: method.sig.asyncness.is_some(),
        takes_ctx,
    })
}

/// `&mut Ctx<..>` or `&mut ActorContext<..>` (by any path): the context parameter.
fn is_context(ty: &Type) -> bool {
    let Type::Reference(reference) = peel(ty) else {
        return false;
    };
    let Type::Path(path) = peel(&reference.elem) else {
        return false;
    };
    reference.mutability.is_some()
        && path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "Ctx" || segment.ident == "ActorContext")
}

/// Whether `ty` names `Self` anywhere: inside the generated protocol enum, `Self`
/// would mean the enum, not the actor.
fn names_self(ty: &Type) -> bool {
    fn walk(tokens: proc_macro2::TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => ident == "Self",
            proc_macro2::TokenTree::Group(group) => walk(group.stream()),
            _ => false,
        })
    }
    walk(quote::ToTokens::to_token_stream(ty))
}

#[cfg(test)]
mod tests {
    use quote::ToTokens;
    use syn::parse_quote;

    use super::*;

    fn text(attr: Option<Attribute>) -> Option<String> {
        attr.map(|a| a.to_token_stream().to_string())
    }

    #[test]
    fn a_cfg_is_kept_and_a_cfg_attr_keeps_only_its_cfgs() {
        assert_eq!(
            text(conditions(&parse_quote!(#[cfg(any())]))),
            Some("# [cfg (any ())]".to_owned())
        );
        assert_eq!(
            text(conditions(
                &parse_quote!(#[cfg_attr(unix, inline, cfg(test))])
            )),
            Some("# [cfg_attr (unix , cfg (test))]".to_owned())
        );
        assert_eq!(
            text(conditions(
                &parse_quote!(#[cfg_attr(unix, cfg_attr(test, inline, cfg(x)))])
            )),
            Some("# [cfg_attr (unix , cfg_attr (test , cfg (x)))]".to_owned())
        );
        assert_eq!(
            text(conditions(&parse_quote!(#[cfg_attr(unix, inline)]))),
            None
        );
        assert_eq!(text(conditions(&parse_quote!(#[inline]))), None);
    }

    #[test]
    fn an_argument_without_its_value_is_refused_naming_it_and_its_form() {
        let message = |args: TokenStream| {
            let mut errors = Errors::default();
            let parsed = parse_args(args, &mut errors);
            assert!(parsed.refused);
            errors.finish().expect_err("an error").to_string()
        };
        assert_eq!(
            message(quote::quote!(protocol)),
            "`protocol` needs a value: write `protocol = CounterProtocol` (the name of the protocol enum)"
        );
        assert!(message(quote::quote!(states)).starts_with("`states` lists its entries in parentheses: write `states(First => Second | Third, Second, Third)`"));
        assert!(message(quote::quote!(stash_capacity = "16")).starts_with("`stash_capacity` cannot take this value (expected integer literal): write `stash_capacity = 100`"));
        assert!(message(quote::quote!(helpers(X))).starts_with(
            "`helpers` takes nothing in parentheses: write `helpers` or `helpers = CounterApi`"
        ));
    }

    #[test]
    fn a_message_by_reference_is_refused_on_its_type() {
        let block: ItemImpl = parse_quote! {
            impl Pinger {
                fn ping(&mut self, _: &Ping) {}
            }
        };
        let mut errors = Errors::default();
        let model = parse_actor(&block, ActorArgs::default(), &mut errors).expect("a model");
        assert!(model.handlers.is_empty());
        let error = errors.finish().expect_err("an error");
        assert_eq!(
            error.to_string(),
            "a handler takes its message by value: write `Ping`, not a reference"
        );
    }

    #[test]
    fn a_second_signal_handler_is_refused() {
        let block: ItemImpl = parse_quote! {
            impl Pinger {
                #[signal]
                fn on_signal(&mut self, _: &Signal) {}
                #[signal]
                fn on_stop(&mut self, _: &Signal) {}
            }
        };
        let mut errors = Errors::default();
        let model = parse_actor(&block, ActorArgs::default(), &mut errors).expect("a model");
        assert_eq!(
            model.signal.map(|s| s.method.sig.ident.to_string()),
            Some("on_signal".to_owned())
        );
        assert!(
            errors
                .finish()
                .expect_err("an error")
                .to_string()
                .starts_with("a second `#[signal]` handler")
        );
    }
}
