//! Parsing `#[remote_behavior("key")]` on a factory function.

use proc_macro2::TokenStream;
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, Item, ItemFn, PathArguments, ReturnType, Type, TypeParamBound};

use crate::errors::Errors;

/// A factory function, checked: its key, its arguments type, and the protocol of
/// the behavior it returns.
pub(crate) struct FactoryModel<'a> {
    pub(crate) item: &'a ItemFn,
    pub(crate) key: syn::LitStr,
    pub(crate) args: &'a Type,
    pub(crate) protocol: Protocol<'a>,
}

/// Where the protocol of the returned behavior comes from.
pub(crate) enum Protocol<'a> {
    /// The first type argument of `Behavior<P>`, `Supervise<P>`, or
    /// `impl IntoBehavior<P>`.
    Named(&'a Type),
    /// An actor type returned as it is: its protocol is `<A as Protocol>::Msg`.
    Actor(&'a Type),
}

/// Parse the key: one string literal, a valid key.
pub(crate) fn parse_key(args: TokenStream, errors: &mut Errors) -> Option<syn::LitStr> {
    let key: syn::LitStr = match syn::parse2(args) {
        Ok(key) => key,
        Err(error) => {
            errors.push(syn::Error::new(
                error.span(),
                "`#[remote_behavior]` takes the factory's key, a string such as `#[remote_behavior(\"shop.worker.v1\")]`",
            ));
            return None;
        }
    };
    if !crate::parse::message::is_stable_key(&key.value()) {
        errors.error(
            &key,
            "a factory key is 1 to 128 ASCII letters, digits and `.` `_` `-` `:` `/`, stable across versions of the program, such as \"shop.worker.v1\"",
        );
        return None;
    }
    Some(key)
}

/// Parse the function the attribute is on.
pub(crate) fn parse_item<'a>(
    item: &'a Item,
    key: Option<syn::LitStr>,
    errors: &mut Errors,
) -> Option<FactoryModel<'a>> {
    let Item::Fn(function) = item else {
        errors.error(
            item,
            "`#[remote_behavior]` goes on a factory function: `fn worker(args: WorkerArgs) -> Behavior<WorkerMsg>`",
        );
        return None;
    };
    let sig = &function.sig;
    if let Some(asyncness) = &sig.asyncness {
        errors.error(
            asyncness,
            "a factory builds its behavior at once: it cannot be `async` (start async work in `Behaviors::setup`)",
        );
    }
    if !sig.generics.params.is_empty() {
        errors.error(
            &sig.generics,
            "a factory cannot be generic: its key names one arguments type and one protocol",
        );
    }
    let args = match sig.inputs.iter().collect::<Vec<_>>().as_slice() {
        [FnArg::Typed(arg)] => Some(crate::parse::peel(&arg.ty)),
        [FnArg::Receiver(receiver)] => {
            errors.error(receiver, "a factory is a free function, not a method");
            None
        }
        _ => {
            errors.error(
                &sig.inputs,
                "a factory takes exactly one argument, its arguments type: `fn worker(args: WorkerArgs)` (use `()` for none)",
            );
            None
        }
    };
    let protocol = match &sig.output {
        ReturnType::Default => {
            errors.error(
                sig,
                "a factory returns the behavior it builds: `-> Behavior<WorkerMsg>`",
            );
            None
        }
        ReturnType::Type(_, ty) => protocol_of(crate::parse::peel(ty), errors),
    };
    Some(FactoryModel {
        item: function,
        key: key?,
        args: args?,
        protocol: protocol?,
    })
}

/// The protocol of a returned behavior type.
fn protocol_of<'a>(ty: &'a Type, errors: &mut Errors) -> Option<Protocol<'a>> {
    if let Some(advice) = fallible(ty) {
        errors.error(ty, advice);
        return None;
    }
    let arguments = match ty {
        Type::Path(path) => match path.path.segments.last().map(|s| &s.arguments) {
            Some(PathArguments::None) if path.qself.is_none() => return Some(Protocol::Actor(ty)),
            Some(arguments) => arguments,
            None => return None,
        },
        Type::ImplTrait(bounds) => match bounds.bounds.iter().find_map(|bound| match bound {
            TypeParamBound::Trait(bound) => bound.path.segments.last().map(|s| &s.arguments),
            _ => None,
        }) {
            Some(arguments) => arguments,
            None => {
                errors.error(
                    ty,
                    "a factory returns `impl IntoBehavior<P>` with its protocol `P`",
                );
                return None;
            }
        },
        _ => {
            errors.error(
                ty,
                "a factory returns its behavior: `Behavior<P>`, `Supervise<P>`, `impl IntoBehavior<P>`, or an actor type",
            );
            return None;
        }
    };
    let first = match arguments {
        PathArguments::AngleBracketed(generic) => generic.args.iter().find_map(|arg| match arg {
            GenericArgument::Type(ty) => Some(crate::parse::peel(ty)),
            _ => None,
        }),
        _ => None,
    };
    match first {
        Some(protocol) => Some(Protocol::Named(protocol)),
        None => {
            errors.push(syn::Error::new(
                ty.span(),
                "a factory's return type names the protocol of its behavior: `Behavior<WorkerMsg>`",
            ));
            None
        }
    }
}

/// What to write instead of a `Result` or an `Option` of a behavior, if `ty` is one.
/// A factory cannot fail: `Factory::build` returns the behavior, and runs on the
/// spawner's node, whose answer knows bad arguments and taken names but not a
/// factory that declined; the work that can fail belongs in the actor's start.
fn fallible(ty: &Type) -> Option<String> {
    let Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    let wrapper = last.ident.to_string();
    if wrapper != "Result" && wrapper != "Option" {
        return None;
    }
    let inner = match &last.arguments {
        PathArguments::AngleBracketed(generic) => generic.args.iter().find_map(|arg| match arg {
            GenericArgument::Type(inner) => {
                Some(crate::check::type_text(crate::parse::peel(inner)))
            }
            _ => None,
        }),
        _ => None,
    };
    let behavior = inner.unwrap_or_else(|| "Behavior<P>".to_owned());
    let article = if wrapper == "Option" { "an" } else { "a" };
    Some(format!(
        "a factory cannot fail: it returns its behavior, `-> {behavior}`, not {article} `{wrapper}`; work that can fail goes in `Behaviors::setup(move |ctx| ..)`, whose closure may return a `Result`: an `Err` fails the actor's start, under its supervision"
    ))
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;

    #[test]
    fn a_factory_returning_a_result_or_an_option_is_refused_with_what_to_return() {
        let result: Type = parse_quote!(Result<Behavior<Job>, std::io::Error>);
        let advice = fallible(&result).expect("refused");
        assert!(advice.starts_with(
            "a factory cannot fail: it returns its behavior, `-> Behavior<Job>`, not a `Result`"
        ));
        let option: Type = parse_quote!(std::option::Option<Supervise<Job>>);
        assert!(fallible(&option).is_some_and(|advice| advice.contains("`-> Supervise<Job>`")));
        let behavior: Type = parse_quote!(Behavior<Job>);
        assert_eq!(fallible(&behavior), None);
    }
}
