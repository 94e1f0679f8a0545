//! The examples of the tapio guide, one module per example.
//!
//! Each `NAME.rs` here is both an example target (`cargo run --example NAME`) and a
//! module of this library, so that `tour` can run every example in turn and the
//! tests can assert the lines each one produces. An example's `run` returns those
//! lines; its `main` prints them.

// Lets the example files name shared helpers as `tapio_examples::support` whether
// they are compiled as examples or as modules of this library.
extern crate self as tapio_examples;

pub mod support;

#[path = "hello_world.rs"]
pub mod hello_world;

#[path = "ping_pong.rs"]
pub mod ping_pong;

#[path = "counter.rs"]
pub mod counter;

#[path = "counter_without_macros.rs"]
pub mod counter_without_macros;
