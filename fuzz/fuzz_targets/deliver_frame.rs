//! Any bytes at all, as a frame from a peer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tapio_fuzz::Harness;

fuzz_target!(|data: &[u8]| {
    Harness::get().deliver(data);
});
