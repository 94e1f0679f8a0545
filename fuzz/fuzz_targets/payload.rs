//! A well-formed header (a key, a path and a uid picked by the fuzzer) around any
//! payload: the bytes reach the payload's decoder, which random frames rarely do.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tapio::wire::{FrameHeader, WireLimits, encode_frame};
use tapio_fuzz::{Harness, KEYS, PATHS};

fuzz_target!(|data: &[u8]| {
    let [key, path, uid, reply, payload @ ..] = data else {
        return;
    };
    let header = FrameHeader {
        key: KEYS[usize::from(*key) % KEYS.len()],
        recipient: PATHS[usize::from(*path) % PATHS.len()],
        uid: u64::from(*uid % 4),
        reply_to: match reply % 3 {
            0 => None,
            1 => Some("tapio://peer@127.0.0.1:1/system/promises/7"),
            _ => Some("not a uri"),
        },
    };
    if let Ok(frame) = encode_frame(&header, payload, &WireLimits::DEFAULT) {
        Harness::get().deliver(&frame);
    }
});
