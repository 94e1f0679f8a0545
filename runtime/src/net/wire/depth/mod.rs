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
//! levels")`. postcard throws the message of a custom error away: through it
//! the caller sees `postcard::Error::SerdeDeCustom`, the same variant that any
//! other `custom` error from a `Deserialize` impl produces. So the wrappers
//! hand the type's own code an error of their own, [`Kept`], which wraps the
//! inner one and, as a custom error is made, keeps the first text on the
//! thread for [`take_custom`] to give the caller ("200 is not a percentage"
//! rather than "Serde Deserialization Error").
//!
//! # Stack use
//!
//! The wrappers are a few words each (the inner value plus a [`Budget`] of two
//! `usize`s) and the refusal path lives in a separate `#[cold]` function. In
//! optimised builds the wrappers inline away: decoding the `Tree` above costs
//! about 48 bytes of stack per level with or without them. Unoptimised builds
//! keep a frame per wrapper call, about 1.1 KB per `Tree` level against
//! 0.4 KB for plain postcard. At [`DEFAULT_MAX_DEPTH`](crate::ground::codec::DEFAULT_MAX_DEPTH) that is at most about
//! 140 KB in a debug build, well within a 2 MiB thread stack; the type's own
//! `Deserialize` code can of course use more per level than `Tree` does.

use core::fmt;

use serde::Deserialize;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

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
    .map_err(Kept::into_inner)
}

/// The error the wrappers hand the type's own `Deserialize` code: the inner
/// deserializer's, as it is (a newtype, so a `Result` of it costs what one of the
/// inner error costs), except that a `custom` error's text, which postcard would
/// drop, is kept on the thread for [`take_custom`], the first one only.
#[derive(Debug)]
struct Kept<E>(E);

impl<E> Kept<E> {
    /// The inner deserializer's error, to hand back to it.
    fn into_inner(self) -> E {
        self.0
    }
}

impl<E: fmt::Display> fmt::Display for Kept<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for Kept<E> {}

impl<E: de::Error> de::Error for Kept<E> {
    #[cold]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        CUSTOM.with(|kept| {
            let first = kept.take().unwrap_or_else(|| msg.to_string());
            kept.set(Some(first));
        });
        Self(E::custom(msg))
    }
}

std::thread_local! {
    /// The text of the first custom error a decode on this thread produced.
    static CUSTOM: std::cell::Cell<Option<String>> = const { std::cell::Cell::new(None) };
}

/// The text of the first custom error the type's own code (or the depth limit)
/// gave since the last call, if any: what postcard's `SerdeDeCustom` stands for.
pub(crate) fn take_custom() -> Option<String> {
    CUSTOM.with(std::cell::Cell::take)
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

/// Implements `Deserializer` methods by forwarding them, with the visitor wrapped,
/// to the inner deserializer. A method written `name(arg: Type, ..)` takes those
/// arguments before the visitor and passes them on as they are.
macro_rules! forward_deserialize {
    ($($method:ident $(($($arg:ident: $ty:ty),*))?)*) => {$(
        #[inline]
        fn $method<V>(self, $($($arg: $ty,)*)? visitor: V) -> Result<V::Value, Self::Error>
        where
            V: Visitor<'de>,
        {
            let visitor = self.wrap(visitor);
            self.inner.$method($($($arg,)*)? visitor).map_err(Kept)
        }
    )*};
}

impl<'de, D> Deserializer<'de> for Bounded<D>
where
    D: Deserializer<'de>,
{
    type Error = Kept<D::Error>;

    forward_deserialize! {
        deserialize_any deserialize_bool
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier deserialize_ignored_any
    }

    forward_deserialize! {
        deserialize_unit_struct(name: &'static str)
        deserialize_newtype_struct(name: &'static str)
        deserialize_tuple(len: usize)
        deserialize_tuple_struct(name: &'static str, len: usize)
        deserialize_struct(name: &'static str, fields: &'static [&'static str])
        deserialize_enum(name: &'static str, variants: &'static [&'static str])
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
            self.visitor.$method::<Kept<E>>(v).map_err(Kept::into_inner)
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
        self.visitor
            .visit_none::<Kept<E>>()
            .map_err(Kept::into_inner)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E>
    where
        E: de::Error,
    {
        self.visitor
            .visit_unit::<Kept<E>>()
            .map_err(Kept::into_inner)
    }

    fn visit_some<D>(self, deserializer: D) -> Result<Self::Value, D::Error>
    where
        D: Deserializer<'de>,
    {
        let budget = self.budget.descend()?;
        self.visitor
            .visit_some(Bounded {
                inner: deserializer,
                budget,
            })
            .map_err(Kept::into_inner)
    }

    fn visit_newtype_struct<D>(self, deserializer: D) -> Result<Self::Value, D::Error>
    where
        D: Deserializer<'de>,
    {
        let budget = self.budget.descend()?;
        self.visitor
            .visit_newtype_struct(Bounded {
                inner: deserializer,
                budget,
            })
            .map_err(Kept::into_inner)
    }

    fn visit_seq<A>(self, seq: A) -> Result<Self::Value, A::Error>
    where
        A: SeqAccess<'de>,
    {
        let budget = self.budget.descend()?;
        self.visitor
            .visit_seq(BoundedAccess { inner: seq, budget })
            .map_err(Kept::into_inner)
    }

    fn visit_map<A>(self, map: A) -> Result<Self::Value, A::Error>
    where
        A: MapAccess<'de>,
    {
        let budget = self.budget.descend()?;
        self.visitor
            .visit_map(BoundedAccess { inner: map, budget })
            .map_err(Kept::into_inner)
    }

    fn visit_enum<A>(self, data: A) -> Result<Self::Value, A::Error>
    where
        A: EnumAccess<'de>,
    {
        let budget = self.budget.descend()?;
        self.visitor
            .visit_enum(BoundedAccess {
                inner: data,
                budget,
            })
            .map_err(Kept::into_inner)
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
    type Error = Kept<A::Error>;

    fn next_element_seed<T>(&mut self, seed: T) -> Result<Option<T::Value>, Self::Error>
    where
        T: DeserializeSeed<'de>,
    {
        let seed = self.seed(seed);
        self.inner.next_element_seed(seed).map_err(Kept)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A> MapAccess<'de> for BoundedAccess<A>
where
    A: MapAccess<'de>,
{
    type Error = Kept<A::Error>;

    fn next_key_seed<K>(&mut self, seed: K) -> Result<Option<K::Value>, Self::Error>
    where
        K: DeserializeSeed<'de>,
    {
        let seed = self.seed(seed);
        self.inner.next_key_seed(seed).map_err(Kept)
    }

    fn next_value_seed<V>(&mut self, seed: V) -> Result<V::Value, Self::Error>
    where
        V: DeserializeSeed<'de>,
    {
        let seed = self.seed(seed);
        self.inner.next_value_seed(seed).map_err(Kept)
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
        self.inner.next_entry_seed(kseed, vseed).map_err(Kept)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A> EnumAccess<'de> for BoundedAccess<A>
where
    A: EnumAccess<'de>,
{
    type Error = Kept<A::Error>;
    type Variant = BoundedAccess<A::Variant>;

    fn variant_seed<V>(self, seed: V) -> Result<(V::Value, Self::Variant), Self::Error>
    where
        V: DeserializeSeed<'de>,
    {
        let seed = self.seed(seed);
        let (tag, variant) = self.inner.variant_seed(seed).map_err(Kept)?;
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
    type Error = Kept<A::Error>;

    fn unit_variant(self) -> Result<(), Self::Error> {
        self.inner.unit_variant().map_err(Kept)
    }

    fn newtype_variant_seed<T>(self, seed: T) -> Result<T::Value, Self::Error>
    where
        T: DeserializeSeed<'de>,
    {
        let seed = self.seed(seed);
        self.inner.newtype_variant_seed(seed).map_err(Kept)
    }

    fn tuple_variant<V>(self, len: usize, visitor: V) -> Result<V::Value, Self::Error>
    where
        V: Visitor<'de>,
    {
        let visitor = BoundedVisitor {
            visitor,
            budget: self.budget,
        };
        self.inner.tuple_variant(len, visitor).map_err(Kept)
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
        self.inner.struct_variant(fields, visitor).map_err(Kept)
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
        self.seed
            .deserialize(Bounded {
                inner: deserializer,
                budget: self.budget,
            })
            .map_err(Kept::into_inner)
    }
}

#[cfg(test)]
mod tests;
