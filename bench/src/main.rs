//! `core`: tapio measured against raw tokio, in the same run (see `core_table`).

mod core_table;
mod harness;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    core_table::main(&args);
}
