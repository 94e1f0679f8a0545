// A user's own type named `Cell` is not `std::cell::Cell`: the `Send` check goes by
// the standard library's names only.
use tapio::prelude::*;

pub mod grid {
    #[derive(Clone, Copy, Debug)]
    pub struct Cell {
        pub x: u8,
        pub y: u8,
    }
}

use grid::Cell;

#[message]
pub struct Paint {
    pub cell: Cell,
    pub colour: u32,
}

fn main() {}
