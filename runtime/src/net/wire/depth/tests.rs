//! The depth-limited deserializer against postcard: round trips, the limit's edges,
//! siblings that do not add up, and a payload nested 100,000 deep.

use std::collections::HashMap;

use serde::de::IntoDeserializer;
use serde::{Deserialize, Deserializer, Serialize};

use super::deserialize_bounded;
use crate::ground::codec::DEFAULT_MAX_DEPTH;

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

/// A field whose own `Deserialize` refuses a value, one level inside a struct.
#[derive(Debug, PartialEq)]
struct Even(u32);

impl<'de> Deserialize<'de> for Even {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let n = u32::deserialize(deserializer)?;
        if n % 2 == 0 {
            Ok(Self(n))
        } else {
            Err(serde::de::Error::custom(format!("{n} is odd")))
        }
    }
}

/// A struct holding a refusing field inside a sequence.
#[derive(Deserialize, Debug, PartialEq)]
struct Pairs {
    evens: Vec<Even>,
}

/// An enum with two variants, to be sent a third.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
enum Switch {
    On,
    Off,
}

// What a type's own code says when it refuses a value reaches the caller of
// `wire::decode`, which postcard alone drops: nested in a sequence in a struct,
// the first refusal's words; for an enum sent a variant it does not have, serde's.
#[test]
fn a_refusal_keeps_the_type_s_own_words() {
    let limits = crate::net::wire::WireLimits::DEFAULT;
    // [2, 4, 7]: the third is refused.
    let bytes = [3, 2, 4, 7];
    match crate::net::wire::decode::<Pairs>("k", &bytes, &limits) {
        Err(crate::net::wire::WireProblem::Undecodable { error, .. }) => {
            assert_eq!(error, "7 is odd");
        }
        other => panic!("expected the field's refusal, got {other:?}"),
    }
    match crate::net::wire::decode::<Switch>("k", &[2], &limits) {
        Err(crate::net::wire::WireProblem::Undecodable { error, .. }) => {
            assert!(error.contains("variant index"), "{error}");
        }
        other => panic!("expected the enum's refusal, got {other:?}"),
    }
    // A later decode that succeeds, then one that fails in postcard itself (the
    // input ends early), says postcard's words, not an earlier refusal's.
    assert_eq!(
        crate::net::wire::decode::<Switch>("k", &[1], &limits).ok(),
        Some(Switch::Off)
    );
    match crate::net::wire::decode::<Pairs>("k", &[3, 2], &limits) {
        Err(crate::net::wire::WireProblem::Undecodable { error, .. }) => {
            assert!(!error.contains("odd"), "{error}");
        }
        other => panic!("expected the end of input, got {other:?}"),
    }
}
