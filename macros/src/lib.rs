//! The attribute macros of [tapio](https://docs.rs/tapio): `#[message]`, `#[actor]`,
//! `#[state]`, `#[remote_behavior]` and `#[tapio::test]`.
//!
//! Use them through `tapio` (`use tapio::prelude::*;`), which documents what they
//! generate; the generated code names the runtime through `::tapio`.
//!
//! Each macro runs in stages: `parse` (tokens to a model that keeps the original
//! syntax for spans), `check` (rules over the whole model), `expand` (one file per
//! generated artefact), and `fallback` (what is emitted beside errors).
//!
//! Errors collect in `Errors` (`errors.rs`), so every mistake of an input shows at
//! once. Argument names live in `symbol.rs`. Every hidden item a macro generates is
//! unique to one expansion (`expansion_hash`: the places of the attribute and of the
//! type's name, with their `Debug` text, which carries rustc's hygiene context), so a
//! `macro_rules!` may write `#[message]` and `#[actor]` items as often as it likes. That
//! text's form is not promised; if it changes, only items whose type name is spelled
//! inside one macro's body and expanded into two modules would clash again.

mod check;
mod errors;
mod expand;
mod fallback;
mod model;
mod parse;
mod suggest;
mod symbol;

use proc_macro::TokenStream;

use crate::errors::Errors;

/// Make a struct or enum a message; `#[message(reply = T)]` also makes it a request
/// answered with a `T`. `#[message(remote = "a.stable.key")]` registers it for the
/// wire; a request registered so must answer with a registered type too (its answer
/// crosses back as a frame), or it does not compile. Such a type derives serde's
/// `Serialize` and `Deserialize` through tapio (do not derive them yourself); serde's
/// own attributes work on it as usual (`#[serde(rename_all = ..)]`, `#[serde(default)]`
/// on a field, `#[serde(try_from = "u32")]` to check a value as it is decoded: a
/// value refused so is a dead letter naming the peer). A field of a type of your own
/// needs serde's traits of its own: derive them with serde 1 (the serde tapio uses).
/// See `tapio::Message`, `tapio::Request` and `tapio::wire`.
#[proc_macro_attribute]
pub fn message(args: TokenStream, item: TokenStream) -> TokenStream {
    let item_tokens = proc_macro2::TokenStream::from(item);
    let item: syn::Item = match syn::parse2(item_tokens.clone()) {
        Ok(item) => item,
        Err(error) => return fallback::tokens_with_errors(item_tokens, error).into(),
    };
    let mut errors = Errors::default();
    let args = parse::message::parse_args(args.into(), &mut errors);
    let model = parse::message::parse_item(&item, args, &mut errors);
    let generated = model.as_ref().map(|model| {
        let name = expand::fields::macro_name(model.ident, expansion_hash(model.ident.span()));
        let mut tokens = expand::message::expand(model);
        tokens.extend(expand::fields::expand(model, &name));
        tokens
    });
    // A message registered for the wire derives serde's traits, through tapio's
    // re-export, so the program needs no serde dependency of its own.
    let mut checks = proc_macro2::TokenStream::new();
    let item = match model.as_ref().and_then(|model| model.remote.as_ref()) {
        Some(_) => {
            let mut item = item.clone();
            drop_user_serde_derives(&mut item, &mut errors);
            let checked = guard_wire_fields(&mut item);
            checks = wire_checks(&checked);
            let derive: [syn::Attribute; 2] = [
                syn::parse_quote!(#[derive(::tapio::__private::serde::Serialize, ::tapio::__private::serde::Deserialize)]),
                syn::parse_quote!(#[serde(crate = "::tapio::__private::serde")]),
            ];
            // The derive goes first: the user's own `#[serde(..)]` attributes
            // (`rename_all`, `try_from`, ..) are its helpers, and a helper written
            // before the derive that brings it in is refused.
            if let syn::Item::Struct(s) = &mut item {
                s.attrs.splice(0..0, derive);
            } else if let syn::Item::Enum(e) = &mut item {
                e.attrs.splice(0..0, derive);
            }
            item
        }
        None => item,
    };
    match errors.finish() {
        Ok(()) => quote::quote!(#item #generated #checks).into(),
        Err(error) => {
            let mut tokens = fallback::item_with_errors(&item, error);
            tokens.extend(generated);
            tokens.extend(checks);
            tokens.into()
        }
    }
}

/// Take serde's `Serialize` and `Deserialize` out of the item's own derives, which
/// `#[message(remote = ..)]` writes itself: each one found is an error on its name
/// (and, taken out, it does not go on to fail again).
fn drop_user_serde_derives(item: &mut syn::Item, errors: &mut Errors) {
    let attrs = match item {
        syn::Item::Struct(item) => &mut item.attrs,
        syn::Item::Enum(item) => &mut item.attrs,
        _ => return,
    };
    let is_serde = |path: &syn::Path| {
        path.segments
            .last()
            .is_some_and(|last| last.ident == "Serialize" || last.ident == "Deserialize")
    };
    attrs.retain_mut(|attr| {
        if !attr.path().is_ident("derive") {
            return true;
        }
        let Ok(paths) = attr.parse_args_with(
            syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
        ) else {
            return true;
        };
        if !paths.iter().any(is_serde) {
            return true;
        }
        // One error for the derive, on its serde names, however many it lists.
        let serde_paths: Vec<&syn::Path> = paths.iter().filter(|path| is_serde(path)).collect();
        errors.error(
            quote::quote!(#(#serde_paths),*),
            "`#[message(remote = ..)]` derives `Serialize` and `Deserialize` itself, through tapio's own serde: remove them from this derive (and any `#[serde(crate = ..)]`)",
        );
        let kept: Vec<&syn::Path> = paths.iter().filter(|path| !is_serde(path)).collect();
        if kept.is_empty() {
            return false;
        }
        *attr = syn::parse_quote!(#[derive(#(#kept),*)]);
        true
    });
}

/// The top-level keys of the item's or a field's `#[serde(..)]` attributes:
/// `with`, `skip`, `rename`, ..
fn serde_keys(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("serde"))
        .filter_map(|attr| attr.meta.require_list().ok())
        .flat_map(|list| list.tokens.clone())
        .filter_map(|tree| match tree {
            proc_macro2::TokenTree::Ident(ident) => Some(ident.to_string()),
            _ => None,
        })
        .collect()
}

/// Check each field of a message registered for the wire once, on its type, and
/// keep serde's derive from checking it again. Each field is (de)serialized
/// through two functions written beside the message (`wire_field_fns`), which ask
/// nothing of the field's type: they reach serde's impls when the type has them
/// (autoref picks them), and an impl that fails at run time otherwise, which no
/// program ever runs, because the check `wire_checks` writes for the type refuses
/// to compile it. So a field type without serde's traits is one error, on the
/// type, not one per place serde's derive uses the field (four for a struct's
/// field), and the message itself still implements serde's traits, so nothing that
/// uses it fails again. Fields that serde reads otherwise (`with`, `skip`,
/// `flatten`, ..) and types whose whole shape is written otherwise (`transparent`,
/// `from`, `into`, ..) are left to serde. Returns each routed field's type and the
/// names of its two functions.
fn guard_wire_fields(item: &mut syn::Item) -> Vec<(syn::Type, syn::Ident, syn::Ident)> {
    const WHOLE: &[&str] = &["transparent", "from", "try_from", "into", "remote"];
    const FIELD: &[&str] = &[
        "with",
        "serialize_with",
        "deserialize_with",
        "skip",
        "skip_serializing",
        "skip_deserializing",
        "flatten",
        "getter",
    ];
    let has = |attrs: &[syn::Attribute], keys: &[&str]| {
        serde_keys(attrs)
            .iter()
            .any(|key| keys.contains(&key.as_str()))
    };
    let mut routed = Vec::new();
    let mut route = |owner: &syn::Ident, fields: &mut syn::Fields| {
        for field in fields.iter_mut() {
            if has(&field.attrs, FIELD) {
                continue;
            }
            let n = routed.len();
            let span = syn::spanned::Spanned::span(&field.ty);
            let ser = quote::format_ident!("__tapio_wire_serialize_{}_{}", owner, n, span = span);
            let de = quote::format_ident!("__tapio_wire_deserialize_{}_{}", owner, n, span = span);
            let ser_path = proc_macro2::Literal::string(&ser.to_string());
            let de_path = proc_macro2::Literal::string(&de.to_string());
            field
                .attrs
                .push(syn::parse_quote!(#[serde(serialize_with = #ser_path, deserialize_with = #de_path)]));
            routed.push((field.ty.clone(), ser, de));
        }
    };
    match item {
        syn::Item::Struct(item) if !has(&item.attrs, WHOLE) && item.generics.params.is_empty() => {
            route(&item.ident, &mut item.fields);
        }
        syn::Item::Enum(item) if !has(&item.attrs, WHOLE) && item.generics.params.is_empty() => {
            // A variant's own `with` or `skip` covers its fields.
            for variant in &mut item.variants {
                if !has(&variant.attrs, FIELD) {
                    route(&item.ident, &mut variant.fields);
                }
            }
        }
        _ => {}
    }
    routed
}

/// What `guard_wire_fields` routed: each field's two functions, and one check of
/// each field type, on the type. A field that holds an `ActorRef` is asked for
/// `Serialize` (its error names the message of the ref's protocol that is not
/// registered), any other for serde's two traits at once (`WireField`, whose
/// message says what to derive).
fn wire_checks(routed: &[(syn::Type, syn::Ident, syn::Ident)]) -> proc_macro2::TokenStream {
    let mut checked: Vec<String> = Vec::new();
    let mut tokens = proc_macro2::TokenStream::new();
    for (ty, ser, de) in routed {
        tokens.extend(quote::quote! {
            #[doc(hidden)]
            #[allow(non_snake_case, clippy::ptr_arg, clippy::trivially_copy_pass_by_ref)]
            fn #ser<__S: ::tapio::__private::serde::Serializer>(
                value: &#ty,
                serializer: __S,
            ) -> ::core::result::Result<__S::Ok, __S::Error> {
                #[allow(unused_imports)]
                use ::tapio::__private::{SerdeWire as _, NoSerdeWire as _};
                (&::tapio::__private::WireProbe::<#ty>::new()).wire_serialize(value, serializer)
            }

            #[doc(hidden)]
            #[allow(non_snake_case)]
            fn #de<'de, __D: ::tapio::__private::serde::Deserializer<'de>>(
                deserializer: __D,
            ) -> ::core::result::Result<#ty, __D::Error> {
                #[allow(unused_imports)]
                use ::tapio::__private::{SerdeWire as _, NoSerdeWire as _};
                (&::tapio::__private::WireProbe::<#ty>::new()).wire_deserialize(deserializer)
            }
        });
        let text = quote::ToTokens::to_token_stream(ty).to_string();
        if checked.contains(&text) {
            continue;
        }
        checked.push(text);
        let carries_ref = quote::ToTokens::to_token_stream(ty)
            .into_iter()
            .any(|tree| mentions(&tree, "ActorRef"));
        let call = if carries_ref {
            quote::quote_spanned!(syn::spanned::Spanned::span(ty)=> ::tapio::__private::wire_ref_field::<#ty>())
        } else {
            quote::quote_spanned!(syn::spanned::Spanned::span(ty)=> ::tapio::__private::wire_field::<#ty, _>())
        };
        tokens.extend(quote::quote! {
            const _: fn() = || {
                #call;
            };
        });
    }
    tokens
}

/// Whether `tree` is, or holds, the identifier `name`.
fn mentions(tree: &proc_macro2::TokenTree, name: &str) -> bool {
    match tree {
        proc_macro2::TokenTree::Ident(ident) => ident == name,
        proc_macro2::TokenTree::Group(group) => {
            group.stream().into_iter().any(|tree| mentions(&tree, name))
        }
        _ => false,
    }
}

/// The compiler's span for `span`, to read where it is. (`unwrap` here is not
/// `Option::unwrap`: it converts, and cannot fail inside a macro call.)
fn compiler_span(span: proc_macro2::Span) -> proc_macro::Span {
    span.unwrap()
}

/// A number for one expansion of a macro, for the hidden names it generates: where
/// the attribute is called and where `name` (the type's name) is written, with
/// their `Debug` text, which on rustc also names each one's hygiene context
/// (`#12 bytes(..)`). Items that one `macro_rules!` writes at one spot of its body
/// share the attribute's place and even the type's name, if the body spells it;
/// the contexts still tell its expansions apart, and a name the macro was given
/// (`$name`) is where its caller wrote it.
fn expansion_hash(name: proc_macro2::Span) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    for span in [proc_macro::Span::call_site(), compiler_span(name)] {
        span.file().hash(&mut hasher);
        span.line().hash(&mut hasher);
        span.column().hash(&mut hasher);
        format!("{span:?}").hash(&mut hasher);
    }
    hasher.finish()
}

/// A number for the file and column where the actor's type name `name` is written,
/// its hygiene context, and its type as written, `key`: the same for two `#[actor]`
/// blocks for one type in one module (see `expand::actor`). The type's name, not
/// the attribute: in a `macro_rules!` the attribute is where the macro's body is,
/// the same for every expansion, while a name the macro is given is where its
/// caller wrote it, and a name its body spells has a context of its own in each
/// expansion (so the same type in a nested module is not taken for a second block).
fn scope_hash(name: proc_macro2::Span, key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let span = compiler_span(name);
    let mut hasher = std::hash::DefaultHasher::new();
    span.file().hash(&mut hasher);
    span.column().hash(&mut hasher);
    hygiene_context(&format!("{span:?}")).hash(&mut hasher);
    key.hash(&mut hasher);
    hasher.finish()
}

/// The hygiene context in `debug`, a span's `Debug` text as rustc prints it: `#0`
/// for code written by hand, `#12` in a macro's expansion (`#12 bytes(120..126)`);
/// nothing if the text has another form (another compiler, a debugging flag), and
/// then the file and column alone decide.
fn hygiene_context(debug: &str) -> &str {
    match debug.split_once(" bytes(") {
        Some((context, _)) if context.starts_with('#') => context,
        _ => "",
    }
}

/// Turn an `impl` block into an actor: each method handles the message type of its
/// last parameter. Generates the protocol enum `{Type}Msg` with `Accepts` impls, the
/// `Actor` impl that dispatches to the methods, and, with `#[actor(helpers)]`, the
/// trait `{Type}Ref` of typed helpers on `ActorRef<{Type}Msg>`, one per handler
/// (`#[handler(helper = name)]` renames one, `#[handler(no_helper)]` leaves it out).
/// Helpers are asked for because they need each message's `#[message]` expansion:
/// a message that implements `Message` by hand has none. See `tapio::Actor`.
#[proc_macro_attribute]
pub fn actor(args: TokenStream, item: TokenStream) -> TokenStream {
    let item_tokens = proc_macro2::TokenStream::from(item);
    let item: syn::Item = match syn::parse2(item_tokens.clone()) {
        Ok(item) => item,
        Err(error) => return fallback::tokens_with_errors(item_tokens, error).into(),
    };
    let mut errors = Errors::default();
    let mut args = parse::actor::parse_args(args.into(), &mut errors);
    let (messages, states, stash_capacity, refused) = (
        args.messages.take(),
        args.states.take(),
        args.stash_capacity.take(),
        args.refused,
    );
    let Some(block) = parse::actor::parse_impl(&item, &mut errors) else {
        return match errors.finish() {
            Ok(()) => quote::quote!(#item).into(),
            Err(error) => fallback::item_with_errors(&item, error).into(),
        };
    };
    let Some(mut model) = parse::actor::parse_actor(block, args, &mut errors) else {
        return match errors.finish() {
            Ok(()) => quote::quote!(#item).into(),
            Err(error) => {
                // The type was refused (a reference, a tuple, ..): the block stays,
                // on the named type inside a reference, so its methods still exist
                // and rustc has nothing more to say about an inherent impl of a
                // type it cannot have one for; a block on no named type goes.
                let mut block = expand::user_block(block);
                let mut named = parse::peel(&block.self_ty);
                while let syn::Type::Reference(reference) = named {
                    named = parse::peel(&reference.elem);
                }
                match named {
                    named @ syn::Type::Path(_) => {
                        block.self_ty = Box::new(named.clone());
                        fallback::item_with_errors(&syn::Item::Impl(block), error).into()
                    }
                    _ => errors::to_compile_errors(error).into(),
                }
            }
        };
    };
    if messages.is_some() || states.is_some() {
        return machine(model, messages, states, stash_capacity, refused, errors);
    }
    if let Some(capacity) = &stash_capacity {
        errors.error(
            capacity,
            "`stash_capacity` is for a state machine (`#[actor(messages(..), states(..))]`): an actor without states has no stash of its own; remove it, or give the machine its `messages(..)` and `states(..)`",
        );
    }
    check::check_actor(&mut model, &mut errors);
    let self_ty = model.self_ty;
    let site = expand::Site {
        block: expansion_hash(model.type_name.span()),
        scope: scope_hash(model.type_name.span(), &quote::quote!(#self_ty).to_string()),
    };
    let generated = expand::actor(&model, site);
    match errors.finish() {
        Ok(()) => generated.into(),
        Err(error) => {
            let mut tokens = errors::to_compile_errors(error);
            tokens.extend(generated);
            tokens.into()
        }
    }
}

/// Register a factory function, `fn name(args: Args) -> Behavior<P>`, under a key
/// another system can ask a spawner for; declares a type `name` beside the function
/// that names the factory. `Args` derives serde's `Serialize` and `Deserialize` (with
/// serde 1, the serde tapio uses) and holds no `ActorRef`. See
/// `tapio::remote::spawn`.
#[proc_macro_attribute]
pub fn remote_behavior(args: TokenStream, item: TokenStream) -> TokenStream {
    let item_tokens = proc_macro2::TokenStream::from(item);
    let item: syn::Item = match syn::parse2(item_tokens.clone()) {
        Ok(item) => item,
        Err(error) => return fallback::tokens_with_errors(item_tokens, error).into(),
    };
    let mut errors = Errors::default();
    let key = parse::remote_behavior::parse_key(args.into(), &mut errors);
    let model = parse::remote_behavior::parse_item(&item, key, &mut errors);
    match (errors.finish(), model) {
        (Ok(()), Some(model)) => expand::remote_behavior::expand(&model).into(),
        (Err(error), _) => fallback::item_with_errors(&item, error).into(),
        (Ok(()), None) => quote::quote!(#item).into(),
    }
}

/// Run an `async fn` as a test with a fresh `ActorSystem`, terminated at the end; the
/// test fails if anything leaked. See `tapio::testkit::TestConfig`.
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    let item_tokens = proc_macro2::TokenStream::from(item);
    let item: syn::Item = match syn::parse2(item_tokens.clone()) {
        Ok(item) => item,
        Err(error) => return fallback::tokens_with_errors(item_tokens, error).into(),
    };
    let mut errors = Errors::default();
    let args = parse::test::parse_args(args.into(), &mut errors);
    let model = parse::test::parse_test(&item, args, &mut errors);
    match (errors.finish(), model) {
        (Ok(()), Some(model)) => expand::test::expand(&model).into(),
        (Err(error), _) => fallback::item_with_errors(&item, error).into(),
        (Ok(()), None) => quote::quote!(#item).into(),
    }
}

/// The state machine half of `#[actor]`: `messages(..)` and `states(..)` given.
fn machine(
    mut model: model::ActorModel<'_>,
    messages: Option<Vec<parse::states::Listed>>,
    states: Option<Vec<parse::states::Row>>,
    stash_capacity: Option<syn::LitInt>,
    refused: bool,
    mut errors: Errors,
) -> TokenStream {
    let block = expand::user_block(model.item);
    for handler in &model.handlers {
        errors.error(
            &handler.method.sig.ident,
            "a state machine's messages are handled by its states: move this handler into the `#[state(..)]` block of each state that handles it",
        );
    }
    let span = proc_macro2::Span::call_site();
    let (Some(messages), Some(mut rows)) = (messages, states) else {
        // When an argument was refused, the rest were not read: that error says it.
        if !refused {
            errors.push(syn::Error::new(
                span,
                "a state machine declares both its protocol and its states: `#[actor(messages(A, B), states(First => Second, Second))]`",
            ));
        }
        let error = errors.finish().err().map(errors::to_compile_errors);
        return quote::quote!(#block #error).into();
    };
    if rows.is_empty() {
        errors.push(syn::Error::new(
            span,
            "`states(..)` lists no state: its first row is the initial state",
        ));
    }
    let variants = expand::machine::variants(&messages, &mut errors);
    let listed: Vec<&syn::Type> = messages.iter().map(|listed| &listed.message).collect();
    check::generated_names_free(
        model.type_name,
        &mut model.protocol,
        &mut model.helpers,
        &listed,
        &mut errors,
    );
    expand::machine::check_table(&mut rows, &mut errors);
    let generated = expand::machine::expand(&expand::machine::MachineModel {
        actor: model,
        variants,
        rows,
        stash_capacity,
    });
    let error = errors.finish().err().map(errors::to_compile_errors);
    quote::quote!(#block #generated #error).into()
}

/// A state of a state machine actor: `#[state(Actor)] impl Ready { .. }`, with the
/// state's handlers and hooks. See `tapio::state`.
#[proc_macro_attribute]
pub fn state(args: TokenStream, item: TokenStream) -> TokenStream {
    let item_tokens = proc_macro2::TokenStream::from(item);
    let item: syn::Item = match syn::parse2(item_tokens.clone()) {
        Ok(item) => item,
        Err(error) => return fallback::tokens_with_errors(item_tokens, error).into(),
    };
    let mut errors = Errors::default();
    let Some(args) = parse::states::parse_state_args(args.into(), &mut errors) else {
        let error = errors.finish().err().map(errors::to_compile_errors);
        let (item, handlers) = match &item {
            syn::Item::Impl(block) => (
                syn::Item::Impl(expand::state::user_block(block)),
                expand::state::refused(block),
            ),
            other => (other.clone(), proc_macro2::TokenStream::new()),
        };
        return quote::quote!(#item #handlers #error).into();
    };
    let mut item = item;
    parse::states::name_the_actor_in_contexts(&mut item, &args.actor, &mut errors);
    let Some(mut model) = parse::states::parse_state(&item, args, &mut errors) else {
        let error = errors.finish().err().map(errors::to_compile_errors);
        let handlers = match &item {
            syn::Item::Impl(block) => expand::state::refused(block),
            _ => proc_macro2::TokenStream::new(),
        };
        return quote::quote!(#item #handlers #error).into();
    };
    expand::state::check(&mut model, &mut errors);
    let self_ty = model.self_ty;
    let site = expand::Site {
        block: expansion_hash(model.name.span()),
        scope: scope_hash(model.name.span(), &quote::quote!(#self_ty).to_string()),
    };
    let generated = expand::state::expand(&model, site);
    let error = errors.finish().err().map(errors::to_compile_errors);
    quote::quote!(#generated #error).into()
}

#[cfg(test)]
mod tests {
    use super::{guard_wire_fields, hygiene_context};

    /// The field types of `item` that `guard_wire_fields` routes.
    fn guarded(mut item: syn::Item) -> Vec<String> {
        guard_wire_fields(&mut item)
            .iter()
            .map(|(ty, _, _)| quote::ToTokens::to_token_stream(ty).to_string())
            .collect()
    }

    #[test]
    fn wire_fields_are_checked_once_unless_serde_reads_them_otherwise() {
        let order: syn::Item = syn::parse_quote! {
            pub struct Order {
                pub name: String,
                #[serde(skip)]
                pub local: Local,
                #[serde(with = "as_text", default)]
                pub code: u32,
                #[serde(default)]
                pub count: u32,
                pub reply_to: Option<ActorRef<Shelf>>,
            }
        };
        assert_eq!(
            guarded(order),
            ["String", "u32", "Option < ActorRef < Shelf > >"]
        );
        let whole: syn::Item = syn::parse_quote! {
            #[serde(try_from = "u32")]
            pub struct Even(u32);
        };
        assert!(guarded(whole).is_empty());
        let update: syn::Item = syn::parse_quote! {
            pub enum Update {
                Set { value: u64 },
                #[serde(skip)]
                Local { here: Local },
                Clear,
            }
        };
        assert_eq!(guarded(update), ["u64"]);
    }

    #[test]
    fn the_hygiene_context_is_read_from_rustc_s_debug_text_or_left_out() {
        assert_eq!(hygiene_context("#0 bytes(120..126)"), "#0");
        assert_eq!(hygiene_context("#12 bytes(7..9)"), "#12");
        assert_eq!(hygiene_context("src/lib.rs:3:5: 3:11 (#4)"), "");
        assert_eq!(hygiene_context(""), "");
    }
}
