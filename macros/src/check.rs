//! Rules on the whole `#[actor]` model, one function per rule. Each removes what it
//! refuses from the model, so expansion still runs on the rest.
//!
//! The rules: one handler per message type; distinct variant names
//! (`distinct_variant_names`: `a::Ping` and `b::Ping`, two tuples, ..., with advice);
//! helper names free on the ref; and no message named like the protocol enum or the
//! helper trait (also for a state machine's `messages(..)`). That last one does not
//! remove anything: it gives the generated item a hidden name (`__TapioCounterMsg`),
//! since the clash is in the module, not in the model. Types in messages are printed by
//! `type_text`.

use std::collections::HashMap;

use quote::{ToTokens, format_ident};
use syn::Ident;

use crate::errors::Errors;
use crate::model::ActorModel;

/// Run every rule.
pub(crate) fn check_actor(model: &mut ActorModel<'_>, errors: &mut Errors) {
    one_handler_per_message_type(model, errors);
    distinct_variant_names(model, errors);
    helper_names_free(model, errors);
    let messages: Vec<&syn::Type> = model.handlers.iter().map(|h| h.message).collect();
    generated_names_free(
        model.type_name,
        &mut model.protocol,
        &mut model.helpers,
        &messages,
        errors,
    );
}

/// Rule: no message type written as a bare name is named like an item the block
/// generates beside it: the protocol enum (`CounterMsg`) or the helper trait
/// (`CounterRef`). The two would clash in the module (or with the message's
/// import), and every generated impl would then name the wrong item: a dozen
/// errors. The error is on the message's name, and the generated item takes a
/// hidden name, so nothing else cascades. (A path such as `other::CounterMsg`
/// names another module's item, and does not clash.)
pub(crate) fn generated_names_free(
    actor: &Ident,
    protocol: &mut Ident,
    helpers: &mut Option<Ident>,
    messages: &[&syn::Type],
    errors: &mut Errors,
) {
    for message in messages {
        let syn::Type::Path(path) = crate::parse::peel(message) else {
            continue;
        };
        let Some(name) = path.path.get_ident().filter(|_| path.qself.is_none()) else {
            continue;
        };
        if name == protocol {
            let other = other_name(actor, protocol, "Protocol", "Messages");
            errors.error(
                name,
                format!(
                    "`#[actor]` generates the protocol enum `{name}` for `{actor}` in this module, so a message cannot have that name here: rename the message, or name the enum otherwise: `#[actor(protocol = {other})]`"
                ),
            );
            *protocol = format_ident!("__Tapio{}", protocol);
        }
        if let Some(trait_name) = helpers.as_mut()
            && name == trait_name
        {
            let other = other_name(actor, trait_name, "Helpers", "Api");
            errors.error(
                name,
                format!(
                    "`#[actor(helpers)]` generates the helper trait `{name}` for `{actor}` in this module, so a message cannot have that name here: rename the message, or name the trait otherwise: `#[actor(helpers = {other})]`"
                ),
            );
            *trait_name = format_ident!("__Tapio{}", trait_name);
        }
    }
}

/// `{actor}{first}`, or `{actor}{second}` if that is `taken`: a name to suggest.
fn other_name(actor: &Ident, taken: &Ident, first: &str, second: &str) -> String {
    let name = format!("{actor}{first}");
    if *taken == name {
        format!("{actor}{second}")
    } else {
        name
    }
}

/// Methods a helper must not be named after: `ActorRef`'s own (an inherent method
/// hides a trait method, so the helper could not be called) and those of the traits
/// every ref implements (a call would be ambiguous).
pub(crate) const REF_METHODS: &[&str] = &[
    "tell",
    "ask",
    "ask_with",
    "offer",
    "offer_within",
    "path",
    "uid",
    "erase",
    "clone",
    "clone_from",
    "eq",
    "ne",
    "hash",
    "fmt",
    "to_string",
    "to_owned",
    "into",
    "try_into",
    "borrow",
    "borrow_mut",
    "type_id",
];

/// Rule: each handler's typed helper has a name of its own on the ref: not one of
/// `ActorRef`'s methods, and not another helper's. The error says how to rename it.
fn helper_names_free(model: &mut ActorModel<'_>, errors: &mut Errors) {
    if model.helpers.is_none() {
        return;
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    for handler in &mut model.handlers {
        let Some(helper) = &handler.helper else {
            continue;
        };
        let name = helper.to_string();
        let method = handler.method.sig.ident.to_string();
        let rename = "give it another name with `#[handler(helper = other_name)]` on the method, or leave it out with `#[handler(no_helper)]`";
        if REF_METHODS.contains(&name.as_str()) {
            errors.error(
                helper,
                format!(
                    "the typed helper of `{method}` would be called `{name}`, which is already a method of `ActorRef`: {rename}"
                ),
            );
            handler.helper = None;
        } else if let Some(other) = seen.get(&name) {
            errors.error(
                helper,
                format!(
                    "the typed helper of `{method}` would be called `{name}`, like the helper of `{other}`: {rename}"
                ),
            );
            handler.helper = None;
        } else {
            seen.insert(name, method);
        }
    }
}

/// Rule: an actor has at most one handler per message type, because a message is
/// dispatched by its type alone.
fn one_handler_per_message_type(model: &mut ActorModel<'_>, errors: &mut Errors) {
    let mut first_by_type: HashMap<String, usize> = HashMap::new();
    let mut keep = Vec::with_capacity(model.handlers.len());
    for (index, handler) in model.handlers.iter().enumerate() {
        let key = type_key(handler.message);
        match first_by_type.get(&key) {
            Some(&first) => {
                let first = &model.handlers[first];
                let key = type_text(handler.message);
                errors.error(
                    handler.message,
                    format!(
                        "a second handler for `{key}`: an actor has one handler per message type, and `{}` already handles it; merge the two methods",
                        first.method.sig.ident
                    ),
                );
                keep.push(false);
            }
            None => {
                first_by_type.insert(key, index);
                keep.push(true);
            }
        }
    }
    let mut keep = keep.into_iter();
    model.handlers.retain(|_| keep.next().unwrap_or(true));
}

/// Rule: two different message types must not share the last segment of their path
/// (`a::Ping` and `b::Ping`), because it names their variant in the protocol enum.
fn distinct_variant_names(model: &mut ActorModel<'_>, errors: &mut Errors) {
    let mut seen: HashMap<String, (String, String)> = HashMap::new();
    let mut keep = Vec::with_capacity(model.handlers.len());
    for handler in &model.handlers {
        let variant = handler.variant.to_string();
        let key = type_key(handler.message);
        match seen.get(&variant) {
            Some((other_key, other)) if *other_key != key => {
                let this = type_text(handler.message);
                // Two paths may name one type (`a::Ping` and `Ping`); a tuple is
                // better named after what its handler does.
                let advice = if matches!(crate::parse::peel(handler.message), syn::Type::Path(_)) {
                    format!(
                        "name this one's variant with `#[handler(variant = Other{variant})]` on the method; if both paths name the same type, handle it in one method instead"
                    )
                } else {
                    format!(
                        "name this one's variant with `#[handler(variant = {})]` on the method",
                        camel_case(&handler.method.sig.ident.to_string())
                    )
                };
                errors.error(
                    handler.message,
                    format!(
                        "`{this}` and `{other}` would both be the variant `{variant}` of the protocol enum: {advice}"
                    ),
                );
                keep.push(false);
            }
            _ => {
                seen.insert(variant, (key, type_text(handler.message)));
                keep.push(true);
            }
        }
    }
    let mut keep = keep.into_iter();
    model.handlers.retain(|_| keep.next().unwrap_or(true));
}

/// `move_to` as `MoveTo`, for a variant named after a method.
fn camel_case(name: &str) -> String {
    name.trim_start_matches("r#")
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// A type as written, for a message: `ActorRef<&'static str>`, with the spaces
/// `to_string` puts between tokens taken out where Rust would not write them.
pub(crate) fn type_text(ty: &impl ToTokens) -> String {
    let mut text = ty.to_token_stream().to_string();
    for (from, to) in [
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ::", "::"),
        (":: ", "::"),
        (" ,", ","),
        ("( ", "("),
        (" )", ")"),
        ("[ ", "["),
        (" ]", "]"),
        ("& ", "&"),
    ] {
        text = text.replace(from, to);
    }
    text
}

/// A type written out without spacing, to compare types as written.
fn type_key(ty: &syn::Type) -> String {
    ty.to_token_stream().to_string().replace(' ', "")
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;
    use crate::parse::actor::{parse_actor, parse_args};

    /// The errors `check_actor` finds in `block`, and the handlers it keeps.
    fn check(block: &syn::ItemImpl) -> (Vec<String>, Vec<String>) {
        let mut errors = Errors::default();
        let mut model = parse_actor(block, parse_args(quote::quote!(), &mut errors), &mut errors)
            .expect("a model");
        check_actor(&mut model, &mut errors);
        let kept = model
            .handlers
            .iter()
            .map(|h| h.method.sig.ident.to_string())
            .collect();
        let errors = match errors.finish() {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
        };
        (errors, kept)
    }

    #[test]
    fn type_text_keeps_the_spaces_rust_writes() {
        let ty: syn::Type = parse_quote!(ActorRef<&'static str>);
        assert_eq!(type_text(&ty), "ActorRef<&'static str>");
        let ty: syn::Type = parse_quote!(a::b::Vec<(u64, bool)>);
        assert_eq!(type_text(&ty), "a::b::Vec<(u64, bool)>");
    }

    #[test]
    fn a_message_named_like_the_protocol_enum_or_the_helper_trait_is_refused_once() {
        let block: syn::ItemImpl = parse_quote! {
            impl Counter {
                fn add(&mut self, _: CounterMsg) {}
                fn get(&mut self, _: CounterRef) {}
                fn other(&mut self, _: other::CounterMsg) {}
                fn own(&mut self, _: ActorRef<CounterMsg>) {}
            }
        };
        let mut errors = Errors::default();
        let args = parse_args(quote::quote!(helpers), &mut errors);
        let mut model = parse_actor(&block, args, &mut errors).expect("a model");
        // `other::CounterMsg` and `CounterMsg` share a variant: name one.
        model.handlers[2].variant = format_ident!("OtherCounterMsg");
        check_actor(&mut model, &mut errors);
        assert_eq!(model.protocol, "__TapioCounterMsg");
        assert_eq!(
            model.helpers.as_ref().map(ToString::to_string).as_deref(),
            Some("__TapioCounterRef")
        );
        assert_eq!(model.handlers.len(), 4, "the handlers are kept");
        let errors: Vec<String> = errors
            .finish()
            .expect_err("two errors")
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].starts_with("`#[actor]` generates the protocol enum `CounterMsg`"));
        assert!(errors[0].ends_with("`#[actor(protocol = CounterProtocol)]`"));
        assert!(
            errors[1].starts_with("`#[actor(helpers)]` generates the helper trait `CounterRef`")
        );
        assert!(errors[1].ends_with("`#[actor(helpers = CounterHelpers)]`"));
    }

    #[test]
    fn camel_case_joins_the_parts_of_a_method_name() {
        assert_eq!(camel_case("move_to"), "MoveTo");
        assert_eq!(camel_case("r#type"), "Type");
        assert_eq!(camel_case("_tick__now"), "TickNow");
    }

    #[test]
    fn a_second_handler_for_one_type_is_one_error_naming_the_first() {
        let block: syn::ItemImpl = parse_quote! {
            impl Pinger {
                fn first(&mut self, _: Ping) {}
                fn second(&mut self, _: Ping) {}
            }
        };
        let (errors, kept) = check(&block);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with("a second handler for `Ping`"));
        assert!(
            errors[0].contains("`first` already handles it"),
            "{errors:?}"
        );
        assert_eq!(kept, ["first"]);
    }

    #[test]
    fn a_variant_clash_is_refused_and_a_named_variant_resolves_it() {
        let block: syn::ItemImpl = parse_quote! {
            impl Relay {
                fn numbers(&mut self, _: ActorRef<u64>) {}
                fn words(&mut self, _: ActorRef<&'static str>) {}
            }
        };
        let (errors, kept) = check(&block);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("`ActorRef<&'static str>` and `ActorRef<u64>`"));
        assert!(errors[0].contains("#[handler(variant = OtherActorRef)]"));
        assert_eq!(kept, ["numbers"]);

        let block: syn::ItemImpl = parse_quote! {
            impl Relay {
                fn numbers(&mut self, _: ActorRef<u64>) {}
                #[handler(variant = Words)]
                fn words(&mut self, _: ActorRef<&'static str>) {}
            }
        };
        let (errors, kept) = check(&block);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(kept, ["numbers", "words"]);
    }
}
