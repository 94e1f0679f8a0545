// A message registered for the wire keeps serde's own field and container
// attributes: skipped, defaulted, renamed and `with` fields, enum variants with
// fields, and a type checked as it is decoded (`try_from`).
#![deny(warnings)]

use tapio::prelude::*;

mod as_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &u32, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&value.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Not serializable: skipped on the wire.
#[derive(Default)]
pub struct Local;

#[message(remote = "pass.order.v1")]
#[serde(rename_all = "camelCase")]
pub struct Order {
    pub item_name: String,
    #[serde(default)]
    pub quantity: u32,
    #[serde(skip)]
    pub local: Local,
    #[serde(with = "as_text")]
    pub code: u32,
    pub tags: Vec<String>,
}

#[message(remote = "pass.update.v1")]
pub enum Update {
    Set { value: u64, by: Option<String> },
    Pair(u8, i64),
    #[serde(skip)]
    Local(Local),
    Clear,
}

#[message(remote = "pass.even.v1")]
#[serde(try_from = "u32")]
pub struct Even(u32);

impl TryFrom<u32> for Even {
    type Error = String;

    fn try_from(value: u32) -> Result<Self, Self::Error> {
        if value % 2 == 0 {
            Ok(Even(value))
        } else {
            Err(format!("{value} is odd"))
        }
    }
}

#[message(remote = "pass.wrapped.v1")]
pub struct Wrapped {
    pub order: Order,
    pub update: Update,
}

fn main() {
    let _ = |order: Order, update: Update, even: Even, wrapped: Wrapped| {
        let _ = (order.item_name, order.quantity, order.local, order.code, order.tags);
        let _ = (update, even.0, wrapped.order, wrapped.update);
    };
}
