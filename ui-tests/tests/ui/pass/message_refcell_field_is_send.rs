// `RefCell<T>` is `Send` when `T` is, and a message needs only `Send`: accepted.
use std::cell::RefCell;

use tapio::prelude::*;

#[message]
pub struct Swap(pub RefCell<Vec<u8>>);

fn assert_send<T: Send>() {}

fn main() {
    assert_send::<RefCell<Vec<u8>>>();
}
