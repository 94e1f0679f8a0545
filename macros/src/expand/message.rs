//! `impl Message` (and `impl Request`) for a `#[message]` type.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::model::MessageModel;

/// The impls for one message type.
pub(crate) fn expand(model: &MessageModel<'_>) -> TokenStream {
    let ident = model.ident;
    let (impl_generics, type_generics, where_clause) = model.generics.split_for_impl();
    let mut where_clause = where_clause
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(where));
    for param in model.generics.type_params() {
        let name = &param.ident;
        where_clause
            .predicates
            .push(syn::parse_quote_spanned!(param.span()=> #name: ::core::marker::Send + 'static));
    }
    // A reply that is not a message is one error, on the reply type: every
    // place that asks for it is spanned there, so the compiler says it once.
    let slot = match &model.reply {
        Some(reply) => {
            quote_spanned!(reply.span()=> type ReplySlot = <#reply as ::tapio::__private::SlotFor>::Slot;)
        }
        None => quote!(
            type ReplySlot = ::tapio::__private::NoReply;
        ),
    };
    // `Request::Reply` must be a `Message`: spanned on the reply type, so that is
    // where an error points.
    let request = model.reply.as_ref().map(|reply| {
        let reply_type = quote_spanned!(reply.span()=> type Reply = #reply;);
        // Guarded by a higher-ranked bound: a reply that is no message leaves this
        // impl without effect, and the `ReplySlot` above says so once.
        let mut guarded = where_clause.clone();
        guarded
            .predicates
            .push(syn::parse_quote_spanned!(reply.span()=> for<'__tapio> #reply: ::tapio::__private::Message));
        quote! {
            impl #impl_generics ::tapio::__private::Request for #ident #type_generics #guarded {
                #reply_type
            }
        }
    });
    // The `Send` requirement is checked on the user's type name, so an error says
    // which message cannot cross to another task.
    let decode = model.remote.as_ref().map(|key| {
        quote! {
            fn encode_wire(&self) -> ::core::option::Option<::tapio::__private::Result<::tapio::wire::Encoded, ::std::string::String>> {
                ::core::option::Option::Some(::tapio::wire::encode_as::<Self>(self))
            }

            const WIRE_KEY: ::core::option::Option<&'static str> = ::core::option::Option::Some(#key);

            fn decode_wire(
                key: &str,
                bytes: &[u8],
                ctx: &::tapio::wire::WireContext<'_>,
            ) -> ::tapio::__private::Result<Self, ::tapio::wire::WireProblem> {
                ::tapio::wire::decode_if::<Self>(key, bytes, ctx)
            }
        }
    });
    let message_impl = quote_spanned! {ident.span()=>
        impl #impl_generics ::tapio::__private::Message for #ident #type_generics #where_clause {
            #slot
            #decode
        }
    };
    // A remote request's reply crosses back as a frame: registered too, or a compile
    // error on the reply type.
    let reply_check = model
        .remote
        .as_ref()
        .and(model.reply.as_ref())
        .map(|reply| {
            let call = quote_spanned!(reply.span()=> ::tapio::__private::remote_reply::<#reply>());
            quote! {
                const _: fn() = || {
                    #call;
                };
            }
        });
    let wire = model.remote.as_ref().map(|key| {
        quote! {
            #reply_check

            impl ::tapio::wire::WireMessage for #ident {
                const KEY: &'static str = #key;
            }

            impl<__TapioCheck> ::tapio::wire::RemoteProtocol<__TapioCheck> for #ident {}

            ::tapio::__private::inventory::submit! {
                ::tapio::wire::Registration::of::<#ident>()
            }
        }
    });
    quote! {
        #message_impl
        #request
        #wire
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;
    use syn::{Item, parse_quote};

    use super::*;
    use crate::errors::Errors;
    use crate::parse::message::{parse_args, parse_item};

    fn expand_text(args: TokenStream, item: &Item) -> String {
        let mut errors = Errors::default();
        let parsed = parse_args(args, &mut errors);
        let model = parse_item(item, parsed, &mut errors).expect("a model");
        assert!(errors.finish().is_ok());
        expand(&model).to_string()
    }

    #[test]
    fn a_request_gets_a_reply_slot_and_a_plain_message_does_not() {
        let item: Item = parse_quote!(
            pub struct GetCount;
        );
        let request = expand_text(quote!(reply = u64), &item);
        assert!(
            request
                .contains("type ReplySlot = < u64 as :: tapio :: __private :: SlotFor > :: Slot")
        );
        assert!(request.contains("impl :: tapio :: __private :: Request for GetCount"));
        let plain = expand_text(quote!(), &item);
        assert!(plain.contains("type ReplySlot = :: tapio :: __private :: NoReply"));
        assert!(!plain.contains("Request"));
    }

    #[test]
    fn a_generic_message_asks_its_parameters_to_be_sendable() {
        let item: Item = parse_quote!(
            pub struct Wrap<T>(pub T);
        );
        let tokens = expand_text(quote!(), &item);
        assert!(tokens.contains("where T : :: core :: marker :: Send + 'static"));
    }
}
