//! What is emitted beside the errors when a macro's input is wrong: the user's own
//! item, unchanged, so that one mistake does not turn into a dozen "cannot find"
//! errors elsewhere.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Item;

use crate::errors::to_compile_errors;

/// The item as written, then the errors.
pub(crate) fn item_with_errors(item: &Item, error: syn::Error) -> TokenStream {
    let errors = to_compile_errors(error);
    quote! {
        #item
        #errors
    }
}

/// Tokens that did not even parse as an item: give them back with the errors.
pub(crate) fn tokens_with_errors(tokens: TokenStream, error: syn::Error) -> TokenStream {
    let errors = to_compile_errors(error);
    quote! {
        #tokens
        #errors
    }
}
