//! Parsing `#[message]` and `#[message(reply = T)]`.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{Fields, GenericParam, Generics, Ident, Item, Type, Visibility};

use crate::errors::Errors;
use crate::model::{MessageModel, MessageShape};
use crate::symbol::REPLY;

/// The arguments of `#[message(..)]`.
#[derive(Default)]
pub(crate) struct MessageArgs {
    pub(crate) reply: Option<Type>,
}

/// Parse the attribute's arguments, recording what is wrong with them.
pub(crate) fn parse_args(args: TokenStream, errors: &mut Errors) -> MessageArgs {
    let mut parsed = MessageArgs::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident(REPLY) {
            if parsed.reply.is_some() {
                return Err(meta.error("`reply` is given twice: a request has one reply type"));
            }
            parsed.reply = Some(meta.value()?.parse()?);
            Ok(())
        } else {
            Err(meta.error(format!(
                "unknown argument: `#[message]` takes only `{REPLY} = Type`, the type a request is answered with"
            )))
        }
    });
    if let Err(error) = parser.parse2(args) {
        errors.push(error);
    }
    parsed
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
    Some(MessageModel {
        ident,
        vis,
        shape,
        generics,
        reply: args.reply,
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
        named: matches!(fields, Fields::Named(_)),
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
