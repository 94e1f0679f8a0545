// A request registered for the wire answers across the link with a frame of its own,
// so its reply type must be registered too: refused on the reply type, saying how.
use tapio::prelude::*;

#[message(remote = "test.how-many.v1", reply = u64)]
pub struct HowMany;

#[message(remote = "test.count.v1")]
pub struct Count(pub u64);

// Registered on both sides: compiles.
#[message(remote = "test.how-many-counted.v1", reply = Count)]
pub struct HowManyCounted;

fn main() {}
