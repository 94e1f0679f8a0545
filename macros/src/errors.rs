//! Collects every error a macro finds, so the user sees all of them at once.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::fmt::Display;

/// The errors found so far.
#[derive(Default)]
pub(crate) struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    /// Record an error pointing at `tokens`.
    pub(crate) fn error(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    /// Record an error that is already built.
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// All errors as one, or `Ok` when there were none.
    pub(crate) fn finish(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.into_iter();
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            first.combine(error);
        }
        Err(first)
    }
}

/// The `compile_error!` invocations for `error`.
pub(crate) fn to_compile_errors(error: syn::Error) -> TokenStream {
    error.to_compile_error()
}
