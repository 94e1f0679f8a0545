//! Depth-bounded deserialization.
//!
//! A serde `Deserialize` impl for a recursive type (`enum Tree { Leaf,
//! Node(Box<Tree>) }`, a linked list, an AST, ...) recurses once per level of
//! nesting in its input. A postcard payload only needs about one byte per
//! level, so 100 KB off the network can ask for 100,000 nested calls and
//! overflow the stack of whatever thread decodes it. Stack overflow aborts the
//! whole process; it cannot be caught.
//!
//! [`deserialize_bounded`] wraps any [`Deserializer`] in [`Bounded`], which
//! passes every call through unchanged but counts how many compound values are
//! open at once and fails with an ordinary deserialization error as soon as
//! the next one would exceed the limit, *before* the type's `Deserialize` impl
//! recurses into it.
//!
//! # What counts as a level
//!
//! One level is spent each time the inner deserializer hands a visitor one of
//! the nesting entry points:
//!
//! - `visit_seq`: sequences, tuples, tuple structs and (in postcard and other
//!   compact formats) structs;
//! - `visit_map`: maps and (in self-describing formats) structs;
//! - `visit_enum`: every enum value, including unit variants;
//! - `visit_some` and `visit_newtype_struct`.
//!
//! A level is given back when that compound value is finished, so siblings do
//! not add up: a `Vec` of 1,000 trees each 50 deep is 51 levels deep, not
//! 50,000. A tuple or struct variant spends two levels (the enum and its
//! fields); a newtype variant spends one plus whatever its content spends.
//! Scalars, strings and byte strings spend nothing. With a limit of `n`, `n`
//! compound values may be open at once; the `n + 1`-th is refused. A limit of
//! 0 accepts only scalar values.
//!
//! # Errors
//!
//! Refusal is reported as `D::Error::custom("nested deeper than {max}
//! levels")`. Note that postcard throws the message of a custom error away:
//! through postcard the caller sees `postcard::Error::SerdeDeCustom`, the same
//! variant that any other `custom` error from a `Deserialize` impl produces.
//!
//! # Stack use
//!
//! The wrappers are a few words each (the inner value plus a [`Budget`] of two
//! `usize`s) and the refusal path lives in a separate `#[cold]` function. In
//! optimised builds the wrappers inline away: decoding the `Tree` above costs
//! about 48 bytes of stack per level with or without them. Unoptimised builds
//! keep a frame per wrapper call, about 1.1 KB per `Tree` level against
//! 0.4 KB for plain postcard. At [`DEFAULT_MAX_DEPTH`] that is at most about
//! 140 KB in a debug build, well within a 2 MiB thread stack; the type's own
//! `Deserialize` code can of course use more per level than `Tree` does.

use core::fmt;

use serde::Deserialize;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

/// The nesting limit to use for payloads from the network when nothing more
/// specific is known: deep enough for any sensible message, shallow enough
/// that decoding at this depth uses a small fraction of a default 2 MiB thread
/// stack (it is also the limit `serde_json` applies by default).
pub(crate) const DEFAULT_MAX_DEPTH: usize = 128;

/// Deserialize a `T` from `inner`, refusing input nested deeper than `max_depth`.
///
/// See the [module documentation](self) for what counts as a level. Input
/// that would open more than `max_depth` compound values at once fails with
/// `D::Error::custom("nested deeper than {max_depth} levels")` before the
/// `Deserialize` impl recurses into the offending value, so the stack used is
/// bounded by `max_depth` whatever the input.
///
/// The caller still owns any end-of-input checks: with postcard, pass
/// `&mut postcard::Deserializer` and call `finalize()` on it afterwards to see
/// the bytes left over.
pub(crate) fn deserialize_bounded<'de, T, D>(inner: D, max_depth: usize) -> Result<T, D::Error>
where
    T: Deserialize<'de>,
    D: Deserializer<'de>,
{
    T::deserialize(Bounded {
        inner,
        budget: Budget::new(max_depth),
    })
}

/// How many more levels may be opened, and the limit it started from (kept
/// only for the error message).
#[derive(Clone, Copy, Debug)]
struct Budget {
    /// Levels that may still be opened below the current one.
    left: usize,
    /// The configured maximum depth.
    max: usize,
}

impl Budget {
    /// A fresh budget for a limit of `max` levels.
    fn new(max: usize) -> Self {
        Self { left: max, max }
    }

    /// Spend one level to enter a compound value, or fail if none is left.
    fn descend<E: de::Error>(self) -> Result<Self, E> {
        match self.left.checked_sub(1) {
            Some(left) => Ok(Self {
                left,
                max: self.max,
            }),
            None => Err(too_deep(self.max)),
        }
    }
}

/// The error for input nested deeper than `max` levels. Kept out of line so
/// that the formatting machinery stays out of the per-level stack frames.
#[cold]
#[inline(never)]
fn too_deep<E: de::Error>(max: usize) -> E {
    TRIPPED.with(|tripped| tripped.set(true));
    E::custom(format_args!("nested deeper than {max} levels"))
}

std::thread_local! {
    /// Set when the depth limit refused a value on this thread: postcard drops the
    /// text of a custom error, so this is how the caller tells the refusal apart.
    static TRIPPED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the depth limit refused a value on this thread since the last call.
pub(crate) fn take_tripped() -> bool {
    TRIPPED.with(|tripped| tripped.replace(false))
}

/// A [`Deserializer`] that forwards to `inner` and makes every visitor it
/// hands down count nesting against `budget`.
#[derive(Debug)]
struct Bounded<D> {
    /// The wrapped deserializer.
    inner: D,
    /// Levels still available to values read through this deserializer.
    budget: Budget,
}

impl<D> Bounded<D> {
    /// Wrap `visitor` so that compound values it is given are counted against
    /// this deserializer's budget.
    fn wrap<V>(&self, visitor: V) -> BoundedVisitor<V> {
        BoundedVisitor {
            visitor,
            budget: self.budget,
        }
    }
}

/// Implements `Deserializer` methods that take only a visitor by forwarding
/// them, with the visitor wrapped, to the inner deserializer.
macro_rules! forward_deserialize {
    ($($method:ident)*) => {$(
        fn $method<V>(self, visitor: V) -> Result<V::Value, Self::Error>
        where
            V: Visitor<'de>,
        {
            let visitor = self.wrap(visitor);
            self.inner.$method(visitor)
        }
    )*};
}

impl<'de, D> Deserializer<'de> for Bounded<D>
where
    D: Deserializer<'de>,
{
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any deserialize_bool
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_newtype_struct<V>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_newtype_struct(name, visitor)
    }

    fn deserialize_tuple<V>(self, len: usize, visitor: V) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_struct<V>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_struct(name, fields, visitor)
    }

    fn deserialize_enum<V>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        let visitor = self.wrap(visitor);
        self.inner.deserialize_enum(name, variants, visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// A [`Visitor`] that forwards to `visitor`, spending one level of `budget`
/// on each compound value it is given and counting everything inside that
/// value against what is left.
#[derive(Debug)]
struct BoundedVisitor<V> {
    /// The wrapped visitor.
    visitor: V,
    /// Levels available at the point where this visitor is used.
    budget: Budget,
}

/// Implements `Visitor` methods for scalar values by forwarding them.
macro_rules! forward_visit {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E>(self, v: $ty) -> Result<Self::Value, E>
        where
            E: de::Error,
        {
            self.visitor.$method(v)
        }
    )*};
}

impl<'de, V> Visitor<'de> for BoundedVisitor<V>
where
    V: Visitor<'de>,
{
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(formatter)
    }

    forward_visit! {
        visit_bool(bool)
        visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64) visit_i128(i128)
        visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64) visit_u128(u128)
        visit_f32(f32) visit_f64(f64) visit_char(char)
        visit_str(&str) visit_borrowed_str(&'de str) visit_string(String)
        visit_bytes(&[u8]) visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E>
    where
        E: de::Error,
    {
        self.visitor.visit_none()
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E>
    where
        E: de::Error,
    {
        self.visitor.visit_unit()
    }

    fn visit_some<D>(self, deserializer: D) -> Result<Self::Value, D::Error>
    where
        D: Deserializer<'de>,
    {
        let budget = self.budget.descend()?;
        self.visitor.visit_some(Bounded {
            inner: deserializer,
            budget,
        })
    }

    fn visit_newtype_struct<D>(self, deserializer: D) -> Result<Self::Value, D::Error>
    where
        D: Deserializer<'de>,
    {
        let budget = self.budget.descend()?;
        self.visitor.visit_newtype_struct(Bounded {
            inner: deserializer,
            budget,
        })
    }

    fn visit_seq<A>(self, seq: A) -> Result<Self::Value, A::Error>
    where
        A: SeqAccess<'de>,
    {
        let budget = self.budget.descend()?;
        self.visitor.visit_seq(BoundedAccess { inner: seq, budget })
    }

    fn visit_map<A>(self, map: A) -> Result<Self::Value, A::Error>
    where
        A: MapAccess<'de>,
    {
        let budget = self.budget.descend()?;
        self.visitor.visit_map(BoundedAccess { inner: map, budget })
    }

    fn visit_enum<A>(self, data: A) -> Result<Self::Value, A::Error>
    where
        A: EnumAccess<'de>,
    {
        let budget = self.budget.descend()?;
        self.visitor.visit_enum(BoundedAccess {
            inner: data,
            budget,
        })
    }
}

/// Wraps the `SeqAccess`, `MapAccess`, `EnumAccess` or `VariantAccess` of a
/// compound value, so that every element, key, value or variant read through
/// it is deserialized with the budget left inside that value.
#[derive(Debug)]
struct BoundedAccess<A> {
    /// The wrapped access.
    inner: A,
    /// Levels available to the contents of the compound value.
    budget: Budget,
}

impl<A> BoundedAccess<A> {
    /// Wrap `seed` so that what it reads is counted against this budget.
    fn seed<S>(&self, seed: S) -> BoundedSeed<S> {
        BoundedSeed {
            seed,
            budget: self.budget,
        }
    }
}

impl<'de, A> SeqAccess<'de> for BoundedAccess<A>
where
    A: SeqAccess<'de>,
{
    type Error = A::Error;

    fn next_element_seed<T>(&mut self, seed: T) -> Result<Option<T::Value>, Self::Error>
    where
        T: DeserializeSeed<'de>,
    {
        let seed = self.seed(seed);
        self.inner.next_element_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A> MapAccess<'de> for BoundedAccess<A>
where
    A: MapAccess<'de>,
{
    type Error = A::Error;

    fn next_key_seed<K>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error>
    where
        K: DeserializeSeed<'de>,
    {
        let seed = self.seed(seed);
        self.inner.next_key_seed(seed)
    }

    fn next_value_seed<V>(&mut self, seed: V) -> Result<V::Value, Self::Error>
    where
        V: DeserializeSeed<'de>,
    {
        let seed = self.seed(seed);
        self.inner.next_value_seed(seed)
    }

    fn next_entry_seed<K, V>(
        &mut self,
        kseed: K,
        vseed: V,
    ) -> Result<Option<(K::Value, V::Value)>, Self::Error>
    where
        K: DeserializeSeed<'de>,
        V: DeserializeSeed<'de>,
    {
        let kseed = self.seed(kseed);
        let vseed = self.seed(vseed);
        self.inner.next_entry_seed(kseed, vseed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A> EnumAccess<'de> for BoundedAccess<A>
where
    A: EnumAccess<'de>,
{
    type Error = A::Error;
    type Variant = BoundedAccess<A::Variant>;

    fn variant_seed<V>(self, seed: V) -> Result<(V::Value, Self::Variant), Self::Error>
    where
        V: DeserializeSeed<'de>,
    {
        let seed = self.seed(seed);
        let (tag, variant) = self.inner.variant_seed(seed)?;
        Ok((
            tag,
            BoundedAccess {
                inner: variant,
                budget: self.budget,
            },
        ))
    }
}

impl<'de, A> VariantAccess<'de> for BoundedAccess<A>
where
    A: VariantAccess<'de>,
{
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), Self::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<T>(self, seed: T) -> Result<T::Value, Self::Error>
    where
        T: DeserializeSeed<'de>,
    {
        let seed = self.seed(seed);
        self.inner.newtype_variant_seed(seed)
    }

    fn tuple_variant<V>(self, len: usize, visitor: V) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        let visitor = BoundedVisitor {
            visitor,
            budget: self.budget,
        };
        self.inner.tuple_variant(len, visitor)
    }

    fn struct_variant<V>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        let visitor = BoundedVisitor {
            visitor,
            budget: self.budget,
        };
        self.inner.struct_variant(fields, visitor)
    }
}

/// A [`DeserializeSeed`] that forwards to `seed` with the deserializer it is
/// given wrapped in [`Bounded`] at `budget`.
#[derive(Debug)]
struct BoundedSeed<S> {
    /// The wrapped seed.
    seed: S,
    /// Levels available to the value the seed reads.
    budget: Budget,
}

impl<'de, S> DeserializeSeed<'de> for BoundedSeed<S>
where
    S: DeserializeSeed<'de>,
{
    type Value = S::Value;

    fn deserialize<D>(self, deserializer: D) -> Result<Self::Value, D::Error>
    where
        D: Deserializer<'de>,
    {
        self.seed.deserialize(Bounded {
            inner: deserializer,
            budget: self.budget,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde::de::IntoDeserializer;
    use serde::{Deserialize, Deserializer, Serialize};

    use super::{DEFAULT_MAX_DEPTH, deserialize_bounded};

    /// Decode `bytes` with postcard through the depth limit, requiring that
    /// the whole payload is consumed.
    fn decode<'de, T: Deserialize<'de>>(bytes: &'de [u8], max: usize) -> postcard::Result<T> {
        let mut de = postcard::Deserializer::from_bytes(bytes);
        let value = deserialize_bounded(&mut de, max)?;
        let rest = de.finalize()?;
        assert!(rest.is_empty(), "{} trailing bytes", rest.len());
        Ok(value)
    }

    /// Encode `value` with postcard and decode it back at the default limit.
    fn round_trip<T>(value: &T)
    where
        T: Serialize + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug,
    {
        let bytes = postcard::to_allocvec(value).unwrap();
        let back: T = decode(&bytes, DEFAULT_MAX_DEPTH).unwrap();
        assert_eq!(&back, value);
    }

    /// A struct with nested sequences.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Nested {
        /// Two levels of sequence.
        rows: Vec<Vec<u8>>,
        /// A scalar after the sequences.
        tail: u64,
    }

    /// A singly linked list through `Option<Box<_>>`.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct List {
        /// This cell's value.
        head: i32,
        /// The rest of the list.
        next: Option<Box<List>>,
    }

    /// An enum with every kind of variant.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum Shape {
        /// A unit variant.
        Empty,
        /// A newtype variant.
        Circle(f64),
        /// A tuple variant.
        Rect(u32, u32),
        /// A struct variant.
        Poly {
            /// Corner coordinates.
            points: Vec<(i16, i16)>,
            /// An optional label.
            label: Option<String>,
        },
    }

    /// A unit struct.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Marker;

    /// A newtype struct.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Id(u128);

    /// Everything at once, nested inside one more struct.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Everything {
        /// Nested sequences.
        nested: Nested,
        /// A short linked list.
        list: List,
        /// A map of sequences.
        map: HashMap<String, Vec<u32>>,
        /// One of each variant.
        shapes: Vec<Shape>,
        /// A string.
        name: String,
        /// A tuple.
        pair: (u8, char, bool),
        /// A unit struct.
        marker: Marker,
        /// A newtype struct.
        id: Id,
        /// Signed integers, which postcard zig-zag encodes.
        signed: (i8, i64, i128),
        /// A float.
        ratio: f32,
        /// A unit.
        nothing: (),
    }

    /// A recursive type that postcard encodes in one byte per level.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum Tree {
        /// The bottom.
        Leaf,
        /// One more level.
        Node(Box<Tree>),
    }

    /// The postcard encoding of `nodes` `Node`s around a `Leaf`, built
    /// without a `Tree` value (whose serialization and drop would recurse).
    fn tree_bytes(nodes: usize) -> Vec<u8> {
        let mut bytes = vec![1u8; nodes];
        bytes.push(0);
        bytes
    }

    /// A tree of `nodes` `Node`s around a `Leaf`, built without recursion.
    fn build_tree(nodes: usize) -> Tree {
        (0..nodes).fold(Tree::Leaf, |tree, _| Tree::Node(Box::new(tree)))
    }

    /// The number of `Node`s in `tree`, counted without recursion.
    fn nodes(mut tree: &Tree) -> usize {
        let mut count = 0;
        while let Tree::Node(inner) = tree {
            count += 1;
            tree = inner;
        }
        count
    }

    /// Assert that `result` is the depth error as postcard reports it.
    fn assert_too_deep<T: std::fmt::Debug>(result: postcard::Result<T>) {
        match result {
            Err(postcard::Error::SerdeDeCustom) => {}
            other => panic!("expected the depth error, got {other:?}"),
        }
    }

    #[test]
    fn round_trip_nested_vecs() {
        round_trip(&Nested {
            rows: vec![vec![], vec![1, 2, 3], vec![255; 300]],
            tail: u64::MAX,
        });
    }

    #[test]
    fn round_trip_option_box() {
        round_trip(&List {
            head: -1,
            next: Some(Box::new(List {
                head: 2,
                next: Some(Box::new(List {
                    head: -3,
                    next: None,
                })),
            })),
        });
        round_trip(&None::<Box<List>>);
    }

    #[test]
    fn round_trip_hash_map() {
        let map: HashMap<String, Vec<u32>> = [
            ("empty".to_owned(), vec![]),
            ("some".to_owned(), vec![1, 2, u32::MAX]),
            (String::new(), vec![0]),
        ]
        .into_iter()
        .collect();
        round_trip(&map);
    }

    #[test]
    fn round_trip_enum_variants() {
        round_trip(&Shape::Empty);
        round_trip(&Shape::Circle(1.5));
        round_trip(&Shape::Rect(3, 4));
        round_trip(&Shape::Poly {
            points: vec![(0, 0), (-1, 7), (i16::MIN, i16::MAX)],
            label: Some("tri".to_owned()),
        });
    }

    #[test]
    fn round_trip_string_tuple_unit_struct() {
        round_trip(&"héllo, wörld".to_owned());
        round_trip(&String::new());
        round_trip(&(1u8, "two".to_owned(), [3u16; 3], Some(4i64)));
        round_trip(&Marker);
        round_trip(&Id(u128::MAX));
        round_trip(&());
    }

    #[test]
    fn round_trip_everything() {
        round_trip(&Everything {
            nested: Nested {
                rows: vec![vec![9; 4]; 3],
                tail: 7,
            },
            list: List {
                head: 1,
                next: Some(Box::new(List {
                    head: 2,
                    next: None,
                })),
            },
            map: [("k".to_owned(), vec![1, 2])].into_iter().collect(),
            shapes: vec![
                Shape::Empty,
                Shape::Circle(-0.25),
                Shape::Rect(0, u32::MAX),
                Shape::Poly {
                    points: vec![(1, 2)],
                    label: None,
                },
            ],
            name: "everything".to_owned(),
            pair: (42, 'λ', true),
            marker: Marker,
            id: Id(1 << 100),
            signed: (i8::MIN, -1, i128::MIN),
            ratio: 0.5,
            nothing: (),
        });
    }

    #[test]
    fn borrowed_data_still_borrows() {
        /// A message that borrows from its payload.
        #[derive(Serialize, Deserialize, Debug, PartialEq)]
        struct View<'a> {
            /// A borrowed string.
            text: &'a str,
            /// Borrowed bytes.
            raw: &'a [u8],
        }
        let bytes = postcard::to_allocvec(&View {
            text: "borrowed",
            raw: &[1, 2, 3],
        })
        .unwrap();
        let view: View<'_> = decode(&bytes, DEFAULT_MAX_DEPTH).unwrap();
        assert_eq!(view.text, "borrowed");
        assert_eq!(view.raw, [1, 2, 3]);
        assert!(bytes.as_ptr_range().contains(&view.text.as_ptr()));
    }

    #[test]
    fn tree_bytes_match_postcard() {
        for n in [0, 1, 3, 100] {
            assert_eq!(
                postcard::to_allocvec(&build_tree(n)).unwrap(),
                tree_bytes(n)
            );
        }
    }

    #[test]
    fn tree_100_deep_decodes() {
        let bytes = tree_bytes(100);
        let tree: Tree = decode(&bytes, 128).unwrap();
        assert_eq!(nodes(&tree), 100);
        assert_eq!(tree, build_tree(100));
    }

    #[test]
    fn tree_200_deep_is_refused() {
        assert_too_deep(decode::<Tree>(&tree_bytes(200), 128));
    }

    #[test]
    fn tree_limit_is_exact() {
        // `n` nodes around a leaf are `n + 1` enum values open at once.
        let tree: Tree = decode(&tree_bytes(127), 128).unwrap();
        assert_eq!(nodes(&tree), 127);
        assert_too_deep(decode::<Tree>(&tree_bytes(128), 128));
        let tree: Tree = decode(&tree_bytes(0), 1).unwrap();
        assert_eq!(tree, Tree::Leaf);
        assert_too_deep(decode::<Tree>(&tree_bytes(0), 0));
    }

    /// Runs on the default test thread stack: without the limit, decoding
    /// this ~100 KB payload overflows it and aborts the test binary.
    #[test]
    fn tree_100_000_deep_is_refused_without_overflow() {
        let bytes = tree_bytes(100_000);
        assert!(bytes.len() < 110_000);
        assert_too_deep(decode::<Tree>(&bytes, DEFAULT_MAX_DEPTH));
        assert_too_deep(decode::<Vec<Tree>>(&[&[1u8][..], &bytes].concat(), 128));
    }

    #[test]
    fn siblings_do_not_add_up() {
        let forest: Vec<Tree> = (0..1_000).map(|_| build_tree(50)).collect();
        let bytes = postcard::to_allocvec(&forest).unwrap();
        let back: Vec<Tree> = decode(&bytes, 128).unwrap();
        assert_eq!(back.len(), 1_000);
        assert!(back.iter().all(|tree| nodes(tree) == 50));
        // The vector is one level and each tree 51: 52 in all.
        let _: Vec<Tree> = decode(&bytes, 52).unwrap();
        assert_too_deep(decode::<Vec<Tree>>(&bytes, 51));
    }

    #[test]
    fn one_deep_sibling_is_refused() {
        let mut forest: Vec<Tree> = (0..999).map(|_| build_tree(50)).collect();
        forest.push(build_tree(200));
        let bytes = postcard::to_allocvec(&forest).unwrap();
        assert_too_deep(decode::<Vec<Tree>>(&bytes, 128));
    }

    #[test]
    fn every_compound_kind_counts() {
        // Each of these is exactly two levels deep, except the struct
        // variant: the enum, its fields, and the (empty) `points` vector.
        let seq = postcard::to_allocvec(&vec![vec![1u8]]).unwrap();
        let map = postcard::to_allocvec(&HashMap::from([(1u8, vec![2u8])])).unwrap();
        let some = postcard::to_allocvec(&Some(Some(1u8))).unwrap();
        let newtype = postcard::to_allocvec(&Some(Id(5))).unwrap();
        let tuple_variant = postcard::to_allocvec(&Shape::Rect(1, 2)).unwrap();
        let struct_variant = postcard::to_allocvec(&Shape::Poly {
            points: vec![],
            label: None,
        })
        .unwrap();
        decode::<Vec<Vec<u8>>>(&seq, 2).unwrap();
        assert_too_deep(decode::<Vec<Vec<u8>>>(&seq, 1));
        decode::<HashMap<u8, Vec<u8>>>(&map, 2).unwrap();
        assert_too_deep(decode::<HashMap<u8, Vec<u8>>>(&map, 1));
        decode::<Option<Option<u8>>>(&some, 2).unwrap();
        assert_too_deep(decode::<Option<Option<u8>>>(&some, 1));
        decode::<Option<Id>>(&newtype, 2).unwrap();
        assert_too_deep(decode::<Option<Id>>(&newtype, 1));
        decode::<Shape>(&tuple_variant, 2).unwrap();
        assert_too_deep(decode::<Shape>(&tuple_variant, 1));
        decode::<Shape>(&struct_variant, 3).unwrap();
        assert_too_deep(decode::<Shape>(&struct_variant, 2));
    }

    #[test]
    fn scalars_spend_no_depth() {
        let bytes = postcard::to_allocvec(&(7u32, "s")).unwrap();
        assert_too_deep(decode::<(u32, String)>(&bytes, 0));
        assert_eq!(
            decode::<(u32, String)>(&bytes, 1).unwrap(),
            (7, "s".to_owned())
        );
        let bytes = postcard::to_allocvec(&"plain").unwrap();
        assert_eq!(decode::<String>(&bytes, 0).unwrap(), "plain");
        assert_eq!(decode::<Marker>(&[], 0).unwrap(), Marker);
    }

    #[test]
    fn error_message_names_the_limit() {
        // postcard drops custom messages, so check the text through serde's
        // own value deserializers, which keep them.
        type Value = Vec<Vec<Vec<u8>>>;
        let value: Value = vec![vec![vec![1, 2]], vec![]];
        let de = || -> serde::de::value::SeqDeserializer<_, serde::de::value::Error> {
            value.clone().into_deserializer()
        };
        assert_eq!(deserialize_bounded::<Value, _>(de(), 3).unwrap(), value);
        let err = deserialize_bounded::<Value, _>(de(), 2).unwrap_err();
        assert_eq!(err.to_string(), "nested deeper than 2 levels");
    }

    #[test]
    fn human_readable_is_forwarded() {
        /// Records whether its deserializer claimed to be human-readable.
        #[derive(Debug)]
        struct Readable(bool);
        impl<'de> Deserialize<'de> for Readable {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let readable = d.is_human_readable();
                <()>::deserialize(d)?;
                Ok(Self(readable))
            }
        }
        assert!(!decode::<Readable>(&[], DEFAULT_MAX_DEPTH).unwrap().0);
        let unit = serde::de::value::UnitDeserializer::<serde::de::value::Error>::new();
        assert!(deserialize_bounded::<Readable, _>(unit, 1).unwrap().0);
    }

    #[test]
    fn format_errors_pass_through() {
        // Truncated input is still postcard's own error.
        let bytes = postcard::to_allocvec(&vec![1u32, 2, 3]).unwrap();
        match decode::<Vec<u32>>(&bytes[..2], DEFAULT_MAX_DEPTH) {
            Err(postcard::Error::DeserializeUnexpectedEnd) => {}
            other => panic!("expected unexpected end, got {other:?}"),
        }
    }
}
