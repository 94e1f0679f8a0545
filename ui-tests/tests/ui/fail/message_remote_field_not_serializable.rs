// A message registered for the wire derives serde's traits; each of its fields
// needs them too.
use tapio::prelude::*;

pub struct Opaque(pub u32);

#[message(remote = "test.holder.v1")]
pub struct Holder {
    pub name: String,
    pub inner: Opaque,
}

fn main() {}
