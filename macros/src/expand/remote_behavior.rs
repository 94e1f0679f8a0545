//! The expansion of `#[remote_behavior("key")]`: the function as written, a type of
//! the same name (a braced struct lives in the type namespace only, so it sits
//! beside the function) that implements `Factory`, and its registration.

use proc_macro2::TokenStream;
use quote::quote;

use crate::parse::remote_behavior::{FactoryModel, Protocol};

/// Expand a checked factory.
pub(crate) fn expand(model: &FactoryModel<'_>) -> TokenStream {
    let function = model.item;
    let name = &function.sig.ident;
    let vis = &function.vis;
    let key = &model.key;
    let args = model.args;
    let protocol = match &model.protocol {
        Protocol::Named(ty) => quote!(#ty),
        Protocol::Actor(ty) => quote!(<#ty as ::tapio::__private::Protocol>::Msg),
    };
    let doc = format!(
        "The factory `{}` (key {:?}), built by the function of the same name: offer it with `Spawner::offering::<{}>()`, ask for it with `spawner.spawn_remote::<{}>(args, name)`.",
        name,
        key.value(),
        name,
        name,
    );
    quote! {
        #function

        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #name {}

        impl ::tapio::remote::spawn::Factory for #name {
            const KEY: &'static str = #key;
            type Args = #args;
            type Protocol = #protocol;

            fn build(args: Self::Args) -> ::tapio::Behavior<Self::Protocol> {
                ::tapio::remote::spawn::into_behavior(#name(args))
            }
        }

        ::tapio::__private::inventory::submit! {
            ::tapio::remote::spawn::FactoryRegistration::of::<#name>(
                ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#name))
            )
        }
    }
}
