//! `#[test] fn name()` that runs the body through `tapio::testkit::TestConfig`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::TestModel;

/// The test function.
pub(crate) fn expand(model: &TestModel<'_>) -> TokenStream {
    let function = model.function;
    let attrs = &function.attrs;
    let vis = &function.vis;
    let name = &function.sig.ident;
    let name_text = name.to_string();
    let body_name = format_ident!("__tapio_test_body");
    let inputs = &function.sig.inputs;
    let output = &function.sig.output;
    let block = &function.block;
    let mut config = quote!(::tapio::testkit::TestConfig::new(#name_text));
    if model.start_paused {
        config = quote!(#config.start_paused(true));
    }
    if let Some(workers) = &model.worker_threads {
        config = quote!(#config.worker_threads(#workers));
    }
    if let Some(timeout) = &model.shutdown_timeout_ms {
        config = quote!(#config.shutdown_timeout(::core::time::Duration::from_millis(#timeout)));
    }
    let run = if model.takes_system {
        quote!(#config.run(#body_name))
    } else {
        quote!(#config.run(|_: ::tapio::ActorSystem| #body_name()))
    };
    quote! {
        #(#attrs)*
        #[::core::prelude::v1::test]
        #vis fn #name() {
            async fn #body_name(#inputs) #output #block
            #run
        }
    }
}
