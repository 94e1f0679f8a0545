//! Parsing `#[message]` and `#[message(reply = T)]`.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{Fields, GenericParam, Generics, Ident, Item, Type, Visibility};

use crate::errors::Errors;
use crate::model::{MessageModel, MessageShape};
use crate::symbol::{REMOTE, REPLY};

/// The arguments of `#[message(..)]`.
#[derive(Default)]
pub(crate) struct MessageArgs {
    pub(crate) reply: Option<Type>,
    /// `remote = "key"`: the wire key.
    pub(crate) remote: Option<syn::LitStr>,
}

/// Parse the attribute's arguments, recording what is wrong with them.
pub(crate) fn parse_args(args: TokenStream, errors: &mut Errors) -> MessageArgs {
    let mut parsed = MessageArgs::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident(REPLY) {
            if parsed.reply.is_some() {
                return Err(meta.error("`reply` is given twice: a request has one reply type"));
            }
            if !meta.input.peek(syn::Token![=]) {
                return Err(meta.error(
                    "`reply` needs the type a request is answered with: write `reply = Type`, such as `reply = u64`",
                ));
            }
            let value = meta.value()?;
            if value.peek(syn::LitStr) {
                let quoted: syn::LitStr = value.parse()?;
                return Err(syn::Error::new(
                    quoted.span(),
                    format!(
                        "`reply` takes a type, not a string: write `reply = {}`",
                        quoted.value()
                    ),
                ));
            }
            parsed.reply = Some(value.parse()?);
            Ok(())
        } else if meta.path.is_ident(REMOTE) {
            if parsed.remote.is_some() {
                return Err(
                    meta.error("`remote` is given twice: a message has one key on the wire")
                );
            }
            if !meta.input.peek(syn::Token![=]) {
                return Err(meta.error(
                    "`remote` needs the message's key on the wire: write `remote = \"a.stable.key\"`, such as `remote = \"shop.order.v1\"`",
                ));
            }
            let value = meta.value()?;
            if !value.peek(syn::LitStr) {
                return Err(value.error(
                    "the wire key is a string: write it in quotes, such as `remote = \"shop.order.v1\"`",
                ));
            }
            let key: syn::LitStr = value.parse()?;
            if !is_stable_key(&key.value()) {
                return Err(syn::Error::new(
                    key.span(),
                    "a wire key is 1 to 128 ASCII letters, digits and `.` `_` `-` `:` `/`, stable across versions of the program, such as \"shop.order.v1\"",
                ));
            }
            parsed.remote = Some(key);
            Ok(())
        } else {
            Err(meta.error(format!(
                "unknown argument: `#[message]` takes `{REPLY} = Type` (the type a request is answered with) and `{REMOTE} = \"a.stable.key\"` (its key on the wire)"
            )))
        }
    });
    if let Err(error) = parser.parse2(args) {
        errors.push(error);
    }
    parsed
}

/// Whether `text` can be a key on the wire (a message's or a factory's): 1 to 128
/// ASCII letters, digits and `.` `_` `-` `:` `/`. (The link's own frames use keys
/// beginning with `!`, which no user key can have.)
pub(crate) fn is_stable_key(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 128
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-:/".contains(c))
}

/// The name and generics of the item, if it is a struct or an enum; otherwise an
/// error saying where `#[message]` belongs.
pub(crate) fn parse_item<'a>(
    item: &'a Item,
    args: MessageArgs,
    errors: &mut Errors,
) -> Option<MessageModel<'a>> {
    let (ident, generics, vis, shape): (&Ident, &Generics, &Visibility, _) = match item {
        Item::Struct(item) => (
            &item.ident,
            &item.generics,
            &item.vis,
            struct_shape(&item.fields),
        ),
        Item::Enum(item) => (&item.ident, &item.generics, &item.vis, MessageShape::Whole),
        Item::Union(item) => {
            errors.error(
                item.union_token,
                "`#[message]` goes on a struct or an enum; a union cannot be sent safely between actors",
            );
            return None;
        }
        other => {
            errors.push(syn::Error::new(
                item_keyword_span(other),
                "`#[message]` goes on a struct or an enum, such as `#[message] pub struct Increment { pub by: u64 }`",
            ));
            return None;
        }
    };
    let mut borrows = false;
    for param in &generics.params {
        if let GenericParam::Lifetime(lifetime) = param {
            errors.error(
                lifetime,
                "a message cannot borrow: it travels to another task and must own its data; remove the lifetime parameter",
            );
            borrows = true;
        }
    }
    if borrows {
        // An impl for a borrowing type would only add errors about lifetimes.
        return None;
    }
    let not_send = item_fields(item)
        .filter_map(|field| not_send_part(&field.ty))
        .map(|(ty, advice)| {
            errors.error(
                ty,
                format!(
                    "a message crosses to the actor's task, so it must be `Send`, and `{}` is not: {advice}",
                    quote::ToTokens::to_token_stream(ty).to_string().replace(" ", "")
                ),
            )
        })
        .count();
    if not_send > 0 {
        // The `impl Message` would only repeat the error as a bare `Send` bound.
        return None;
    }
    if args.remote.is_some() && !generics.params.is_empty() {
        errors.error(
            &generics.params,
            "a generic message cannot be registered for the wire (`remote = ..`): a key names one type; register a concrete message that holds the value",
        );
        return None;
    }
    Some(MessageModel {
        ident,
        vis,
        shape,
        generics,
        reply: args.reply,
        remote: args.remote,
    })
}

/// Every field of a struct, or of every variant of an enum.
fn item_fields(item: &Item) -> Box<dyn Iterator<Item = &syn::Field> + '_> {
    match item {
        Item::Struct(item) => Box::new(item.fields.iter()),
        Item::Enum(item) => Box::new(item.variants.iter().flat_map(|variant| &variant.fields)),
        _ => Box::new(std::iter::empty()),
    }
}

/// The first part of a field's type that is known by its name not to be `Send`, with
/// what to write instead: `Rc`, a raw pointer, and `Arc` around a `RefCell` or a
/// `Cell` (which are `Send` alone, but not `Sync`, which `Arc` needs to be `Send`).
/// Only the standard library's names count: a path of one segment, or one that
/// starts at `std`, `core` or `alloc`. Other types that are not `Send` still meet
/// the compiler's own error on the message's name.
fn not_send_part(ty: &Type) -> Option<(&Type, &'static str)> {
    match ty {
        Type::Ptr(_) => Some((
            ty,
            "a raw pointer is not `Send`; send an owned value or an index instead",
        )),
        Type::Path(path) => {
            let last = path.path.segments.last()?;
            if is_std(&path.path) && last.ident == "Rc" {
                return Some((ty, "share it with `std::sync::Arc` instead of `Rc`"));
            }
            let arguments = || {
                path.path
                    .segments
                    .iter()
                    .flat_map(|segment| match &segment.arguments {
                        syn::PathArguments::AngleBracketed(arguments) => {
                            arguments.args.iter().collect::<Vec<_>>()
                        }
                        _ => Vec::new(),
                    })
                    .filter_map(|argument| match argument {
                        syn::GenericArgument::Type(inner) => Some(inner),
                        _ => None,
                    })
            };
            if is_std(&path.path) && last.ident == "Arc" {
                let shared_cell = arguments().find_map(|inner| match inner {
                    Type::Path(inner) if is_std(&inner.path) => {
                        let name = &inner.path.segments.last()?.ident;
                        (name == "RefCell" || name == "Cell").then_some(())
                    }
                    _ => None,
                });
                if shared_cell.is_some() {
                    return Some((
                        ty,
                        "an `Arc` shares its value between threads, and a `RefCell` or a `Cell` cannot be shared: use `Arc<Mutex<..>>` or an atomic, or keep it inside the actor",
                    ));
                }
            }
            arguments().find_map(not_send_part)
        }
        Type::Tuple(tuple) => tuple.elems.iter().find_map(not_send_part),
        Type::Array(array) => not_send_part(&array.elem),
        Type::Slice(slice) => not_send_part(&slice.elem),
        Type::Reference(reference) => not_send_part(&reference.elem),
        Type::Paren(inner) => not_send_part(&inner.elem),
        Type::Group(inner) => not_send_part(&inner.elem),
        _ => None,
    }
}

/// Whether `path` names something of the standard library by the way it is
/// written: one segment (as imported), or starting at `std`, `core` or `alloc`.
fn is_std(path: &syn::Path) -> bool {
    path.segments.len() == 1
        || path.segments.first().is_some_and(|first| {
            first.ident == "std" || first.ident == "core" || first.ident == "alloc"
        })
}

/// What a typed helper takes to build a struct: its fields, unless one of them is
/// private (the struct's own constructor then keeps the say over its values) or
/// depends on a `cfg` (the helper's parameters would too).
fn struct_shape(fields: &Fields) -> MessageShape<'_> {
    let closed = fields.iter().any(|field| {
        matches!(field.vis, Visibility::Inherited)
            || field
                .attrs
                .iter()
                .any(|attr| attr.path().is_ident("cfg") || attr.path().is_ident("cfg_attr"))
    });
    if closed {
        return MessageShape::Whole;
    }
    MessageShape::Fields {
        // An empty tuple struct is built as a braced one (`Tick {}`), which its bare
        // name (`Tick`, its constructor function) is not.
        named: match fields {
            Fields::Named(_) => true,
            Fields::Unnamed(unnamed) => unnamed.unnamed.is_empty(),
            Fields::Unit => false,
        },
        fields: fields.iter().collect(),
    }
}

/// The span of the keyword that starts an item, for errors about the item as a whole.
pub(crate) fn item_keyword_span(item: &Item) -> proc_macro2::Span {
    match item {
        Item::Fn(item) => item.sig.fn_token.span,
        Item::Trait(item) => item.trait_token.span,
        Item::Mod(item) => item.mod_token.span,
        Item::Const(item) => item.const_token.span,
        Item::Static(item) => item.static_token.span,
        Item::Type(item) => item.type_token.span,
        Item::Use(item) => item.use_token.span,
        Item::Impl(item) => item.impl_token.span,
        Item::Struct(item) => item.struct_token.span,
        Item::Enum(item) => item.enum_token.span,
        Item::Union(item) => item.union_token.span,
        other => other.span(),
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;
    use syn::parse_quote;

    use super::*;

    /// The errors of parsing `item` under `#[message(args)]`, one message each,
    /// and whether a model came out.
    fn parse(args: TokenStream, item: &Item) -> (bool, Vec<String>) {
        let mut errors = Errors::default();
        let parsed = parse_args(args, &mut errors);
        let model = parse_item(item, parsed, &mut errors).is_some();
        let messages = match errors.finish() {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        };
        (model, messages)
    }

    #[test]
    fn a_request_names_its_reply_once() {
        let item: Item = parse_quote!(
            pub struct GetCount;
        );
        assert_eq!(parse(quote!(reply = u64), &item), (true, vec![]));
        let (model, errors) = parse(quote!(reply = u64, reply = u32), &item);
        assert!(model);
        assert_eq!(
            errors,
            ["`reply` is given twice: a request has one reply type"]
        );
        let (_, errors) = parse(quote!(answer = u64), &item);
        assert!(errors[0].starts_with("unknown argument: `#[message]` takes `reply = Type`"));
    }

    #[test]
    fn a_union_a_function_and_a_borrowing_type_are_refused() {
        let union: Item = parse_quote!(
            union Bits { a: u32 }
        );
        assert!(parse(quote!(), &union).1[0].contains("a union cannot be sent"));
        let function: Item = parse_quote!(
            fn ping() {}
        );
        assert!(
            parse(quote!(), &function).1[0].starts_with("`#[message]` goes on a struct or an enum")
        );
        let borrowing: Item = parse_quote!(
            struct Name<'a>(&'a str);
        );
        let (model, errors) = parse(quote!(), &borrowing);
        assert!(!model);
        assert!(errors[0].starts_with("a message cannot borrow"));
    }

    #[test]
    fn every_field_that_is_not_send_is_refused_with_what_to_write() {
        let item: Item = parse_quote! {
            enum Update {
                Share(std::rc::Rc<u64>),
                Swap { next: Vec<(u8, Arc<RefCell<u64>>)> },
                Point(*const u8),
                Fine(std::sync::Arc<std::sync::Mutex<u64>>),
            }
        };
        let (model, errors) = parse(quote!(), &item);
        assert!(!model, "no impl is generated beside the errors");
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("`std::rc::Rc<u64>` is not: share it with `std::sync::Arc`"));
        assert!(errors[1].contains("`Arc<RefCell<u64>>` is not: an `Arc` shares its value"));
        assert!(errors[2].contains("a raw pointer is not `Send`"));
        // `RefCell` and `Cell` alone are `Send` (when what they hold is), and a user's
        // own `Rc` or `Cell` is not the standard library's.
        let fine: Item = parse_quote!(
            struct Cells(
                pub Vec<u64>,
                pub std::sync::Arc<str>,
                pub std::cell::RefCell<u64>,
                pub Vec<Cell<u8>>,
                pub grid::Cell,
                pub my::Rc<u8>,
            );
        );
        assert_eq!(parse(quote!(), &fine), (true, vec![]));
    }

    #[test]
    fn a_helper_takes_the_fields_only_when_all_are_public_and_unconditional() {
        let open: syn::ItemStruct = parse_quote!(
            pub struct Add {
                pub by: u64,
            }
        );
        assert!(matches!(
            struct_shape(&open.fields),
            MessageShape::Fields { named: true, .. }
        ));
        let private: syn::ItemStruct = parse_quote!(
            pub struct Add {
                by: u64,
            }
        );
        assert!(matches!(struct_shape(&private.fields), MessageShape::Whole));
        let conditional: syn::ItemStruct = parse_quote!(
            pub struct Add(#[cfg(unix)] pub u64);
        );
        assert!(matches!(
            struct_shape(&conditional.fields),
            MessageShape::Whole
        ));
    }
}
