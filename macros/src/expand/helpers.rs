//! The typed helpers of an actor: a trait `{Actor}Ref`, implemented for
//! `ActorRef<{Actor}Msg>`, with one method per handler. A request's helper asks and
//! returns the `Ask`; any other message's helper tells.
//!
//! The method itself is written by the message's helper macro (see `fields.rs`), which
//! knows the fields; this file names it and places it. Messages the runtime declares
//! (primitives, `String`, containers, `ActorRef`) have no such macro: their helper is
//! written here and takes the message whole.
//!
//! Helpers are generated only when asked for (`#[actor(helpers)]` or `helpers = Name`):
//! they need every handled message's `#[message]` expansion, and an actor whose
//! messages implement `Message` by hand must keep compiling. Such a message, or a type
//! alias, has no helper macro (write `#[handler(no_helper)]`); a struct with a private or
//! `cfg`'d field, or an enum, gets a helper that takes it whole. rustc's error for the
//! missing macro cannot be worded, so `#[message]` also implements
//! `__private::TypedHelper` and each helper calls `typed_helper::<M>()`: a hand-written
//! message gets an error on its type that says how to leave its helper out.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Ident, Path, Type};

use crate::model::ActorModel;

/// The names of the plain message types the runtime implements `Message` for.
const RUNTIME_PLAIN: &[&str] = &[
    "bool",
    "char",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "f32",
    "f64",
    "String",
    "Duration",
    "SystemTime",
];

/// The names of the generic message types the runtime implements `Message` for:
/// one of these is the runtime's only with its generic arguments (`Option<u64>`), so
/// a message of the user's own named `Result` or `Box` keeps its helper.
const RUNTIME_GENERIC: &[&str] = &[
    "Vec", "VecDeque", "Option", "Box", "Result", "ActorRef", "HashMap", "HashSet", "BTreeMap",
    "BTreeSet",
];

/// Whether `path` names a message type the runtime implements `Message` for, which
/// has no helper macro: a plain one written alone or under `std`, `core` or
/// `alloc` (`u64`, `std::string::String`), or a generic one with its arguments.
fn is_runtime_message(path: &Path) -> bool {
    let Some(last) = path.segments.last() else {
        return false;
    };
    let name = last.ident.to_string();
    if RUNTIME_GENERIC.contains(&name.as_str()) {
        return matches!(last.arguments, syn::PathArguments::AngleBracketed(_));
    }
    let from_std = path.segments.len() == 1
        || path.segments.first().is_some_and(|first| {
            matches!(first.ident.to_string().as_str(), "std" | "core" | "alloc")
        });
    RUNTIME_PLAIN.contains(&name.as_str()) && from_std
}

/// The path of a message's helper macro, when it has one: the type's path without the
/// generic arguments of its last segment.
pub(crate) fn helper_macro(message: &Type) -> Option<Path> {
    let Type::Path(path) = message else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    if is_runtime_message(&path.path) {
        return None;
    }
    let mut path = path.path.clone();
    let last = path.segments.last_mut()?;
    last.arguments = syn::PathArguments::None;
    Some(path)
}

use crate::check::type_text;

/// One helper to generate: its name, the message it sends, the `cfg`s it is
/// compiled under, and the line of its docs that says who handles the message.
pub(crate) struct Helper<'a> {
    /// The method's name.
    pub(crate) name: Ident,
    /// The message it builds and sends.
    pub(crate) message: &'a Type,
    /// Its `cfg`s.
    pub(crate) cfgs: &'a [Attribute],
    /// "Handled by ..".
    pub(crate) doc: String,
}

/// The helpers of an `#[actor]` block: one per handler that has one.
fn of_handlers<'a>(model: &'a ActorModel<'_>) -> Vec<Helper<'a>> {
    model
        .handlers
        .iter()
        .filter_map(|handler| {
            Some(Helper {
                name: handler.helper.clone()?,
                message: handler.message,
                cfgs: &handler.cfgs,
                doc: format!(
                    "Handled by `{}::{}`.",
                    type_text(model.self_ty),
                    handler.method.sig.ident
                ),
            })
        })
        .collect()
}

/// The declaration (`impl_ = false`) or the definition of one helper.
fn method(helper: &Helper<'_>, impl_: bool) -> TokenStream {
    let Helper {
        name,
        message,
        cfgs,
        doc,
    } = helper;
    let message = *message;
    let span = message.span();
    match helper_macro(message) {
        Some(path) => {
            let mode = if impl_ { quote!(impl) } else { quote!(decl) };
            quote_spanned! {span=>
                #(#cfgs)*
                #path! { #mode [#[doc = ""] #[doc = #doc] #(#cfgs)*] #name #message }
            }
        }
        // `()` carries nothing, so its helper takes nothing.
        None if impl_ && is_unit(message) => quote! {
            #(#cfgs)*
            #[inline]
            fn #name(&self) {
                ::tapio::__private::ActorRef::tell(self, ())
            }
        },
        None if impl_ => quote! {
            #(#cfgs)*
            #[inline]
            fn #name(&self, message: #message) {
                ::tapio::__private::ActorRef::tell(self, message)
            }
        },
        None => {
            let tell = format!("Tell the actor a `{}`.", type_text(message));
            let params = (!is_unit(message)).then(|| quote!(, message: #message));
            quote! {
                #(#cfgs)*
                #[doc = #tell]
                #[doc = ""]
                #[doc = #doc]
                fn #name(&self #params);
            }
        }
    }
}

/// Whether `message` is `()`.
fn is_unit(message: &Type) -> bool {
    matches!(message, Type::Tuple(tuple) if tuple.elems.is_empty())
}

/// The helper trait and its impl for the actor's ref.
pub(crate) fn expand(model: &ActorModel<'_>) -> TokenStream {
    expand_helpers(model, &of_handlers(model))
}

/// The helper trait with `helpers`, and its impl for the actor's ref.
pub(crate) fn expand_helpers(model: &ActorModel<'_>, helpers_list: &[Helper<'_>]) -> TokenStream {
    let vis = &model.vis;
    let Some(helpers) = &model.helpers else {
        return TokenStream::new();
    };
    let protocol = &model.protocol;
    let actor = type_text(model.self_ty);
    let doc = format!(
        "Typed helpers on an `ActorRef<{protocol}>`, the ref of a [`{actor}`]: one method per handler, generated by `#[actor]`. \
         Bring the trait into scope (`use path::to::{helpers};`) to call them.\n\n\
         A request's helper asks and returns the `Ask` (await it, or set a deadline with `.timeout(..)` first); \
         any other message's helper tells. The parameters are the message's fields, in order; \
         an enum, or a struct with a private field, is taken whole."
    );
    // A message without a `#[message]` expansion has no helper macro: the call
    // finds none, and this says why and what to write, on the message's type.
    let checks = helpers_list.iter().filter_map(|helper| {
        helper_macro(helper.message)?;
        let message = helper.message;
        let cfgs = helper.cfgs;
        Some(quote_spanned! {message.span()=>
            #(#cfgs)*
            const _: fn() = || {
                ::tapio::__private::typed_helper::<#message>();
            };
        })
    });
    let declarations = helpers_list.iter().map(|h| method(h, false));
    let definitions = helpers_list.iter().map(|h| method(h, true));
    quote! {
        #[doc = #doc]
        // As the protocol enum: a crate-private message's helper is for the crate.
        // One helper is written for every handler, asked for or not, so one the
        // program never calls (a message only a timer sends) is not a warning.
        #[allow(private_interfaces, dead_code)]
        #vis trait #helpers {
            #(#declarations)*
        }

        #[allow(private_interfaces)]
        impl #helpers for ::tapio::__private::ActorRef<#protocol> {
            #(#definitions)*
        }

        #(#checks)*
    }
}

#[cfg(test)]
mod tests {
    use quote::ToTokens;
    use syn::parse_quote;

    use super::*;

    fn path_text(message: Type) -> Option<String> {
        helper_macro(&message).map(|path| path.to_token_stream().to_string())
    }

    #[test]
    fn a_user_message_is_built_by_its_own_macro_and_a_runtime_message_is_taken_whole() {
        assert_eq!(
            path_text(parse_quote!(crate::shop::Order<u64>)).as_deref(),
            Some("crate :: shop :: Order")
        );
        assert_eq!(path_text(parse_quote!(Ping)).as_deref(), Some("Ping"));
        assert_eq!(path_text(parse_quote!(u64)), None);
        assert_eq!(path_text(parse_quote!(ActorRef<Pong>)), None);
        assert_eq!(path_text(parse_quote!(std::string::String)), None);
        assert_eq!(path_text(parse_quote!((u8, u8))), None);
        assert_eq!(path_text(parse_quote!(<T as Trait>::Message)), None);
    }
}
