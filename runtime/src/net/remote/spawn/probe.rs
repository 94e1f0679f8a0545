//! Whether a factory's arguments type can carry an `ActorRef`, found without a
//! value of it: the type's own `Deserialize` is driven by a deserializer that
//! makes up a value of every shape asked for (one element of each sequence and
//! map, `Some` for each option, each variant of each enum in turn), and an
//! `ActorRef` asked to deserialize on the way says so.
//!
//! What a type's `Deserialize` refuses to build from made-up values (a validating
//! impl, a number out of its range) hides what lies behind it: the probe finds
//! most refs, not all. A ref it misses is still refused when arguments are
//! encoded, before anything is sent.

use std::cell::Cell;
use std::fmt;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};

/// How deep the made-up value nests before its sequences, maps and options are
/// made up empty (and its enums take their first variant): a recursive type (a
/// tree of options) is explored this far.
const MAX_DEPTH: usize = 24;

/// How deep it may nest at all: a type that recurses without an option or a
/// sequence on the way is cut here, well before the stack runs out.
const HARD_DEPTH: usize = 64;

/// How many made-up values are tried, one per combination of enum variants.
const MAX_RUNS: usize = 512;

std::thread_local! {
    /// Set while a probe runs on this thread.
    static PROBING: Cell<bool> = const { Cell::new(false) };
    /// Set by an `ActorRef` asked to deserialize while a probe runs.
    static FOUND: Cell<bool> = const { Cell::new(false) };
}

/// Called by `ActorRef`'s `Deserialize`: whether a probe runs, in which case the
/// ref has been noted and should refuse to go on.
pub(crate) fn noted_ref() -> bool {
    if !PROBING.with(Cell::get) {
        return false;
    }
    FOUND.with(|found| found.set(true));
    true
}

/// Whether `T` can carry an `ActorRef`, as far as made-up values show.
pub(crate) fn can_carry_ref<T: DeserializeOwned>() -> bool {
    let before = PROBING.with(|probing| probing.replace(true));
    FOUND.with(|found| found.set(false));
    // The choice of variant at each enum met, in the order met: an odometer over
    // every combination, as far as `MAX_RUNS` allows.
    let mut choices: Vec<(usize, usize)> = Vec::new();
    for _ in 0..MAX_RUNS {
        let mut probe = Probe {
            depth: 0,
            choices: &mut choices,
            at: 0,
        };
        let _ = T::deserialize(&mut probe);
        if FOUND.with(Cell::get) || !next_combination(&mut choices) {
            break;
        }
    }
    PROBING.with(|probing| probing.set(before));
    FOUND.with(|found| found.replace(false))
}

/// Turn the odometer: the last enum with a variant left takes its next one, and
/// the enums after it are met afresh. `false` when every combination was tried.
fn next_combination(choices: &mut Vec<(usize, usize)>) -> bool {
    while let Some((chosen, count)) = choices.pop() {
        if chosen + 1 < count {
            choices.push((chosen + 1, count));
            return true;
        }
    }
    false
}

/// The made-up value's deserializer.
struct Probe<'c> {
    depth: usize,
    /// The variant to take at each enum, by the order they are met.
    choices: &'c mut Vec<(usize, usize)>,
    /// How many enums have been met in this run.
    at: usize,
}

/// Why the probe stopped down one path.
#[derive(Debug)]
struct Stop(String);

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self(msg.to_string())
    }
}

impl Probe<'_> {
    /// How many elements a made-up sequence or map has: one, or none once the
    /// value is as deep as it may go (so what follows a recursive field is still
    /// explored).
    fn one(&self) -> usize {
        usize::from(self.depth < MAX_DEPTH)
    }

    fn deeper(&mut self) -> Result<Probe<'_>, Stop> {
        if self.depth >= HARD_DEPTH {
            return Err(Stop("too deep".into()));
        }
        Ok(Probe {
            depth: self.depth + 1,
            choices: self.choices,
            at: self.at,
        })
    }

    /// The variant to take at the next enum met, of `count`.
    fn choose(&mut self, count: usize) -> usize {
        if self.depth >= MAX_DEPTH {
            return 0;
        }
        let at = self.at;
        self.at += 1;
        match self.choices.get(at) {
            Some((chosen, _)) => *chosen,
            None => {
                self.choices.push((0, count.max(1)));
                0
            }
        }
    }
}

/// `len` made-up elements.
struct Elements<'p, 'c> {
    probe: &'p mut Probe<'c>,
    left: usize,
}

impl<'de> SeqAccess<'de> for Elements<'_, '_> {
    type Error = Stop;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Stop> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut inner = self.probe.deeper()?;
        let value = seed.deserialize(&mut inner)?;
        self.probe.at = inner.at;
        Ok(Some(value))
    }
}

impl<'de> MapAccess<'de> for Elements<'_, '_> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Stop> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut inner = self.probe.deeper()?;
        let key = seed.deserialize(&mut inner)?;
        self.probe.at = inner.at;
        Ok(Some(key))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Stop> {
        let mut inner = self.probe.deeper()?;
        let value = seed.deserialize(&mut inner)?;
        self.probe.at = inner.at;
        Ok(value)
    }
}

/// The variant `chosen` of an enum, and the probe to make up its contents.
struct Variant<'p, 'c> {
    probe: &'p mut Probe<'c>,
    chosen: u32,
}

impl<'de, 'p, 'c> EnumAccess<'de> for Variant<'p, 'c> {
    type Error = Stop;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Stop> {
        let variant = seed.deserialize(IntoDeserializer::<Stop>::into_deserializer(self.chosen))?;
        Ok((variant, self))
    }
}

impl<'de> VariantAccess<'de> for Variant<'_, '_> {
    type Error = Stop;

    fn unit_variant(self) -> Result<(), Stop> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Stop> {
        let mut inner = self.probe.deeper()?;
        let value = seed.deserialize(&mut inner)?;
        self.probe.at = inner.at;
        Ok(value)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_seq(Elements {
            probe: self.probe,
            left: len,
        })
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_seq(Elements {
            probe: self.probe,
            left: fields.len(),
        })
    }
}

impl<'de> de::Deserializer<'de> for &mut Probe<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_unit()
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_bool(false)
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_i8(0)
    }

    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_i16(0)
    }

    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_i32(0)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_i64(0)
    }

    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_u8(0)
    }

    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_u16(0)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_u32(0)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_u64(0)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_f32(0.0)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_f64(0.0)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_char('a')
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_str("")
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_str("")
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_bytes(&[])
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_bytes(&[])
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        if self.one() == 0 {
            return visitor.visit_none();
        }
        let mut inner = self.deeper()?;
        let value = visitor.visit_some(&mut inner)?;
        self.at = inner.at;
        Ok(value)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        let mut inner = self.deeper()?;
        let value = visitor.visit_newtype_struct(&mut inner)?;
        self.at = inner.at;
        Ok(value)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        let left = self.one();
        visitor.visit_seq(Elements { probe: self, left })
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_seq(Elements {
            probe: self,
            left: len,
        })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_seq(Elements {
            probe: self,
            left: len,
        })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        let left = self.one();
        visitor.visit_map(Elements { probe: self, left })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_seq(Elements {
            probe: self,
            left: fields.len(),
        })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        let chosen = self.choose(variants.len());
        let chosen = u32::try_from(chosen).map_err(|_| Stop("too many variants".into()))?;
        visitor.visit_enum(Variant {
            probe: self,
            chosen,
        })
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_u32(0)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_unit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ActorRef;
    use crate::net::remote::spawn::SpawnReply as Reply;
    use serde::Deserialize;

    #[derive(Deserialize)]
    #[serde(crate = "crate::__private::serde")]
    #[allow(dead_code)]
    struct Plain {
        n: u64,
        name: String,
        tags: Vec<String>,
        nested: Option<Box<Plain>>,
    }

    #[derive(Deserialize)]
    #[serde(crate = "crate::__private::serde")]
    #[allow(dead_code)]
    enum Job {
        Nothing,
        Count(u64),
        Report { to: Vec<ActorRef<Reply>> },
    }

    /// Recursive, with the ref after the recursion.
    #[derive(Deserialize)]
    #[serde(crate = "crate::__private::serde")]
    #[allow(dead_code)]
    struct Tree {
        children: Vec<Tree>,
        owner: Option<ActorRef<Reply>>,
    }

    #[derive(Deserialize)]
    #[serde(crate = "crate::__private::serde")]
    #[allow(dead_code)]
    struct Deep {
        first: Option<Job>,
        list: std::collections::HashMap<String, (u8, Job)>,
    }

    /// Recursive without an option: only its enum ends it.
    #[derive(Deserialize)]
    #[serde(crate = "crate::__private::serde")]
    #[allow(dead_code)]
    enum List {
        Cons(u8, Box<List>),
        Nil,
    }

    #[test]
    fn plain_types_carry_no_ref() {
        assert!(!can_carry_ref::<List>());
        assert!(!can_carry_ref::<Plain>());
        assert!(!can_carry_ref::<(u64, String, Vec<bool>)>());
        assert!(!can_carry_ref::<()>());
    }

    #[test]
    fn a_ref_behind_sequences_options_and_variants_is_found() {
        assert!(can_carry_ref::<ActorRef<Reply>>());
        assert!(can_carry_ref::<Vec<Option<ActorRef<Reply>>>>());
        // In the third variant only.
        assert!(can_carry_ref::<Job>());
        assert!(can_carry_ref::<Deep>());
        assert!(can_carry_ref::<Tree>());
    }

    #[test]
    fn the_probe_leaves_nothing_behind() {
        assert!(can_carry_ref::<Job>());
        assert!(!noted_ref());
        assert!(!can_carry_ref::<Plain>());
    }
}
