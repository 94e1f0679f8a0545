//! From tokens to the model: one module per macro.
//!
//! A type that a `macro_rules!` passes on as `$t:ty` arrives in an invisible group;
//! `peel` takes it off wherever a type's shape is read. What parsing refuses on the
//! token, rather than leaving to rustc: an argument given twice, quoted where a name
//! goes, or without its value (or with one where none goes), each error naming the
//! argument and showing its form (`value_of`, `list_of`, `bare`), with the rest still
//! generated; a handler that is `unsafe`, whose context is not `&mut Ctx`/`ActorContext`,
//! whose message names `Self`, or (a signal handler) that takes the signal by value; a
//! `remote` message that derives serde itself (the derive is taken out); a field that
//! is not `Send` by the standard library's names (`Rc`, a raw pointer, `Arc` around a
//! `RefCell` or `Cell`); a `#[remote_behavior]` factory that returns a `Result` or an
//! `Option` (the spawner's answer knows bad arguments, a taken name and a stopping
//! system, not a factory that declined: fallible work belongs in `Behaviors::setup`).
//!
//! A handler's variant is named after the last segment of its message type, or
//! `#[handler(variant = Name)]`; the runtime's messages that are not paths get names
//! too (`default_variant`: `&'static str` is `str`, `()` is `Unit`, a tuple `Tuple`). Any
//! other reference is refused with what to write instead (`refused_reference`). A helper
//! named after a keyword is written raw (`r#move`).

pub(crate) mod actor;
pub(crate) mod message;
pub(crate) mod remote_behavior;
pub(crate) mod states;
pub(crate) mod test;

use proc_macro2::{Ident, TokenStream};
use syn::Type;
use syn::meta::ParseNestedMeta;
use syn::parse::Parse;
use syn::spanned::Spanned;

/// The type inside the invisible groups a `macro_rules!` puts around a `$t:ty`
/// it passes on: `#[actor] impl $name { fn f(&mut self, _: $msg) {} }` reaches the
/// macro as `Type::Group`, which is read as the type it holds.
pub(crate) fn peel(mut ty: &Type) -> &Type {
    while let Type::Group(group) = ty {
        ty = &group.elem;
    }
    ty
}

/// How an argument of an attribute is written, and what it says: for errors that
/// name the argument and show its form.
#[derive(Clone, Copy)]
pub(crate) struct Form {
    /// The argument as it is written, such as `protocol = CounterProtocol`.
    pub(crate) written: &'static str,
    /// What it says, such as "the protocol enum's name".
    pub(crate) meaning: &'static str,
}

impl Form {
    /// An error on the argument's name (or on its value, at `span`) that shows how
    /// it is written.
    fn error(self, span: proc_macro2::Span, problem: &str) -> syn::Error {
        syn::Error::new(
            span,
            format!("{problem}: write `{}` ({})", self.written, self.meaning),
        )
    }
}

/// The name of an argument as written, for an error.
fn argument_name(meta: &ParseNestedMeta<'_>) -> String {
    crate::check::type_text(&meta.path)
}

/// The value of `name = value`; without the `=`, or with a value that does not
/// parse, an error that names the argument and shows `form`.
pub(crate) fn value_of<T: Parse>(meta: &ParseNestedMeta<'_>, form: Form) -> syn::Result<T> {
    let name = argument_name(meta);
    if !meta.input.peek(syn::Token![=]) {
        return Err(form.error(meta.path.span(), &format!("`{name}` needs a value")));
    }
    let value = meta.value()?;
    value.parse().map_err(|error| {
        form.error(
            error.span(),
            &format!("`{name}` cannot take this value ({error})"),
        )
    })
}

/// The tokens inside `name(..)`; without the parentheses, an error that names the
/// argument and shows `form`.
pub(crate) fn list_of(meta: &ParseNestedMeta<'_>, form: Form) -> syn::Result<TokenStream> {
    if !meta.input.peek(syn::token::Paren) {
        let name = argument_name(meta);
        return Err(form.error(
            meta.path.span(),
            &format!("`{name}` lists its entries in parentheses"),
        ));
    }
    let content;
    syn::parenthesized!(content in meta.input);
    content.parse()
}

/// A bare argument, such as `no_helper`: a value after it is an error that names the
/// argument and shows `form`.
pub(crate) fn bare(meta: &ParseNestedMeta<'_>, form: Form) -> syn::Result<()> {
    let name = argument_name(meta);
    if meta.input.peek(syn::Token![=]) {
        return Err(form.error(meta.path.span(), &format!("`{name}` takes no value")));
    }
    if meta.input.peek(syn::token::Paren) {
        return Err(form.error(
            meta.path.span(),
            &format!("`{name}` takes nothing in parentheses"),
        ));
    }
    Ok(())
}

/// The name of the protocol enum's variant that carries a message of type `ty`,
/// when the handler does not name one: the last segment of a path (`Increment`,
/// `u64`, `ActorRef`), `str` for `&'static str`, `Unit` for `()`, `Tuple` for a
/// tuple. `None` for a type that cannot be a message, such as an array.
pub(crate) fn default_variant(ty: &Type) -> Option<Ident> {
    match peel(ty) {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .map(|segment| segment.ident.clone()),
        Type::Tuple(tuple) if tuple.elems.is_empty() => Some(Ident::new("Unit", ty.span())),
        Type::Tuple(_) => Some(Ident::new("Tuple", ty.span())),
        Type::Reference(reference) if is_static_str(reference) => {
            Some(Ident::new("str", ty.span()))
        }
        _ => None,
    }
}

/// What to write instead of a reference taken as a message, or `None` for
/// `&'static str`, which is a message (it owns nothing, and lives for ever).
pub(crate) fn refused_reference(reference: &syn::TypeReference) -> Option<String> {
    if is_static_str(reference) {
        return None;
    }
    let inner = peel(&reference.elem);
    Some(match inner {
        Type::Path(path) if path.qself.is_none() && path.path.is_ident("str") => {
            "a message travels to another task and must own its data: write `String`, or `&'static str` for text known when compiling".to_owned()
        }
        Type::Slice(slice) => {
            let elem = &slice.elem;
            format!(
                "a message travels to another task and must own its data: write `Vec<{}>`",
                crate::check::type_text(elem)
            )
        }
        _ => format!(
            "a handler takes its message by value: write `{}`, not a reference",
            crate::check::type_text(inner)
        ),
    })
}

/// `&'static str`, by any spelling of `str`'s path (`str`, `core::primitive::str`).
fn is_static_str(reference: &syn::TypeReference) -> bool {
    reference.mutability.is_none()
        && reference
            .lifetime
            .as_ref()
            .is_some_and(|lifetime| lifetime.ident == "static")
        && matches!(peel(&reference.elem), Type::Path(path)
            if path.qself.is_none()
                && path.path.segments.last().is_some_and(|last| last.ident == "str"))
}

#[cfg(test)]
mod tests {
    use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
    use quote::{ToTokens, quote};

    use super::*;

    #[test]
    fn a_type_passed_through_a_macro_rules_is_read_as_the_type_inside() {
        // What rustc hands over for `$msg` when `$msg:ty` was `crate::Ping`.
        let inner = Group::new(Delimiter::None, quote!(crate::Ping));
        let tokens: TokenStream =
            TokenTree::Group(Group::new(Delimiter::None, TokenTree::Group(inner).into())).into();
        let ty: Type = syn::parse2(tokens).expect("a type");
        assert!(matches!(ty, Type::Group(_)));
        let peeled = peel(&ty);
        assert!(matches!(peeled, Type::Path(_)));
        assert_eq!(peeled.to_token_stream().to_string(), "crate :: Ping");
    }

    fn variant(ty: Type) -> Option<String> {
        default_variant(&ty).map(|ident| ident.to_string())
    }

    #[test]
    fn a_variant_is_named_after_its_message_type() {
        assert_eq!(
            variant(syn::parse_quote!(crate::Ping)).as_deref(),
            Some("Ping")
        );
        assert_eq!(variant(syn::parse_quote!(u64)).as_deref(), Some("u64"));
        assert_eq!(
            variant(syn::parse_quote!(ActorRef<u64>)).as_deref(),
            Some("ActorRef")
        );
        assert_eq!(
            variant(syn::parse_quote!(&'static str)).as_deref(),
            Some("str")
        );
        assert_eq!(variant(syn::parse_quote!(())).as_deref(), Some("Unit"));
        assert_eq!(
            variant(syn::parse_quote!((u64, bool))).as_deref(),
            Some("Tuple")
        );
        assert_eq!(variant(syn::parse_quote!(&str)), None);
        assert_eq!(variant(syn::parse_quote!([u8; 4])), None);
    }

    #[test]
    fn a_reference_is_refused_with_what_to_write_unless_it_is_a_static_str() {
        let refused = |ty: syn::TypeReference| refused_reference(&ty);
        assert_eq!(refused(syn::parse_quote!(&'static str)), None);
        assert!(
            refused(syn::parse_quote!(&str))
                .is_some_and(|e| e.contains("write `String`, or `&'static str`"))
        );
        assert!(
            refused(syn::parse_quote!(&'static mut str))
                .is_some_and(|e| e.contains("write `String`"))
        );
        assert!(refused(syn::parse_quote!(&[u8])).is_some_and(|e| e.ends_with("write `Vec<u8>`")));
        assert_eq!(
            refused(syn::parse_quote!(&Ping)).as_deref(),
            Some("a handler takes its message by value: write `Ping`, not a reference")
        );
    }
}
