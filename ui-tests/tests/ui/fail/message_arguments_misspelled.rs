// `#[message]`'s arguments written wrong: each is refused on its token with how to
// write it (a key given twice, a key without its value, a quoted type, an unquoted
// wire key).
use tapio::prelude::*;

#[message(reply)]
pub struct NoType;

#[message(reply = "u64")]
pub struct QuotedType;

#[message(remote = "a.v1", remote = "b.v1")]
pub struct TwoKeys;

#[message(remote = shop.order)]
pub struct BareKey;

#[message(remote)]
pub struct NoKey;

fn main() {}
