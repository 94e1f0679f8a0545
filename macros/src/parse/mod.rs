//! From tokens to the model: one module per macro.

pub(crate) mod actor;
pub(crate) mod message;
pub(crate) mod remote_behavior;
pub(crate) mod states;
pub(crate) mod test;

use syn::Type;

/// The type inside the invisible groups a `macro_rules!` puts around a `$t:ty`
/// it passes on: `#[actor] impl $name { fn f(&mut self, _: $msg) {} }` reaches the
/// macro as `Type::Group`, which is read as the type it holds.
pub(crate) fn peel(mut ty: &Type) -> &Type {
    while let Type::Group(group) = ty {
        ty = &group.elem;
    }
    ty
}

#[cfg(test)]
mod tests {
    use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
    use quote::{ToTokens, quote};

    use super::*;

    #[test]
    fn a_type_passed_through_a_macro_rules_is_read_as_the_type_inside() {
        // What rustc hands over for `$msg` when `$msg:ty` was `crate::Ping`.
        let inner = Group::new(Delimiter::None, quote!(crate::Ping));
        let tokens: TokenStream =
            TokenTree::Group(Group::new(Delimiter::None, TokenTree::Group(inner).into())).into();
        let ty: Type = syn::parse2(tokens).expect("a type");
        assert!(matches!(ty, Type::Group(_)));
        let peeled = peel(&ty);
        assert!(matches!(peeled, Type::Path(_)));
        assert_eq!(peeled.to_token_stream().to_string(), "crate :: Ping");
    }
}
