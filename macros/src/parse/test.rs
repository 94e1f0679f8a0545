//! Parsing `#[tapio::test]`: its arguments and the test function.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::{FnArg, Item, ItemFn, LitBool, LitInt};

use crate::errors::Errors;
use crate::model::TestModel;
use crate::parse::message::item_keyword_span;
use crate::parse::{Form, value_of};
use crate::symbol::{SHUTDOWN_TIMEOUT_MS, START_PAUSED, WORKER_THREADS};

/// The arguments of `#[tapio::test(..)]`.
#[derive(Default)]
pub(crate) struct TestArgs {
    start_paused: Option<LitBool>,
    worker_threads: Option<LitInt>,
    shutdown_timeout_ms: Option<LitInt>,
}

const START_PAUSED_FORM: Form = Form {
    written: "start_paused = true",
    meaning: "tokio's clock starts paused, and advances only when every task waits",
};
const WORKER_THREADS_FORM: Form = Form {
    written: "worker_threads = 2",
    meaning: "a multi-thread runtime with that many workers",
};
const SHUTDOWN_TIMEOUT_MS_FORM: Form = Form {
    written: "shutdown_timeout_ms = 500",
    meaning: "how long the system has to stop at the end of the test",
};

/// Parse the attribute's arguments, recording what is wrong with them.
pub(crate) fn parse_args(args: TokenStream, errors: &mut Errors) -> TestArgs {
    let mut parsed = TestArgs::default();
    let mut given = std::collections::HashSet::new();
    let parser = syn::meta::parser(|meta| {
        if let Some(key) = meta.path.get_ident().map(ToString::to_string)
            && !given.insert(key.clone())
        {
            return Err(meta.error(format!(
                "`{key}` is given twice: give each argument of `#[tapio::test]` once"
            )));
        }
        if meta.path.is_ident(START_PAUSED) {
            parsed.start_paused = Some(value_of(&meta, START_PAUSED_FORM)?);
        } else if meta.path.is_ident(WORKER_THREADS) {
            parsed.worker_threads = Some(value_of(&meta, WORKER_THREADS_FORM)?);
        } else if meta.path.is_ident(SHUTDOWN_TIMEOUT_MS) {
            parsed.shutdown_timeout_ms = Some(value_of(&meta, SHUTDOWN_TIMEOUT_MS_FORM)?);
        } else {
            return Err(meta.error(format!(
                "unknown argument: `#[tapio::test]` takes `{START_PAUSED} = true`, `{WORKER_THREADS} = 2` and `{SHUTDOWN_TIMEOUT_MS} = 500`"
            )));
        }
        Ok(())
    });
    if let Err(error) = parser.parse2(args) {
        errors.push(error);
    }
    parsed
}

const USAGE: &str = "`#[tapio::test]` goes on an `async fn` that takes the test's system: `#[tapio::test] async fn it_works(system: ActorSystem) { .. }`";

/// The model of the test, if the item is an `async fn` with at most one parameter.
pub(crate) fn parse_test<'a>(
    item: &'a Item,
    args: TestArgs,
    errors: &mut Errors,
) -> Option<TestModel<'a>> {
    let Item::Fn(function) = item else {
        errors.push(syn::Error::new(item_keyword_span(item), USAGE));
        return None;
    };
    let ItemFn { sig, .. } = function;
    if sig.asyncness.is_none() {
        errors.error(sig.fn_token, format!("the test must be `async`: {USAGE}"));
        return None;
    }
    if !sig.generics.params.is_empty() {
        errors.error(&sig.generics, "a test cannot be generic");
        return None;
    }
    let mut inputs = sig.inputs.iter();
    let takes_system = match inputs.next() {
        None => false,
        Some(FnArg::Typed(typed)) => {
            // The system is handed over by value: `ActorSystem`, by any path.
            let is_system = matches!(crate::parse::peel(&typed.ty), syn::Type::Path(path)
                if path.qself.is_none()
                    && path.path.segments.last().is_some_and(|last| last.ident == "ActorSystem"));
            if !is_system {
                errors.error(
                    &typed.ty,
                    format!("a test's one parameter is its system, an `ActorSystem`: {USAGE}"),
                );
                return None;
            }
            true
        }
        Some(receiver @ FnArg::Receiver(_)) => {
            errors.error(receiver, format!("a test has no `self`: {USAGE}"));
            return None;
        }
    };
    if let Some(extra) = inputs.next() {
        errors.error(
            extra,
            format!("a test takes at most its `ActorSystem`: {USAGE}"),
        );
        return None;
    }
    if let Some(workers) = &args.worker_threads
        && workers.base10_parse::<usize>().is_ok_and(|n| n == 0)
    {
        errors.error(workers, "`worker_threads` must be at least 1");
    }
    if let (Some(paused), Some(workers)) = (&args.start_paused, &args.worker_threads)
        && paused.value
    {
        errors.error(
            workers,
            "tokio's clock can be paused only on a current-thread runtime: drop `worker_threads` or `start_paused`",
        );
    }
    Some(TestModel {
        function,
        takes_system,
        start_paused: args.start_paused.is_some_and(|b| b.value),
        worker_threads: args.worker_threads,
        shutdown_timeout_ms: args.shutdown_timeout_ms,
    })
}

#[cfg(test)]
mod tests {
    use quote::quote;
    use syn::parse_quote;

    use super::*;

    /// The first error of parsing `item` under `#[tapio::test(args)]`, if any, and
    /// whether a model came out.
    fn parse(args: TokenStream, item: &Item) -> (bool, Option<String>) {
        let mut errors = Errors::default();
        let parsed = parse_args(args, &mut errors);
        let model = parse_test(item, parsed, &mut errors).is_some();
        (model, errors.finish().err().map(|e| e.to_string()))
    }

    #[test]
    fn a_test_is_an_async_fn_taking_at_most_its_system() {
        let with_system: Item = parse_quote!(
            async fn works(system: ActorSystem) {}
        );
        assert_eq!(parse(quote!(), &with_system), (true, None));
        let without: Item = parse_quote!(
            async fn works() {}
        );
        assert_eq!(parse(quote!(start_paused = true), &without), (true, None));
        let blocking: Item = parse_quote!(
            fn works() {}
        );
        let (model, error) = parse(quote!(), &blocking);
        assert!(!model);
        assert!(error.is_some_and(|e| e.starts_with("the test must be `async`")));
        let two: Item = parse_quote!(
            async fn works(a: ActorSystem, b: u8) {}
        );
        assert!(
            parse(quote!(), &two)
                .1
                .is_some_and(|e| e.starts_with("a test takes at most"))
        );
        let other: Item = parse_quote!(
            async fn works(system: u32) {}
        );
        assert!(
            parse(quote!(), &other)
                .1
                .is_some_and(|e| e.starts_with("a test's one parameter is its system"))
        );
        let by_path: Item = parse_quote!(
            async fn works(system: tapio::ActorSystem) {}
        );
        assert_eq!(parse(quote!(), &by_path), (true, None));
        let generic: Item = parse_quote!(
            async fn works<T>() {}
        );
        assert_eq!(
            parse(quote!(), &generic).1.as_deref(),
            Some("a test cannot be generic")
        );
    }

    #[test]
    fn the_arguments_are_checked_together() {
        let item: Item = parse_quote!(
            async fn works() {}
        );
        assert_eq!(
            parse(quote!(worker_threads = 0), &item).1.as_deref(),
            Some("`worker_threads` must be at least 1")
        );
        assert!(
            parse(quote!(start_paused = true, worker_threads = 2), &item)
                .1
                .is_some_and(|e| e.starts_with("tokio's clock can be paused only"))
        );
        assert!(
            parse(quote!(threads = 2), &item)
                .1
                .is_some_and(|e| e.starts_with("unknown argument"))
        );
    }
}
