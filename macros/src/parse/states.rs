//! Parsing a state machine: the `messages(..)` and `states(..)` arguments of
//! `#[actor]`, and a `#[state(Actor)]` block with its handlers and hooks.

use proc_macro2::TokenStream;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{FnArg, Ident, ImplItem, ImplItemFn, Item, ItemImpl, ReturnType, Token, Type};

use crate::errors::Errors;
use crate::parse::message::item_keyword_span;
use crate::parse::peel;
use crate::symbol::{ON_ENTRY, ON_EXIT, OTHERWISE, REFUSE, STASH, STATE_HOOKS, UNHANDLED};

/// One row of the `states(..)` table: a state and the states it may switch to.
pub(crate) struct Row {
    /// The state.
    pub(crate) state: Ident,
    /// Its declared successors, in the order written.
    pub(crate) successors: Vec<Ident>,
}

impl Parse for Row {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let state: Ident = input.parse()?;
        let mut successors = Vec::new();
        if input.peek(Token![=>]) {
            input.parse::<Token![=>]>()?;
            successors.push(input.parse()?);
            while input.peek(Token![|]) {
                input.parse::<Token![|]>()?;
                successors.push(input.parse()?);
            }
        }
        Ok(Self { state, successors })
    }
}

/// Parse the inside of `states(..)`: rows separated by commas.
pub(crate) fn parse_table(tokens: TokenStream) -> syn::Result<Vec<Row>> {
    let rows = Punctuated::<Row, Token![,]>::parse_terminated.parse2(tokens)?;
    Ok(rows.into_iter().collect())
}

/// One entry of `messages(..)`: a message type, and the name of its typed helper
/// when `as name` gives one.
pub(crate) struct Listed {
    /// The message type.
    pub(crate) message: Type,
    /// `as name`.
    pub(crate) helper: Option<Ident>,
}

impl Parse for Listed {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let message: Type = input.parse()?;
        let message = peel(&message).clone();
        let helper = if input.peek(Token![as]) {
            input.parse::<Token![as]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Self { message, helper })
    }
}

/// Parse the inside of `messages(..)`: message types (each optionally `as
/// helper_name`) separated by commas.
pub(crate) fn parse_messages(tokens: TokenStream) -> syn::Result<Vec<Listed>> {
    let listed = Punctuated::<Listed, Token![,]>::parse_terminated.parse2(tokens)?;
    Ok(listed.into_iter().collect())
}

/// What a state does with a message it has no handler for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Unhandled {
    /// Refuse it: a dead letter naming the state; an ask fails at once.
    Refuse,
    /// Stash it until the next switch.
    Stash,
}

/// The arguments of `#[state(Actor, unhandled = ..)]`.
pub(crate) struct StateArgs {
    /// The actor this is a state of.
    pub(crate) actor: Ident,
    /// The policy for messages without a handler.
    pub(crate) unhandled: Unhandled,
}

const STATE_USAGE: &str = "`#[state]` names the actor it is a state of: `#[state(Connection)] impl Ready { .. }`, optionally with `unhandled = stash` (hold messages this state does not handle until the next switch) or `unhandled = refuse` (the default)";

/// Parse the attribute's arguments.
pub(crate) fn parse_state_args(args: TokenStream, errors: &mut Errors) -> Option<StateArgs> {
    let mut actor = None;
    let mut unhandled = Unhandled::Refuse;
    let span = proc_macro2::Span::call_site();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident(UNHANDLED) {
            let policy: Ident = crate::parse::value_of(
                &meta,
                crate::parse::Form {
                    written: "unhandled = stash",
                    meaning: "hold the messages this state has no handler for until the next switch; `unhandled = refuse` is the default",
                },
            )?;
            unhandled = if policy == STASH {
                Unhandled::Stash
            } else if policy == REFUSE {
                Unhandled::Refuse
            } else {
                return Err(syn::Error::new(
                    policy.span(),
                    "`unhandled` is `refuse` (the default: a dead letter naming the state) or `stash` (held until the next switch); for a handler of its own, mark a method `#[otherwise]`",
                ));
            };
            Ok(())
        } else if let Some(ident) = meta.path.get_ident()
            && actor.is_none()
            && meta.input.is_empty() | meta.input.peek(Token![,])
        {
            actor = Some(ident.clone());
            Ok(())
        } else if meta.path.segments.len() > 1
            && actor.is_none()
            && meta.input.is_empty() | meta.input.peek(Token![,])
        {
            let path = &meta.path;
            let name = path
                .segments
                .last()
                .map_or_else(String::new, |last| last.ident.to_string());
            let written = quote::quote!(#path).to_string().replace(' ', "");
            Err(syn::Error::new_spanned(
                path,
                format!(
                    "`#[state]` names its actor by a single name in scope, not a path: write `use {written};` above this block, then `#[state({name})]`"
                ),
            ))
        } else {
            Err(meta.error(format!("unknown argument: {STATE_USAGE}")))
        }
    });
    if let Err(error) = parser.parse2(args) {
        errors.push(error);
        // With the actor named, the block still gets its handlers (under the
        // default policy), so the one error is not followed by "a state without
        // a `#[state]` block".
        return actor.map(|actor| StateArgs {
            actor,
            unhandled: Unhandled::Refuse,
        });
    }
    let Some(actor) = actor else {
        errors.push(syn::Error::new(span, STATE_USAGE));
        return None;
    };
    Some(StateArgs { actor, unhandled })
}

/// A `#[state]` block.
pub(crate) struct StateModel<'a> {
    /// The block as written.
    pub(crate) item: &'a ItemImpl,
    /// The state type.
    pub(crate) self_ty: &'a Type,
    /// Its name.
    pub(crate) name: &'a Ident,
    /// The actor.
    pub(crate) actor: Ident,
    /// What to do with a message without a handler.
    pub(crate) unhandled: Unhandled,
    /// One per message type.
    pub(crate) handlers: Vec<StateHandler<'a>>,
    /// `#[on_entry]`.
    pub(crate) on_entry: Option<StateHandler<'a>>,
    /// `#[on_exit]`.
    pub(crate) on_exit: Option<StateHandler<'a>>,
    /// `#[otherwise]`.
    pub(crate) otherwise: Option<StateHandler<'a>>,
}

/// A method of a state: what it takes, in the order written.
pub(crate) struct StateHandler<'a> {
    /// The method as written.
    pub(crate) method: &'a ImplItemFn,
    /// Whether it takes `self` by value (it may switch), or `&mut self`.
    pub(crate) switches: bool,
    /// Whether it has a receiver at all (`#[on_exit]` has none).
    pub(crate) has_self: bool,
    /// Whether it is `async`.
    pub(crate) is_async: bool,
    /// The parameters before the message, in order.
    pub(crate) params: Vec<Param>,
    /// The message type, for a message handler.
    pub(crate) message: Option<&'a Type>,
}

/// A parameter a state's method may take besides its message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Param {
    /// `&mut Actor`: the data every state shares.
    Data,
    /// `&mut Ctx<Actor>`: the context.
    Ctx,
}

/// What a state's block is, if the item is one.
pub(crate) fn parse_state<'a>(
    item: &'a Item,
    args: StateArgs,
    errors: &mut Errors,
) -> Option<StateModel<'a>> {
    let Item::Impl(block) = item else {
        errors.push(syn::Error::new(item_keyword_span(item), STATE_USAGE));
        return None;
    };
    if let Some((_, path, _)) = &block.trait_ {
        errors.error(path, format!("`#[state]` goes on an inherent impl block of the state type, not a trait impl: {STATE_USAGE}"));
        return None;
    }
    if !block.generics.params.is_empty() {
        errors.error(
            &block.generics,
            "a state cannot be generic: write the block for a concrete state type",
        );
        return None;
    }
    let self_ty = peel(&block.self_ty);
    let name = match self_ty {
        Type::Path(path) if path.qself.is_none() && path.path.segments.len() == 1 => {
            &path.path.segments[0].ident
        }
        _ => {
            errors.error(self_ty, "a state is named by a plain type name, such as `impl Ready`, as the actor's `states(..)` table writes it");
            return None;
        }
    };
    let mut model = StateModel {
        item: block,
        self_ty,
        name,
        actor: args.actor,
        unhandled: args.unhandled,
        handlers: Vec::new(),
        on_entry: None,
        on_exit: None,
        otherwise: None,
    };
    for item in &block.items {
        let ImplItem::Fn(method) = item else {
            errors.error(item, "a `#[state]` block holds only the state's handlers and hooks: move this item to a separate `impl` block");
            continue;
        };
        let hooks: Vec<&str> = STATE_HOOKS
            .into_iter()
            .filter(|hook| method.attrs.iter().any(|attr| attr.path().is_ident(hook)))
            .collect();
        if let [first, second, ..] = hooks.as_slice() {
            errors.error(
                &method.sig.ident,
                format!(
                    "`{}` is marked both `#[{first}]` and `#[{second}]`: a method is one hook; write one method for each",
                    method.sig.ident
                ),
            );
            continue;
        }
        let hook = hooks.first().copied();
        let Some(parsed) = parse_method(method, &model.actor, hook, errors) else {
            continue;
        };
        let slot = match hook {
            Some(h) if h == ON_ENTRY => &mut model.on_entry,
            Some(h) if h == ON_EXIT => &mut model.on_exit,
            Some(_) => &mut model.otherwise,
            None => {
                model.handlers.push(parsed);
                continue;
            }
        };
        if let Some(first) = slot {
            errors.error(
                &method.sig.ident,
                format!(
                    "a second `#[{}]` method: `{}` is this state's already",
                    hook.unwrap_or_default(),
                    first.method.sig.ident
                ),
            );
        } else {
            *slot = Some(parsed);
        }
    }
    if let (Some(otherwise), Unhandled::Stash) = (&model.otherwise, model.unhandled) {
        errors.error(
            &otherwise.method.sig.ident,
            "this state stashes what it does not handle (`unhandled = stash`), so an `#[otherwise]` handler would never run: keep one of the two",
        );
    }
    Some(model)
}

fn parse_method<'a>(
    method: &'a ImplItemFn,
    actor: &Ident,
    hook: Option<&str>,
    errors: &mut Errors,
) -> Option<StateHandler<'a>> {
    let sig = &method.sig;
    let name = &sig.ident;
    if let Some(unsafety) = &sig.unsafety {
        errors.error(
            unsafety,
            format!(
                "a state's handler cannot be `unsafe`: the runtime calls it, and cannot uphold a contract it does not know; make `{name}` safe, with an `unsafe` block inside it if it needs one"
            ),
        );
        return None;
    }
    if !sig.generics.params.is_empty() {
        errors.error(
            &sig.generics,
            "a state's handler cannot be generic: one concrete message type per handler",
        );
        return None;
    }
    let receiver = sig.receiver();
    let (has_self, switches) = match receiver {
        None => (false, false),
        Some(r) if r.colon_token.is_some() => {
            errors.error(r, "write the receiver as `self` (a handler that may switch states) or `&mut self` (one that stays)");
            return None;
        }
        Some(r) => match (&r.reference, &r.mutability) {
            (None, _) => (true, true),
            (Some(_), Some(_)) => (true, false),
            (Some(_), None) => {
                errors.error(r, "a state's handler takes `&mut self` (it stays in the state) or `self` (it may switch): `&self` cannot change the state");
                return None;
            }
        },
    };
    let typed: Vec<&syn::PatType> = sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Typed(typed) => Some(typed),
            FnArg::Receiver(_) => None,
        })
        .collect();
    let usage = format!(
        "a state's handler takes the data every state shares and the context if it needs them, then its message: `fn {name}(self, data: &mut {actor}, ctx: &mut Ctx<{actor}>, message: SomeMessage) -> Next<Self>`"
    );
    let (before, message) = match hook {
        Some(h) if h == ON_ENTRY || h == ON_EXIT => (typed.as_slice(), None),
        _ => match typed.split_last() {
            Some((last, before)) => (before, Some(peel(&last.ty))),
            None => {
                errors.push(syn::Error::new(
                    sig.paren_token.span.join(),
                    format!("`{name}` takes no message: {usage}"),
                ));
                return None;
            }
        },
    };
    let mut params = Vec::new();
    for param in before {
        match classify(&param.ty, actor) {
            Some(kind) if !params.contains(&kind) => params.push(kind),
            _ => {
                errors.error(&param.ty, format!("expected `&mut {actor}` (the data every state shares) or `&mut Ctx<{actor}>` (the context): {usage}"));
                return None;
            }
        }
    }
    if let Some(Type::Reference(reference)) = message
        && let Some(advice) = crate::parse::refused_reference(reference)
    {
        errors.error(reference, advice);
        return None;
    }
    match hook {
        Some(h) if h == ON_EXIT && has_self => {
            errors.error(sig.receiver(), "`#[on_exit]` runs after a switching handler has taken the state by value, so it has no `self`: take `data: &mut _` and `ctx: &mut Ctx<_>` only");
            return None;
        }
        Some(h) if (h == ON_ENTRY || h == OTHERWISE) && (switches || !has_self) => {
            errors.error(
                name,
                format!("`#[{h}]` takes `&mut self`: it cannot switch states"),
            );
            return None;
        }
        None if !has_self => {
            errors.error(name, format!("`{name}` has no `self`: {usage}"));
            return None;
        }
        _ => {}
    }
    if !switches
        && let ReturnType::Type(_, ty) = &sig.output
        && returns_next(ty)
    {
        errors.error(
            sig.receiver(),
            format!("`{name}` answers with a `Next`, so it may switch states: take the state by value, `self`, so that it can move into the next one"),
        );
        return None;
    }
    if hook.is_some() && sig.asyncness.is_some() {
        errors.error(
            sig.asyncness,
            "hooks run between two messages and cannot be `async`",
        );
        return None;
    }
    Some(StateHandler {
        method,
        switches,
        has_self,
        is_async: sig.asyncness.is_some(),
        params,
        message,
    })
}

/// `&mut Ctx<..>` or `&mut ActorContext<..>` is the context; `&mut {actor}` the data.
fn classify(ty: &Type, actor: &Ident) -> Option<Param> {
    let Type::Reference(reference) = peel(ty) else {
        return None;
    };
    reference.mutability?;
    let Type::Path(path) = peel(&reference.elem) else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident == "Ctx" || last.ident == "ActorContext" {
        Some(Param::Ctx)
    } else if last.ident == *actor {
        Some(Param::Data)
    } else {
        None
    }
}

/// Refuse `&mut Ctx<Self>` (or `ActorContext<Self>`) in a state's handler: an
/// `#[actor]` handler's context, copied into a state, where `Self` is the state. The
/// error says to name the actor, and the parameter is rewritten to do so, so that
/// the one mistake is not followed by errors about the state not being a message.
pub(crate) fn name_the_actor_in_contexts(item: &mut syn::Item, actor: &Ident, errors: &mut Errors) {
    let syn::Item::Impl(block) = item else {
        return;
    };
    for item in &mut block.items {
        let syn::ImplItem::Fn(method) = item else {
            continue;
        };
        for input in &mut method.sig.inputs {
            let FnArg::Typed(typed) = input else {
                continue;
            };
            if let Some(self_arg) = context_of_self(&mut typed.ty) {
                errors.error(
                    &*self_arg,
                    format!("in a `#[state]` block `Self` is the state, not the actor: the context is the actor's, `&mut Ctx<{actor}>`"),
                );
                let span = syn::spanned::Spanned::span(&*self_arg);
                *self_arg = Type::Path(syn::TypePath {
                    qself: None,
                    path: Ident::new(&actor.to_string(), span).into(),
                });
            }
        }
    }
}

/// The `Self` in `&mut Ctx<Self>` or `&mut ActorContext<Self>`.
fn context_of_self(ty: &mut Type) -> Option<&mut Type> {
    let Type::Reference(reference) = ty else {
        return None;
    };
    let Type::Path(path) = &mut *reference.elem else {
        return None;
    };
    let last = path.path.segments.last_mut()?;
    if last.ident != "Ctx" && last.ident != "ActorContext" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &mut last.arguments else {
        return None;
    };
    args.args.iter_mut().find_map(|arg| match arg {
        syn::GenericArgument::Type(inner) => match inner {
            Type::Path(inner_path)
                if inner_path.qself.is_none() && inner_path.path.is_ident("Self") =>
            {
                Some(inner)
            }
            _ => None,
        },
        _ => None,
    })
}

/// Whether a return type is a `Next`, a `Result` of one, or a tuple ending in one.
fn returns_next(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path.path.segments.last().is_some_and(|last| {
            last.ident == "Next"
                || (last.ident == "Result"
                    && matches!(&last.arguments, syn::PathArguments::AngleBracketed(args)
                        if args.args.first().is_some_and(|first| matches!(first, syn::GenericArgument::Type(inner) if returns_next(inner)))))
        }),
        Type::Tuple(tuple) => tuple.elems.last().is_some_and(returns_next),
        Type::Paren(inner) => returns_next(&inner.elem),
        Type::Group(inner) => returns_next(&inner.elem),
        _ => false,
    }
}
