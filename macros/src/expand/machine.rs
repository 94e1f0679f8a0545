//! What `#[actor(messages(..), states(..))]` generates: the protocol enum, the enum
//! of states, `StateMachine` for the actor, `StateOf` for every state, one
//! `Transition` per declared switch, and the graph as Mermaid and DOT.
//!
//! Why this shape:
//!
//! - The table sits on the actor, the handlers on the states: one attribute sees one
//!   item, so the one that sees the table can check it whole (`check_table`: a
//!   successor that is not a state, a state nothing switches to, a state unreachable
//!   from the first row, all at once) and generate the graph and the `Transition` impls;
//!   a state's block needs only the actor's name. One attribute on an inline `mod`
//!   would force every state machine into a module of its own.
//! - The protocol is declared (`messages(..)`), not collected: a state handling
//!   anything else fails on `Extract<M>`, so a typo cannot widen the protocol.
//! - A switch is checked as `Source: Transition<Target>`, the successor list a
//!   defaulted type parameter (printed by `on_unimplemented`), with a blanket impl
//!   toward the uninhabited `Unreachable` for every state, so no state has a lone impl
//!   rustc would infer the target from: the custom message holds whether the source is
//!   inferred or written out.
//! - Typed helpers (`#[actor(helpers, messages(..), states(..))]`) go through the same
//!   `helpers` as a plain actor's, one per listed message.

use std::collections::{HashMap, HashSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, LitInt, Type};

use crate::errors::Errors;
use crate::expand::dispatch::local;
use crate::model::{ActorModel, Variant};
use crate::parse::states::{Listed, Row};

/// A state machine actor.
pub(crate) struct MachineModel<'a> {
    /// The `#[actor]` block (its `#[signal]` handler, its name and protocol).
    pub(crate) actor: ActorModel<'a>,
    /// The protocol's variants, from `messages(..)`, with their helpers' names.
    pub(crate) variants: Vec<(Variant<'a>, Ident)>,
    /// The table, rows in the order written: the first is the initial state.
    pub(crate) rows: Vec<Row>,
    /// `stash_capacity = N`.
    pub(crate) stash_capacity: Option<LitInt>,
}

/// The variants of `messages(..)`, each named after its type's last segment, with
/// the name of its typed helper: `as name`, or the variant's name in snake case.
pub(crate) fn variants<'a>(
    messages: &'a [Listed],
    errors: &mut Errors,
) -> Vec<(Variant<'a>, Ident)> {
    let mut seen: HashMap<String, &Type> = HashMap::new();
    let mut helpers: HashSet<String> = HashSet::new();
    let mut variants = Vec::new();
    for Listed { message, helper } in messages {
        let Some(name) = crate::parse::default_variant(message) else {
            errors.error(message, "expected a message type, such as `Connect`");
            continue;
        };
        if let Some(first) = seen.insert(name.to_string(), message) {
            errors.error(
                message,
                format!(
                    "`{}` is listed twice (or shares its last name with `{}`): list each message once, and import one of two same-named types under another name (`use a::Ping as APing;`)",
                    crate::check::type_text(message),
                    crate::check::type_text(first)
                ),
            );
            continue;
        }
        let helper = match helper {
            Some(helper) => helper.clone(),
            None => match helper_named_after(&name) {
                Some(helper) => helper,
                None => {
                    errors.error(
                        message,
                        format!(
                            "the typed helper of `{name}` cannot be named after it: name it with `{} as other_name` in `messages(..)`",
                            crate::check::type_text(message)
                        ),
                    );
                    continue;
                }
            },
        };
        let text = helper.to_string();
        let rename = format!(
            "name its helper with `{} as other_name` in `messages(..)`",
            crate::check::type_text(message)
        );
        if crate::check::REF_METHODS.contains(&text.as_str()) {
            errors.error(
                &helper,
                format!("the typed helper of `{name}` would be called `{text}`, which is already a method of `ActorRef`: {rename}"),
            );
        } else if !helpers.insert(text.clone()) {
            errors.error(
                &helper,
                format!("a second typed helper called `{text}`: {rename}"),
            );
        }
        variants.push((
            Variant {
                variant: name,
                message,
                cfgs: Vec::new(),
            },
            helper,
        ));
    }
    variants
}

/// The helper named after the message `name`, in snake case: `r#type` gives
/// `type`, written raw (`r#type`), as is any name that is a keyword (`Move` gives
/// `r#move`). `None` for what cannot be an identifier even raw (`self`, `crate`).
fn helper_named_after(name: &Ident) -> Option<Ident> {
    use syn::ext::IdentExt;
    let snake = snake_case(&name.unraw().to_string());
    if let Ok(plain) = syn::parse_str::<Ident>(&snake) {
        return Some(Ident::new(&plain.to_string(), name.span()));
    }
    let raw = format!("r#{snake}");
    syn::parse_str::<Ident>(&raw)
        .ok()
        .map(|_| Ident::new_raw(&snake, name.span()))
}

/// `TransmitNow` as `transmit_now`.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (index, c) in name.char_indices() {
        if c.is_uppercase() {
            if index > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Check the table: each state once on the left, every successor a state, every
/// state reachable from the first. What is refused is then taken out of the table
/// (a second row, a successor that is not a state or is listed twice), so the
/// generated code does not repeat each error as a clash of its own.
pub(crate) fn check_table(rows: &mut Vec<Row>, errors: &mut Errors) {
    check_rows(rows, errors);
    let mut states: HashSet<String> = HashSet::new();
    rows.retain(|row| states.insert(row.state.to_string()));
    for row in rows.iter_mut() {
        let mut listed = HashSet::new();
        row.successors.retain(|successor| {
            let name = successor.to_string();
            states.contains(&name) && listed.insert(name)
        });
    }
}

/// The rules of `check_table`, on the table as written.
fn check_rows(rows: &[Row], errors: &mut Errors) {
    let mut states: HashSet<String> = HashSet::new();
    for row in rows {
        if !states.insert(row.state.to_string()) {
            errors.error(
                &row.state,
                format!("`{}` has a second row: give each state one row, listing all its successors (`{} => A | B`)", row.state, row.state),
            );
        }
    }
    let mut entered: HashSet<String> = HashSet::new();
    // A misspelled successor is read as the state it was meant to be, so the state
    // it names is not also reported as never entered.
    let mut meant: HashMap<String, String> = HashMap::new();
    for row in rows {
        let mut listed = HashSet::new();
        for successor in &row.successors {
            let name = successor.to_string();
            if !states.contains(&name) {
                let near = crate::suggest::closest(&name, states.iter().map(String::as_str));
                let message = match near {
                    Some(near) => format!(
                        "`{successor}` is not a state of this actor; did you mean `{near}`?"
                    ),
                    None => format!(
                        "`{successor}` is not a state of this actor: every state has a row of its own in `states(..)` (write `{successor}` alone for a state with no successors)"
                    ),
                };
                errors.error(successor, message);
                if let Some(near) = near {
                    meant.insert(name.clone(), near.to_string());
                    entered.insert(near.to_string());
                }
            }
            if !listed.insert(successor.to_string()) {
                errors.error(
                    successor,
                    format!(
                        "`{successor}` is listed twice as a successor of `{}`",
                        row.state
                    ),
                );
            }
            entered.insert(successor.to_string());
        }
    }
    let Some(initial) = rows.first() else {
        return;
    };
    let mut reached: HashSet<String> = HashSet::from([initial.state.to_string()]);
    let mut frontier = vec![&initial.state];
    while let Some(state) = frontier.pop() {
        let Some(row) = rows.iter().find(|row| row.state == *state) else {
            continue;
        };
        for successor in &row.successors {
            let name = successor.to_string();
            let name = meant.get(&name).cloned().unwrap_or(name);
            if reached.insert(name.clone())
                && let Some(row) = rows.iter().find(|row| row.state == name)
            {
                frontier.push(&row.state);
            }
        }
    }
    for row in rows.iter().skip(1) {
        let name = row.state.to_string();
        if !entered.contains(&name) {
            errors.error(
                &row.state,
                format!("`{name}` has no way to be entered: no state lists it as a successor, and only the first row is the initial state"),
            );
        } else if !reached.contains(&name) {
            errors.error(
                &row.state,
                format!("`{name}` is unreachable: no path of switches leads to it from the initial state `{}`", initial.state),
            );
        }
    }
}

/// The graph in Mermaid's `stateDiagram-v2`.
pub(crate) fn mermaid(rows: &[Row]) -> String {
    let mut text = String::from("stateDiagram-v2\n");
    if let Some(initial) = rows.first() {
        text.push_str(&format!("    [*] --> {}\n", initial.state));
    }
    for row in rows {
        for successor in &row.successors {
            text.push_str(&format!("    {} --> {}\n", row.state, successor));
        }
        if row.successors.is_empty() {
            text.push_str(&format!("    {} --> [*]\n", row.state));
        }
    }
    text
}

/// The graph in Graphviz's DOT.
pub(crate) fn dot(name: &Ident, rows: &[Row]) -> String {
    let mut text = format!("digraph {name} {{\n    start [shape=point];\n");
    if let Some(initial) = rows.first() {
        text.push_str(&format!("    start -> {};\n", initial.state));
    }
    for row in rows {
        for successor in &row.successors {
            text.push_str(&format!("    {} -> {};\n", row.state, successor));
        }
        if row.successors.is_empty() {
            text.push_str(&format!("    {} [peripheries=2];\n", row.state));
        }
    }
    text.push_str("}\n");
    text
}

/// Everything the actor's block generates.
pub(crate) fn expand(model: &MachineModel<'_>) -> TokenStream {
    let actor = &model.actor;
    let self_ty = actor.self_ty;
    let type_name = actor.type_name;
    let protocol = &actor.protocol;
    let vis = &actor.vis;
    let states = format_ident!("__{}States", type_name);
    let (variants_only, helper_names): (Vec<Variant<'_>>, Vec<Ident>) = model
        .variants
        .iter()
        .map(|(v, h)| (v.clone(), h.clone()))
        .unzip();
    let protocol_enum = crate::expand::protocol::expand_variants(actor, &variants_only);
    let helper_list: Vec<crate::expand::helpers::Helper<'_>> = variants_only
        .iter()
        .zip(helper_names)
        .map(|(variant, name)| crate::expand::helpers::Helper {
            name,
            message: variant.message,
            cfgs: &[],
            doc: format!(
                "Handled by the states of `{}` that have a handler for it; refused (or stashed) by the others.",
                actor.type_name
            ),
        })
        .collect();
    let helpers = crate::expand::helpers::expand_helpers(actor, &helper_list);
    let (message, reply, parts, state, name) = (
        local("message"),
        local("reply"),
        local("parts"),
        local("state"),
        local("name"),
    );
    let refusals = model.variants.iter().map(|(v, _)| {
        let variant = &v.variant;
        quote! {
            Self::#variant(#message, #reply) => {
                ::tapio::__private::ReplySlot::refuse(#reply, #state);
                Self::#variant(#message, ::core::default::Default::default())
            }
        }
    });
    let Some(initial) = model.rows.first().map(|row| &row.state) else {
        return quote! {
            #protocol_enum
            #helpers
        };
    };
    let state_names: Vec<&Ident> = model.rows.iter().map(|row| &row.state).collect();
    let variants = state_names
        .iter()
        .map(|s| quote_spanned!(s.span()=> #s(#s)));
    let dispatch = state_names.iter().map(|s| {
        quote_spanned! {s.span()=>
            #states::#s(_) => <#s as ::tapio::__private::StateHandlers>::handle(#parts, #message),
        }
    });
    let enter = state_names.iter().map(
        |s| quote!(#states::#s(_) => <#s as ::tapio::__private::StateHandlers>::enter(#parts),),
    );
    let exit = state_names.iter().map(|s| {
        let text = s.to_string();
        quote!(#text => <#s as ::tapio::__private::StateHandlers>::exit(#parts),)
    });
    let names = state_names.iter().map(|s| {
        let text = s.to_string();
        quote!(#states::#s(_) => ::core::option::Option::Some(#text),)
    });
    let state_ofs = model.rows.iter().map(|row| {
        let s = &row.state;
        let text = s.to_string();
        let successors = match row.successors.as_slice() {
            [] => quote!(::tapio::__private::NoSuccessors),
            [one] => quote!(#one),
            many => quote!((#(#many),*)),
        };
        let transitions = row.successors.iter().map(|target| {
            quote_spanned! {target.span()=>
                impl ::tapio::__private::Declared<#target> for #s {}
                impl ::tapio::__private::Transition<#target> for #s {
                    #[inline]
                    fn into_successor(target: #target) -> #states {
                        #states::#target(target)
                    }
                }
            }
        });
        quote! {
            impl ::tapio::__private::DeclaredTable for #s {}
            impl ::tapio::__private::StateOf for #s {
                type Machine = #self_ty;
                type Successors = #successors;
                const NAME: &'static str = #text;

                #[inline]
                fn into_states(self) -> #states {
                    #states::#s(self)
                }

                #[inline]
                fn get(#state: &mut #states) -> ::core::option::Option<&mut Self> {
                    match #state {
                        #states::#s(#state) => ::core::option::Option::Some(#state),
                        #[allow(unreachable_patterns)]
                        _ => ::core::option::Option::None,
                    }
                }

                #[inline]
                fn take(#state: &mut #states) -> ::core::option::Option<Self> {
                    match ::core::mem::replace(#state, #states::__Vacant) {
                        #states::#s(#state) => ::core::option::Option::Some(#state),
                        #[allow(unreachable_patterns)]
                        other => {
                            *#state = other;
                            ::core::option::Option::None
                        }
                    }
                }
            }

            #(#transitions)*
        }
    });
    let signal = actor.signal.as_ref().map(|handler| {
        let method = &handler.method.sig.ident;
        let (data, ctx, signal) = (local("data"), local("ctx"), local("signal"));
        let call = if handler.takes_ctx {
            quote!(#data.#method(#ctx, #signal))
        } else {
            quote!(#data.#method(#signal))
        };
        let body = if handler.is_async {
            quote!(::tapio::__private::Handled::<'_, #protocol>::pending(async move { #call.await }))
        } else {
            quote!(::tapio::__private::Handled::<'_, #protocol>::ready(#call))
        };
        quote! {
            fn signal<'a>(
                #data: &'a mut Self,
                #ctx: &'a mut ::tapio::__private::ActorContext<#protocol>,
                #signal: &'a ::tapio::Signal,
            ) -> ::tapio::__private::Handled<'a, #protocol> {
                let _ = &#ctx;
                #body
            }
        }
    });
    let type_text = type_name.to_string();
    let stash_capacity = model
        .stash_capacity
        .as_ref()
        .map(|n| quote!(const STASH_CAPACITY: usize = #n;));
    let mermaid = mermaid(&model.rows);
    let dot = dot(type_name, &model.rows);
    let mermaid_doc = format!(
        "The states of [`{type_text}`] and their switches, in Mermaid:\n\n```text\n{mermaid}```"
    );
    let dot_doc = format!(
        "The states of [`{type_text}`] and their switches, in Graphviz DOT:\n\n```text\n{dot}```"
    );
    let states_doc = format!("The states of [`{type_text}`], generated by `#[actor(states(..))]`.");
    quote! {
        #protocol_enum
        #helpers

        impl ::tapio::__private::Protocol for #self_ty {
            type Msg = #protocol;
        }

        impl ::tapio::__private::StateProtocol for #protocol {
            fn refuse(self, #state: &'static str) -> Self {
                match self {
                    #(#refusals)*
                }
            }
        }

        #[doc = #states_doc]
        #[doc(hidden)]
        #[allow(private_interfaces, non_camel_case_types)]
        #vis enum #states {
            #(#variants,)*
            /// A switching handler holds the state.
            __Vacant,
        }

        // Cloned when every state is (a machine spawned by value is cloned for each
        // start); the bounds are higher-ranked so that a state that is not `Clone`
        // only leaves this impl out.
        impl ::core::clone::Clone for #states where #(for<'__tapio> #state_names: ::core::clone::Clone,)* {
            fn clone(&self) -> Self {
                match self {
                    #(Self::#state_names(#state) => Self::#state_names(::core::clone::Clone::clone(#state)),)*
                    Self::__Vacant => Self::__Vacant,
                }
            }
        }

        impl ::tapio::__private::StateMachine for #self_ty {
            type Initial = #initial;
            type States = #states;
            const NAME: &'static str = #type_text;
            #stash_capacity

            #[inline]
            fn initial(#state: #initial) -> #states {
                #states::#initial(#state)
            }

            fn state_name(#state: &#states) -> ::core::option::Option<&'static str> {
                match #state {
                    #(#names)*
                    #states::__Vacant => ::core::option::Option::None,
                }
            }

            #[inline]
            fn dispatch<'a>(
                #parts: ::tapio::__private::Parts<'a, Self>,
                #message: #protocol,
            ) -> ::tapio::__private::Handled<'a, #protocol> {
                match #parts.states {
                    #(#dispatch)*
                    #states::__Vacant => ::tapio::__private::vacant(#parts, #message),
                }
            }

            fn enter(#parts: ::tapio::__private::Parts<'_, Self>) -> ::core::result::Result<(), ::tapio::Failure> {
                match #parts.states {
                    #(#enter)*
                    #states::__Vacant => ::core::result::Result::Ok(()),
                }
            }

            fn exit(
                #parts: ::tapio::__private::Parts<'_, Self>,
                #name: &'static str,
            ) -> ::core::result::Result<(), ::tapio::Failure> {
                match #name {
                    #(#exit)*
                    _ => ::core::result::Result::Ok(()),
                }
            }

            #signal
        }

        #(#state_ofs)*

        impl #self_ty {
            #[doc = #mermaid_doc]
            pub const STATE_GRAPH_MERMAID: &'static str = #mermaid;
            #[doc = #dot_doc]
            pub const STATE_GRAPH_DOT: &'static str = #dot;
        }
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;

    #[test]
    fn a_refused_row_or_successor_is_reported_once_and_taken_out_of_the_table() {
        let mut rows: Vec<Row> = vec![
            parse_quote!(Red => Green | Purple | Green),
            parse_quote!(Green => Red),
            parse_quote!(Red => Green),
        ];
        let mut errors = Errors::default();
        check_table(&mut rows, &mut errors);
        let messages: Vec<String> = errors
            .finish()
            .expect_err("three errors")
            .into_iter()
            .map(|error| error.to_string())
            .collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[0].starts_with("`Red` has a second row"));
        assert!(messages[1].starts_with("`Purple` is not a state"));
        assert!(messages[2].starts_with("`Green` is listed twice"));
        let table: Vec<(String, Vec<String>)> = rows
            .iter()
            .map(|row| {
                let successors = row.successors.iter().map(ToString::to_string).collect();
                (row.state.to_string(), successors)
            })
            .collect();
        assert_eq!(
            table,
            [
                ("Red".to_string(), vec!["Green".to_string()]),
                ("Green".to_string(), vec!["Red".to_string()]),
            ]
        );
    }
}
