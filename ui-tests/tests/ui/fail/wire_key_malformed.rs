// A wire key is a stable, plain name; a generic message cannot have one (a key names
// one type). Each is refused on the key.
use tapio::prelude::*;

#[message(remote = "shop order")]
pub struct Order;

#[message(remote = "")]
pub struct Empty;

#[message(remote = "wrap.v1")]
pub struct Wrap<T>(pub T);

fn main() {}
