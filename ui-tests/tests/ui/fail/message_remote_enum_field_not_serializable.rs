// A wire enum's variant fields need serde's traits too: one error per field type.
use tapio::prelude::*;

pub struct Opaque;

#[message(remote = "test.update.v1")]
pub enum Update {
    Set { value: Opaque },
    Clear,
}

fn main() {}
