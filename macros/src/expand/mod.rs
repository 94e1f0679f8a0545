//! From the model to tokens: one file per generated artefact.

pub(crate) mod dispatch;
pub(crate) mod fields;
pub(crate) mod helpers;
pub(crate) mod message;
pub(crate) mod protocol;
pub(crate) mod test;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{ImplItem, ItemImpl};

use crate::model::ActorModel;
use crate::symbol::{HANDLER, SIGNAL};

/// The impl block as the user wrote it, minus the `#[signal]` and `#[handler]`
/// markers, which are not attributes the compiler knows.
pub(crate) fn user_block(block: &ItemImpl) -> ItemImpl {
    let mut block = block.clone();
    for item in &mut block.items {
        if let ImplItem::Fn(method) = item {
            method
                .attrs
                .retain(|attr| !attr.path().is_ident(SIGNAL) && !attr.path().is_ident(HANDLER));
        }
    }
    block
}

/// Everything `#[actor]` generates.
pub(crate) fn actor(model: &ActorModel<'_>) -> TokenStream {
    let block = user_block(model.item);
    let protocol = protocol::expand(model);
    let dispatch = dispatch::expand(model);
    let helpers = helpers::expand(model);
    quote! {
        #block
        #protocol
        #dispatch
        #helpers
    }
}
