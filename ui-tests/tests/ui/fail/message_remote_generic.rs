// A wire key names one concrete type: a generic message cannot be registered.
use tapio::prelude::*;

#[message(remote = "shop.wrap.v1")]
pub struct Wrap<T>(pub T);

fn main() {}
