//! From the model to tokens: one file per generated artefact.
//!
//! - `message.rs`: `Message`/`Request` impls; `fields.rs`: the message's half of the
//!   typed helpers; `protocol.rs`: the `{Actor}Msg` enum and its `Accepts` impls;
//!   `dispatch.rs`: `Protocol` and `Actor` impls, finishing each output through
//!   `__private::OutputCheck`; `helpers.rs`: the `{Actor}Ref` trait; `machine.rs` and
//!   `state.rs`: state machines; `remote_behavior.rs`: the factory's struct, its
//!   `Factory` impl and registration; `test.rs`: `#[tapio::test]`.
//! - One block per actor type: a macro sees one block, so a second `#[actor]` block for
//!   a type would clash on every item. `actor` routes what a block generates through a
//!   `macro_rules!` named from the type and the place of its name (`once_per_scope`): a
//!   later block finds the earlier one's macro and emits one error instead. Limit: a
//!   second block at another indentation (or as `impl self::Pinger`) is not recognised,
//!   and gets rustc's clashes.
//! - The protocol enum is `pub` unless `vis = ..` says otherwise: the macro cannot see
//!   the actor's visibility, and rustc refuses an enum less visible than a `pub` actor
//!   (E0446). The enum and the helper trait allow `private_interfaces`, so crate-private
//!   messages in a public protocol cannot be named, and so not sent, from outside.
//! - A parameter that is not a message is reported once, by the enum's variant: every
//!   other generated impl carries `where for<'m> Msg: Message` per handled message
//!   (higher-ranked, or rustc checks it where it is written), which is true for a valid
//!   actor and otherwise turns each impl's error into an impl that does not apply.
//! - A handler's `cfg`s (and the `cfg` parts of its `cfg_attr`s) are copied onto its
//!   variant, its arms, its `Accepts`/`Answers` impls and its helper: a handler compiled
//!   out leaves nothing behind. Such a handler has no `for<'m>` bound (attributes on
//!   bounds are unstable).

pub(crate) mod dispatch;
pub(crate) mod fields;
pub(crate) mod helpers;
pub(crate) mod machine;
pub(crate) mod message;
pub(crate) mod protocol;
pub(crate) mod remote_behavior;
pub(crate) mod state;
pub(crate) mod test;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{ImplItem, ItemImpl};

use crate::model::ActorModel;
use crate::symbol::{HANDLER, SIGNAL, STATE_HOOKS};

/// The impl block as the user wrote it, minus the `#[signal]` and `#[handler]`
/// markers, which are not attributes the compiler knows, and minus a state's hook
/// written here by mistake (refused with its own error, see `parse::actor`).
pub(crate) fn user_block(block: &ItemImpl) -> ItemImpl {
    let mut block = block.clone();
    for item in &mut block.items {
        if let ImplItem::Fn(method) = item {
            method.attrs.retain(|attr| {
                ![SIGNAL, HANDLER]
                    .iter()
                    .chain(&STATE_HOOKS)
                    .any(|marker| attr.path().is_ident(marker))
            });
        }
    }
    block
}

/// Where an `#[actor]` block is, for telling a second block for the same type from
/// the first: `block` is unique to the block, `scope` is shared by the blocks for
/// one type written at one indentation of one file (see `actor`).
#[derive(Clone, Copy)]
pub(crate) struct Site {
    /// A hash of where the block's attribute and type name are, unique to one
    /// expansion (see `expansion_hash` in `lib.rs`).
    pub(crate) block: u64,
    /// A hash of the file and column of the block's type name, and its type as
    /// written.
    pub(crate) scope: u64,
}

/// Everything `#[actor]` generates.
///
/// A macro sees one block, so two `#[actor]` blocks for one type would each define
/// the protocol enum and the `Actor` impl, and rustc would report every clash (five
/// or six errors). Instead, what a block generates goes through a macro named after
/// its type and `Site::scope`, found first in textual scope (a `macro_rules!` that
/// an earlier block left behind) and else through a glob import of the runtime's
/// `actor_first`, which emits it. Each block then defines that `macro_rules!`
/// itself, keeping only the error: so a later block in the same scope gives one
/// error, on its type, and none of its clashes. The user's methods are emitted
/// either way, so calls to them still resolve.
///
/// The scope is the file and the column of the type's name: blocks in one module
/// sit at one indentation, and a nested module or function body, whose textual
/// scope would also see the `macro_rules!`, sits deeper, so a type of the same name
/// there is not taken for a second block. The type's name, not the attribute, so
/// that blocks a `macro_rules!` writes for the names it is given are told apart by
/// where its caller wrote them. The module that holds what each block generates is
/// named after the type and `Site::block`, so two blocks that one `macro_rules!`
/// writes into one module for two types do not clash on it.
pub(crate) fn actor(model: &ActorModel<'_>, site: Site) -> TokenStream {
    let block = user_block(model.item);
    let protocol = protocol::expand(model);
    let dispatch = dispatch::expand(model);
    let helpers = helpers::expand(model);
    let self_ty = model.self_ty;
    let type_name = model.type_name;
    let error = syn::Error::new_spanned(
        self_ty,
        format!(
            "a second `#[actor]` block for `{type_name}`: one block generates an actor's protocol enum and its dispatch, so all its handlers go in one `#[actor] impl {type_name} {{ .. }}`; move these methods into the first block (methods that are not handlers go in a plain `impl {type_name}` block)"
        ),
    )
    .to_compile_error();
    let generated = quote! {
        #protocol
        #dispatch
        #helpers
    };
    let once = once_per_scope("actor", type_name, site, &error, &generated);
    quote! {
        #block
        #once
    }
}

/// `generated` for the first block of its `kind` for `type_name` in its scope, and
/// `error` alone for a later one: see `actor`, whose mechanism a `#[state]` block
/// shares.
pub(crate) fn once_per_scope(
    kind: &str,
    type_name: &syn::Ident,
    site: Site,
    error: &TokenStream,
    generated: &TokenStream,
) -> TokenStream {
    let route = format_ident!("__tapio_{}_{}_{:016x}", kind, type_name, site.scope);
    let fallback = format_ident!("__tapio_{}_route_{}_{:016x}", kind, type_name, site.block);
    quote! {
        #[doc(hidden)]
        #[allow(non_snake_case, unused_imports)]
        mod #fallback {
            pub(crate) use ::tapio::__private::actor_first as #route;
        }
        #[allow(unused_imports)]
        use #fallback::*;

        #route! {
            { #error }
            { #generated }
        }

        #[doc(hidden)]
        #[allow(unused_macros)]
        macro_rules! #route {
            ({$($error:tt)*} {$($generated:tt)*}) => {
                $($error)*
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;
    use crate::errors::Errors;
    use crate::parse::actor::{parse_actor, parse_args};

    fn expand(block: &ItemImpl, site: Site) -> String {
        let mut errors = Errors::default();
        let model =
            parse_actor(block, parse_args(quote!(), &mut errors), &mut errors).expect("a model");
        assert!(errors.finish().is_ok());
        actor(&model, site).to_string()
    }

    #[test]
    fn a_handler_s_cfg_goes_on_its_variant_and_its_arm() {
        let block: ItemImpl = parse_quote! {
            impl Pinger {
                #[cfg(any())]
                fn ping(&mut self, _: Ping) {}
            }
        };
        let tokens = expand(&block, Site { block: 1, scope: 2 });
        assert!(
            tokens.contains(
                "# [cfg (any ())] # [doc = \"A `Ping`, with where its answer goes.\"] Ping"
            )
        );
        assert!(tokens.contains("# [cfg (any ())] PingerMsg :: Ping"));
    }

    #[test]
    fn what_is_generated_goes_through_the_type_s_route() {
        let block: ItemImpl = parse_quote! {
            impl Pinger {
                fn ping(&mut self, _: Ping) {}
            }
        };
        let tokens = expand(&block, Site { block: 1, scope: 2 });
        let route = "__tapio_actor_Pinger_0000000000000002";
        assert!(tokens.contains(&format!("{route} ! {{")));
        assert!(tokens.contains(&format!("macro_rules ! {route}")));
        assert!(tokens.contains("mod __tapio_actor_route_Pinger_0000000000000001"));
    }
}
