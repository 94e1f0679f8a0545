// `#[message(remote = ..)]` derives serde's traits itself: a derive of the user's
// own is refused on its name, with what to do.
use tapio::__private::serde::{Deserialize, Serialize};
use tapio::prelude::*;

#[message(remote = "test.order.v1")]
#[derive(Debug, Serialize, Deserialize)]
pub struct Order {
    pub id: u64,
}

fn main() {}
